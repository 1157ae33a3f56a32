#!/usr/bin/env python3
"""analysis/head_to_head_nonlinear.py's nonlinear section on committed results: a machine's folder
without the nonlinear part shows another machine's run, named, with its rows and its concurrency
note; with no machine holding one it reads "not run"; the machine's own run is shown unlabelled.

    test_nl_analysis.py ANALYSIS_DIR RESULTS_DIR   (RESULTS_DIR: a <device>/head-to-head with the part)
"""
import glob
import os
import shutil
import sys
import tempfile

analysis, results = sys.argv[1:3]
sys.path.insert(0, analysis)
import head_to_head_nonlinear as nl  # noqa: E402

files = sorted(glob.glob(os.path.join(results, "nonlinear_*")))
assert files, results
with tempfile.TemporaryDirectory() as tmp:
    here, other = os.path.join(tmp, "mine", "head-to-head"), os.path.join(tmp, "theirs", "head-to-head")
    os.makedirs(here)
    os.makedirs(other)
    figures = os.path.join(tmp, "figures")

    alone = nl._nonlinear(here, figures)
    assert alone.strip().endswith(nl.NOT_RUN), alone

    for f in files:
        shutil.copy(f, other)
    shown = nl._nonlinear(here, figures)
    assert "Not run on this machine; the run on **theirs**" in shown, shown[:400]
    setting = next(line.split(",")[5] for line in open(os.path.join(other, "nonlinear_rows.csv")).read().splitlines()[1:]
                   if ",valid," in line)
    assert f"| {setting} |" in shown, setting
    own = nl._nonlinear(other, figures)
    assert "Not run on this machine" not in own
    assert own.count(f"| {setting} |") == shown.count(f"| {setting} |") > 0
    if "concurrency" in open(os.path.join(other, "nonlinear_meta.json")).read():
        assert "Runs: " in shown and "Runs: " in own
print("ok")
