#!/usr/bin/env python3
"""analysis/head_to_head_solvers.py draw() on the committed quick results of this VM
(experiments/results/vm/head_to_head_solvers_quick): a table per system with every solver's row,
both figures as PNG and PDF, and a plain message for a folder without the part's files.

    test_analysis.py ANALYSIS_DIR RESULTS_DIR WORK_DIR
"""
import csv
import os
import shutil
import sys

analysis, results, work = sys.argv[1:4]
sys.path.insert(0, analysis)
import head_to_head_solvers as h  # noqa: E402

shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
md = h.draw(results, work)
with open(os.path.join(results, "solvers_systems.csv"), newline="") as f:
    systems = list(csv.DictReader(f))
with open(os.path.join(results, "solvers.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
for s in systems:
    assert f"**{h.system_title(s)}**" in md, s
for r in rows:
    if r["status"] == "ok":
        assert f"| {r['solver']} | {r['backend']} |" in md, r["solver"]
for stem in ("head_to_head_solvers_history", "head_to_head_solvers_time"):
    for ext in (".png", ".pdf"):
        assert os.path.getsize(os.path.join(work, stem + ext)) > 1000, stem + ext
    assert f"({stem}.png)" in md
empty = os.path.join(work, "empty")
os.makedirs(empty)
assert "No solver comparison" in h.draw(empty, work)
print("ok:", len(systems), "systems,", len(rows), "rows")
