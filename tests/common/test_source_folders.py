#!/usr/bin/env python3
"""Every section whose timings can lack their spread reports another machine's full run of its
experiment that has them (result_format.folder_with_spreads through each module's source_folder):
cecka2011 (stage times), verschoor2012 (phase times), dick2011 (Table 3's kernel times) and linalg
(bench_sparse min-max); never a --quick run or one of another kind (with or without a GPU), and a
folder with spreads keeps its own. What such a section keeps of the asked folder: linalg's rows with
benchmarks the chosen run did not finish and dick2011's test-shape study when the chosen run skipped it; the
head-to-head's scale part shows every machine's measured run. The sentence names folders as
<device>/<experiment>.

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
import result_format  # noqa: E402
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

# The sentence names folders as <device>/<experiment> (no path of the machine that built the
# report) and the machine from a meta without `machine` by its gpu name.
root = tempfile.mkdtemp()
line = result_format.source_line(os.path.join(root, "h100", "dick2011"), os.path.join(root, "h200", "dick2011"),
                                 {"gpu": "NVIDIA H200"}, "kernel times have no spread")
if line != "This section reports NVIDIA H200 (`h200/dick2011`) instead of `h100/dick2011`, whose kernel times have no spread.":
    failures.append(f"source_line: {line}")

# linalg: a matrix and precision for which the chosen run lacks benchmarks the asked folder has
# shows both rows, the chosen run's and the asked folder's marked with its device; a row the chosen
# run finished is its own alone.
root = tempfile.mkdtemp()


def bench_file(d, name, rows):
    os.makedirs(d, exist_ok=True)
    entries = [{"name": f"{r}/manual_time_{a}", "run_name": r, "run_type": "aggregate", "aggregate_name": a,
                "real_time": t, "time_unit": "us", "DOFs": 1000.0, "of_triad": 0.9}
               for r, t in rows for a, t in [("median", t), ("min", t * 0.99), ("max", t * 1.01)]]
    with open(os.path.join(d, name), "w") as f:
        json.dump({"context": {"date": "2026-11-28T00:00:00+00:00"}, "benchmarks": entries}, f)


old_dir, new_dir = os.path.join(root, "h100", "linalg"), os.path.join(root, "h200", "linalg")
bench_file(old_dir, "bench_sparse_box10.json", [("spmv/cuda/bcsr/fp32/box10", 111.0), ("spmv/cuda/bcsr/fp64/box10", 222.0),
                                               ("cusparse_csr/fp32/box10", 333.0)])
with open(os.path.join(old_dir, "bench_sparse_box10.json")) as f:  # the old run: cv only, no min-max
    data = json.load(f)
data["benchmarks"] = [b for b in data["benchmarks"] if b["aggregate_name"] == "median"]
with open(os.path.join(old_dir, "bench_sparse_box10.json"), "w") as f:
    json.dump(data, f)
bench_file(new_dir, "bench_sparse_box10.json", [("spmv/cuda/bcsr/fp64/box10", 200.0), ("spmv/cuda/bcsr/fp32/box10", 100.0)])
text = linalg.build(old_dir, tempfile.mkdtemp())
if "| box10 (h100) | fp32 |" not in text or "111.0 us" not in text or "333.0 us" not in text:
    failures.append("linalg: the unfinished fp32 row's missing benchmarks do not come from h100")
if "| box10 | fp64 | " not in text or "200.0 us (198.0 us-202.0 us)" not in text or "222.0 us" in text:
    failures.append("linalg: the finished fp64 row is not the chosen run's alone")
if "| box10 | fp32 | " not in text or "100.0 us (99.0 us-101.0 us)" not in text:
    failures.append("linalg: the unfinished row's own measured numbers were dropped")

# dick2011: a chosen run that did not do the test-shape part takes that study from the asked folder.
root = tempfile.mkdtemp()
asked, used = os.path.join(root, "h100", "dick2011"), os.path.join(root, "h200", "dick2011")
for d, parts in ((asked, {"shapes": True}), (used, {"performance": True})):
    os.makedirs(d)
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"gpu": os.path.basename(os.path.dirname(d)), "parts_done": parts,
                   "mg_shapes_studies": {"cube": {"reference_relative_residual": 1e-13}} if "shapes" in parts else {}}, f)
with open(os.path.join(asked, "mg_shapes.csv"), "w") as f:
    f.write("shape,iteration\ncube,1\ncube,2\n")
with open(os.path.join(used, "mg_shapes.csv"), "w") as f:  # a part cut short: not reported
    f.write("shape,iteration\ncube,1\n")
seen = []
real_section = dick2011.shapes_section
dick2011.shapes_section = lambda shp: seen.append((len(shp), dict(dick2011.META.get("mg_shapes_studies", {})))) or "S"
dick2011.META.clear()
dick2011.META.update({"parts_done": {"performance": True}})
text = dick2011.shapes_part(asked, used)
dick2011.shapes_section = real_section
if seen != [(2, {"cube": {"reference_relative_residual": 1e-13}})] or "`h100/dick2011`" not in text:
    failures.append(f"dick2011 shapes from the asked folder: {seen} {text!r}")

# The head-to-head's scale part: another machine's measured run gets its own table; a CPU folder's
# "GPU-only" note does not.
import head_to_head_nonlinear  # noqa: E402
root = tempfile.mkdtemp()
for device, meta in (("h100", {"device": "H100", "options": {}}), ("h200", {"device": "H200", "options": {}}),
                     ("vm", {"note": "GPU-only part"})):
    d = os.path.join(root, device, "head-to-head")
    os.makedirs(d)
    with open(os.path.join(d, "scale_meta.json"), "w") as f:
        json.dump(meta, f)
text = head_to_head_nonlinear._scale(os.path.join(root, "h100", "head-to-head"))
if "#### Scale on `h200`" not in text or "`vm`" in text:
    failures.append(f"scale tables of other machines: {text!r}")

# A scale row's set-up cell adds the device-memory estimate's seconds where the run timed them
# (the estimate builds much of the problem again); rows without them show the set-up alone, and a
# row whose method reported its own device bytes (no estimate at the largest size) holds those.
cols = ("method,variant,element,bytes_per_element,memory_elements,host_elements,limited_by,elements,predicted_bytes,"
        "estimate_bytes,device_bytes,estimate_s,setup_s,steps_per_s,step_ms_min,step_ms_max,validity")
with open(os.path.join(root, "h200", "head-to-head", "scale_rows.csv"), "w") as f:
    f.write(cols + "\n")
    f.write("nr-neohookean,sharednz,tet4,1100,1e8,2e7,setup time,1e7,1.1e10,1.1e10,0,150.2,184.3,5.4,181,191,valid\n")
    f.write("hexmg,vcycle,hex8,1541,7.7e7,,memory,7.6e7,1.2e11,,1.19e11,,178.7,2.09,477,478,valid\n")
text = head_to_head_nonlinear._scale(os.path.join(root, "h100", "head-to-head"))
if "| 184.3 (+ 150.2 estimate) |" not in text or "| 119 | 178.7 |" not in text:
    failures.append(f"scale set-up cells: {text!r}")
if "Set-up by stage" in text:
    failures.append("a stage list without a setup_stages column")

# A row with the method's own set-up stages gets a line of them under the table (one decimal);
# rows without stages get none.
with open(os.path.join(root, "h200", "head-to-head", "scale_rows.csv"), "w") as f:
    f.write(cols + ",setup_stages\n")
    f.write("nr-neohookean,sharednz,tet4,1100,1e8,2e7,setup time,73502580,1.1e10,,8e10,,394.6,0.66,1601,1461,valid,"
            "model 36.679378932 s; engine: partition 152.87044 s; engine 299.787 s\n")
    f.write("hexmg,vcycle,hex8,1541,7.7e7,,memory,7.6e7,1.2e11,,1.19e11,,178.7,2.09,477,478,valid,\n")
text = head_to_head_nonlinear._scale(os.path.join(root, "h100", "head-to-head"))
if "- nr-neohookean (73,502,580 elements): model 36.7 s; engine: partition 152.9 s; engine 299.8 s." not in text \
        or "- hexmg" in text:
    failures.append(f"scale set-up stages: {text!r}")

# A run pinned to part of a shared host reads "U of N threads", and its meta's run_note follows the
# source line: a reader of a CPU column learns which cores it had.
line = result_format.source_line(
    os.path.join(root, "h100", "x"), os.path.join(root, "h200", "x"),
    {"machine": {"cpu_model": "Xeon", "cpu_threads": 64, "cpu_threads_usable": 16, "gpu": {"name": "H200"}},
     "run_note": "pinned to cores 0-15."}, "rows lack spreads")
if "Xeon (16 of 64 threads), H200" not in line or not line.endswith("That run: pinned to cores 0-15."):
    failures.append(f"source line of a pinned run: {line!r}")
if result_format.machine_line({"machine": {"cpu_model": "Xeon", "cpu_threads": 2, "cpu_threads_usable": 2}}) != \
        "Xeon (2 threads), no GPU":
    failures.append("machine line of an unpinned run")

if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("source folders: all checks passed")
