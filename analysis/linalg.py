#!/usr/bin/python3
"""Tables of the shared sparse layer (solvers/linalg) from bench_sparse's Google Benchmark JSON
(RESULTS_DIR = experiments/results/<device>/linalg, files bench_sparse_*.json).

    /usr/bin/python3 analysis/linalg.py RESULTS_DIR FIGURES_DIR

Writes FIGURES_DIR/linalg.md: per matrix and precision, the SpMV time of every format on the
device with its fraction of the STREAM triad measured in the same process (compulsory bytes:
the format's arrays once, x and y once; solvers/linalg/PERF_NOTES.md), cuSPARSE CSR and BSR on
the same matrix, the speed-ups of our BCSR over them, one Jacobi-PCG iteration against its
compulsory-byte time, and Eigen's CPU product where it ran. Medians of the repetitions, with
the coefficient of variation of the BCSR time.

A file cut short by the device call's time limit ends inside its benchmark list; the complete
entries before the cut are read (a benchmark appears in the file only once it has finished), and
a row that never ran is shown as "not run". When several files hold the same benchmark, the newest
run wins (the date in the file's context; name order among equal or missing dates), so that a
kernel's later measurement replaces the one before it.
`build(results_dir, figures_dir)` returns the Markdown. Standard library only.
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import result_format  # noqa: E402
from result_format import md_table  # noqa: E402

NOT_RUN = "not run"
FORMATS = ["bcsr", "csr", "ell", "hyb", "coo", "dcsr", "dhyb", "dcoo"]


def read_benchmarks(path):
    """The benchmark entries of one Google Benchmark JSON file, tolerating a truncated tail."""
    with open(path) as f:
        text = f.read()
    try:
        return json.loads(text).get("benchmarks", [])
    except json.JSONDecodeError:
        pass
    start = text.find('"benchmarks": [')
    if start < 0:
        return []
    # Entries are objects at an indentation of four spaces; keep those that closed.
    end = text.rfind("\n    }")
    if end < start:
        return []
    repaired = "{" + text[start:end + len("\n    }")] + "]}"
    return json.loads(repaired).get("benchmarks", [])


def run_date(path):
    """The context date of a benchmark file ("" when it has none or is unreadable there)."""
    with open(path) as f:
        m = re.search(r'"date":\s*"([^"]*)"', f.read(4096))
    return m.group(1) if m else ""


def collect(results_dir):
    """{(kind, backend, format, precision, matrix): {"median": entry, "cv": entry, "min": entry, "max": entry}}
    (min and max: bench_sparse's own statistics, in files since they were added)."""
    table = {}
    paths = sorted(glob.glob(os.path.join(results_dir, "bench_sparse_*.json")))
    # Newest first (setdefault below keeps the first seen); a stable sort keeps name order on ties.
    paths.sort(key=run_date, reverse=True)
    for path in paths:
        for b in read_benchmarks(path):
            agg = b.get("aggregate_name")
            if agg not in ("median", "cv", "min", "max"):
                continue
            name = b.get("run_name") or re.sub(r"/(manual|real)_time.*$", "", b["name"])
            parts = name.split("/")
            if parts[0] == "pcg_iteration" and parts[1].startswith("cusparse_"):
                key = ("pcg_iteration", "cusparse", parts[1][len("cusparse_"):], parts[2], parts[3])
            elif parts[0] in ("spmv", "pcg_iteration", "pcg_iteration_sr", "pcg_marginal", "pcg_marginal_sr",
                              "pcg_marginal_sr_l2"):
                key = (parts[0], parts[1], parts[2], parts[3], parts[4])
            elif parts[0].startswith("cusparse_"):
                key = ("spmv", "cusparse", parts[0][len("cusparse_"):], parts[1], parts[2])
            elif parts[0] == "eigen":
                key = ("spmv", "eigen", parts[2], parts[3], parts[4])
            else:
                continue
            table.setdefault(key, {}).setdefault(agg, b)
    return table


def time_us(entry):
    unit = entry.get("time_unit", "us")
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[unit]
    return entry["real_time"] * scale


def matrix_order(m):
    box = re.match(r"box(\d+)", m)
    return (0, int(box.group(1)), m) if box else (1, 0, m)


def fmt_time(us):
    return f"{us / 1000:.2f} ms" if us >= 1000 else f"{us:.1f} us"


def time_range(aggs, per=1.0):
    """(median, min, max) in us (each divided by per), min/max None where the file has none."""
    lo, hi = aggs.get("min"), aggs.get("max")
    m = time_us(aggs["median"]) / per
    return m, (time_us(lo) / per if lo else None), (time_us(hi) / per if hi else None)


def timed(aggs, per=1.0):
    """A time cell: the median of the repetitions with their min-max, else their cv (older files)."""
    m, lo, hi = time_range(aggs, per)
    if lo is not None and hi is not None:
        return f"{fmt_time(m)} ({fmt_time(lo)}-{fmt_time(hi)})"
    cv = aggs.get("cv", {}).get("real_time")
    return fmt_time(m) + (f" (cv {cv * 100:.1f}%)" if cv is not None else " (no spread recorded)")


def speedup(slow, fast, per_slow=1.0, per_fast=1.0):
    """slow / fast time, "not significant" where the two repetitions' ranges overlap; files without
    min-max say the spread is unknown."""
    a, alo, ahi = time_range(slow, per_slow)
    b, blo, bhi = time_range(fast, per_fast)
    if None in (alo, ahi, blo, bhi):
        return f"{a / b:.2f}x (spread not recorded)"
    if result_format.overlap((alo, ahi), (blo, bhi)):
        return f"not significant ({a / b:.1f}x; ranges overlap)"
    return f"{a / b:.2f}x"




def repetition_ranges(folder):
    """Whether the benchmarks record their repetitions' min and max (None: no bench_sparse files)."""
    table = collect(folder)
    return None if not table else any("min" in aggs for aggs in table.values())


def source_folder(results_dir):
    """results_dir, or another machine's folder whose benchmarks carry min-max where these do not
    (result_format.folder_with_spreads)."""
    return result_format.folder_with_spreads(results_dir, repetition_ranges)


def build(results_dir, figures_dir):
    asked, results_dir = results_dir, source_folder(results_dir)
    table = collect(results_dir)
    if not table:
        raise RuntimeError(f"no bench_sparse_*.json with results in {results_dir}")
    # A matrix and precision for which the chosen run lacks benchmarks the asked folder has (a run
    # cut by the device call's limit) also shows the asked folder's row, marked with its device,
    # below the chosen run's (if any): each row's numbers come from one process on one device, and
    # no measured row is dropped.
    kept = []
    if os.path.realpath(asked) != os.path.realpath(results_dir):
        device = os.path.basename(os.path.dirname(os.path.realpath(asked)))
        older = collect(asked)

        def benchmarks(t, m, prec):
            return {k[:4] for k in t if k[4] == m and k[3] == prec}
        for m, prec in sorted({(k[4], k[3]) for k in older}):
            if benchmarks(older, m, prec) <= benchmarks(table, m, prec):
                continue
            for k, v in older.items():
                if k[4] == m and k[3] == prec:
                    table[k[:4] + (f"{m} ({device})",)] = v
            kept.append(f"{m} {prec}")
        kept = sorted(set(kept), key=matrix_order)
    matrices = sorted({k[4] for k in table}, key=matrix_order)

    def get(kind, backend, fmt_, prec, m):
        return table.get((kind, backend, fmt_, prec, m), {})

    out = ["## Shared sparse layer: SpMV and Jacobi-PCG (bench_sparse)", "",
           "Stiffness matrices of linear tetrahedra (the `box<n>` cantilever: n x n/4 x n/4 cubes of 6 tets, "
           "clamped at x = 0; `armadillo`: Armadillo13K.msh). Time is the median of 5 repetitions (CUDA events); "
           "`of triad` is the effective bandwidth by compulsory bytes (each array of the format once, x and y "
           "once) over the STREAM triad of the same device and precision measured in the same process. Values "
           "above 1 mean the read-only stream runs faster than triad's mixed read/write traffic, or (small "
           "matrices) that part of the matrix stays in the device's L2 (50 MB on the H100, 60 MB on the H200) "
           "between calls.", ""]
    other = result_format.source_line(asked, results_dir, None, "benchmarks record no min-max")
    if other:
        out += [other, ""]
    if kept:
        out += [f"Rows marked ({device}) are from `{result_format.results_name(asked)}`, shown where the run above "
                f"did not finish benchmarks that run has ({', '.join(kept)}: cut by the device call's limit); their "
                "spread is the coefficient of variation, not min-max.", ""]

    header = ["matrix", "fp", "DOFs", "BCSR (min-max)", "of triad", "cuSPARSE CSR", "BCSR speed-up", "cuSPARSE BSR",
              "BCSR speed-up", "PCG iteration", "PCG / compulsory time", "single-reduction PCG iteration",
              "SR / compulsory time", "SR iteration, marginal", "marginal / compulsory time",
              "SR marginal, values kept in L2", "L2 / compulsory time"]
    rows = []
    for m in matrices:
        for prec in ("fp32", "fp64"):
            bcsr = get("spmv", "cuda", "bcsr", prec, m)
            if "median" not in bcsr:
                continue
            b = bcsr["median"]
            row = [m, prec, f"{b.get('DOFs', 0):,.0f}", timed(bcsr), f"{b['of_triad']:.3f}"]
            for peer in ("csr", "bsr"):
                c = get("spmv", "cusparse", peer, prec, m)
                row += [timed(c), speedup(c, bcsr)] if c.get("median") else [NOT_RUN, NOT_RUN]
            for kind in ("pcg_iteration", "pcg_iteration_sr", "pcg_marginal_sr", "pcg_marginal_sr_l2"):
                aggs = get(kind, "cuda", "bcsr", prec, m)
                p = aggs.get("median")
                if p:
                    row += [timed(aggs, p.get("iterations_per_solve", 1)), f"{1.0 / p['of_triad']:.2f}x"]
                else:
                    row += [NOT_RUN, NOT_RUN]
            rows.append(row)
    out += ["### BCSR against cuSPARSE (device)", "",
            "Targets (issue 10): BCSR at least 0.85 of triad by compulsory bytes, at least 1.5x faster than "
            "cuSPARSE CSR and faster than cuSPARSE BSR on the same matrix; one PCG iteration within 1.2x of its "
            "compulsory-byte time at triad speed (the `PCG / compulsory time` column; the SpMV plus 13 vector "
            "passes). The single-reduction iteration (CgOptions::single_reduction, Chronopoulos & Gear: the "
            "dot fused into the BCSR product, two kernels per iteration instead of four) is timed against its "
            "own compulsory bytes, the SpMV plus 11 vector passes (`SR / compulsory time`); where its partial "
            "sums are few (~0.1M DOFs) the next kernel adds them instead of each kernel's last block "
            "(CgOptions::sr_reduction; the size rule is choose_cg_plan in solvers/linalg/cg_plan.cpp). Those two columns divide a 50-iteration solve "
            "from x = 0 by 50, so each iteration also carries 1/50 of the start (r = b - Ax and a product), "
            "the host's status reads and the copies; `SR iteration, marginal` is the time an iteration adds "
            "(solves of 50 and 150 iterations, the difference per added one: `pcg_marginal_sr`), against the "
            "same compulsory bytes. `SR marginal, values kept in L2` is the same with the matrix's values "
            "marked persisting in the L2 (CgOptions::l2_resident_operator; only where they fit in the L2): "
            "a ratio below 1 there says that part of the compulsory bytes came from the L2, not DRAM. The "
            "columns compare runs of the same process only where their files are "
            "the same run; the newest file of each benchmark is shown.", "",
            md_table(header, rows), ""]

    header = ["matrix", "fp", "ours (BCSR)", "on cuSPARSE CSR", "speed-up", "on cuSPARSE BSR", "speed-up"]
    rows = []
    for m in matrices:
        for prec in ("fp32", "fp64"):
            ours = get("pcg_iteration", "cuda", "bcsr", prec, m)
            peers = [get("pcg_iteration", "cusparse", peer, prec, m) for peer in ("csr", "bsr")]
            if not ours.get("median") or not any(c.get("median") for c in peers):
                continue

            def iters(aggs):
                return aggs["median"].get("iterations_per_solve", 1)
            row = [m, prec, timed(ours, iters(ours))]
            for c in peers:
                row += [timed(c, iters(c)), speedup(c, ours, iters(c), iters(ours))] if c.get("median") else [NOT_RUN, NOT_RUN]
            rows.append(row)
    if rows:
        out += ["### Whole Jacobi-PCG solve: our BCSR against cuSPARSE's SpMV (device)", "",
                "The same solver (solvers/linalg: vector kernels, device scalars, one CUDA graph per solve of 50 "
                "iterations from x = 0) with its operator's product done by our sliced BCSR or by cuSPARSE's "
                "generic SpMV on CSR or BSR; time per iteration, median of 5 (min-max).", "", md_table(header, rows), ""]

    header = ["matrix", "fp", "slices / SM"] + [f"{w} warp{'s' if w > 1 else ''}" for w in (1, 2, 4, 8)] + \
        ["default (warps)"]
    rows = []
    for m in matrices:
        for prec in ("fp32", "fp64"):
            fixed_aggs = [get("spmv", "cuda", f"bcsr_w{w}", prec, m) for w in (1, 2, 4, 8)]
            fixed = [a.get("median") for a in fixed_aggs]
            if not any(fixed):
                continue
            auto = get("spmv", "cuda", "bcsr", prec, m).get("median")
            rows_ = next((e.get("DOFs") for e in fixed + [auto] if e and e.get("DOFs")), None)
            slices = f"{rows_ / 3 / 32 / 132:.1f}" if rows_ else NOT_RUN
            cells = [f"{timed(a)}, {a['median']['of_triad']:.2f} of triad" if a.get("median") else NOT_RUN
                     for a in fixed_aggs]
            best = min((time_us(e), i) for i, e in enumerate(fixed) if e)[1]
            # The fastest in bold only where its range stands clear of every other's.
            lo = time_range(fixed_aggs[best])
            clear = lo[2] is not None and all(
                time_range(a)[1] is not None and time_range(a)[1] > lo[2] for i, a in enumerate(fixed_aggs)
                if i != best and a.get("median"))
            if clear:
                cells[best] = "**" + cells[best] + "**"
            default = (f"{fmt_time(time_us(auto))} ({auto.get('warps_per_slice', 0):.0f})"
                       if auto and "warps_per_slice" in auto else NOT_RUN)
            rows.append([m, prec, slices] + cells + [default])
    if rows:
        out += ["### BCSR: warps per slice of 32 block rows (device)", "",
                "The sliced kernel with each slice's blocks split among 1, 2, 4 or 8 warps (warp w takes blocks w, "
                "w + W, ...; the partial sums are added in warp order). Time (min-max), fraction of triad; the fastest "
                "in bold where its range stands clear of the others' (not where the ranges overlap or were not "
                "recorded); `slices / SM` for the H100's 132 SMs; the default is the library's choice "
                "(choose_warps_per_slice) as the first table runs it.", "", md_table(header, rows), ""]

    header = ["matrix", "fp"] + [f.upper() for f in FORMATS]
    rows = []
    for m in matrices:
        for prec in ("fp32", "fp64"):
            cells = []
            for f in FORMATS:
                a = get("spmv", "cuda", f, prec, m)
                cells.append(f"{timed(a)}, {a['median']['of_triad']:.2f} of triad" if a.get("median") else NOT_RUN)
            if any(c != NOT_RUN for c in cells):
                rows.append([m, prec] + cells)
    out += ["### Every format on the device: time (min-max), fraction of triad", "", md_table(header, rows), ""]

    header = ["matrix", "fp", "ours BCSR", "ours CSR", "Eigen CSR (fp64)"]
    rows = []
    for m in matrices:
        for prec in ("fp32", "fp64"):
            ours = [get("spmv", "cpu", f, prec, m) for f in ("bcsr", "csr")]
            eig = get("spmv", "eigen", "csr", prec, m)
            if any(a.get("median") for a in ours) or eig.get("median"):
                rows.append([m, prec] + [timed(a) if a.get("median") else NOT_RUN for a in ours] +
                            [timed(eig) if eig.get("median") else NOT_RUN])
    if rows:
        out += ["### CPU (OpenMP, all cores of the device's host)", "",
                "CPU rows were run only where the device call's time allowed (see the files); their "
                "repetitions spread widely on a shared host.", "", md_table(header, rows), ""]
    text = "\n".join(out) + "\n"
    os.makedirs(figures_dir, exist_ok=True)
    tmp = os.path.join(figures_dir, "linalg.md.tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(figures_dir, "linalg.md"))
    return text


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    print(build(sys.argv[1], sys.argv[2]))
