#!/usr/bin/python3
"""analysis/verschoor2012.py on real output of the experiment.

    test_verschoor2012_report.py ELASTOBENCH ANALYSIS_DIR DATA_DIR WORK_DIR

Runs `ELASTOBENCH reproduce verschoor2012 --quick --no-report --quiet --out WORK_DIR/out` (CPU only;
the time it took is printed), checks the files and columns the analysis reads, builds the report
section from them and checks its tables, verdicts and figures. Then, on copies of that folder:
  - a synthetic invalid run appended to performance.csv and iterations.csv, its number cells
    filled with a sentinel: every table shows "invalid: <reason>" there and no sentinel anywhere,
    also through analysis/make_report.py (no absolute path in report.md);
  - synthetic GPU rows made from the real CPU rows (graph, phases, scatter), since the quick mode
    runs none: gather and scatter side by side, the graph's min-max spread, the 50 GB/s verdict;
  - parts left out (no iterations.csv; an empty folder): "not run", no exception.
ELASTOBENCH_DATA overrides DATA_DIR; without bunny.off there the test is skipped (77).
VERSCHOOR2012_RESULTS=DIR reuses the output of an earlier run instead of running the experiment.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time

elastobench, analysis_dir, data_dir, work = sys.argv[1:5]
data_dir = os.environ.get("ELASTOBENCH_DATA") or data_dir
sys.path.insert(0, analysis_dir)
import verdict_table  # noqa: E402
import verschoor2012  # noqa: E402

failures = []
ABSOLUTE = re.compile(r"(^|[^A-Za-z0-9_.:/~-])/(work|home|root|tmp|usr|opt)/")
REASON = "invalid: element 17 inverted (det F <= 0) at step 4, the first of 2 inverted element-steps (min det F = -0.3)"
SENTINEL = "987654.321"


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write(path, rows, columns):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, columns)
        w.writeheader()
        w.writerows(rows)


def table(md, header_start):
    """The rows (lists of cells) of the Markdown table whose header starts with header_start."""
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(header_start):
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([c.strip() for c in row.strip().strip("|").split("|")])
            return rows
    return None


def is_number(cell):
    return re.fullmatch(r"-?[0-9][0-9,]*(\.[0-9]+)?(e[-+]?[0-9]+)?%?", cell) is not None


def png(path):
    if not os.path.isfile(path) or os.path.getsize(path) < 1000:
        return False
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


if not os.path.isfile(os.path.join(data_dir, "bunny.off")):
    print(f"SKIP: bunny.off not found in {data_dir} (third-party meshes)")
    sys.exit(77)

# ---- the real quick run -------------------------------------------------------------------------
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
reuse = os.environ.get("VERSCHOOR2012_RESULTS")
if reuse:
    real = reuse
    print(f"reusing {reuse}")
else:
    out = os.path.join(work, "out")
    start = time.monotonic()
    run = subprocess.run([elastobench, "reproduce", "verschoor2012", "--quick", "--no-report", "--quiet", "--out", out,
                          "--data-dir", data_dir], capture_output=True, text=True)
    seconds = time.monotonic() - start
    print(f"elastobench reproduce verschoor2012 --quick: {seconds:.1f} s, exit {run.returncode}")
    if run.returncode != 0:
        print(run.stdout[-4000:] + run.stderr[-4000:])
        sys.exit(1)
    real = os.path.join(out, "verschoor2012")

for name in ("models.csv", "performance.csv", "iterations.csv", "cpu_triad.csv", "meta.json"):
    check(os.path.isfile(os.path.join(real, name)), f"the quick run wrote no {name}")
if failures:
    print("\n".join(failures))
    sys.exit(1)

perf = read(os.path.join(real, "performance.csv"))
columns = list(perf[0].keys())
needed = ["model", "N", "elements", "backend", "precision", "threads", "variant", "mode", "validity", "rotation_ms",
          "matrix_ms", "update_ms", "cg_ms", "integrate_ms", "step_ms", "step_ms_min", "step_ms_max", "steps_per_s",
          "spmv_ms", "cg_iterations", "rotation_gflops", "matrix_gflops", "update_gflops", "cg_gflops", "spmv_gflops",
          "total_gflops", "update_gbps", "spmv_gbps", "stream_triad_gbps", "update_of_triad", "spmv_of_triad"]
check(not [c for c in needed if c not in columns], f"performance.csv lacks {[c for c in needed if c not in columns]}")
check(all(r["backend"] == "cpu" for r in perf), "quick mode wrote GPU rows")
for name, cols in (("models.csv", ["model", "N", "elements", "nodes", "blocks", "min_volume", "max_volume"]),
                   ("iterations.csv", ["model", "N", "elements", "tolerance", "validity", "iterations_min",
                                       "iterations_mean", "iterations_max", "reduction_worst"])):
    have = list(read(os.path.join(real, name))[0].keys())
    check(not [c for c in cols if c not in have], f"{name} lacks {[c for c in cols if c not in have]}")

figs = os.path.join(work, "figures_real")
md = verschoor2012.build(real, figs)
for heading in ("### Parameters", "### Models", "### Fig. 4: time per phase per step", "### Fig. 3", "### Global-matrix update",
                "### CG iterations per tolerance"):
    check(heading in md, f"no '{heading}' section")
TABLES = {"models": "| model | N (voxels", "phases": "| series | model | N | elements | Rotation",
          "spmv": "| series | model | N | elements | SpMV us", "update": "| series | model | N | elements | gather GB/s",
          "iterations": "| model | N | elements | backend | precision | tolerance"}
rows = {k: table(md, h) for k, h in TABLES.items()}
for k, r in rows.items():
    check(r, f"no {k} table")
models = read(os.path.join(real, "models.csv"))
if rows["models"]:
    check(len(rows["models"]) == len(models), f"models table: {len(rows['models'])} rows for {len(models)} models")
valid = [r for r in perf if r["validity"] == "valid"]
check(len(valid) == len(perf), "the real quick run has invalid rows: " + "; ".join(r["validity"] for r in perf if r["validity"] != "valid"))
if rows["phases"]:
    check(len(rows["phases"]) == len(perf), f"phase table: {len(rows['phases'])} rows for {len(perf)} performance rows")
    for r in rows["phases"]:
        check(all(is_number(c) for c in r[3:10:6]), f"phase table row without numbers: {r}")
        # Each phase: its median with the timed steps' [min-max], min <= median <= max.
        for c in r[4:9]:
            m = re.fullmatch(r"([0-9.,e+-]+) \[([0-9.,e+-]+)-([0-9.,e+-]+)\]", c)
            check(m is not None and all(is_number(x) for x in m.groups()), f"phase cell without its range: {c!r} in {r}")
            if m:
                lo, med, hi = (float(x.replace(",", "")) for x in (m.group(2), m.group(1), m.group(3)))
                check(lo <= med <= hi, f"phase cell's median outside its range: {c!r}")
        check(r[10] == "no graph (CPU)", f"CPU row with a graph cell: {r}")
if rows["update"]:
    for r in rows["update"]:
        check(is_number(r[4]) and is_number(r[5]), f"update row without gather GB/s and fraction of triad: {r}")
        check(r[6] == "not run (GPU only)", f"CPU update row with a scatter cell: {r}")
its = read(os.path.join(real, "iterations.csv"))
if rows["iterations"]:
    check(len(rows["iterations"]) == len(its), f"iterations table: {len(rows['iterations'])} rows for {len(its)}")
    check(all(is_number(r[9]) for r in rows["iterations"]), "iterations table: a max that is not a number")
check(md.count("Verdict") >= 6, f"{md.count('Verdict')} verdicts, expected at least 6")
check("quick run" in md and "GPU not run (quick mode: CPU only)" in md, "the quick run is not said to be CPU only")
check("Verdict: not testable here: no GPU rows (the paper's figure is its GPU's)." in md,
      "the update verdict does not say the GPU was not run")
# Every verdict is at most two sentences (issue 25); the per-series findings sit in tables.
for line in md.splitlines():
    if line.startswith("Verdict"):
        check(verdict_table.sentences(line) <= 2, f"a verdict of more than two sentences: {line}")
check(not ABSOLUTE.search(md), "absolute path in the section: " + (ABSOLUTE.search(md).group(0) if ABSOLUTE.search(md) else ""))
for stem in ("verschoor2012_fig3_gflops", "verschoor2012_fig4_time", "verschoor2012_update_bandwidth"):
    check(png(os.path.join(figs, stem + ".png")), f"figure {stem}.png not written")
    check(f"]({stem}.png)" in md, f"figure {stem}.png not referenced")
real_md = md

# ---- a synthetic invalid run --------------------------------------------------------------------
bad = os.path.join(work, "results_invalid", "verschoor2012")
shutil.copytree(real, bad)
threads = max(int(r["threads"]) for r in perf)
row = {c: SENTINEL for c in columns}
row.update(model="bunny", N="40", elements="123457", nodes="31000", blocks="400000", backend="cpu", precision="fp64",
           threads=str(threads), variant="gather", mode="phases", validity=REASON, steps_timed="5", bytes_convention="")
write(os.path.join(bad, "performance.csv"), perf + [row], columns)
it_columns = list(its[0].keys())
irow = {c: SENTINEL for c in it_columns}
irow.update(model="bunny", N="40", elements="123457", backend="cpu", precision="fp64", tolerance="1e-05", validity=REASON,
            steps="30")
write(os.path.join(bad, "iterations.csv"), its + [irow], it_columns)
md = verschoor2012.build(bad, os.path.join(work, "figures_invalid"))
flat = md.replace(",", "")
check(not any(s in flat for s in ("987654", "9.88e", "9.877e")), "a number of the invalid run reached the section")
for k in ("phases", "spmv", "update", "iterations"):
    r = table(md, TABLES[k])
    hit = [x for x in (r or []) if "123,457" in x]
    if check(len(hit) == 1, f"{k} table: {len(hit)} rows for the invalid run"):
        check(REASON in hit[0], f"{k} table: the invalid run's row does not show its reason: {hit[0]}")
        first = 7 if k == "iterations" else 4  # after what identifies the run (precision, tolerance, steps)
        numbers = [c for c in hit[0][first:] if is_number(c)]
        check(not numbers, f"{k} table: numbers in the invalid run's row: {numbers}")
# Nothing else moves: without the invalid run's rows the section is the real one (verdicts included).
kept = [line for line in md.splitlines() if REASON not in line and not line.startswith("Data: ")]
same = [line for line in real_md.splitlines() if not line.startswith("Data: ")]
check(kept == same, "an invalid run changed more than its own rows: " +
      next((f"{a!r} vs {b!r}" for a, b in zip(kept, same) if a != b), "lengths differ"))
check(png(os.path.join(work, "figures_invalid", "verschoor2012_fig4_time.png")), "figures not written with an invalid row")
# Through make_report.py, as `elastobench report` runs it.
report_dir = os.path.join(work, "report_invalid")
run = subprocess.run(["/usr/bin/python3", os.path.join(analysis_dir, "make_report.py"), os.path.dirname(bad), report_dir,
                      "--quiet", "--no-pdf"], capture_output=True, text=True)
if check(run.returncode == 0, f"make_report.py exit {run.returncode}: {run.stderr[-2000:]}"):
    with open(os.path.join(report_dir, "report.md")) as f:
        report = f.read()
    check("## Verschoor & Jalba 2012" in report, "report.md lacks the section")
    check(REASON in report, "report.md lacks the invalid run's reason")
    check("](figures/verschoor2012_fig3_gflops.png)" in report, "report.md does not link the figures")
    check(not ABSOLUTE.search(report), "absolute path in report.md")

# ---- synthetic GPU rows (the quick mode runs none): the code paths of a GPU run ------------------
gpu = os.path.join(work, "results_gpu", "verschoor2012")
shutil.copytree(real, gpu)
synthetic = []
for r in valid:
    if r["threads"] != str(threads):
        continue
    base = dict(r, backend="cuda", threads="", stream_triad_gbps="3000")
    for k in ("update_of_triad", "spmv_of_triad", "step_of_triad"):
        g = {"update_of_triad": "update_gbps", "spmv_of_triad": "spmv_gbps", "step_of_triad": "step_gbps"}[k]
        base[k] = str(float(base[g]) / 3000) if base.get(g) else ""
    phases = dict(base, variant="gather", mode="phases")
    scatter = dict(base, variant="scatter", mode="phases", update_ms=str(float(r["update_ms"]) * 1.5),
                   update_gbps=str(float(r["update_gbps"]) / 1.5))
    step = float(r["step_ms"]) * 0.8
    graph = dict(base, variant="gather", mode="graph", step_ms=str(step), step_ms_min=str(step * 0.9),
                 step_ms_max=str(step * 1.2), steps_per_s=str(1000 / step))
    for k in ("rotation_ms", "matrix_ms", "update_ms", "cg_ms", "integrate_ms", "rotation_gflops", "matrix_gflops",
              "update_gflops", "cg_gflops", "update_gbps", "update_of_triad"):
        graph[k] = ""
    synthetic += [graph, phases, scatter]
write(os.path.join(gpu, "performance.csv"), synthetic + perf, columns)
with open(os.path.join(gpu, "meta.json")) as f:
    meta = json.load(f)
meta.update(quick=False, gpu=True)
meta.pop("gpu_note", None)
meta["machine"]["gpu"] = {"name": "synthetic GPU"}
with open(os.path.join(gpu, "meta.json"), "w") as f:
    json.dump(meta, f)
md = verschoor2012.build(gpu, os.path.join(work, "figures_gpu"))
r = table(md, TABLES["phases"]) or []
g = [x for x in r if x[0].startswith("GPU")]
check(g and all(re.fullmatch(r"[0-9,.]+ \[[0-9,.]+-[0-9,.]+\]", x[10]) for x in g), f"GPU rows without the graph's spread: {g[:1]}")
r = table(md, TABLES["update"]) or []
g = [x for x in r if x[0].startswith("GPU")]
check(g and all(is_number(x[4]) and is_number(x[6]) and x[8] == "1.50" for x in g),
      f"GPU update rows without gather and scatter side by side: {g[:1]}")
check(re.search(r"Verdict: (reproduced|not reproduced) on the GPU: the gather update runs at [0-9.,]+-[0-9.,]+ GB/s above 5k "
                r"elements \((at least|not always) 50 GB/s", md), "no GPU verdict on the 50 GB/s")
found = table(md, "| series | sizes above 5k elements | gather GB/s") or []
g = [x for x in found if x[0].startswith("GPU")]
check(g and all(re.fullmatch(r"\d+ of \d+", x[5]) for x in g), f"no gather-versus-scatter count in the GPU findings: {g[:1]}")
check("Ours: GPU synthetic GPU" in md, "the GPU's name is not shown")

# ---- parts left out -----------------------------------------------------------------------------
part = os.path.join(work, "results_part", "verschoor2012")
shutil.copytree(real, part)
os.remove(os.path.join(part, "iterations.csv"))
md = verschoor2012.build(part, os.path.join(work, "figures_part"))
check("CG iterations per tolerance: not run (no iterations.csv" in md, "a missing iterations.csv is not said")
check(table(md, TABLES["phases"]) == table(real_md, TABLES["phases"]), "the phase table changed without iterations.csv")
empty = os.path.join(work, "results_empty", "verschoor2012")
os.makedirs(empty)
md = verschoor2012.build(empty, os.path.join(work, "figures_empty"))
check("Models: not run" in md and "not run (no performance.csv" in md and "CG iterations per tolerance: not run" in md,
      "an empty folder does not read 'not run'")
check(png(os.path.join(work, "figures_empty", "verschoor2012_fig3_gflops.png")), "no placeholder figure for an empty folder")

if failures:
    print("FAILED:\n- " + "\n- ".join(failures))
    sys.exit(1)
print("verschoor2012 report: all checks passed")
