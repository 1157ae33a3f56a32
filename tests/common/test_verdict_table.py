#!/usr/bin/env python3
"""analysis/verdict_table.py, and the summaries the committed report's paper sections end with:
every row's verdict is one of VERDICTS followed by at most two sentences, a ratio appears only
for two numbers that compare like for like, and a row that breaks either rule is refused when it
is made.

    test_verdict_table.py ANALYSIS_DIR REPORT_MD
"""
import re
import sys

analysis, report = sys.argv[1:3]
sys.path.insert(0, analysis)
import verdict_table as vt  # noqa: E402

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
    return ok


check(vt.sentences("Ours is 38x faster. The card is newer.") == 2, "two sentences")
check(vt.sentences("1.49 on the H100 against about 1.54 (Sec. 3, Fig. 2); e.g. launch-bound.") == 1,
      "decimals and abbreviations are not sentence ends")
check(vt.sentences("One. Two. Three.") == 3, "three sentences")

r = vt.row("Table 1", "steps/s", 10.8, 303.0, "differs", "ours is 28x the paper's.")
check(r["ratio"] == "28.1", f"ratio of two numbers: {r['ratio']}")
r = vt.row("Fig. 10", "fraction", 0.5, 0.65, "reproduced", "of different peaks.", comparable=False)
check(r["ratio"] == "-", "no ratio when not like for like")
r = vt.row("Fig. 5", "difference", "no number in the text", 0.016, "reproduced", "it grows.")
check(r["ratio"] == "-", "no ratio against a text")
for bad in (lambda: vt.row("T", "q", 1.0, 1.0, "fine", "ok."),
            lambda: vt.row("T", "q", 1.0, 1.0, "differs", "One. Two. Three.")):
    try:
        bad()
        check(False, "a row with an unknown verdict or three sentences was accepted")
    except ValueError:
        pass
rows = [vt.row("A", "q", 1.0, 1.0, "reproduced", "same."), vt.row("B", "q", 1.0, 2.0, "differs", "twice.")]
check(vt.tally(rows) == {"reproduced": 1, "differs": 1, "not applicable": 0, "not run": 0}, f"tally {vt.tally(rows)}")
md = vt.section(rows, "paper: X; ours: Y")
check("| A | q | 1 | 1 | 1 | **reproduced**: same. |" in md, "section row")

# The committed report: the five papers' summaries.
with open(report) as f:
    text = f.read()
sections = re.split(r"^## ", text, flags=re.M)
for paper in ("Dick, Georgii & Westermann 2011", "Strbac, Vander Sloten & Famaey 2015", "Verschoor & Jalba 2012",
              "Campo 2015", "Cecka, Lew & Darve 2011"):
    sec = next((s for s in sections if s.startswith(paper)), None)
    if not check(sec is not None, f"no section {paper}"):
        continue
    part = sec.split("### Published | ours | ratio | verdict", 1)
    if not check(len(part) == 2, f"{paper}: no summary table"):
        continue
    lines = [line for line in part[1].splitlines() if line.startswith("| ") and not line.startswith("| table / figure")]
    check(len(lines) >= 6, f"{paper}: {len(lines)} summary rows")
    for line in lines:
        m = re.search(r"\*\*([a-z ]+)\*\*: (.*) \|$", line)
        if check(m is not None, f"{paper}: a row without a verdict: {line}"):
            check(m.group(1) in vt.VERDICTS, f"{paper}: verdict '{m.group(1)}'")
            check(vt.sentences(m.group(2)) <= 2, f"{paper}: more than two sentences: {m.group(2)}")

# The front page counts every paper section's verdict rows: its numbers are the sections' own.
front = next((s for s in sections if s.startswith("At a glance")), None)
if check(front is not None, "no front page (## At a glance)"):
    counted = {}
    for line in front.splitlines():
        m = re.match(r"^\| ([^*|][^|]*) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|$", line)
        if m:
            counted[m.group(1)] = [int(x) for x in m.groups()[1:]]
    check(len(counted) == 5, f"front page: {len(counted)} papers counted, 5 expected: {sorted(counted)}")
    for title, numbers in counted.items():
        sec = next((s for s in sections if s.startswith(title)), "")
        cells = re.findall(r"\| \*\*(" + "|".join(vt.VERDICTS) + r")\*\*:", sec)
        check(numbers[:4] == [cells.count(v) for v in vt.VERDICTS] and numbers[4] == len(cells),
              f"front page: {title}: {numbers} against the section's {len(cells)} verdict rows")
    check("![time to accuracy" in front, "front page: no head-to-head figure")
    check("| scene | tolerance | hexmg | tled | bcsr-pcg | corot-cg | nr-neohookean |" in front,
          "front page: no head-to-head headline table")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("ok")
