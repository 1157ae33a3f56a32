#!/usr/bin/env python3
"""analysis/head_to_head.py's corot tables on committed GPU results
(experiments/results/h200/head-to-head): the headline table gives each method's cheapest passing
row of the accuracy CSVs, tolerances the reference cannot judge are one sentence instead of a row
each, long floats in reasons are shortened, and a method with trials but no accuracy row reads as
a search cut short, and one stopped by over-budget trials at a finer level says so.

    test_corot_analysis.py ANALYSIS_DIR RESULTS_DIR
"""
import sys

analysis, results = sys.argv[1:3]
sys.path.insert(0, analysis)
import head_to_head as h  # noqa: E402

accuracy = h.rows_of(results, "accuracy")
trials = h.rows_of(results, "trials")
assert accuracy and trials, results
head = h.headline_table(accuracy, trials)
lines = head.splitlines()
assert lines[0] == "| scene | tolerance | " + " | ".join(h.METHODS) + " |", lines[0]
checked = 0
for r in accuracy:
    if r["found"] != "yes":
        continue
    same = [x for x in accuracy if x["found"] == "yes" and x["scene"] == r["scene"] and
            x["tolerance"] == r["tolerance"] and x["method"] == r["method"]]
    best = min(same, key=lambda x: float(x["wall_per_sim_s"]))
    row = next(line for line in lines
               if line.startswith(f"| {r['scene']} | {float(r['tolerance']):.1%} |"))
    cell = row.split(" | ")[2 + h.METHODS.index(r["method"])]
    assert cell.startswith(f"**{h.show(best['wall_per_sim_s'])}** ({best['variant']} {best['precision']}"), (cell, best)
    checked += 1
assert checked > 10, checked

unjudged = [r for r in accuracy if r["validity"].startswith(h.UNJUDGEABLE)]
assert unjudged, "the committed bunny rows at 1% and 0.1% are not searched"
table = h.accuracy_table(accuracy)
assert h.UNJUDGEABLE not in table
for scene in {r["scene"] for r in unjudged}:
    assert f"\n\n{scene}: 1.0% and 0.1% not searched for any method" in table, scene
    assert not any(line.startswith(f"| {scene} | 1.0% |") for line in head.splitlines()), scene
assert h.short_numbers("at least 0.0179426574866974 from") == "at least 0.0179 from"
assert h.short_numbers("dt=0.02 cycles=8") == "dt=0.02 cycles=8"

cut = [{"scene": "s", "tolerance": "0.01", "method": "hexmg", "variant": "vcycle", "precision": "fp32",
        "found": "yes", "wall_per_sim_s": "2", "elements": "8", "error": "0.001", "validity": "valid"}]
cut_trials = [{"scene": "s", "method": "tled", "validity": "valid"}]
row = h.headline_table(cut, cut_trials).splitlines()[2]
assert "| search cut short (1 trials) | not run |" in row, row

# A method whose finer level's trials were over the budget says so beside its closest error.
short = cut + [{"scene": "s", "tolerance": "0.01", "method": "tled", "variant": "hourglass", "precision": "fp64",
                "found": "no", "wall_per_sim_s": "", "elements": "", "error": "0.0689", "validity": "valid"}]
short_trials = [{"scene": "s", "method": "tled", "elements": "640", "validity": "valid"},
                {"scene": "s", "method": "tled", "elements": "1966080",
                 "validity": "over the trial time budget (about 72 s predicted)"}]
row = h.headline_table(short, short_trials).splitlines()[2]
assert "| none (closest 6.89%; trials at 1966080 el. over the budget) |" in row, row

# A tolerance that the method's newest search run did not ask for is "not searched", not "cut short".
meta = {"search_runs": [{"scene": "s", "methods": ["tled/hourglass"], "tolerances": [0.1]}]}
row = h.headline_table(cut, cut_trials, meta).splitlines()[2]
assert "| not searched | not run |" in row, row
meta["search_runs"][0]["tolerances"] = [0.1, 0.01]
row = h.headline_table(cut, cut_trials, meta).splitlines()[2]
assert "| search cut short (1 trials) |" in row, row
# A method whose search process died without a row says why instead of "not run".
meta["search_runs"].append({"scene": "s", "failed": {"corot-cg/edge": "killed by the out-of-memory killer"}})
row = h.headline_table(cut, cut_trials, meta).splitlines()[2]
assert "| none: killed by the out-of-memory killer | not run |" in row, row
print("ok:", checked, "found rows,", len(unjudged), "unjudged rows")

# The steps/s rows' runs: one row per scene with its build and its note (older code's rows say so).
runs = h.throughput_runs_table({"throughput_runs": {
    "bunny": {"build": {"git_commit": "329b92fead8f8e84"}, "machine": {"date": "2026-11-28", "gpu": {"name": "GPU X"}},
              "note": "smoothed rows of older kernels"},
    "sofa-beam": {"build": {"git_commit": "abc"}, "stopped": "cut short"}}}).splitlines()
assert len(runs) == 4, runs
assert runs[2].startswith("| bunny | 329b92fead8f | 2026-11-28 |") and "GPU X" in runs[2] and "older kernels" in runs[2], runs[2]
assert runs[3].startswith("| sofa-beam | abc |") and runs[3].endswith("| cut short |"), runs[3]
assert h.throughput_runs_table({}) == "" and h.throughput_runs_table(None) == ""

# corot_meta.json notes: a bullet each, nothing without them.
assert h.notes_lines({"notes": ["rows of nr-neohookean used the midpoint rule", "b"]}) == [
    "Notes on these rows:", "", "- rows of nr-neohookean used the midpoint rule", "- b", ""]
assert h.notes_lines({}) == [] and h.notes_lines(None) == []

# Other machines' steps/s: their own table and figures, the figure files suffixed with the device.
import glob as _glob  # noqa: E402
import os as _os  # noqa: E402
import tempfile as _tempfile  # noqa: E402

root = _os.path.dirname(_os.path.dirname(_os.path.realpath(results)))
with _tempfile.TemporaryDirectory() as figs:
    md = "\n".join(h.other_machines(results, figs))
    for d in sorted(_glob.glob(_os.path.join(root, "*", "head-to-head"))):
        machine = _os.path.basename(_os.path.dirname(d))
        if _os.path.realpath(d) == _os.path.realpath(results) or not h.rows_of(d, "throughput"):
            continue
        assert f"Steps/s and bytes per element on {machine}:" in md, machine
        scenes = {r["scene"] for r in h.rows_of(d, "throughput") if r["validity"] == "valid"}
        for scene in scenes:
            assert _os.path.isfile(_os.path.join(figs, f"head_to_head_steps_{scene}_{machine}.png")), (scene, machine)
