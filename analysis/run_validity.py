"""Run validity for the analysis scripts: the Python side of solvers/common/validity.h.

A number from an invalid run is never tabulated or drawn: in its place the report shows
"invalid: <reason>". Results written before runs recorded their validity are "validity not
recorded", never taken for valid (their numbers are shown, marked as such by the caller).

    summary_validity(summary)  -> (True | False | None, reason)   from a summary.json dict, or a
                                  timing record (run.json: top-level "valid", "invalid_reason")
    row_validity(row)          -> (True | False | None, reason)   from a CSV row with a
                                  "validity" column ("valid" or "invalid: <reason>")
    shown(value, ok, reason)   -> the value, or the reason when ok is False
    run_validity_table(folder) -> Markdown: every run of an experiment folder (runs/*/summary.json,
                                  or runs/*/run.json where a driver timed steps from a saved state)
"""
import glob
import json
import math
import os

NOT_RECORDED = "validity not recorded"


def summary_validity(summary):
    if isinstance(summary, dict) and isinstance(summary.get("valid"), bool):
        # A timing record (dick2011 runs/*/run.json): validity of the timed steps at the top level.
        if summary["valid"]:
            return True, ""
        return False, f"invalid: {summary.get('invalid_reason') or 'no reason recorded'}"
    v = summary.get("validity") if isinstance(summary, dict) else None
    if not isinstance(v, dict) or not isinstance(v.get("valid"), bool):
        return None, NOT_RECORDED
    if v["valid"]:
        return True, ""
    reasons = v.get("reasons") or ["no reason recorded"]
    more = f" (+{len(reasons) - 1} more)" if len(reasons) > 1 else ""
    return False, f"invalid: {reasons[0]}{more}"


def row_validity(row):
    text = row.get("validity") if hasattr(row, "get") else None
    if text is None or (isinstance(text, float) and math.isnan(text)) or text == "":
        return None, NOT_RECORDED
    text = str(text)
    if text == "valid":
        return True, ""
    return False, text if text.startswith("invalid") else f"invalid: {text}"


def shown(value, ok, reason):
    return reason if ok is False else value


def run_records(folder):
    """The record of every run folder under FOLDER/runs: its summary.json, else its run.json."""
    paths = []
    for run in sorted(glob.glob(os.path.join(folder, "runs", "*", ""))):
        for name in ("summary.json", "run.json"):
            if os.path.exists(os.path.join(run, name)):
                paths.append(os.path.join(run, name))
                break
    return paths


def run_validity_table(folder):
    """One line per run folder under FOLDER/runs: valid, invalid (with the reason), or not recorded."""
    rows = []
    for path in run_records(folder):
        with open(path) as f:
            ok, reason = summary_validity(json.load(f))
        rows.append((os.path.basename(os.path.dirname(path)), "valid" if ok else reason))
    if not rows:
        return "_No run summaries._"
    counts = {"valid": sum(r[1] == "valid" for r in rows), "not recorded": sum(r[1] == NOT_RECORDED for r in rows)}
    counts["invalid"] = len(rows) - counts["valid"] - counts["not recorded"]
    head = f"{len(rows)} runs: {counts['valid']} valid, {counts['invalid']} invalid, {counts['not recorded']} with {NOT_RECORDED}."
    shown_rows = [r for r in rows if r[1] != "valid"]
    if counts["not recorded"] == len(rows):
        return head + " These results were written before runs recorded their validity; their numbers are shown as measured."
    lines = [head, "", "| run | validity |", "|---|---|"] + [f"| `{n}` | {v} |" for n, v in shown_rows]
    return "\n".join(lines) if shown_rows else head
