#!/usr/bin/env python3
"""The Campo 2015 and Cecka 2011 sections (analysis/campo2015.py, analysis/cecka2011.py) on the
committed H100 results, on a CPU-only fixture cut from them (what `reproduce --quick` leaves) and
on an empty folder: each ends with the published | ours | ratio | verdict table, every table and
figure its method issue names has a row, every verdict is one of verdict_table.VERDICTS with at
most two sentences, numbers are rounded, and every figure linked exists as PNG and PDF. The
committed report's two sections pass the same checks.

    test_campo_cecka_report.py ANALYSIS_DIR RESULTS_DIR REPORT_MD
"""
import csv
import importlib.util
import os
import re
import shutil
import sys
import tempfile

analysis, results, report = sys.argv[1:4]
sys.path.insert(0, analysis)
import verdict_table as vt  # noqa: E402

# The tables and figures issues 22 and 23 name, as the verdict rows name them.
ITEMS = {"campo2015": ["Table 5.1", "Table 5.2", "Table 5.3", "Table 5.4", "Table 5.5", "Fig. 5.1", "Fig. 5.3", "SOFA PR 2561"],
         "cecka2011": ["Table 16.1", "Fig. 16.10 left", "Fig. 16.10 right", "Fig. 16.11", "Fig. 16.12", "Fig. 16.13"]}
TITLES = {"campo2015": "Campo 2015", "cecka2011": "Cecka, Lew & Darve 2011"}
# A CSV float printed as it is stored (seven or more decimals) instead of rounded.
RAW_FLOAT = re.compile(r"(?<![\w.])\d+\.\d{7,}")

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


def load(name):
    spec = importlib.util.spec_from_file_location("eb_test_" + name, os.path.join(analysis, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def verdict_rows(text, where):
    """The summary's rows as (item, verdict, why), after checking the table is there."""
    part = text.split("### Published | ours | ratio | verdict", 1)
    if not check(len(part) == 2, f"{where}: no published | ours | ratio | verdict table"):
        return []
    rows = []
    for line in part[1].splitlines():
        if not line.startswith("| ") or line.startswith("| table / figure"):
            continue
        m = re.match(r"\| ([^|]+) \|.*\*\*([a-z ]+)\*\*: (.*) \|$", line)
        if check(m is not None, f"{where}: a row without a verdict: {line}"):
            rows.append((m.group(1).strip(), m.group(2), m.group(3)))
    return rows


def check_section(name, text, figures_dir, where, committed):
    rows = verdict_rows(text, where)
    for item, verdict, why in rows:
        check(verdict in vt.VERDICTS, f"{where}: verdict '{verdict}'")
        check(vt.sentences(why) <= 2, f"{where}: more than two sentences: {why}")
    for item in ITEMS[name]:
        check(any(r[0] == item for r in rows), f"{where}: no verdict row for {item}")
    if committed:
        check(not any(r[1] == "not run" for r in rows), f"{where}: a 'not run' verdict on the full H100 results")
    raw = RAW_FLOAT.findall(text)
    check(not raw, f"{where}: unrounded numbers {raw[:3]}")
    for link in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text):
        if figures_dir is None:
            continue
        stem = os.path.join(figures_dir, os.path.basename(link)[:-len(".png")])
        check(link.startswith("figures/") and os.path.isfile(stem + ".png") and os.path.isfile(stem + ".pdf"),
              f"{where}: figure {link} without its PNG and PDF")
    return rows


def cpu_only_fixture(src, dst):
    """What a CPU-only run leaves: the committed files without GPU rows or GPU-only files."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("device_logs", "kernels.json", "bench_device_*", "runs"))
    for name in os.listdir(dst):
        path = os.path.join(dst, name)
        if not name.endswith(".csv"):
            continue
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        if not rows:
            continue
        keep = [r for r in rows if not any(r.get(k) in ("cuda", "gpu") for k in ("backend", "hardware"))
                and "gpu" not in r.get("configuration", "")]
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(keep)


with tempfile.TemporaryDirectory() as tmp:
    for name in ITEMS:
        module = load(name)
        figures = os.path.join(tmp, name, "figures")
        check_section(name, module.build(os.path.join(results, name), figures), figures, f"{name} (committed results)", True)
        fixture = os.path.join(tmp, name, "cpu_only")
        cpu_only_fixture(os.path.join(results, name), fixture)
        figures = os.path.join(tmp, name, "figures_cpu")
        check_section(name, module.build(fixture, figures), figures, f"{name} (CPU-only fixture)", False)
        empty = os.path.join(tmp, name, "empty")
        os.makedirs(empty)
        rows = check_section(name, module.build(empty, os.path.join(tmp, name, "figures_empty")), None,
                             f"{name} (no results)", False)
        check(all(r[1] in ("not run", "not applicable") for r in rows), f"{name} (no results): a verdict without data")

with open(report) as f:
    sections = re.split(r"^## ", f.read(), flags=re.M)
for name, title in TITLES.items():
    sec = next((s for s in sections if s.startswith(title)), None)
    if check(sec is not None, f"report: no section {title}"):
        check_section(name, sec, None, f"report, {title}", True)

# Table 16.1 on another machine's run with another mesher (the committed vm Gmsh spheres): shown
# beside ours, and the exponent's verdict names it.
import cecka2011 as _cecka  # noqa: E402

_here = os.path.join(results, "cecka2011")
_t = _cecka.read_csv(_here, "table16_1.csv")
_others = _cecka.other_meshers(_here, _t)
if check(_others, "cecka: the committed Gmsh-sphere run (experiments/results/vm/cecka2011) not found"):
    _md = "\n".join(_cecka.other_mesher_table(_others, _cecka.published(_cecka.PAPER)))
    check(f"The same table on {_others[0][1]} spheres ({_others[0][0]}" in _md, "cecka: the other mesher's table")
    _exp = [r for r in _cecka.table16_1_verdicts(_t, _cecka.published(_cecka.PAPER), _others) if "exponent" in r["quantity"]]
    check(_exp and f"on {_others[0][1]} spheres" in _exp[0]["why"], "cecka: the exponent verdict names the other mesher")
    check(all(o[0] != _others[0][0] for o in _cecka.other_meshers(_here, _others[0][2])),
          "cecka: a run on the same mesher is not another mesher")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("ok")
