#!/usr/bin/python3
"""The report never shows a number of an invalid run, says "validity not recorded" for results
that predate validity, and carries no absolute path of the machine that made it.

    test_report_validity.py MAKE_REPORT_PY

Builds a small strbac2015 results folder (one valid and one invalid CPU row, run summaries with
and without validity, and timing records runs/*/run.json as dick2011 writes them), runs analysis/make_report.py on it and checks the report's text.
Also the provenance of folders without a manifest: the parts a cut run finished, and a folder of
benchmark JSON by its newest context.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

make_report = sys.argv[1]
COLUMNS = ("backend,precision,threads,texture,damage,per_edge,elements,nodes,dt,steps_total,steps_timed,extrapolated,"
           "validity,ms_per_step,total_s,corner_ux,corner_uy,corner_uz,corner_rel_error,element_us,node_us,"
           "element_registers,element_gbps,stream_triad_gbps,bytes_per_step,bytes_convention,effective_gbps,"
           "fraction_of_triad,flops_per_step")
VALID = "cpu,fp32,1,0,0,5,125,216,0.00075,6668,6668,0,valid,0.0213,0.1423,0.0053,0.0053,-0.01,0.000167,,,,,14.5,37924,compulsory,1.777,0.1227,48240"
REASON = "invalid: element 12 inverted (det F <= 0) at step 7, the first of 3 inverted element-steps (min det F = -0.5)"
INVALID = f'cpu,fp32,1,0,0,10,1000,1331,0.0003749,13335,13335,0,"{REASON}"' + "," * 16

with tempfile.TemporaryDirectory() as tmp:
    results = os.path.join(tmp, "results")
    exp = os.path.join(results, "strbac2015")
    os.makedirs(exp)
    with open(os.path.join(exp, "scaling.csv"), "w") as f:
        f.write("\n".join([COLUMNS, VALID, INVALID]) + "\n")
    with open(os.path.join(exp, "meta.json"), "w") as f:
        json.dump({"quick": False, "roundoff": {"backend": "cpu", "per_edge": 10,
                                                "validity": "invalid: fp32: non-finite displacement at node 3 at step 9"}}, f)
    runs = {"valid_run": {"validity": {"valid": True, "reasons": []}},
            "invalid_run": {"validity": {"valid": False, "reasons": [REASON[len("invalid: "):]]}},
            "old_run": {"schema": "elastobench.summary/1"}}
    for name, summary in runs.items():
        os.makedirs(os.path.join(exp, "runs", name))
        with open(os.path.join(exp, "runs", name, "summary.json"), "w") as f:
            json.dump(summary, f)
    # Timing records (a driver timing steps from a saved state): validity at the top level.
    timed = {"timed_valid": {"valid": True, "invalid_reason": "", "validity": {"inverted_element_steps": 0}},
             "timed_invalid": {"valid": False, "invalid_reason": "element 4 inverted at step 3"}}
    for name, record in timed.items():
        os.makedirs(os.path.join(exp, "runs", name))
        with open(os.path.join(exp, "runs", name, "run.json"), "w") as f:
            json.dump(record, f)
    out = os.path.join(tmp, "report")
    # An absolute results path: the report must not carry it.
    rc = subprocess.call([sys.executable, make_report, os.path.abspath(results), out, "--quiet", "--no-pdf"])
    assert rc == 0, rc
    text = open(os.path.join(out, "report.md")).read()

    assert REASON in text, "the invalid run's reason is not shown"
    # Table 3 at 10 per edge: the reason where the total time would be; no figure of that run.
    row10 = [l for l in text.splitlines() if l.startswith("| 10 | 1000 |")]
    assert row10 and REASON in row10[0], row10
    assert "invalid: fp32: non-finite displacement at node 3 at step 9" in text, "round-off verdict missing"
    assert "5 runs: 2 valid, 2 invalid, 1 with validity not recorded" in text, "run validity summary missing"
    assert "| `timed_invalid` | invalid: element 4 inverted at step 3 |" in text
    assert "| `old_run` | validity not recorded |" in text
    assert "| `invalid_run` | " + REASON + " |" in text
    # The valid row's total is there (0.1423 s -> "0.142", after the two GPU columns not run).
    assert "| 5 | 125 | 6668 | not run | not run | 0.142 |" in text, [l for l in text.splitlines() if l.startswith("| 5 |")]
    hits = re.findall(r"(?<![\w.:/~-])/(?:work|home|root|tmp)/[^\s`)]*", text)
    assert not hits, hits
    assert tmp not in text
# Provenance without a manifest: a run cut short names the parts it finished (meta's parts_done),
# and a folder of benchmark JSON gives the machine and build its newest file's context records.
sys.path.insert(0, os.path.dirname(os.path.abspath(make_report)))
import make_report as mr  # noqa: E402
machine = {"cpu_model": "X", "cpu_threads": 8, "gpu": {"name": "G"}, "date": "2026-11-28T00:00:00Z"}
build = {"git_commit": "abc", "build_type": "Release", "cxx_compiler": "GNU 12.2.0", "cuda_compiler": "13.0.88"}
with tempfile.TemporaryDirectory() as tmp:
    os.makedirs(os.path.join(tmp, "runs", "a"))
    with open(os.path.join(tmp, "runs", "a", "run.json"), "w") as f:
        json.dump({"machine": machine, "build": build}, f)
    with open(os.path.join(tmp, "meta.json"), "w") as f:
        json.dump({"quick": False, "parts_done": {"performance": True, "accuracy": True}}, f)
    rows = dict(mr.provenance_rows(mr.provenance_from_runs(tmp)))
    assert rows["parts"] == "performance, accuracy on the machine above", rows["parts"]
with tempfile.TemporaryDirectory() as tmp:
    for name, date, gpu in (("bench_sparse_a.json", "2026-11-27T00:00:00+00:00", "OLD"),
                            ("bench_sparse_b.json", "2026-11-28T00:00:00+00:00", "NEW")):
        with open(os.path.join(tmp, name), "w") as f:
            json.dump({"context": {"date": date, "eb_build": "Release, GNU 12.2.0, CUDA 13.0.88", "eb_git_commit": "c0ffee",
                                   "eb_machine": json.dumps(dict(machine, gpu={"name": gpu}))}, "benchmarks": []}, f)
    rows = dict(mr.provenance_rows(mr.provenance_from_runs(tmp)))
    assert rows["GPU"] == "NEW" and rows["git commit"] == "`c0ffee`" and rows["build"].startswith("Release, GNU 12.2.0, CUDA 13.0.88"), rows
print("report validity: all checks passed")
