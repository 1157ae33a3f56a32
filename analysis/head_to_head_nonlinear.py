#!/usr/bin/python3
"""Tables and the figure of head-to-head's `nonlinear` and `scale` parts from the data of
`elastobench reproduce head-to-head --parts nonlinear,scale` (RESULTS_DIR = OUT/head-to-head).

    /usr/bin/python3 analysis/head_to_head_nonlinear.py RESULTS_DIR FIGURES_DIR

`draw(results_dir, figures_dir)` returns the Markdown of both parts (analysis/head_to_head.py
calls it): the nonlinear part's references, its search and its time-to-accuracy rows, with a
log-axis plot of error against wall time (PNG and PDF); the scale part's largest models. A part
whose files are missing says "not run"; a row of an invalid run shows its reason in place of
its numbers and is left out of the figure. Uses only Debian's numpy, pandas and matplotlib.
"""
import json
import math
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import figures  # noqa: E402
from campo2015 import read_json  # noqa: E402  (None when the file is missing)
from figures import legend_below  # noqa: E402
from result_format import machine_line, other_machines  # noqa: E402

NOT_RUN = "not run"



def timing_text(meta):
    """The run's timing line; runs that named the option instead of its value get the value."""
    text = meta.get("timing", "")
    n = (meta.get("options") or {}).get("nl_repeats")
    return text.replace("median of nl_repeats runs", f"median of {n} runs (option nl_repeats)") if n else text

def _csv(results_dir, name):
    path = os.path.join(results_dir, name)
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    df = pd.read_csv(path, keep_default_na=False, na_values=[""])
    return df if len(df) else None


def _num(v, digits=3):
    if v is None or (isinstance(v, str) and v == ""):
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, float) and math.isnan(v):
        return ""
    if isinstance(v, float) and math.isinf(v):
        return "inf"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return str(int(v))
    return f"{v:.{digits}g}"


def _table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(_num(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _wall(r):
    if pd.isna(r.get("wall_median_s")) or r.get("wall_median_s") == "":
        return r.get("note") or ""
    return f"{_num(float(r['wall_median_s']))} ({_num(float(r['wall_min_s']))}-{_num(float(r['wall_max_s']))})"


def _backend(r):
    b = f"{r['backend']} {r['precision']}"
    if r["backend"] == "cpu" and not pd.isna(r.get("threads")):
        b += f" {int(r['threads'])}t"
    return b


def _valid(v):
    return isinstance(v, str) and v == "valid"


def _sibling_with_nonlinear(results_dir):
    """The same experiment's folder of another machine (experiments/results/<device>/head-to-head)
    holding the nonlinear part, the first by name; None if there is none."""
    return next((d for _, d in other_machines(results_dir) if os.path.isfile(os.path.join(d, "nonlinear_rows.csv"))),
                None)


def _nonlinear(results_dir, figures_dir):
    title = "### Nonlinear hyperelasticity (nr-neohookean vs tled)"
    rows = _csv(results_dir, "nonlinear_rows.csv")
    meta = read_json(results_dir, "nonlinear_meta.json")
    md = [title, ""]
    if rows is None or meta is None:
        # Not run on this machine: another machine's run, named, rather than nothing (its timings
        # compare only with each other).
        other = _sibling_with_nonlinear(results_dir)
        if other is None:
            return title + "\n\n" + NOT_RUN + "\n"
        results_dir = other
        rows = _csv(results_dir, "nonlinear_rows.csv")
        meta = read_json(results_dir, "nonlinear_meta.json")
        machine = os.path.basename(os.path.dirname(other))
        md += [f"Not run on this machine; the run on **{machine}** (experiments/results/{machine}/head-to-head): "
               f"{machine_line(meta)}. Its timings compare only with each other.", ""]
    if meta and meta.get("concurrency"):
        md += [f"Runs: {meta['concurrency']}.", ""]
    for s in meta.get("scenes", []):
        md.append(f"- **{s['name']}**: {s['description']}; reference: {s['reference']}.")
    md.append(f"- Error: {meta.get('error', '')}.")
    md.append(f"- Search: {meta.get('search', '')}.")
    md.append(f"- End state: {meta.get('end_state', '')}.")
    md.append(f"- Timing: {timing_text(meta)}.")
    gap = meta.get("cube_model_gap")
    ref = meta.get("reference", {})
    if gap is not None:
        md.append(f"- The two strain energies' exact cube solutions differ by {_num(gap)} (relative probe "
                  f"difference), so each method is measured against its own model's exact solution.")
    if ref:
        md.append(f"- Block: tled's reference differs from nr-neohookean's by {_num(ref.get('model_gap'))} "
                  "(model difference plus both references' errors).")
        md.append("")
        md.append(_table(["method", "fine per edge", "coarse per edge", "fine elements", "change coarse to fine"],
                         [[lv["method"], lv["fine_per_edge"], lv["coarse_per_edge"], lv["fine_elements"],
                           lv["change_coarse_to_fine"]] for lv in ref.get("levels", [])]))
    md.append("")
    header = ["scene", "target", "verifiable", "method", "variant", "setting", "elements", "backend", "steps",
              "Newton", "CG", "validity", "error", "wall s, median (min-max)"]
    body = []
    for _, r in rows.iterrows():
        if not _valid(r["validity"]):
            note = r.get("note")
            body.append([r["scene"], r["target"], r["target_verifiable"], r["method"], r.get("variant") or "",
                         r.get("setting") or "", "", _backend(r) if isinstance(r.get("backend"), str) else "", "", "",
                         "", r["validity"], r["error"] if r["validity"] == "not reached" else "",
                         note if isinstance(note, str) else ""])
            continue
        body.append([r["scene"], r["target"], r["target_verifiable"], r["method"], r["variant"], r["setting"],
                     r["elements"], _backend(r), r["steps"], r["newton_iterations"], r["cg_iterations"],
                     r["validity"], r["error"], _wall(r)])
    md.append(_table(header, body))
    md.append("")
    md.append("A target marked not verifiable lies below the change of that method's own reference from its "
              "coarser level; \"not reached\" gives the lowest error any searched setting reached.")
    md.append("")
    fig = _nonlinear_figure(rows, figures_dir)
    if fig:
        md.append(f"![error against wall time]({fig})")
        md.append("")
    search = _csv(results_dir, "nonlinear_search.csv")
    if search is not None:
        md.append(f"The search tried {len(search)} settings ({int((search['validity'] == 'valid').sum())} valid); "
                  "nonlinear_search.csv lists each with its error and wall time.")
        md.append("")
    return "\n".join(md)


def _nonlinear_figure(rows, figures_dir):
    timed = rows[rows["validity"].apply(_valid)].copy()
    timed = timed[timed["wall_median_s"].apply(lambda v: not pd.isna(v) and v != "")]
    if not len(timed):
        return None
    timed = timed.drop_duplicates(subset=["scene", "method", "setting", "backend", "precision", "threads"])
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    markers = {"tled": "s", "nr-neohookean": "o"}
    colours = {("cpu", "fp64"): "tab:blue", ("cpu", "fp32"): "tab:cyan", ("cuda", "fp64"): "tab:red",
               ("cuda", "fp32"): "tab:orange"}
    for ax, scene in zip(axes, ["cube", "block"]):
        sub = timed[timed["scene"] == scene]
        for _, r in sub.iterrows():
            err = max(float(r["error"]), 1e-12)
            label = f"{r['method']} {_backend(r)}"
            ax.errorbar(float(r["wall_median_s"]), err,
                        xerr=[[float(r["wall_median_s"]) - float(r["wall_min_s"])],
                              [float(r["wall_max_s"]) - float(r["wall_median_s"])]],
                        marker=markers.get(r["method"], "x"), color=colours.get((r["backend"], r["precision"]), "k"),
                        linestyle="none", label=label,
                        fillstyle="full" if r["backend"] == "cuda" or int(r["threads"] or 1) > 1 else "none")
        for t in (1e-2, 1e-3):
            ax.axhline(t, color="grey", linewidth=0.6, linestyle=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(scene)
        ax.set_xlabel("wall time to the end state (s)")
    axes[0].set_ylabel("probe error (relative)")
    fig.tight_layout()
    # One legend below both panels: inside the cube's it sat on tled's points.
    legend_below(fig, axes, ncol=4)
    return figures.save(fig, figures_dir, "head_to_head_nonlinear", dpi=150)


def _scale(results_dir):
    text = _scale_run(results_dir, "### Scale: the largest model in the device's memory")
    # Other machines' scale runs (e.g. the H200's memory-sized models, one method per GPU), each in
    # its own table: a machine's bounds are its own.
    for device, folder in other_machines(results_dir):
        other = read_json(folder, "scale_meta.json")
        if other is not None and "note" not in other:
            text += "\n" + _scale_run(folder, f"#### Scale on `{device}`")
    return text


def _held_bytes(r):
    """The larger of the estimate and the method's own device bytes; runs that report their own
    bytes skip the estimate at the largest size (blank)."""
    vals = [float(r[k]) for k in ("estimate_bytes", "device_bytes") if r.get(k) not in (None, "")]
    return max((v for v in vals if v == v), default=float("nan"))


def _setup_cell(r):
    """The set-up seconds, with the device-memory estimate's before it where the run timed them
    (the estimate builds much of the problem again, so the call's wall time holds both)."""
    setup = float(r["setup_s"])
    est = r.get("estimate_s")
    if est is None or est == "" or est != est:
        return f"{setup:.1f}"
    return f"{setup:.1f} (+ {float(est):.1f} estimate)"


def _scale_run(results_dir, title):
    meta = read_json(results_dir, "scale_meta.json")
    if meta is None:
        return title + "\n\n" + NOT_RUN + "\n"
    md = [title, ""]
    if "note" in meta:
        md.append(meta["note"] + ".")
        md.append("")
        return "\n".join(md)
    # Older results lack the scene, method and timing lines: only what the run recorded is shown.
    md.append(f"- Device: {meta.get('device', '')}" + (f"; {meta['scene']}." if meta.get("scene") else "."))
    if meta.get("method"):
        md.append(f"- {meta['method']}.")
    md.append(f"- Options: {json.dumps(meta.get('options', {}))} (scale_setup_s bounds the set-up, so a model may stop "
              "short of the memory limit: 'run limited by' says which bound held).")
    if meta.get("timing"):
        md.append(f"- Timing: {timing_text(meta)}.")
    if meta.get("run_note"):
        md.append(f"- This run: {meta['run_note']}.")
    md.append("")
    rows = _csv(results_dir, "scale_rows.csv")
    if rows is None:
        md.append(NOT_RUN)
        return "\n".join(md)
    body = []
    for _, r in rows.iterrows():
        v = r.get("validity")
        if not _valid(v):
            body.append([r["method"], r["variant"], r["element"], "", "", "", "", "", "", "", "", "",
                         v if isinstance(v, str) and v else r.get("note", "")])
            continue
        fits = r.get("memory_elements")
        host = r.get("host_elements")
        body.append([r["method"], r["variant"], r["element"], r["bytes_per_element"],
                     _num(float(fits)) if fits is not None and fits == fits else "",
                     _num(float(host)) if host is not None and host == host else "not measured", r["limited_by"],
                     r["elements"], float(r["predicted_bytes"]) / 1e9,
                     _held_bytes(r) / 1e9, _setup_cell(r),
                     f"{_num(float(r['steps_per_s']))} ({_num(1e3 / float(r['step_ms_max']))}-"
                     f"{_num(1e3 / float(r['step_ms_min']))})", v])
    md.append(_table(["method", "variant", "element", "bytes/element", "elements the free memory holds (predicted)",
                      "elements the host's memory holds (predicted)", "run limited by", "elements run", "predicted GB",
                      "held GB (max of estimate, device_bytes)", "set-up s", "steps/s (min-max)", "validity"], body))
    md.append("")
    stages = _setup_stage_lines(rows)
    if stages:
        md.append("Set-up by stage, as the method timed it in the largest run (`setup_stages`; a stage named "
                  "'engine: X' is part of 'engine'):")
        md.append("")
        md.extend(stages)
        md.append("")
    return "\n".join(md)


def _setup_stage_lines(rows):
    """One line per row whose method reported its set-up stages ("model 36.7 s; pattern 7.5 s; ..."),
    seconds to one decimal."""
    if "setup_stages" not in rows.columns:
        return []
    out = []
    for _, r in rows.iterrows():
        text = r.get("setup_stages")
        if not isinstance(text, str) or not text.strip():
            continue
        parts = []
        for stage in text.split(";"):
            m = re.fullmatch(r"(.+) ([0-9.eE+-]+) s", stage.strip())
            parts.append(f"{m.group(1)} {float(m.group(2)):.1f} s" if m else stage.strip())
        out.append(f"- {r['method']} ({int(float(r['elements'])):,} elements): " + "; ".join(parts) + ".")
    return out


def draw(results_dir, figures_dir):
    return _nonlinear(results_dir, figures_dir) + "\n" + _scale(results_dir)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    text = draw(sys.argv[1], sys.argv[2])
    os.makedirs(sys.argv[2], exist_ok=True)
    with open(os.path.join(sys.argv[2], "head_to_head_nonlinear.md"), "w") as f:
        f.write(text)
    print(text)
