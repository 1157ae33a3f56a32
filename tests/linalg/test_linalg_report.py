#!/usr/bin/python3
"""analysis/linalg.py on Google Benchmark JSON written as bench_sparse writes it: a complete file, a
file cut inside its benchmark list (a device call's time limit), the newest-run-wins rule for a
benchmark in several files (name order on equal dates), speed-ups and the PCG ratio computed from the numbers, "not run" where a
benchmark is missing.

    test_linalg_report.py ANALYSIS_DIR
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import linalg  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def entry(name, agg, time, unit="us", **counters):
    e = {"name": f"{name}/manual_time_{agg}", "run_name": name, "run_type": "aggregate", "aggregate_name": agg,
         "real_time": time, "cpu_time": time, "time_unit": unit}
    e.update(counters)
    return e


def file_text(entries, cut=False, date="2026-11-26T06:00:00+00:00"):
    text = json.dumps({"context": {"date": date}, "benchmarks": entries}, indent=2)
    if cut:  # as a killed process leaves it: the last entry half written, no closing brackets
        text = text[:text.rfind('"real_time"')]
    return text


with tempfile.TemporaryDirectory() as d:
    box = [entry("spmv/cuda/bcsr/fp64/box10", "median", 100.0, DOFs=3000, of_triad=0.9),
           entry("spmv/cuda/bcsr/fp64/box10", "cv", 0.01),
           entry("cusparse_csr/fp64/box10", "median", 160.0),
           entry("cusparse_bsr/fp64/box10", "median", 0.25, unit="ms"),
           entry("pcg_iteration/cuda/bcsr/fp64/box10", "median", 5000.0, iterations_per_solve=50, of_triad=0.8),
           entry("pcg_iteration_sr/cuda/bcsr/fp64/box10", "median", 4000.0, iterations_per_solve=50, of_triad=0.9),
           entry("pcg_marginal_sr/cuda/bcsr/fp64/box10", "median", 7000.0, iterations_per_solve=100, of_triad=0.95),
           entry("pcg_marginal_sr_l2/cuda/bcsr/fp64/box10", "median", 5000.0, iterations_per_solve=100, of_triad=1.25),
           entry("spmv/cuda/csr/fp64/box10", "median", 999.0, of_triad=0.5)]  # cut off below
    with open(os.path.join(d, "bench_sparse_a.json"), "w") as f:
        f.write(file_text(box, cut=True))
    # The same benchmark in a later file of the same date: the first file's value stands.
    with open(os.path.join(d, "bench_sparse_b.json"), "w") as f:
        f.write(file_text([entry("spmv/cuda/bcsr/fp64/box10", "median", 1.0, DOFs=3000, of_triad=0.1),
                           entry("eigen/cpu/csr/fp64/box10", "median", 2.0, unit="ms")]))
    # ... and in a file first by name but of an older run: the newer value stands.
    with open(os.path.join(d, "bench_sparse_0.json"), "w") as f:
        f.write(file_text([entry("spmv/cuda/bcsr/fp64/box10", "median", 3.0, DOFs=3000, of_triad=0.2),
                           entry("spmv/cuda/bcsr_w1/fp64/box10", "median", 150.0, DOFs=3000, of_triad=0.6),
                           entry("spmv/cuda/bcsr_w4/fp64/box10", "median", 90.0, DOFs=3000, of_triad=1.0)],
                          date="2026-11-25T06:00:00+00:00"))

    read = linalg.read_benchmarks(os.path.join(d, "bench_sparse_a.json"))
    check(len(read) == 8, f"truncated file: {len(read)} complete entries read, expected 8")
    md = linalg.build(d, os.path.join(d, "figs"))
    row = next((line for line in md.splitlines() if line.startswith("| box10 | fp64 | 3,000 |")), None)
    check(row is not None, "no BCSR row for box10 fp64:\n" + md)
    if row:
        cells = [c.strip() for c in row.strip("|").split("|")]
        check(cells[3] == "100.0 us (cv 1.0%)", f"BCSR time and cv: {cells[3]}")
        check(cells[4] == "0.900", f"of triad: {cells[4]}")
        # Files without min-max (before bench_sparse recorded them) say so beside every time and ratio.
        nr = "(no spread recorded)"
        check(cells[6] == "1.60x (spread not recorded)", f"speed-up over cuSPARSE CSR: {cells[6]}")
        check(cells[7] == f"250.0 us {nr}" and cells[8] == "2.50x (spread not recorded)",
              f"cuSPARSE BSR in ms converted: {cells[7:9]}")
        check(cells[9] == f"100.0 us {nr}" and cells[10] == "1.25x", f"PCG per iteration and ratio: {cells[9:11]}")
        check(cells[11] == f"80.0 us {nr}" and cells[12] == "1.11x", f"single-reduction PCG and ratio: {cells[11:13]}")
        check(cells[13] == f"70.0 us {nr}" and cells[14] == "1.05x", f"marginal iteration and ratio: {cells[13:15]}")
        check(cells[15] == f"50.0 us {nr}" and cells[16] == "0.80x", f"L2-resident marginal iteration: {cells[15:17]}")
    fmt_row = next((line for line in md.splitlines()
                    if line.startswith("| box10 | fp64 | 100.0 us (cv 1.0%), 0.90 of triad")), "")
    check("not run" in fmt_row, "the cut-off CSR benchmark is shown as not run: " + fmt_row)
    check("| box10 | fp64 | not run | not run | 2.00 ms (no spread recorded) |" in md, "Eigen row from the second file")
    check(os.path.exists(os.path.join(d, "figs", "linalg.md")), "linalg.md written")
    # The warps table: the fixed-warp rows, missing ones not run, no bold without spreads.
    check("| box10 | fp64 | 0.2 | 150.0 us (no spread recorded), 0.60 of triad | not run | "
          "90.0 us (no spread recorded), 1.00 of triad | not run | not run |" in md, "warps-per-slice row:\n" + md)

    # With the repetitions' min and max: ranges beside the medians, a speed-up inside both ranges is
    # not significant, and the fastest warp count is bold only where its range is clear of the others.
    spread = os.path.join(d, "spread")
    os.makedirs(spread)

    def timing(name, med, lo, hi, **counters):
        return [entry(name, "median", med, **counters), entry(name, "min", lo), entry(name, "max", hi)]
    with open(os.path.join(spread, "bench_sparse_s.json"), "w") as f:
        f.write(file_text(timing("spmv/cuda/bcsr/fp64/box10", 100.0, 98.0, 103.0, DOFs=3000, of_triad=0.9)
                          + timing("cusparse_csr/fp64/box10", 160.0, 150.0, 170.0)
                          + timing("cusparse_bsr/fp64/box10", 104.0, 101.0, 110.0)
                          + timing("spmv/cuda/bcsr_w1/fp64/box10", 150.0, 140.0, 160.0, DOFs=3000, of_triad=0.6)
                          + timing("spmv/cuda/bcsr_w4/fp64/box10", 90.0, 88.0, 92.0, DOFs=3000, of_triad=1.0)))
    md = linalg.build(spread, os.path.join(d, "figs3"))
    row = next((line for line in md.splitlines() if line.startswith("| box10 | fp64 | 3,000 |")), "")
    cells = [c.strip() for c in row.strip("|").split("|")]
    check(cells[3:9] == ["100.0 us (98.0 us-103.0 us)", "0.900", "160.0 us (150.0 us-170.0 us)", "1.60x",
                         "104.0 us (101.0 us-110.0 us)", "not significant (1.0x; ranges overlap)"], f"with spreads: {cells}")
    check("| **90.0 us (88.0 us-92.0 us), 1.00 of triad** |" in md, "the clear fastest warp count in bold:\n" + md)

    empty = os.path.join(d, "empty")
    os.makedirs(empty)
    try:
        linalg.build(empty, os.path.join(d, "figs2"))
        failures.append("a folder without results must raise")
    except RuntimeError:
        pass

if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("linalg report: all checks passed")
