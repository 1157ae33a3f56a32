#!/usr/bin/env python3
"""Every section whose timings can lack their spread reports another machine's full run of its
experiment that has them (result_format.folder_with_spreads through each module's source_folder):
cecka2011 (stage times), verschoor2012 (phase times), dick2011 (Table 3's kernel times) and linalg
(bench_sparse min-max); never a --quick run or one of another kind (with or without a GPU), and a
folder with spreads keeps its own.

    test_source_folders.py ANALYSIS_DIR
"""
import json
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import cecka2011  # noqa: E402
import dick2011  # noqa: E402
import linalg  # noqa: E402
import verschoor2012  # noqa: E402

CSV = {"cecka2011": ("stages.csv", "configuration,stage,step_ms", "step_ms_min,step_ms_max", "all-cpu,nr,1.0", "0.9,1.1"),
       "verschoor2012": ("performance.csv", "model,N,rotation_ms", "rotation_ms_min,rotation_ms_max", "bunny,8,0.1",
                         "0.09,0.11"),
       "dick2011": ("kernels.csv", "precision,kernel,gpu_ms_per_step", "gpu_ms_min,gpu_ms_max", "fp32,rotations,0.02",
                    "0.019,0.021")}
MODULES = {"cecka2011": cecka2011, "verschoor2012": verschoor2012, "dick2011": dick2011, "linalg": linalg}


def bench(with_range):
    entries = [{"name": "spmv/cuda/bcsr/fp64/box10/manual_time_median", "run_name": "spmv/cuda/bcsr/fp64/box10",
                "run_type": "aggregate", "aggregate_name": a, "real_time": t, "time_unit": "us"}
               for a, t in [("median", 100.0)] + ([("min", 98.0), ("max", 103.0)] if with_range else [])]
    return json.dumps({"context": {"date": "2026-11-28T00:00:00+00:00"}, "benchmarks": entries})


def folder(root, device, exp, spreads, gpu=True, quick=False):
    d = os.path.join(root, device, exp)
    os.makedirs(d)
    if exp == "linalg":
        with open(os.path.join(d, "bench_sparse_a.json"), "w") as f:
            f.write(bench(spreads))
    else:
        name, head, extra, row, extra_row = CSV[exp]
        with open(os.path.join(d, name), "w") as f:
            f.write(head + ("," + extra if spreads else "") + "\n" + row + ("," + extra_row if spreads else "") + "\n")
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump({"gpu": gpu, "quick": quick, "machine": {"cpu_model": "X", "cpu_threads": 4,
                                                               "gpu": {"name": f"GPU {device}"}}}, f)
    return d


failures = []
for exp, module in MODULES.items():
    root = tempfile.mkdtemp()
    old = folder(root, "a_old", exp, spreads=False)
    if exp != "linalg":  # bench_sparse folders carry no meta.json: no quick or CPU-only runs to refuse
        folder(root, "b_quick", exp, spreads=True, quick=True)
        folder(root, "c_cpu", exp, spreads=True, gpu=False)
        if module.source_folder(old) != old:
            failures.append(f"{exp}: took a quick or CPU-only run: {module.source_folder(old)}")
    new = folder(root, "d_new", exp, spreads=True)
    if module.source_folder(old) != new:
        failures.append(f"{exp}: kept the run without spreads: {module.source_folder(old)}")
    if module.source_folder(new) != new:
        failures.append(f"{exp}: a run with spreads left its own folder")
    lone = folder(tempfile.mkdtemp(), "only", exp, spreads=False)
    if module.source_folder(lone) != lone:
        failures.append(f"{exp}: a folder without siblings moved")

# The cecka2011 step cells those runs give: median with the timed steps' min-max, else said missing.
if cecka2011.with_spread({"step_ms": "1.4167", "step_ms_min": "1.3938", "step_ms_max": "1.442"}) != "1.42 (1.39-1.44)":
    failures.append("cecka2011 step cell with spread")
if cecka2011.with_spread({"step_ms": "1.4", "step_ms_min": ""}) != "1.4 (spread not recorded)":
    failures.append("cecka2011 step cell without spread")

if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("source folders: all checks passed")
