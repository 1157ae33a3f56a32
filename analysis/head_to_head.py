#!/usr/bin/python3
"""Tables and figures of `elastobench reproduce head-to-head` (issue 24; RESULTS_DIR =
OUT/head-to-head).

    /usr/bin/python3 analysis/head_to_head.py RESULTS_DIR FIGURES_DIR

The corot part (columns: experiments/head_to_head/corot_part.cpp): reads corot_reference_*.csv,
corot_throughput_*.csv, corot_accuracy_*.csv, corot_skipped_*.csv, corot_throughput_skipped_*.csv
(one per scene) and corot_meta.json, and draws into FIGURES_DIR, as PNG and PDF:
  head_to_head_steps_<scene>.png   steps/s against elements, log-log, one line per method/variant
                                   and backend/precision/threads (valid rows only)
  head_to_head_tta_<tol>.png       time to accuracy (wall s per simulated s, log) per method and
                                   scene at the tolerance (1% and 0.1%), with the min-max of the
                                   timed batches
The other parts are drawn by analysis/head_to_head_solvers.py and head_to_head_nonlinear.py
(their `draw(results_dir, figures_dir) -> str`) when those modules exist.
`build(results_dir, figures_dir)` returns the Markdown section: the reference per scene with its
estimated discretization error, the time-to-accuracy tables (the setting the documented search
chose, its error, cost and trials), the steps/s and bytes per element per step table, and the
variants skipped in this build, then the same experiment's accuracy tables from the other
machines' folders beside RESULTS_DIR (../../<device>/head-to-head). A row of an invalid run reads "invalid: <reason>" and is left out
of the figures. Python's csv module and matplotlib (Agg) only.
"""
import csv
import glob
import importlib.util
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from portable_paths import portable_paths  # noqa: E402
import figures  # noqa: E402
from result_format import machine_line, md_table, other_machines as sibling_folders  # noqa: E402

NAME = "head_to_head"
OTHER_PARTS = ("head_to_head_solvers", "head_to_head_nonlinear")


def rows_of(d, table):
    """Rows of corot_<table>_<scene>.csv over the scenes, in scene order."""
    rows = []
    for p in sorted(glob.glob(os.path.join(d, f"corot_{table}_*.csv"))):
        scene = os.path.basename(p)[len(f"corot_{table}_"):-4]
        if "_" in scene or os.path.getsize(p) == 0:  # corot_throughput_skipped_* is not a throughput scene
            continue
        with open(p, newline="") as f:
            rows += list(csv.DictReader(f))
    return rows


def number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def show(v, digits=3):
    x = number(v)
    if x is None:
        return v or ""
    if x == 0:
        return "0"
    if abs(x) >= 1e4 or abs(x) < 1e-3:
        return f"{x:.{digits}g}"
    return f"{x:.{digits}g}"




def config(r):
    c = f"{r['backend']} {r['precision']}"
    return c + (f" {r['threads']}t" if r.get("threads") else "")


def save(fig, figures_dir, stem):
    return figures.save(fig, figures_dir, stem)


# ---- figures ----------------------------------------------------------------------------------
def steps_figures(throughput, figures_dir, machine=""):
    """One log-log plot of steps/s per scene; `machine` (another results folder's device) suffixes
    the file and titles the chart, as in tta_figures."""
    out = []
    for scene in sorted({r["scene"] for r in throughput}):
        lines = {}
        for r in throughput:
            x, y = number(r["elements"]), number(r["steps_per_s"])
            if r["scene"] != scene or r["validity"] != "valid" or not x or not y:
                continue
            lines.setdefault(f"{r['method']}/{r['variant']} {config(r)}", []).append(
                (x, y, number(r["steps_per_s_min"]), number(r["steps_per_s_max"])))
        if not lines:
            continue
        fig, ax = plt.subplots(figsize=(8, 5.5))
        # Colour: method/variant; marker and line: backend, precision, threads.
        variants = sorted({label.split(" ", 1)[0] for label in lines})
        configs = sorted({label.split(" ", 1)[1] for label in lines})
        markers = "os^vD<>pP*x"
        for label, pts in sorted(lines.items()):
            pts.sort()
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            lo = [max(0.0, p[1] - (p[2] or p[1])) for p in pts]
            hi = [max(0.0, (p[3] or p[1]) - p[1]) for p in pts]
            variant, cfg = label.split(" ", 1)
            style = "-" if "cuda" in label else "--"
            ax.errorbar(xs, ys, yerr=[lo, hi], fmt=markers[configs.index(cfg) % len(markers)] + style, ms=4,
                        capsize=2, color=f"C{variants.index(variant) % 10}", label=label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("elements (hexahedra or tetrahedra of the method's own mesh)")
        ax.set_ylabel("steps/s (median of 5 batches, min-max bars)")
        ax.set_title(f"head-to-head corot: {scene}, steps per second" + (f" ({machine})" if machine else ""))
        ax.grid(True, which="both", alpha=0.3)
        # Beside the axes: inside, it covered the curves of the smaller sizes.
        ax.legend(fontsize=6, ncol=1, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        out.append(save(fig, figures_dir, f"{NAME}_steps_{scene}" + (f"_{machine}" if machine else "")))
    return out


def tta_figures(accuracy, figures_dir, machine=""):
    """One bar chart per tolerance; `machine` (another results folder's device) suffixes the file
    and titles the chart, so that machines' timings are never drawn on one axis."""
    out = []
    for tol in sorted({r["tolerance"] for r in accuracy}, key=lambda t: -float(t)):
        found = [r for r in accuracy if r["tolerance"] == tol and r["found"] == "yes"]
        if not found:
            continue
        scenes = sorted({r["scene"] for r in found})
        labels = sorted({f"{r['method']}/{r['variant']} {config(r)}" for r in found})
        fig, ax = plt.subplots(figsize=(10, 5))
        width = 0.8 / max(1, len(labels))
        for k, label in enumerate(labels):
            for i, scene in enumerate(scenes):
                r = next((r for r in found if r["scene"] == scene and
                          f"{r['method']}/{r['variant']} {config(r)}" == label), None)
                if r is None:
                    continue
                y = number(r["wall_per_sim_s"])
                lo, hi = number(r["wall_per_sim_s_min"]) or y, number(r["wall_per_sim_s_max"]) or y
                ax.bar(i + k * width, y, width, yerr=[[y - lo], [hi - y]], capsize=2,
                       label=label if i == scenes.index(r["scene"]) else None, color=f"C{k % 10}")
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(scenes))])
        ax.set_xticklabels(scenes)
        ax.set_yscale("log")
        ax.set_ylabel("wall time per simulated second (s/s)")
        ax.set_title(f"time to accuracy{' on ' + machine if machine else ''}: displacement error < "
                     f"{float(tol):.1%} against the fp64 reference", fontsize=10)
        handles, names = ax.get_legend_handles_labels()
        uniq = dict(zip(names, handles))
        # Beside the axes, so that it covers no bar.
        ax.legend(uniq.values(), uniq.keys(), fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.grid(True, axis="y", which="both", alpha=0.3)
        out.append(save(fig, figures_dir, f"{NAME}_tta_{tol}" + (f"_{machine}" if machine else "")))
    return out


# ---- tables -----------------------------------------------------------------------------------
def reference_table(reference):
    # Results since the Richardson reference carry the extrapolated probes and the observed order;
    # older ones the finest level's probes and the one-level-coarser difference only.
    richardson = bool(reference) and "extrapolated_magnitude" in reference[0]
    body = []
    for r in reference:
        row = [r["scene"], r["resolution"], r["elements"], r["backend"], r["converged"], r["newton_iterations"],
               r["cg_iterations"], r["probe"], show(r["magnitude"], 5), show(r["coarser_magnitude"], 5)]
        if richardson:
            row += [show(r["observed_order"], 3), show(r["extrapolated_magnitude"], 5)]
        body.append(row + [show(r["error_estimate"])])
    head = ["scene", "resolution (h)", "tets", "backend", "converged", "Newton", "CG its", "probe", "|u_h| (m)",
            "|u_2h| (m)"]
    if richardson:
        head += ["observed order", "|u_ref| extrapolated (m)"]
    return md_table(head + ["est. error of u_ref"], body)


def short_numbers(text):
    """Long floats inside a row's reason (written at full precision) to three digits."""
    return re.sub(r"\d+\.\d{5,}(e-?\d+)?", lambda m: f"{float(m.group()):.3g}", text)


UNJUDGEABLE = "not searched: the reference's error estimate"
METHODS = ["hexmg", "tled", "bcsr-pcg", "corot-cg", "nr-neohookean"]


def searched_tolerances(meta):
    """(scene, method) -> the tolerances its newest search searched, from corot_meta.json's
    search_runs entries that name them (`methods`, `tolerances`): a tolerance outside them was not
    searched by the run that the method's rows come from."""
    out = {}
    for r in (meta or {}).get("search_runs") or []:
        if "methods" in r and "tolerances" in r:
            for m in r["methods"]:
                out[(r["scene"], m.split("/")[0])] = {float(t) for t in r["tolerances"]}
    return out


def failed_methods(meta):
    """(scene, method) -> why its search ended without a row, from corot_meta.json's search_runs
    entries that record it (`failed`: {"method/variant": reason}), e.g. a process the host's
    out-of-memory killer stopped."""
    out = {}
    for r in (meta or {}).get("search_runs") or []:
        for m, why in (r.get("failed") or {}).items():
            out[(r["scene"], m.split("/")[0])] = why
    return out


def headline_table(accuracy, trials=(), meta=None):
    """Per tolerance and scene, each method's cheapest passing setting over its variants and
    configurations (wall s per simulated s), or why it has none (`trials` tell a search cut
    short, or one whose trials were all over the budget, from a method never run; `meta`'s
    search runs, a tolerance that the method's search did not ask for)."""
    searched = searched_tolerances(meta)
    failed = failed_methods(meta)
    body = []
    tols = sorted({r["tolerance"] for r in accuracy}, key=lambda t: -float(t))
    for tol in tols:
        for scene in sorted({r["scene"] for r in accuracy}):
            rows = [r for r in accuracy if r["tolerance"] == tol and r["scene"] == scene]
            if not rows or all(r["validity"].startswith(UNJUDGEABLE) for r in rows):
                continue
            cells = []
            for m in METHODS:
                mine = [r for r in rows if r["method"] == m]
                found = [r for r in mine if r["found"] == "yes"]
                if found:
                    b = min(found, key=lambda r: number(r["wall_per_sim_s"]))
                    cells.append(f"**{show(b['wall_per_sim_s'])}** ({b['variant']} {b['precision']}, {b['elements']} el.)")
                else:
                    tried = [t for t in trials if t["scene"] == scene and t["method"] == m]
                    closest = [number(r["error"]) for r in mine if r["error"]]
                    # Trials over the budget at a finer level than any that ran say why the
                    # search stopped short of where the tolerance could be met.
                    over = [int(t["elements"]) for t in tried if "over the trial" in t["validity"] and t["elements"]]
                    if closest and over:
                        cells.append(f"none (closest {min(closest):.2%}; trials at {max(over)} el. over the budget)")
                    elif closest:
                        cells.append(f"none (closest {min(closest):.2%})")
                    elif mine and tried and all("over the trial" in t["validity"] for t in tried):
                        cells.append("none: every trial over the budget")
                    elif mine:
                        cells.append("none")
                    elif (scene, m) in searched and float(tol) not in searched[(scene, m)]:
                        cells.append("not searched")
                    elif tried:
                        cells.append(f"search cut short ({len(tried)} trials)")
                    elif (scene, m) in failed:
                        cells.append(f"none: {failed[(scene, m)]}")
                    else:
                        cells.append("not run")
            body.append([scene, f"{float(tol):.1%}"] + cells)
    return md_table(["scene", "tolerance"] + METHODS, body)


def accuracy_table(accuracy):
    body = []
    unjudgeable = {}
    for r in accuracy:
        if r["validity"].startswith(UNJUDGEABLE):
            unjudgeable.setdefault((r["scene"], show(r["reference_error_estimate"])), set()).add(
                f"{float(r['tolerance']):.1%}")
            continue
        cost = (f"{show(r['wall_per_sim_s'])} ({show(r['wall_per_sim_s_min'])}-{show(r['wall_per_sim_s_max'])})"
                if r["found"] == "yes" else short_numbers(r["validity"]))
        error = show(r["error"]) if r["found"] == "yes" else (f"closest {show(r['error'])}" if r["error"] else "")
        body.append([r["scene"], f"{float(r['tolerance']):.1%}", f"{r['method']}/{r['variant']}", config(r),
                     r["elements"], r["setting"], error, cost, r["steps_timed"], r["trials"],
                     show(r["reference_error_estimate"])])
    out = md_table(["scene", "tolerance", "method/variant", "backend", "elements", "setting", "error",
                 "wall s per simulated s (min-max)", "steps timed", "trials", "reference error est."], body)
    for (scene, est), tols in sorted(unjudgeable.items()):
        out += (f"\n\n{scene}: {' and '.join(sorted(tols, key=lambda t: -float(t.rstrip('%'))))} not searched for any "
                f"method: the reference's error estimate ({est}) is over half the tolerance.")
    return out


def throughput_table(throughput):
    body = []
    for r in throughput:
        ok = r["validity"] == "valid"
        body.append([r["scene"], r["elements"], f"{r['method']}/{r['variant']}", config(r), r["steps_timed"],
                     f"{show(r['steps_per_s'])} ({show(r['steps_per_s_min'])}-{show(r['steps_per_s_max'])})"
                     if ok else ("invalid: " + r["validity"] if not r["validity"].startswith("not run") else
                                 r["validity"]),
                     show(r["bytes_per_element_step"]), r["bytes_convention"]])
    return md_table(["scene", "elements", "method/variant", "backend", "steps timed", "steps/s (min-max)",
                  "bytes/element/step", "convention"], body)


def other_parts(results_dir, figures_dir):
    md = []
    for mod in OTHER_PARTS:
        path = os.path.join(HERE, mod + ".py")
        if not os.path.exists(path):
            continue
        spec = importlib.util.spec_from_file_location("eb_analysis_" + mod, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        if hasattr(module, "draw"):
            md += [module.draw(results_dir, figures_dir), ""]
    return md


def runs_table(meta):
    """The searches a results folder was assembled from (corot_meta.json search_runs), if several."""
    runs = (meta or {}).get("search_runs") or []
    body = []
    for r in runs:
        b = r.get("build") or {}
        body.append([r.get("scene", r.get("scenes", "")), r.get("variants", ""), str(b.get("git_commit", ""))[:12],
                     machine_line(r), r.get("note", r.get("stopped", ""))])
    return md_table(["scenes", "variants", "build", "machine", "note"], body) if body else ""


def notes_lines(meta):
    """corot_meta.json `notes`: what a reader must know about these rows (e.g. rows of an older
    configuration waiting for a re-run), as a bullet list; nothing when there are none."""
    notes = (meta or {}).get("notes") or []
    return (["Notes on these rows:", ""] + [f"- {n}" for n in notes] + [""]) if notes else []


def throughput_runs_table(meta):
    """Per scene, the run its steps/s rows come from (corot_meta.json throughput_runs: build,
    date, and a note where rows of older code remain)."""
    runs = (meta or {}).get("throughput_runs") or {}
    body = []
    for scene, r in runs.items():
        b = r.get("build") or {}
        body.append([scene, str(b.get("git_commit", ""))[:12], (r.get("machine") or {}).get("date", ""),
                     machine_line(r), r.get("note", r.get("stopped", ""))])
    return md_table(["scene", "build", "date", "machine", "note"], body) if body else ""


def other_machines(results_dir, figures_dir):
    """The corot accuracy tables and steps/s of the same experiment on the other machines' result
    folders (experiments/results/<device>/head-to-head), each under its own machine line, its
    figures suffixed with the device: timings are compared only within one machine."""
    md = []
    for machine, d in sibling_folders(results_dir):
        if not (rows_of(d, "accuracy") or rows_of(d, "throughput")):
            continue
        meta_path = os.path.join(d, "corot_meta.json")
        meta = json.load(open(meta_path)) if os.path.isfile(meta_path) else None
        md += [f"### Time to accuracy on another machine: {machine}", "",
               f"Machine: {machine_line(meta)}. Its timings compare only with each other.", ""]
        if meta and meta.get("concurrency"):
            md += [f"Runs: {meta['concurrency']}.", ""]
        md += notes_lines(meta)
        runs = runs_table(meta)
        if runs:
            md += [runs, ""]
        accuracy = rows_of(d, "accuracy")
        md += [reference_table(rows_of(d, "reference")), "", "Each method at its cheapest (wall s per simulated s):", "",
               headline_table(accuracy, rows_of(d, "trials"), meta), "", accuracy_table(accuracy), ""]
        for p in tta_figures(accuracy, figures_dir, machine):
            md += [f"![time to accuracy on {machine}]({p})", ""]
        throughput = rows_of(d, "throughput")
        if throughput:
            md += [f"Steps/s and bytes per element on {machine}:", "", throughput_table(throughput), ""]
            runs = throughput_runs_table(meta)
            if runs:
                md += ["The runs these rows come from, per scene:", "", runs, ""]
            for p in steps_figures(throughput, figures_dir, machine):
                md += [f"![steps per second on {machine}]({p})", ""]
    return md


def build(results_dir, figures_dir):
    os.makedirs(figures_dir, exist_ok=True)
    md = ["## Head to head (issue 24)", ""]
    meta_path = os.path.join(results_dir, "corot_meta.json")
    meta = json.load(open(meta_path)) if os.path.isfile(meta_path) else None
    reference = rows_of(results_dir, "reference")
    throughput = rows_of(results_dir, "throughput")
    accuracy = rows_of(results_dir, "accuracy")
    # Files written before one row per configuration without threads repeat rows: shown once.
    skipped = list({tuple(sorted(r.items())): r for r in
                    rows_of(results_dir, "throughput_skipped") + rows_of(results_dir, "skipped")}.values())
    if meta is None and not throughput and not accuracy:
        md += ["### Corotational linear elasticity", "", "not run", ""]
    else:
        md += ["### Corotational linear elasticity: time to accuracy", ""]
        if meta:
            md += [f"Search: {meta.get('search', '')}", "", f"Reference: {meta.get('reference', '')}", "",
                   f"Timing: {meta.get('timing', '')}", ""]
            md += [f"Machine: {machine_line(meta)}; {'--quick' if meta.get('quick') else 'full run'}", ""]
            runs = runs_table(meta)
            if runs:
                md += ["Assembled from these searches:", "", runs, ""]
            md += notes_lines(meta)
        if reference:
            md += [reference_table(reference), ""]
        if accuracy:
            md += ["Each method at its cheapest (wall s per simulated s):", "",
                   headline_table(accuracy, rows_of(results_dir, "trials"), meta), "",
                   accuracy_table(accuracy), ""]
        for p in tta_figures(accuracy, figures_dir):
            md += [f"![time to accuracy]({p})", ""]
        if throughput:
            md += ["### Corotational linear elasticity: steps/s and bytes per element", "", throughput_table(throughput), ""]
            runs = throughput_runs_table(meta)
            if runs:
                md += ["The runs these rows come from, per scene:", "", runs, ""]
        for p in steps_figures(throughput, figures_dir):
            md += [f"![steps per second]({p})", ""]
        if skipped:
            md += ["Skipped in this build:", "",
                   md_table(["scene", "method", "variant", "backend", "precision", "why"],
                         [[r[k] for k in ("scene", "method", "variant", "backend", "precision", "why")]
                          for r in skipped]), ""]
    md += other_machines(results_dir, figures_dir)
    md += other_parts(results_dir, figures_dir)
    return portable_paths("\n".join(md))



def front_page(results_dir, figures_dir, tolerance="0.01"):
    """The report's front-page summary of the head-to-head: each method's cheapest passing setting
    per scene and tolerance on this results folder's machine, and the time-to-accuracy figure at
    `tolerance` that build() draws (linked only where it exists). Empty when nothing was searched."""
    accuracy = rows_of(results_dir, "accuracy")
    if not accuracy:
        return ""
    meta_path = os.path.join(results_dir, "corot_meta.json")
    meta = json.load(open(meta_path)) if os.path.isfile(meta_path) else None
    md = [f"Time to accuracy: wall seconds per simulated second for the displacement to stay within the tolerance "
          f"of a converged fp64 reference, each method at its cheapest setting found by the search "
          f"({machine_line(meta) if meta else 'machine not recorded'}; the head-to-head section has every row "
          f"and the other machines):", "", headline_table(accuracy, rows_of(results_dir, "trials"), meta), ""]
    others = []
    for machine, d in sibling_folders(results_dir):
        if rows_of(d, "accuracy"):
            m_path = os.path.join(d, "corot_meta.json")
            other = json.load(open(m_path)) if os.path.isfile(m_path) else None
            others.append(f"{machine} ({machine_line(other)})")
    if others:
        md += ["The head-to-head section also has these searches on " + "; ".join(others) + ".", ""]
    figure = f"{NAME}_tta_{tolerance}.png"
    if os.path.isfile(os.path.join(figures_dir, figure)):
        md += [f"![time to accuracy at {float(tolerance):.0%}](figures/{figure})", ""]
    return portable_paths("\n".join(md))

if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    text = build(sys.argv[1], sys.argv[2])
    with open(os.path.join(sys.argv[2], NAME + ".md"), "w") as f:
        f.write(text + "\n")
