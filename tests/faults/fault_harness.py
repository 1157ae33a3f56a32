#!/usr/bin/env python3
"""Faults during output (issue 12): SIGKILL at random moments of `elastobench run` and
`elastobench reproduce`, and a file-size limit (ulimit -f) that makes writes fail, must never leave
a results folder that lies.

usage: fault_harness.py ELASTOBENCH WORKDIR [--data-dir D] [--kills N] [--reproduce-share F] [--seed S]

After every kill the folder is checked as a user's tools would read it:
  - summary.json, where present, parses and describes data that is all there: timeseries.csv with
    one row per step it counts, and a series whose every frame exists and is complete;
  - vtk/series.pvd, where present, parses and names only complete frames (the Python VTK reader
    opens each one, where python3-vtk9 is installed; else the frame must end its XML);
  - every *.csv parses with one field count on every row; every manifest.json parses;
  - no visible file is half written (the atomic writers use hidden temporaries).
Then a rerun into the same folder must succeed and pass the same checks. Kill moments are drawn
uniformly over the length of an undisturbed run (measured first), so set-up, time stepping and
the final writes are all hit. The file-size limit case expects exit 1, a message naming the file,
no summary.json and no visible partial file; without SIGXFSZ ignored the process would die of the
signal instead.
Exit 0 when every check passed, 1 otherwise (each failure printed with its iteration).
"""
import argparse
import csv
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

try:
    import vtk  # Debian's python3-vtk9: an independent reader of the frames
    from vtk.util.numpy_support import vtk_to_numpy  # noqa: F401  (only that the module works)
except Exception:  # pragma: no cover - depends on the machine
    vtk = None

RUN_ARGS = ["run", "-m", "bcsr-pcg", "-s", "cantilever", "--backend", "cpu", "--precision", "fp64",
            "--steps", "40", "--vtk-every", "2", "-q", "--threads", "1"]
# The quickest experiment with a folder of runs: verschoor2012 (~1-2 s) where the third-party bunny
# is at hand, else strbac2015 (built-in cube, ~10 s), so the harness also runs without the data.
def reproduce_args(data_dir):
    experiment = "verschoor2012" if os.path.isfile(os.path.join(data_dir, "bunny.off")) else "strbac2015"
    return ["reproduce", experiment, "--quick", "--no-report", "-q"], experiment


class Failures:
    def __init__(self):
        self.items = []

    def add(self, where, what):
        self.items.append(f"{where}: {what}")
        print(f"FAIL {where}: {what}", flush=True)


def frame_ok(path):
    """A frame is complete: VTK's own reader gets its points (or, without VTK, its XML closes)."""
    if not os.path.isfile(path):
        return "missing"
    if vtk is not None:
        reader = vtk.vtkXMLUnstructuredGridReader() if path.endswith(".vtu") else vtk.vtkXMLPolyDataReader()
        reader.SetFileName(path)
        errors = vtk.vtkFileOutputWindow()  # keep VTK's warnings off the test output
        errors.SetFileName(os.devnull)
        vtk.vtkOutputWindow.SetInstance(errors)
        reader.Update()
        out = reader.GetOutput()
        if reader.GetErrorCode() != 0 or out is None or out.GetNumberOfPoints() == 0:
            return "VTK cannot read it"
        return None
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - 64))
        return None if b"</VTKFile>" in f.read() else "XML not closed"


def check_pvd(pvd, where, fail):
    try:
        root = ET.parse(pvd).getroot()
    except ET.ParseError as e:
        fail.add(where, f"{pvd} does not parse: {e}")
        return 0
    folder = os.path.dirname(pvd)
    frames = root.findall(".//DataSet")
    for ds in frames:
        problem = frame_ok(os.path.join(folder, ds.get("file", "")))
        if problem:
            fail.add(where, f"{pvd} names {ds.get('file')}: {problem}")
    return len(frames)


def check_csv(path, where, fail):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        fail.add(where, f"{path} is empty")
        return 0
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        fail.add(where, f"{path} has rows of {sorted(widths)} fields (cut mid-row?)")
    return len(rows) - 1


def check_run_folder(d, where, fail):
    """One run's folder: a summary.json vouches for timeseries.csv and the series it names."""
    summary = os.path.join(d, "summary.json")
    if not os.path.exists(summary):
        return
    try:
        s = json.load(open(summary))
    except ValueError as e:
        fail.add(where, f"{summary} does not parse: {e}")
        return
    steps = s.get("time", {}).get("steps")
    ts = os.path.join(d, "timeseries.csv")
    if not os.path.exists(ts):
        fail.add(where, f"{summary} exists but timeseries.csv does not")
    else:
        # Long runs are sampled every k steps, but the last step always is: the series ends there.
        check_csv(ts, where, fail)
        with open(ts, newline="") as f:
            rows = list(csv.DictReader(f))
        last = rows[-1].get("step") if rows else None
        if steps is not None and last != str(steps):
            fail.add(where, f"{summary} counts {steps} steps, timeseries.csv ends at step {last}")
    series = s.get("files", {}).get("vtk")
    if series and not os.path.exists(os.path.join(d, series)):
        fail.add(where, f"{summary} names {series}, which does not exist")


def check_tree(root, where, fail):
    """Every file a reader would pick up under root."""
    for folder, _, files in os.walk(root):
        check_run_folder(folder, where, fail)
        for name in files:
            path = os.path.join(folder, name)
            if name.startswith("."):
                continue  # temporaries of atomic writes: hidden until renamed
            if name.endswith(".pvd"):
                check_pvd(path, where, fail)
            elif name.endswith(".csv"):
                check_csv(path, where, fail)
            elif name.endswith(".json"):
                try:
                    json.load(open(path))
                except ValueError as e:
                    fail.add(where, f"{path} does not parse: {e}")


def launch(cmd, env, limit_bytes=None):
    def pre():
        os.setsid()
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=pre)


def timed_run(cmd, env):
    start = time.monotonic()
    p = launch(cmd, env)
    out, err = p.communicate(timeout=900)
    return p.returncode, time.monotonic() - start, err.decode(errors="replace")


def newest_file(root):
    newest = 0.0
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.startswith("."):
                newest = max(newest, os.path.getmtime(os.path.join(folder, name)))
    return newest


def stale_candidates(name):
    if name == "run":
        return ["summary.json", "timeseries.csv", os.path.join("vtk", "series.pvd")]
    return ["manifest.json", os.path.join(name.split()[-1], "manifest.json")]


def kill_series(name, base_cmd, out, count, env, rng, fail):
    """count kills of base_cmd + [-o out], each at a uniform moment of an undisturbed run's length."""
    if count <= 0:
        return
    shutil.rmtree(out, ignore_errors=True)
    rc, length, err = timed_run(base_cmd + ["-o", out], env)
    if rc != 0:
        fail.add(f"{name} baseline", f"exit {rc}: {err.strip()[-400:]}")
        return
    check_tree(out, f"{name} baseline", fail)
    print(f"{name}: undisturbed run {length:.2f} s; {count} kills into the same folder", flush=True)
    killed = 0
    for i in range(count):
        delay = rng.uniform(0.0, length)
        where = f"{name} kill {i + 1} at {delay:.2f} s"
        launched = time.time()
        p = launch(base_cmd + ["-o", out], env)
        time.sleep(delay)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            killed += 1
        p.communicate()
        check_tree(out, where, fail)
        # Once this run has written anything, what vouches for a run (summary, manifest, series)
        # must be this run's or gone, never an earlier run's beside files this run began to replace.
        if newest_file(out) >= launched:
            for rel in stale_candidates(name):
                path = os.path.join(out, rel)
                if os.path.exists(path) and os.path.getmtime(path) < launched:
                    fail.add(where, f"{rel} of the earlier run left beside the killed run's files")
    rc, _, err = timed_run(base_cmd + ["-o", out], env)
    if rc != 0:
        fail.add(f"{name} rerun after the kills", f"exit {rc}: {err.strip()[-400:]}")
    check_tree(out, f"{name} rerun", fail)
    if name == "run" and not os.path.exists(os.path.join(out, "summary.json")):
        fail.add(f"{name} rerun", "no summary.json after a complete run")
    print(f"{name}: {killed} of {count} runs killed before they ended", flush=True)


def file_size_limit(exe, work, env, fail):
    """Writes past ulimit -f fail cleanly: exit 1, the file named, nothing partial left."""
    out = os.path.join(work, "fsize")
    shutil.rmtree(out, ignore_errors=True)
    limit = 64 * 1024  # the frames of this mesh are ~100 KB: the first frame passes the limit
    p = launch([exe] + RUN_ARGS + ["-o", out], env, limit_bytes=limit)
    _, err = p.communicate(timeout=600)
    err = err.decode(errors="replace")
    where = "file-size limit"
    if p.returncode != 1:
        fail.add(where, f"exit {p.returncode} (expected 1; {-p.returncode if p.returncode < 0 else ''} is a signal)"
                 f": {err.strip()[-300:]}")
    if ".vtu" not in err and "vtk" not in err:
        fail.add(where, f"the message does not name the file: {err.strip()[-300:]}")
    if os.path.exists(os.path.join(out, "summary.json")):
        fail.add(where, "summary.json written by a run that failed")
    for folder, _, files in os.walk(out):
        for name in files:
            path = os.path.join(folder, name)
            if name.startswith("."):
                fail.add(where, f"temporary {path} left behind")
            elif os.path.getsize(path) >= limit:
                fail.add(where, f"{path} is {os.path.getsize(path)} bytes: cut at the limit")
    check_tree(out, where, fail)
    print(f"{where}: exit {p.returncode}: {err.strip().splitlines()[-1] if err.strip() else ''}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("elastobench")
    ap.add_argument("workdir")
    ap.add_argument("--data-dir", default=os.environ.get("ELASTOBENCH_DATA", ""))
    ap.add_argument("--kills", type=int, default=int(os.environ.get("EB_FAULT_KILLS", "50")))
    ap.add_argument("--reproduce-share", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("EB_FAULT_SEED", "12")))
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if a.data_dir:
        env["ELASTOBENCH_DATA"] = a.data_dir
    repro_cmd, experiment = reproduce_args(a.data_dir)
    rng = random.Random(a.seed)
    fail = Failures()
    n_reproduce = int(round(a.kills * a.reproduce_share))
    kill_series("run", [a.elastobench] + RUN_ARGS, os.path.join(a.workdir, "run"), a.kills - n_reproduce, env, rng,
                fail)
    kill_series(f"reproduce {experiment}", [a.elastobench] + repro_cmd, os.path.join(a.workdir, "reproduce"),
                n_reproduce, env, rng, fail)
    file_size_limit(a.elastobench, a.workdir, env, fail)
    print(f"{len(fail.items)} failures ({a.kills} kills, seed {a.seed}; frames read by "
          f"{'VTK' if vtk is not None else 'an XML check'})")
    return 1 if fail.items else 0


if __name__ == "__main__":
    sys.exit(main())
