#!/usr/bin/python3
"""End-to-end check that ParaView opens every time series the CLI writes.

Runs the real `elastobench run --vtk-every` into relative, absolute and `..`-nested --out folders
(or, with --reproduce, `elastobench reproduce strbac2015 --quick` into an absolute folder with `..`,
the cheapest reproduce that writes a series: OUT/strbac2015/vtk_run/vtk/series.pvd), then
opens every .pvd found with ParaView's PVD reader under pvbatch + xvfb-run, and compares frame
count, points, cells and arrays of every frame with the .pvd's entries, the frame files' headers
and the run's summary.json.

usage: paraview_series_test.py [--pvbatch-preload=SHIM] ELASTOBENCH VTK_IO_H WORK_DIR [--reproduce]
Exit 77 (skipped) only when pvbatch is not installed.

SHIM (built by tests/meshes/CMakeLists.txt from expat_no_reparse_deferral.c) is LD_PRELOADed into
pvbatch: Debian 12's ParaView 5.11 misreads raw appended data with the security-updated libexpat1.

ParaView's Python modules: Debian 12's python3-paraview conflicts with python3-vtk9 (which
libvtk9-dev needs), so scripts/install_deps.sh unpacks them into a private prefix,
$EB_PARAVIEW_PYTHON_PREFIX (default /opt/elastobench/python3-paraview), put here on pvbatch's
PYTHONPATH. A system-wide python3-paraview works too."""
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
PRELOAD_OPT = "--pvbatch-preload="
preload = [a[len(PRELOAD_OPT):] for a in sys.argv[1:] if a.startswith(PRELOAD_OPT)]
args = [a for a in sys.argv[1:] if not a.startswith(PRELOAD_OPT)]
elastobench, vtk_io_h, work = (os.path.abspath(a) for a in args[0:3])
reproduce = "--reproduce" in args[3:]

if shutil.which("pvbatch") is None:
    print("pvbatch is not installed (Debian paraview + python3-paraview); skipping the ParaView check")
    sys.exit(77)
if shutil.which("xvfb-run") is None:
    sys.exit("xvfb-run is missing (Debian xvfb, xauth): pvbatch needs an X display")

PV_PREFIX = os.environ.get("EB_PARAVIEW_PYTHON_PREFIX", "/opt/elastobench/python3-paraview")
PV_SITE = os.path.join(PV_PREFIX, "usr", "lib", "python3", "dist-packages")


def pvbatch_env():
    """pvbatch embeds Debian's Python 3.11: none of the caller's Python settings (a pyenv's
    PYTHONHOME/PYTHONPATH, a virtualenv, user site-packages) reach it, Debian's binaries come first
    on PATH, and ParaView's private modules (install_deps.sh) are its only PYTHONPATH entry."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PYTHON") and k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
    env["PATH"] = "/usr/bin:/bin:" + os.environ.get("PATH", "")
    env["PYTHONNOUSERSITE"] = "1"
    if os.path.isdir(os.path.join(PV_SITE, "paraview")):
        env["PYTHONPATH"] = PV_SITE
    return env


def field_names(header):
    """Point and cell field names as declared in meshes/vtk_io.h, namespace field."""
    text = open(header).read()
    block = text[text.index("namespace field {"):text.index("}  // namespace field")]
    point, cell = block.split("// cell data")
    name = re.compile(r'=\s*"([^"]+)"')
    return set(name.findall(point)), set(name.findall(cell))


POINT_FIELDS, CELL_FIELDS = field_names(vtk_io_h)
COMPONENTS = {"displacement": 3, "velocity": 3}
assert {"displacement", "velocity", "fixed"} <= POINT_FIELDS, POINT_FIELDS

shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
os.chdir(work)

# The cantilever's own box as a render surface: 8 vertices, 12 triangles, known without our reader.
SURFACE = os.path.join(work, "beam.off")
with open(SURFACE, "w") as f:
    f.write("OFF\n8 12 0\n")
    for i in range(8):
        f.write(f"{(i & 1) * 1.0} {(i >> 1 & 1) * 0.1} {(i >> 2 & 1) * 0.1}\n")
    for a, b, c in [(0, 2, 1), (1, 2, 3), (4, 5, 6), (5, 7, 6), (0, 1, 4), (1, 5, 4),
                    (2, 6, 3), (3, 6, 7), (0, 4, 2), (2, 4, 6), (1, 3, 5), (3, 7, 5)]:
        f.write(f"3 {a} {b} {c}\n")
SURFACE_COUNTS = (8, 12)

FAST = ["--set", "mesh.element_size=0.05", "-q"]
# (out as given on the command line, arguments, steps, vtk_every, has render surface)
RUNS = [
    ("rel/hexmg", ["-m", "hexmg", "-b", "cpu", "-p", "fp64", "-s", "cantilever"], 6, 2, False),
    (os.path.join(work, "abs", "tled"), ["-m", "tled", "-b", "cpu", "-p", "fp32", "-s", "cantilever",
                                         "--set", "time.dt=0", "--set", "output.render_surface=" + SURFACE], 50, 20, True),
    ("./nested/a/../b/./c/hexmg", ["-m", "hexmg", "-b", "cpu", "-p", "fp32", "-s", "cantilever",
                                   "--set", "output.render_surface=" + SURFACE], 5, 2, True),
]
REPRODUCE_OUT = os.path.join(work, "repro", "x", "..", "out")


def run_cli(*args):
    r = subprocess.run([elastobench, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"elastobench {' '.join(args)} exited {r.returncode}:\n{r.stdout}{r.stderr}")


errors = []
expected = {}  # normalized .pvd path -> (frames, surface counts or None)
for out, args, steps, every, surface in [] if reproduce else RUNS:
    run_cli("run", *args, *FAST, "--steps", str(steps), "--vtk-every", str(every), "--out", out)
    frames = steps // every + 1 + (1 if steps % every else 0)
    vtk = os.path.normpath(os.path.join(work, out, "vtk"))
    expected[os.path.join(vtk, "series.pvd")] = (frames, None)
    if surface:
        expected[os.path.join(vtk, "render_surface.pvd")] = (frames, SURFACE_COUNTS)
if reproduce:
    run_cli("reproduce", "strbac2015", "--quick", "--no-report", "-q", "--out", REPRODUCE_OUT)
    vtk = os.path.normpath(os.path.join(REPRODUCE_OUT, "strbac2015", "vtk_run", "vtk"))
    expected[os.path.join(vtk, "series.pvd")] = (None, None)

pvds = sorted(os.path.join(root, f) for root, _, files in os.walk(work) for f in files if f.endswith(".pvd"))
missing = set(expected) - set(pvds)
if missing:
    sys.exit(f"expected series not written: {sorted(missing)}")

report_file = os.path.join(work, "paraview_report.json")
# Relative names, resolved by ParaView from pvbatch's working directory, as a user would type them.
for shim in preload:
    if not os.path.isfile(shim):
        sys.exit(f"--pvbatch-preload: {shim} does not exist (build the target eb_expat_no_reparse_deferral)")
# The shim goes into pvbatch only, not into xvfb-run, xauth or Xvfb.
cmd = ["xvfb-run", "-a", *(["env", "LD_PRELOAD=" + " ".join(preload)] if preload else []),
       "pvbatch", os.path.join(HERE, "pvd_paraview_report.py"), report_file,
       *[os.path.relpath(p, work) for p in pvds]]
env = pvbatch_env()
r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
# Printed with every failure from here on, so that a CI log explains itself.
pvbatch_output = (f"--- {' '.join(cmd)} (exit {r.returncode}, PYTHONPATH={env.get('PYTHONPATH', '')})\n"
                  f"--- stdout:\n{r.stdout}--- stderr:\n{r.stderr}--- end of pvbatch output")


def excepthook(kind, value, tb):
    sys.__excepthook__(kind, value, tb)
    print(pvbatch_output, file=sys.stderr)


sys.excepthook = excepthook
if r.returncode != 0 or not os.path.exists(report_file):
    hint = ""
    if "No module named 'paraview'" in r.stdout + r.stderr:
        hint = (f"\npvbatch cannot import ParaView's Python modules: neither python3-paraview nor its private "
                f"copy in {PV_PREFIX} is installed (bash scripts/install_deps.sh unpacks it there)")
    sys.exit(f"pvbatch failed ({r.returncode}):\n{pvbatch_output}{hint}")
seen = {os.path.join(work, k): v for k, v in json.load(open(report_file)).items()}
# ParaView's reader logs a missing or unreadable frame without failing the script.
for line in (r.stdout + r.stderr).splitlines():
    if re.search(r"\bERR\||[Ee]rror", line):
        errors.append(f"pvbatch: {line.strip()}")


def header_counts(frame):
    """NumberOfPoints and NumberOfCells/NumberOfPolys from a frame's XML header."""
    with open(frame, "rb") as f:
        head = f.read(4096).split(b"<AppendedData")[0].decode()
    points = re.search(r'NumberOfPoints="(\d+)"', head)
    cells = re.search(r'Number(?:OfCells|OfPolys)="(\d+)"', head)
    return (int(points.group(1)), int(cells.group(1))) if points and cells else None


def close(a, b, rel):
    return a is not None and b is not None and abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-300


def check(pvd, view):
    where = os.path.relpath(pvd, work)
    folder = os.path.dirname(pvd)
    entries = [(float(d.get("timestep")), d.get("file")) for d in ET.parse(pvd).getroot().iter("DataSet")]
    surface = os.path.basename(pvd) == "render_surface.pvd"
    prefix, ext = ("render_surface_", ".vtp") if surface else ("step_", ".vtu")
    on_disk = sorted(f for f in os.listdir(folder) if f.startswith(prefix) and f.endswith(ext))
    want_frames, want_counts = expected.get(pvd, (None, None))
    if not entries:
        return [f"{where}: no DataSet entries"]
    errs = []
    if len(entries) != len(on_disk):
        errs.append(f"{where}: {len(entries)} DataSet entries, {len(on_disk)} {prefix}*{ext} files beside it")
    if want_frames is not None and len(entries) != want_frames:
        errs.append(f"{where}: {len(entries)} frames, expected {want_frames}")
    if len(view["times"]) != len(entries) or len(view["frames"]) != len(entries):
        errs.append(f"{where}: ParaView sees {len(view['times'])} time steps for {len(entries)} DataSet entries")
    summary = None
    if not surface:
        with open(os.path.join(os.path.dirname(folder), "summary.json")) as f:
            summary = json.load(f)
    for (t, name), frame in zip(entries, view["frames"]):
        at = f"{where} t={t}"
        file = os.path.join(folder, name)
        declared = header_counts(file) if os.path.isfile(file) else None
        if declared is None:
            errs.append(f"{at}: DataSet file {name} is not a frame file relative to the .pvd's folder")
        if not close(frame["time"], t, 1e-12) or not close(frame["data_time"], t, 1e-12):
            errs.append(f"{at}: ParaView's frame is at t={frame['time']} (data {frame['data_time']})")
        counts = (frame["points"], frame["cells"])
        if declared and counts != declared:
            errs.append(f"{at}: ParaView reads {counts} points/cells, {name} declares {declared}")
        if surface:
            if frame["class"] != "vtkPolyData":
                errs.append(f"{at}: {frame['class']}, expected vtkPolyData")
            if want_counts and counts != want_counts:
                errs.append(f"{at}: {counts} points/triangles, the surface file has {want_counts}")
            if set(frame["point_arrays"]) != {"displacement"}:
                errs.append(f"{at}: point arrays {sorted(frame['point_arrays'])}, expected ['displacement']")
        else:
            if frame["class"] != "vtkUnstructuredGrid":
                errs.append(f"{at}: {frame['class']}, expected vtkUnstructuredGrid")
            mesh = summary["mesh"]
            if counts != (mesh["nodes"], mesh["elements"]):
                errs.append(f"{at}: {counts} points/cells, summary.json has {mesh['nodes']}/{mesh['elements']}")
            if set(frame["point_arrays"]) != POINT_FIELDS:
                errs.append(f"{at}: point arrays {sorted(frame['point_arrays'])}, expected {sorted(POINT_FIELDS)}")
            cell = set(frame["cell_arrays"])
            if not cell or not cell <= CELL_FIELDS:
                errs.append(f"{at}: cell arrays {sorted(cell)}, expected a non-empty subset of {sorted(CELL_FIELDS)}")
        for kind, size in (("point_arrays", frame["points"]), ("cell_arrays", frame["cells"])):
            for a, info in frame[kind].items():
                if info["tuples"] != size or info["components"] != COMPONENTS.get(a, 1):
                    errs.append(f"{at}: {a} has {info['tuples']} x {info['components']}, expected {size} x {COMPONENTS.get(a, 1)}")
        if frame["points"] == 0:
            errs.append(f"{at}: no points")
    if summary and view["frames"]:
        last_t, last = entries[-1][0], view["frames"][-1]
        if not close(last_t, summary["time"]["simulated_time"], 1e-9):
            errs.append(f"{where}: last frame at t={last_t}, summary.json simulated_time {summary['time']['simulated_time']}")
        u = last["point_arrays"].get("displacement", {}).get("max_norm")
        # Frames of fp32 runs hold fp32 values.
        if not close(u, summary["displacement"]["max_norm"], 1e-5):
            errs.append(f"{where}: last frame max |u| {u}, summary.json {summary['displacement']['max_norm']}")
    return errs


for pvd in pvds:
    errors += check(pvd, seen[pvd])

if errors:
    print("\n".join(errors))
    print(pvbatch_output)
    sys.exit(1)
print(f"ok: ParaView opened {len(pvds)} series: " + ", ".join(os.path.relpath(p, work) for p in pvds))
