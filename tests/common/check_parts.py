#!/usr/bin/python3
"""`reproduce --parts`: two runs of different parts into one folder combine (the first part's files
stay, meta.json records both parts, the experiment manifest names the machine and build of each
part), and an unknown part, a part of an experiment without parts, or --parts with `all` exit 2
naming what is wrong, writing nothing.   Usage: check_parts.py ELASTOBENCH WORK_DIR"""
import json
import os
import shutil
import subprocess
import sys

exe, work = sys.argv[1], os.path.abspath(sys.argv[2])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
out = os.path.join(work, "out")


def cli(*args):
    return subprocess.run([exe, "reproduce", *args, "--out", out, "--no-report", "--quiet"], capture_output=True, text=True)


for args, needle in [(["dick2011", "--parts", "nope"], "no part 'nope'"),
                     (["dick2011", "--parts", "vtk,shapez"], "no part 'shapez'"),
                     (["strbac2015", "--parts", "vtk"], "'strbac2015' has no parts"),
                     (["all", "--parts", "vtk"], "not `all`")]:
    r = cli(*args)
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    assert needle in r.stderr, (args, r.stderr)
assert not os.path.exists(out), "a refused --parts run wrote files"

for part in ("vtk", "convergence"):
    r = cli("dick2011", "--quick", "--parts", part)
    assert r.returncode == 0, (part, r.stdout, r.stderr)
folder = os.path.join(out, "dick2011")
for f in ("convergence.csv", "mg_factor.csv", os.path.join("runs", "vtk_bunny", "summary.json")):
    assert os.path.isfile(os.path.join(folder, f)), f"{f} missing after the two part runs: {os.listdir(folder)}"
for f in ("performance.csv", "accuracy.csv", "mg_shapes.csv"):
    assert not os.path.exists(os.path.join(folder, f)), f"{f} written by a run of other parts"
meta = json.load(open(os.path.join(folder, "meta.json")))
assert meta["parts_done"] == {"vtk": True, "convergence": True}, meta["parts_done"]
assert meta["convergence_models"], meta
manifest = json.load(open(os.path.join(folder, "manifest.json")))
assert set(manifest["parts"]) == {"vtk", "convergence"}, manifest["parts"]
for part, who in manifest["parts"].items():
    assert who["build"].get("git_commit") and who["machine"].get("cpu_model"), (part, who)
    assert who["quick"] is True, (part, who)
assert [e["name"] for e in manifest["experiments"]] == ["dick2011"], manifest["experiments"]
print("reproduce --parts: refused parts exit 2; two part runs combine in one folder with per-part provenance")
