"""The summary a paper's section ends with: every table and figure its method issue names, as
published | ours | ours / published | machines | verdict, the verdict one of VERDICTS followed by
why in at most two sentences. Each paper's analysis script builds the rows from its own numbers;
the report counts the verdicts (`tally`) for its front page."""
import math
import re

VERDICTS = ("reproduced", "differs", "not applicable", "not run")


def sentences(text):
    """How many sentences `text` has: a full stop, '!' or '?' ending a word, not a decimal point or
    the abbreviations the report uses (Sec., Fig., Figs., e.g., i.e.)."""
    plain = re.sub(r"\d\.\d|e\.g\.|i\.e\.|Sec\. |Figs?\. |Eqs?\. |vs\. ", "", text)
    return len(re.findall(r"[.!?](?:\s|$)", plain.strip() + " "))


def fmt(v):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, str):
        return v
    if v == 0:
        return "0"
    return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.3g}".replace("e+0", "e").replace("e+", "e")


def row(item, quantity, published, ours, verdict, why, comparable=True):
    """One table or figure. `published` and `ours` are numbers or short texts; the ratio is given
    only when both are numbers and `comparable` (a like-for-like pair)."""
    if verdict not in VERDICTS:
        raise ValueError(f"verdict '{verdict}' is not one of {VERDICTS}")
    if sentences(why) > 2:
        raise ValueError(f"a verdict of more than two sentences: {why}")
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (published, ours))
    ratio = fmt(ours / published) if comparable and numbers and published else "-"
    return {"item": item, "quantity": quantity, "published": fmt(published), "ours": fmt(ours), "ratio": ratio,
            "verdict": verdict, "why": why}


def section(rows, machines):
    """The Markdown table under a heading, with the machines compared (paper's and ours)."""
    out = ["### Published | ours | ratio | verdict", "", f"Machines: {machines}.", "",
           "| table / figure | quantity | published | ours | ours / published | verdict |", "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['item']} | {r['quantity']} | {r['published']} | {r['ours']} | {r['ratio']} | "
                   f"**{r['verdict']}**: {r['why']} |")
    return "\n".join(out)


def tally(rows):
    """Rows per verdict, in VERDICTS' order."""
    return {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
