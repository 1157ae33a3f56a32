#!/usr/bin/python3
"""Figures and tables of Verschoor & Jalba 2012 (co-rotational tetrahedra, gather-updated BCSR
matrix, Jacobi-PCG on the GPU) from the data of `elastobench reproduce verschoor2012`
(RESULTS_DIR = OUT/verschoor2012).

    /usr/bin/python3 analysis/verschoor2012.py RESULTS_DIR FIGURES_DIR

Reads models.csv, performance.csv, iterations.csv, cpu_triad.csv and meta.json (columns:
experiments/verschoor2012/verschoor2012.cpp) and draws, as PNG into FIGURES_DIR:
  verschoor2012_fig3_gflops.png     Fig. 3 analogue: GFLOP/s of Rotation, Matrix, Update, CG, SpMV
                                    and Total, and steps/s, against the number of elements
  verschoor2012_fig4_time.png       Fig. 4 analogue: time per phase per step (us, log-log)
  verschoor2012_update_bandwidth.png  the update's (gather and scatter) and SpMV's GB/s against
                                    the same run's STREAM triad and the paper's 50 GB/s
one panel per backend x precision (x CPU threads). `build(results_dir, figures_dir)` returns the
Markdown section: models, per-phase times and steps/s, update and SpMV bandwidth, CG iterations
per tolerance, each beside the values the paper states in its text (analysis/published/
verschoor2012.json, cited by section and sentence; Figs. 3-4 are plots without numbers) with a
one-line verdict. A row of an invalid run shows "invalid: <reason>" in place of its numbers and
is left out of the figures and verdicts; a part not run (quick mode: CPU only, no GPU rows; a
`--parts` run without a part) reads "not run". No absolute path reaches the text
(portable_paths). Python's csv module, numpy and matplotlib (Agg) only.
"""
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import figures  # noqa: E402
import verdict_table as vt  # noqa: E402
from figures import legend_below  # noqa: E402
import result_format  # noqa: E402
from result_format import md_table, read_csv  # noqa: E402
from portable_paths import portable_paths  # noqa: E402
from run_validity import NOT_RECORDED, row_validity  # noqa: E402

PAPER = "verschoor2012"
NOT_RUN = "not run"
PHASES = [("rotation", "Rotation"), ("matrix", "Matrix"), ("update", "Update"), ("cg", "CG"), ("integrate", "Integrate")]
GFLOP_SERIES = [("rotation_gflops", "Rotation"), ("matrix_gflops", "Matrix"), ("update_gflops", "Update"),
                ("cg_gflops", "CG"), ("spmv_gflops", "SpMV")]
COLORS = {"Rotation": "C0", "Matrix": "C1", "Update": "C2", "CG": "C3", "SpMV": "C4", "Integrate": "C5", "Total": "k"}
CG_CROSSOVER = 30000  # elements (the published value; kept here for the table header too)


# ---- reading ----------------------------------------------------------------------------------
def load_published():
    with open(os.path.join(HERE, "published", PAPER + ".json")) as f:
        return json.load(f)


def read_json(results_dir, name):
    """As result_format.read_json, but {} for a missing file (this module reads keys of it)."""
    return result_format.read_json(results_dir, name) or {}


def val(row, col):
    """A finite number from a CSV cell, else None (blank: not measured)."""
    if row is None:
        return None
    text = row.get(col)
    if text is None or str(text).strip() == "":
        return None
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def invalid(row):
    """'invalid: <reason>' for a row of an invalid run, else None (valid or not recorded)."""
    if row is None:
        return None
    ok, reason = row_validity(row)
    return reason if ok is False else None


def usable(row):
    return row is not None and invalid(row) is None


# ---- formatting -------------------------------------------------------------------------------
def fmt(v, digits=3):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return NOT_RUN
    if isinstance(v, str):
        return v
    if v == 0:
        return "0"
    mag = int(math.floor(math.log10(abs(v))))
    if mag >= 6 or mag < -3:
        return f"{v:.{digits}g}"
    return f"{v:,.{max(digits - 1 - mag, 0)}f}"


def mbytes(b):
    if b is None:
        return NOT_RUN
    return f"{b / 1e6:.3g} MB" if b >= 1e6 else f"{b / 1e3:.3g} kB"


def fmt_int(v):
    return NOT_RUN if v is None else f"{int(round(v)):,}"


def pct(v):
    if v is None:
        return NOT_RUN
    return f"{100 * v:.0f}%" if v >= 0.095 else f"{100 * v:.1f}%" if v >= 0.001 or v == 0 else f"{100 * v:.2g}%"




def count(v):
    """An iteration count: integers as such, means to 3 significant digits."""
    if v is None:
        return NOT_RUN
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.3g}"


def plain(v):
    return NOT_RUN if v is None else f"{v:g}"


def span(values, show):
    lo, hi = show(min(values)), show(max(values))
    return lo if lo == hi else f"{lo}-{hi}"


def elements_text(e):
    if e >= 1e6:
        return f"{e / 1e6:.3g}M"
    return f"{e / 1000:.3g}k" if e >= 1000 else str(int(e))


# ---- the runs, indexed --------------------------------------------------------------------------
def config_of(row):
    """(backend, precision, threads): one panel of the figures, one group of the tables."""
    threads = int(val(row, "threads") or 0) if row.get("backend") == "cpu" else 0
    return (row.get("backend", "?"), row.get("precision", "?"), threads)


def config_label(cfg):
    backend, precision, threads = cfg
    if backend == "cuda":
        return f"GPU {precision}"
    return f"CPU {precision}, {threads} thread{'s' if threads != 1 else ''}"


def config_order(cfg):
    return (cfg[0] != "cuda", -cfg[2], cfg[1])


def size_of(row):
    return (row.get("model", "?"), int(val(row, "N") or 0))


class Runs:
    """performance.csv indexed by configuration, variant, mode and model size."""

    def __init__(self, perf):
        self.rows = {}
        self.elements = {}
        for r in perf or []:
            size = size_of(r)
            self.rows[(config_of(r), r.get("variant", "gather"), r.get("mode", "phases"), size)] = r
            e = val(r, "elements")
            if e is not None:
                self.elements[size] = e
        self.configs = sorted({k[0] for k in self.rows}, key=config_order)

    def get(self, cfg, size, variant="gather", mode="phases"):
        return self.rows.get((cfg, variant, mode, size))

    def sizes(self, cfg):
        """The model sizes a configuration ran (any variant or mode), by number of elements."""
        sizes = {k[3] for k in self.rows if k[0] == cfg}
        return sorted(sizes, key=lambda s: (self.elements.get(s, 0), s))

    def gpu(self):
        return [c for c in self.configs if c[0] == "cuda"]

    def total_row(self, cfg, size):
        """The row the whole step's time, Total GFLOP/s and steps/s come from: the graph row where the
        GPU ran one and it is valid (one launch per step), else the phases row."""
        g = self.get(cfg, size, mode="graph")
        if usable(g):
            return g, "graph"
        p = self.get(cfg, size)
        return (p, "phases") if usable(p) else (None, None)

    def curve(self, cfg, col, source="phases", variant="gather", scale=1.0):
        """(elements, values) of the valid rows of a configuration for a figure."""
        xs, ys = [], []
        for size in self.sizes(cfg):
            row = self.total_row(cfg, size)[0] if source == "total" else self.get(cfg, size, variant, source)
            if not usable(row):
                continue
            v, e = val(row, col), self.elements.get(size)
            if v is not None and e:
                xs.append(e)
                ys.append(v * scale)
        return xs, ys


# ---- figures ----------------------------------------------------------------------------------
def panels(n):
    cols = 1 if n <= 1 else 2
    rows = max(1, math.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(6.2 * cols, 4.2 * rows), squeeze=False)
    flat = list(axes.flat)
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat


def save(fig, figures_dir, stem):
    """The bare file name: make_report.py puts the report's figures/ before it."""
    figures.save(fig, figures_dir, stem)
    return stem + ".png"


def placeholder(figures_dir, stem, text):
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()
    return save(fig, figures_dir, stem)


def fig3(runs, figures_dir):
    stem = "verschoor2012_fig3_gflops"
    if not runs.configs:
        return placeholder(figures_dir, stem, "performance: not run")
    fig, axes = panels(len(runs.configs))
    twins = []
    for ax, cfg in zip(axes, runs.configs):
        drawn = False
        for col, name in GFLOP_SERIES:
            x, y = runs.curve(cfg, col)
            if x:
                ax.semilogx(x, y, "o-", color=COLORS[name], label=name, ms=4)
                drawn = True
        x, y = runs.curve(cfg, "total_gflops", source="total")
        if x:
            ax.semilogx(x, y, "s-", color=COLORS["Total"], label="Total", ms=4)
            drawn = True
        ax.set_xlabel("number of elements")
        ax.set_ylabel("performance (GFLOP/s)")
        ax.set_title(config_label(cfg), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax2 = ax.twinx()
        x, y = runs.curve(cfg, "steps_per_s", source="total")
        if x:
            ax2.semilogx(x, y, "^--", color="0.45", label="Steps/s", ms=4)
        ax2.set_ylabel("steps/s")
        twins.append(ax2)
        if not (drawn or x):
            ax.text(0.5, 0.5, "no valid rows", ha="center", va="center", transform=ax.transAxes)
    fig.suptitle("Performance per phase and steps/s against the number of elements (cf. Fig. 3)", fontsize=11)
    fig.tight_layout()
    legend_below(fig, axes + twins, ncol=7)
    return save(fig, figures_dir, stem)


def fig4(runs, figures_dir):
    stem = "verschoor2012_fig4_time"
    if not runs.configs:
        return placeholder(figures_dir, stem, "performance: not run")
    fig, axes = panels(len(runs.configs))
    for ax, cfg in zip(axes, runs.configs):
        drawn = False
        for key, name in PHASES:
            x, y = runs.curve(cfg, key + "_ms", scale=1000.0)
            if x:
                ax.loglog(x, y, "o-", color=COLORS[name], label=name, ms=4)
                drawn = True
        x, y = runs.curve(cfg, "step_ms", source="total", scale=1000.0)
        if x:
            ax.loglog(x, y, "s-", color=COLORS["Total"], label="Total", ms=4)
            drawn = True
        ax.set_xlabel("number of elements")
        ax.set_ylabel("time per step (microseconds)")
        ax.set_title(config_label(cfg), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        if not drawn:
            ax.text(0.5, 0.5, "no valid rows", ha="center", va="center", transform=ax.transAxes)
    fig.suptitle("Time per phase per step against the number of elements (cf. Fig. 4)", fontsize=11)
    fig.tight_layout()
    legend_below(fig, axes, ncol=6)
    return save(fig, figures_dir, stem)


def fig_bandwidth(runs, pub, figures_dir):
    stem = "verschoor2012_update_bandwidth"
    cfgs = [c for c in runs.configs if c[2] != 1]  # one thread adds little to this picture
    if not cfgs:
        return placeholder(figures_dir, stem, "performance: not run")
    fig, axes = panels(len(cfgs))
    paper_gbps = pub["values"]["update_gbps"]["value"]
    for ax, cfg in zip(axes, cfgs):
        for variant, style in (("gather", "o-"), ("scatter", "v-")):
            x, y = runs.curve(cfg, "update_gbps", variant=variant)
            if x:
                ax.semilogx(x, y, style, color="C2" if variant == "gather" else "C1", label=f"Update ({variant})", ms=4)
        x, y = runs.curve(cfg, "spmv_gbps")
        if x:
            ax.semilogx(x, y, "d-", color=COLORS["SpMV"], label="SpMV", ms=4)
        _, triads = runs.curve(cfg, "stream_triad_gbps")
        if triads:
            ax.axhline(float(np.median(triads)), color="k", ls="--", lw=1, label="STREAM triad (this run)")
        ax.axhline(paper_gbps, color="0.5", ls=":", lw=1.2, label=f"paper's update, GTX 570 (~{paper_gbps:g} GB/s)")
        ax.set_xlabel("number of elements")
        ax.set_ylabel("GB/s (compulsory bytes)")
        ax.set_title(config_label(cfg), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle("Global-matrix update and SpMV bandwidth (cf. Sec. 6, 50 GB/s)", fontsize=11)
    fig.tight_layout()
    legend_below(fig, axes, ncol=5)
    return save(fig, figures_dir, stem)


# ---- tables -----------------------------------------------------------------------------------
def parameters_table(meta, pub, summary=None):
    v = pub["values"]
    mat = meta.get("material") or {}
    cg = meta.get("cg") or {}
    rows = [["Young's modulus E (N/m^2)", plain(v["youngs_modulus"]["value"]), plain(mat.get("E")), v["youngs_modulus"]["cite"]],
            ["Poisson's ratio", plain(v["poisson_ratio"]["value"]), plain(mat.get("nu")), v["poisson_ratio"]["cite"]],
            ["density (kg/m^3)", plain(v["density"]["value"]), plain(mat.get("rho")), v["density"]["cite"]],
            ["time step (s)", plain(v["dt"]["value"]), plain(mat.get("dt")), v["dt"]["cite"]],
            ["largest dimension of a model (m)", f"at most {plain(v['model_size_max']['value'])}", plain(mat.get("model_size_m")),
             v["model_size_max"]["cite"]],
            ["CG iterations per step (performance runs)", plain(v["cg_iterations_fixed"]["value"]), plain(cg.get("iterations")),
             v["cg_iterations_fixed"]["cite"]]]
    if not mat:
        for r in rows:
            r[2] = "not recorded"
        return (md_table(["parameter", "published", "ours", "source"], rows) +
                "\n\nVerdict: not testable, these results record no parameters (no meta.json).")
    same = all(r[1] in (r[2], f"at most {r[2]}") for r in rows)
    verdict = ("Verdict: the material, time step, model size and the fixed 18 CG iterations are the paper's"
               if same else "Verdict: some parameters differ from the paper's (see the table)")
    verdict += "; the load differs (below)." if meta.get("load_note") else "."
    if summary is not None:
        summary.append(vt.row("Sec. 6 parameters", "material, time step, model size, 18 CG iterations", "the paper's",
                              "same" if same else "differ", "reproduced" if same else "differs",
                              ("the same" if same else "some differ (see the table)") +
                              ("; the load is ours: each model stands on its base under gravity." if meta.get("load_note") else ".")))
    load = f"\n\nLoad: {meta['load_note']}." if meta.get("load_note") else ""
    return md_table(["parameter", "published", "ours", "source"], rows) + "\n\n" + verdict + load


def models_table(models, pub, summary=None):
    if models is None:
        return f"Models: {NOT_RUN} (no models.csv)."
    ve = pub["values"]["initial_element_volume"]["value"]
    size = pub["values"]["model_size_max"]["value"]
    rows, best = [], None
    for r in sorted(models, key=lambda r: (val(r, "elements") or 0, r.get("model", ""))):
        n = val(r, "N")
        vmin, vmax = val(r, "min_volume"), val(r, "max_volume")
        rows.append([r.get("model", "?"), fmt_int(n), fmt(size / n * 1000) if n else NOT_RUN, fmt_int(val(r, "elements")),
                     fmt_int(val(r, "nodes")), fmt_int(val(r, "blocks")), fmt(vmin), fmt(vmax),
                     fmt(vmax / vmin) if vmin and vmax else NOT_RUN])
        if vmin:
            d = abs(math.log(vmin / ve))
            if best is None or d < best[0]:
                best = (d, r.get("model", "?"), int(n), vmin)
    table = md_table(["model", "N (voxels, longest axis)", "voxel edge (mm)", "tetrahedra", "nodes", "3x3 blocks",
                      "smallest tetrahedron (m^3)", "largest tetrahedron (m^3)", "largest / smallest"], rows)
    h_paper = (6 * ve) ** (1 / 3)
    typical = ", ".join(str(x) for x in pub["values"]["voxels_typical"]["value"])
    # The derivation and the merging note are context; the verdict is the match, in two sentences.
    context = (f"The paper's initial element volume, {fmt(ve)} m^3 ({pub['values']['initial_element_volume']['cite']}), is a "
               f"voxel of {h_paper * 1000:.1f} mm cut into 6 tetrahedra, i.e. N = {size / h_paper:.0f} voxels along a "
               f"{size * 100:.0f} cm model (its typical N: {typical}, Sec. 5.5); it states no element counts. Interior "
               "tetrahedra are merged into larger ones (Sec. 5.5), hence largest / smallest > 1.")
    verdict = (f"Verdict: comparable: our nearest is {best[1]} at N = {best[2]}, smallest tetrahedron {fmt(best[3])} m^3 "
               f"({fmt(best[3] / ve)} x the paper's)." if best else "Verdict: not testable: no model's volumes recorded.")
    verdict = context + "\n\n" + verdict
    if summary is not None and best:
        summary.append(vt.row("Sec. 5.5 models", "smallest tetrahedron of the nearest model (m^3)", ve, best[3], "reproduced",
                              f"{best[1]} at N = {best[2]} is {fmt(best[3] / ve)}x the paper's initial element volume."))
    return table + "\n\n" + verdict


def phase_cell(row, phase, t):
    """A phase's median time (us) with its range over the timed steps where the run recorded it."""
    lo, hi = val(row, phase + "_ms_min"), val(row, phase + "_ms_max")
    return fmt(t * 1000 if t is not None else None) + (f" [{fmt(lo * 1000)}-{fmt(hi * 1000)}]" if t is not None and lo and hi else "")


def phase_times_table(runs, pub, summary=None):
    if not runs.configs:
        return f"Per-phase times: {NOT_RUN} (no performance.csv)."
    rows = []
    for cfg in runs.configs:
        for size in runs.sizes(cfg):
            p, g = runs.get(cfg, size), runs.get(cfg, size, mode="graph")
            e = runs.elements.get(size)
            head = [config_label(cfg), size[0], size[1], fmt_int(e)]
            if p is None:
                cells = [NOT_RUN] + [""] * 5
            elif invalid(p):
                cells = [invalid(p)] + [""] * 5
            else:
                times = {k: val(p, k + "_ms") for k, _ in PHASES}
                total = sum(t for t in times.values() if t is not None)
                cells = [phase_cell(p, k, t) for k, t in times.items()] + [fmt(total * 1000)]
            if cfg[0] != "cuda":
                graph = "no graph (CPU)"
            elif g is None:
                graph = NOT_RUN
            elif invalid(g):
                graph = invalid(g)
            else:
                lo, hi = val(g, "step_ms_min"), val(g, "step_ms_max")
                graph = fmt(val(g, "step_ms") * 1000) + (f" [{fmt(lo * 1000)}-{fmt(hi * 1000)}]" if lo and hi else "")
            row, source = runs.total_row(cfg, size)
            sps = fmt(val(row, "steps_per_s")) if row else ""
            if row and cfg[0] == "cuda" and source == "phases":
                sps += " (phases)"
            share, largest = "", ""
            if usable(p):
                times = {name: val(p, k + "_ms") for k, name in PHASES}
                known = {k: t for k, t in times.items() if t is not None}
                if known and sum(known.values()) > 0 and times["CG"] is not None:
                    share = pct(times["CG"] / sum(known.values()))
                if known:
                    largest = max(known, key=known.get)
            rows.append(head + cells + [graph, sps, share, largest])
    table = md_table(["series", "model", "N", "elements", "Rotation", "Matrix", "Update", "CG", "Integrate", "sum of phases",
                      "whole step, one graph: median [min-max]", "steps/s", "CG share", "largest phase"], rows)
    note = ("Times in microseconds per step, each the median over the timed steps with their [min-max] where the run "
            "recorded it (phases: every phase enqueued and timed "
            "alone, CUDA events on the GPU, steady clock on the CPU). The GPU's whole step is also timed as one CUDA graph "
            "launch per step (median, with the fastest and slowest step); steps/s come from those graph runs where present, "
            "else from the phases runs (marked on the GPU). CG runs the fixed 18 iterations of Fig. 3.")
    return "\n\n".join(x for x in (table, note, timing_check(runs), dominance_verdict(runs, pub, summary), rate_verdict(runs, pub)) if x)


def phases_sum_ms(row):
    times = [val(row, k + "_ms") for k, _ in PHASES]
    times = [t for t in times if t is not None]
    return sum(times) if times else None


def timing_check(runs):
    """Signs that the timings do not describe the code: more CPU threads slower than one (a busy or
    oversubscribed machine), and the share of the timed loop spent outside the phases."""
    notes = []
    slower = []
    for cfg in runs.configs:
        if cfg[0] != "cpu" or cfg[2] <= 1:
            continue
        one = (cfg[0], cfg[1], 1)
        for size in runs.sizes(cfg):
            a, b = runs.get(cfg, size), runs.get(one, size)
            if usable(a) and usable(b) and phases_sum_ms(a) and phases_sum_ms(b) and phases_sum_ms(a) > phases_sum_ms(b):
                slower.append(f"{cfg[1]} N = {size[1]}: {fmt(phases_sum_ms(a) * 1000)} us with {cfg[2]} threads, "
                              f"{fmt(phases_sum_ms(b) * 1000)} us with 1")
    if slower:
        notes.append(f"more threads slower than one at {len(slower)} sizes ({'; '.join(slower)}): the machine was busy or "
                     "oversubscribed while these ran, so their CPU times describe the machine's load more than the code")
    outside = []
    for cfg in runs.configs:
        shares = []
        for size in runs.sizes(cfg):
            row, source = runs.total_row(cfg, size)
            if source != "phases":
                continue
            sps, total = val(row, "steps_per_s"), phases_sum_ms(row)
            if sps and total:
                shares.append(1 - sps * total / 1000)
        if shares and float(np.median(shares)) > 0.2:
            outside.append(f"{config_label(cfg)} {pct(float(np.median(shares)))}")
    if outside:
        notes.append("steps/s is the timed loop's rate, which includes work outside the five phases (the runner's "
                     "per-step checks and probes); median share of the loop outside the phases: " + ", ".join(outside))
    return ("Timing check: " + "; ".join(notes) + ".") if notes else ""


def grouped(findings):
    """'GPU fp32 and GPU fp64: agrees; CPU ...: does not agree' from (series, label) pairs, in order."""
    order, by = [], {}
    for series, label in findings:
        if label not in by:
            order.append(label)
        by.setdefault(label, []).append(series)
    return "; ".join(" and ".join(by[label]) + ": " + label for label in order)


def dominance_verdict(runs, pub, summary=None):
    """Per series, which phase is the largest below 30k elements and whether Matrix exceeds CG
    from 30k on (a table), and a one-sentence verdict grouping the series by their agreement."""
    cite = pub["values"]["cg_dominates_below_elements"]["cite"]
    rows, findings = [], []
    for cfg in runs.configs:
        below, above = [], []
        for size in runs.sizes(cfg):
            p = runs.get(cfg, size)
            if not usable(p):
                continue
            t = {name: val(p, k + "_ms") for k, name in PHASES}
            if t["CG"] is None or t["Matrix"] is None:
                continue
            e = runs.elements.get(size, 0)
            largest = max((k for k in t if t[k] is not None), key=lambda k: t[k])
            (below if e < CG_CROSSOVER else above).append((e, largest, t["Matrix"] > t["CG"]))
        if not below and not above:
            continue
        tally = {}
        for x in below:
            tally[x[1]] = tally.get(x[1], 0) + 1
        low = (", ".join(f"{name} at {n} of {len(below)}" for name, n in sorted(tally.items(), key=lambda t: -t[1]))
               if below else "no size run")
        high = f"{sum(a[2] for a in above)} of {len(above)}" if above else "no size run"
        cross = [x[0] for x in sorted(below + above) if x[2]]
        low_ok, high_ok = all(x[1] == "CG" for x in below), all(x[2] for x in above)
        if below and above:
            label = ("agrees" if low_ok and high_ok else "agrees below 30k only" if low_ok
                     else "agrees from 30k on only" if high_ok else "does not agree")
        else:
            label = ("agrees" if (low_ok if below else high_ok) else "does not agree") + " where testable"
        rows.append([config_label(cfg), low, high, elements_text(cross[0]) if cross else "never", label])
        findings.append((config_label(cfg), label))
    if not rows:
        return ""
    table = md_table(["series", "largest phase below 30k elements (sizes)", "Matrix > CG from 30k on (sizes)",
                      "Matrix first exceeds CG at", "against the paper"], rows)
    if summary is not None:
        gpu = [f for f in findings if f[0].startswith("GPU")]
        cpu = [f for f in findings if not f[0].startswith("GPU")]
        why = "; ".join(x for x in ((grouped(gpu) if gpu else ""), (grouped(cpu) if cpu else "")) if x) + "."
        crossings = [r[3] for r in rows if r[0].startswith("GPU")]
        ours = ("GPU: Matrix never exceeds CG" if crossings and all(c == "never" for c in crossings) else
                "GPU: Matrix exceeds CG from " + " / ".join(crossings) if crossings else "not run")
        summary.append(vt.row("Fig. 4", "largest phase: CG below 30k elements, Matrix above", "CG, then Matrix",
                              ours, "reproduced" if gpu and all(f[1] == "agrees" for f in gpu) else
                              "differs" if gpu else "not applicable", why if gpu else "no GPU rows (the paper's are its GPU's)."))
    return (f"Claim (Sec. 6, the paper's GTX 570, CG at 18 iterations): '{cite.split(chr(39), 1)[-1].rstrip(chr(39))}'\n\n"
            + table + "\n\nVerdict: " + grouped(findings) + ".")


def rate_verdict(runs, pub):
    v = pub["values"]
    rates = sorted(v[k]["value"] for k in v if k.startswith("frame_rate_fig"))
    lo, hi = rates[0], rates[-1]
    parts = []
    for cfg in runs.configs:
        pts = []
        for size in runs.sizes(cfg):
            row, _ = runs.total_row(cfg, size)
            s = val(row, "steps_per_s")
            if s is not None:
                pts.append((runs.elements.get(size, 0), s))
        if not pts:
            continue
        ok = [e for e, s in pts if s >= lo]
        largest = max(pts)
        text = f"{config_label(cfg)}: "
        text += (f">= {lo:g} steps/s up to {elements_text(max(ok))} elements" if ok else f"below {lo:g} steps/s at every size")
        text += f" ({fmt(largest[1])} steps/s at the largest, {elements_text(largest[0])})"
        parts.append(text)
    return (f"Interactive rates (Sec. 6, '{v['interactive_large_models']['text']}'; Figs. 5-9 state {lo:g}-{hi:g} frames/s "
            "with rendering and collisions, model sizes not given): " + ("; ".join(parts) if parts else NOT_RUN) + ".")


def update_table(runs, pub, summary=None):
    if not runs.configs:
        return f"Update throughput: {NOT_RUN} (no performance.csv)."
    rows = []
    for cfg in runs.configs:
        for size in runs.sizes(cfg):
            g, s = runs.get(cfg, size, "gather"), runs.get(cfg, size, "scatter")
            if g is None and s is None:
                continue
            cells = [config_label(cfg), size[0], size[1], fmt_int(runs.elements.get(size))]
            for row in (g, s):
                if row is None:
                    cells += [NOT_RUN if cfg[0] == "cuda" else "not run (GPU only)", ""]
                elif invalid(row):
                    cells += [invalid(row), ""]
                else:
                    cells += [fmt(val(row, "update_gbps")), pct(val(row, "update_of_triad"))]
            tg, ts = val(g, "update_ms") if usable(g) else None, val(s, "update_ms") if usable(s) else None
            cells.append(fmt(ts / tg) if tg and ts else "")
            triad = val(g if usable(g) else s, "stream_triad_gbps") if usable(g) or usable(s) else None
            cells.append(fmt(triad))
            rows.append(cells)
    table = md_table(["series", "model", "N", "elements", "gather GB/s", "gather / triad", "scatter GB/s", "scatter / triad",
                      "scatter time / gather time", "STREAM triad GB/s (same run)"], rows)
    note = ("GB/s in compulsory bytes (each array once per kernel: solvers/bcsr_pcg/PERF_NOTES.md), against the STREAM "
            "triad of the row's backend and precision measured in the same run. Gather: every global entry sums its local "
            "contributions through index blocks (Sec. 5.4, the paper's); scatter: atomic adds (our comparison, GPU only).")
    return table + "\n\n" + note + "\n\n" + update_verdict(runs, pub, summary)


def update_verdict(runs, pub, summary=None):
    """Per series, the gather update's GB/s above 5k elements (a table); the verdict is the GPU's,
    whose figure the paper gives, in one sentence, and the CPU's range in another."""
    v = pub["values"]
    paper, min_e = v["update_gbps"]["value"], v["update_gbps_min_elements"]["value"]
    nominal = v.get("gtx570_nominal_bandwidth", {}).get("value")
    rows, gpu, cpu = [], [], []
    for cfg in runs.configs:
        pts = []
        for size in runs.sizes(cfg):
            g = runs.get(cfg, size)
            e = runs.elements.get(size, 0)
            if usable(g) and e > min_e and val(g, "update_gbps") is not None:
                pts.append((val(g, "update_gbps"), val(g, "update_of_triad"), val(g, "spmv_gbps")))
        if not pts:
            continue
        gb = [p[0] for p in pts]
        fr = [p[1] for p in pts if p[1] is not None]
        ratio = [p[0] / p[2] for p in pts if p[2]]
        faster = [(runs.get(cfg, s, "gather"), runs.get(cfg, s, "scatter")) for s in runs.sizes(cfg)]
        faster = [(val(a, "update_ms"), val(b, "update_ms")) for a, b in faster if usable(a) and usable(b)]
        faster = [(a, b) for a, b in faster if a and b]
        rows.append([config_label(cfg), str(len(pts)), span(gb, fmt), span(fr, pct) if fr else "",
                     fmt(float(np.median(ratio))) if ratio else "",
                     f"{sum(a < b for a, b in faster)} of {len(faster)}" if faster else "GPU only"])
        (gpu if cfg[0] == "cuda" else cpu).append((gb, fr))
    claim = (f"Claim (Sec. 6, GTX 570): about {paper:g} GB/s in every case above 5k elements"
             + (f", {paper / nominal:.0%} of the card's nominal {nominal:g} GB/s (no triad measured)" if nominal else "") + ".")
    if not rows:
        return claim + f"\n\nVerdict: not testable: no valid update above 5k elements ({NOT_RUN})."
    table = md_table(["series", "sizes above 5k elements", "gather GB/s", "of triad", "x the SpMV's GB/s (median)",
                      "gather faster than scatter"], rows)
    if gpu:
        lo = min(min(g) for g, _ in gpu)
        hi = max(max(g) for g, _ in gpu)
        fr = [f for _, fs in gpu for f in fs]
        verdict = (f"Verdict: {'reproduced' if lo >= paper else 'not reproduced'} on the GPU: the gather update runs at "
                   f"{fmt(lo)}-{fmt(hi)} GB/s above 5k elements ({'at least' if lo >= paper else 'not always'} {paper:g} GB/s"
                   + (f"; {pct(min(fr))}-{pct(max(fr))} of triad" if fr else "") + ").")
    else:
        verdict = "Verdict: not testable here: no GPU rows (the paper's figure is its GPU's)."
    if summary is not None:
        summary.append(vt.row("Sec. 6 update", "gather update GB/s above 5k elements, GPU (slowest size)", paper,
                              lo if gpu else "not run", ("reproduced" if lo >= paper else "differs") if gpu else "not run",
                              f"{fmt(lo)}-{fmt(hi)} GB/s on the H100 against the GTX 570's ~{paper:g}; as a fraction of each "
                              "card's bandwidth the two are not measured alike (the paper has no triad)." if gpu else
                              "no GPU rows."))
    if cpu:
        fr = [f for _, fs in cpu for f in fs]
        verdict += (f" The CPU's reaches {fmt(min(min(g) for g, _ in cpu))}-{fmt(max(max(g) for g, _ in cpu))} GB/s"
                    + (f" ({pct(min(fr))}-{pct(max(fr))} of its triad)." if fr else "."))
    return claim + "\n\n" + table + "\n\n" + verdict


def spmv_table(runs, pub, summary=None):
    if not runs.configs:
        return f"SpMV: {NOT_RUN} (no performance.csv)."
    rows = []
    for cfg in runs.configs:
        for size in runs.sizes(cfg):
            p = runs.get(cfg, size)
            if p is None:
                continue
            head = [config_label(cfg), size[0], size[1], fmt_int(runs.elements.get(size))]
            if invalid(p):
                rows.append(head + [invalid(p)] + [""] * 7)
                continue
            spmv, cg, it = val(p, "spmv_ms"), val(p, "cg_ms"), val(p, "cg_iterations")
            per_it = fmt(cg / it / spmv) if spmv and cg and it else NOT_RUN
            gbps = val(p, "spmv_gbps")
            rows.append(head + [fmt(spmv * 1000 if spmv else None), fmt(val(p, "spmv_gflops")), fmt(gbps),
                                mbytes(gbps * spmv * 1e6 if gbps and spmv else None), pct(val(p, "spmv_of_triad")),
                                fmt(val(p, "cg_gflops")), count(it), per_it])
    table = md_table(["series", "model", "N", "elements", "SpMV us", "SpMV GFLOP/s", "SpMV GB/s", "bytes per SpMV", "SpMV / triad",
                      "CG GFLOP/s", "CG iterations", "CG time per iteration / SpMV time"], rows)
    note = ("One product of the final matrix alone, after the timed run: median of 7 timings; on the GPU each timing is "
            "a batch of 10 back-to-back products divided by 10. A CG iteration is one SpMV plus "
            "the Jacobi preconditioner and vector operations; the last column is their cost in SpMVs. A fraction of triad "
            "above 100% means the matrix stays in cache between products (the bytes per SpMV against the triad's arrays, "
            "sized to exceed the last-level cache): compulsory bytes then exceed the memory traffic.")
    return table + "\n\n" + note + "\n\n" + gflops_verdict(runs, pub, summary)


def reach(points, frac=0.9):
    """The smallest elements count whose value reaches frac of the maximum over the sizes."""
    top = max(v for _, v in points)
    return next(e for e, v in points if v >= frac * top)


def gflops_verdict(runs, pub, summary=None):
    """Per series, where Matrix and CG reach 90% of their best GFLOP/s, CG's trend at the largest
    size, how often Total rises with size and the SpMV's fraction of triad (a table); the verdict
    sets the GPU's against the paper's three statements in two sentences."""
    v = pub["values"]
    peak_k, cg_k = v["matrix_peak_elements"]["value"], v["cg_not_at_max_elements"]["value"]
    rows, gpu = [], []
    for cfg in runs.configs:
        def pts(col, source="phases"):
            out = []
            for size in runs.sizes(cfg):
                row = runs.total_row(cfg, size)[0] if source == "total" else runs.get(cfg, size)
                x = val(row, col) if usable(row) else None
                if x is not None:
                    out.append((runs.elements.get(size, 0), x))
            return sorted(out)
        mat, cg, tot, spmv = pts("matrix_gflops"), pts("cg_gflops"), pts("total_gflops", "total"), pts("spmv_of_triad")
        if len(mat) < 2 or len(cg) < 2:
            continue
        last, prev = cg[-1], cg[-2]
        trend = "still rising" if last[1] > 1.05 * prev[1] else "falling" if last[1] < 0.95 * prev[1] else "flat"
        ups = sum(b[1] > a[1] for a, b in zip(tot, tot[1:])) if tot else None
        rows.append([config_label(cfg), elements_text(reach(mat)), elements_text(reach(cg)),
                     f"{trend} ({fmt(prev[1])} to {fmt(last[1])} GFLOP/s at {elements_text(last[0])})",
                     f"{ups} of {len(tot) - 1}" if tot else "", pct(spmv[-1][1]) if spmv else ""])
        if cfg[0] == "cuda":
            gpu.append((config_label(cfg), reach(mat), reach(cg), ups, len(tot) - 1 if tot else 0))
    claim = (f"Claims (Sec. 6): the local matrices peak at about {peak_k // 1000:g}k elements; CG is not at its maximum at "
             f"{cg_k // 1000:g}k; '{v['total_increases_with_elements']['text']}'.")
    if not rows:
        return claim + "\n\nVerdict: too few valid sizes to tell."
    table = md_table(["series", "Matrix reaches 90% of its best at", "CG reaches 90% of its best at",
                      "CG at the largest size", "Total rises (steps in size)", "SpMV of triad at the largest"], rows)
    if not gpu:
        return claim + "\n\n" + table + "\n\nVerdict: not testable here: no GPU rows."
    mat_at = sorted({m for _, m, _, _, _ in gpu})
    cg_at = sorted({c for _, _, c, _, _ in gpu})
    rises = all(u == n for _, _, _, u, n in gpu if n)
    close = all(m <= 2 * peak_k for m in mat_at) and all(c > cg_k for c in cg_at)
    if summary is not None:
        summary.append(vt.row("Fig. 3", "elements where the local matrices reach 90% of their best GFLOP/s, GPU", peak_k,
                              min(mat_at), "reproduced" if close and rises else "differs",
                              f"CG levels off at {' and '.join(elements_text(c) for c in cg_at)} (paper: beyond "
                              f"{cg_k // 1000:g}k); total GFLOP/s {'rises' if rises else 'does not rise'} with size at every "
                              "step, as the paper says." if rises else " does not always rise with size."))
    verdict = (f"Verdict: {'reproduced' if close and rises else 'differs in scale' if rises else 'differs'}: on the GPU the "
               f"local matrices level off at {' and '.join(elements_text(m) for m in mat_at)} elements (paper: ~{peak_k // 1000:g}k) "
               f"and CG at {' and '.join(elements_text(c) for c in cg_at)} (paper: beyond {cg_k // 1000:g}k). Total GFLOP/s "
               f"{'rises at every step in size, as the paper says' if rises else 'does not rise at every step in size'}.")
    return claim + "\n\n" + table + "\n\n" + verdict


def iterations_table(its, meta, pub, summary=None):
    v = pub["values"]
    lo, hi, fixed = v["cg_iterations_min"]["value"], v["cg_iterations_max"]["value"], v["cg_iterations_fixed"]["value"]
    if its is None:
        return f"CG iterations per tolerance: {NOT_RUN} (no iterations.csv: part `iterations` not in these results)."
    rows, per_tol = [], {}
    for r in sorted(its, key=lambda r: (-(val(r, "tolerance") or 0), val(r, "elements") or 0, r.get("model", ""))):
        tol = val(r, "tolerance")
        head = [r.get("model", "?"), r.get("N", "?"), fmt_int(val(r, "elements")), r.get("backend", "?"), r.get("precision", "?"),
                f"{tol:g}" if tol is not None else "?", r.get("steps", "")]
        if invalid(r):
            rows.append(head + [invalid(r)] + [""] * 4)
            continue
        mx = val(r, "iterations_max")
        red = val(r, "reduction_worst")
        rows.append(head + [count(val(r, "iterations_min")), count(val(r, "iterations_mean")), count(mx),
                            NOT_RUN if red is None else f"{red:.2g}",
                            ("yes" if mx <= fixed else "no") if mx is not None else NOT_RUN])
        if mx is not None:
            per_tol.setdefault(tol, []).append((val(r, "iterations_min"), mx))
    table = md_table(["model", "N", "elements", "backend", "precision", "tolerance", "steps", "iterations min", "mean", "max",
                      "worst final / initial residual", f"max <= {fixed}"], rows)
    crit = (meta.get("iterations") or {}).get("criterion", "")
    note = ((f"Criterion: {crit}. " if crit else "") + "The residual ratio is a solve's final over its initial residual; "
            "the initial one is that of the warm start, already small against ||b||, so the ratio may exceed the tolerance.")
    parts = []
    for tol in sorted(per_tol, reverse=True):
        mins, maxs = [a for a, _ in per_tol[tol] if a is not None], [b for _, b in per_tol[tol]]
        ok = sum(m <= fixed for m in maxs)
        parts.append(f"tolerance {tol:g}: {count(min(mins) if mins else None)}-{count(max(maxs))} iterations per step, "
                     + (f"{fixed} suffice at every size" if ok == len(maxs) else f"{fixed} suffice at {ok} of {len(maxs)} sizes")
                     + (" (within the paper's 5-18)" if mins and min(mins) >= lo and max(maxs) <= hi else ""))
    claim = (f"Claim (Sec. 6): '{v['cg_iterations_min']['cite'].split(': ', 1)[-1].split(chr(39) + ' (')[0].strip(chr(39))}' "
             f"(the performance runs fix {fixed}).")
    verdict = claim + "\n\nVerdict: " + ("; ".join(parts) if parts else "no valid run") + "."
    if summary is not None and per_tol:
        inside = [t for t in per_tol if all(lo <= a <= hi and lo <= b <= hi for a, b in per_tol[t] if a is not None)]
        spans = {t: (min(a for a, _ in per_tol[t] if a is not None), max(b for _, b in per_tol[t])) for t in per_tol}
        t0 = max(spans)
        summary.append(vt.row("Sec. 6 CG", f"CG iterations per step (tolerance {t0:g}: min-max over sizes)", f"{lo}-{hi}",
                              f"{count(spans[t0][0])}-{count(spans[t0][1])}", "reproduced" if inside else "differs",
                              (f"within {lo}-{hi} at tolerance {' and '.join(f'{t:g}' for t in sorted(inside))}." if inside else
                               f"outside {lo}-{hi} at every tolerance tried; the paper does not give its tolerance.")))
    return "\n\n".join(x for x in (table, note, verdict) if x)


def triad_note(meta, cpu_triad):
    notes = []
    gpu = (meta.get("ceilings") or {}).get("gpu_triad_gbps")
    if gpu:
        notes.append(f"GPU STREAM triad in this run: fp32 {fmt(gpu.get('fp32'))} GB/s, fp64 {fmt(gpu.get('fp64'))} GB/s")
    if cpu_triad:
        pts = ", ".join(f"{r.get('threads')}: {fmt(val(r, 'median_gbps'))}" for r in cpu_triad)
        notes.append(f"CPU STREAM triad in this run (threads: GB/s, median): {pts}")
    return (". ".join(notes) + ".") if notes else "STREAM triad: not measured in these results."


def phase_spreads(folder):
    """Whether the performance rows record each phase's min-max (None: no performance.csv)."""
    rows = read_csv(folder, "performance.csv")
    return None if not rows else "rotation_ms_min" in rows[0]


def source_folder(results_dir):
    """results_dir, or another machine's full run whose phase times carry their spread where these
    do not (result_format.folder_with_spreads)."""
    return result_format.folder_with_spreads(results_dir, phase_spreads)


def build(results_dir, figures_dir):
    os.makedirs(figures_dir, exist_ok=True)
    asked, results_dir = results_dir, source_folder(results_dir)
    pub = load_published()
    meta = read_json(results_dir, "meta.json")
    models = read_csv(results_dir, "models.csv")
    perf = read_csv(results_dir, "performance.csv")
    its = read_csv(results_dir, "iterations.csv")
    cpu_triad = read_csv(results_dir, "cpu_triad.csv")
    runs = Runs(perf)

    f3, f4, fb = fig3(runs, figures_dir), fig4(runs, figures_dir), fig_bandwidth(runs, pub, figures_dir)

    machine = meta.get("machine") or {}
    gpu_name = (machine.get("gpu") or {}).get("name")
    md = ["## Verschoor & Jalba 2012: co-rotational FEM with a gather-updated BCSR matrix and Jacobi-PCG (`bcsr-pcg`)", ""]
    quick = meta.get("quick")
    md.append(f"Data: `{results_dir}`" + (" (quick run: CPU only, small bunny meshes, few timed steps)" if quick else "") + ".")
    md.append(f"Paper machine: {pub['machine']['gpu']}, {pub['machine']['cpu']} ({pub['machine']['cite'].split(':')[0]}). "
              f"Ours: GPU {(gpu_name or '?') if meta.get('gpu') else NOT_RUN}"
              + (f" ({meta['gpu_note']})" if meta.get("gpu_note") else "")
              + f", CPU {machine.get('cpu_model', '?')} ({result_format.threads_text(machine)}).")
    if perf is not None and "validity" not in perf[0]:
        md.append(f"Validity: {NOT_RECORDED} for these results; their numbers are shown as measured.")
    md.append(f"Published values: {pub['source_copy']}.")
    other = result_format.source_line(asked, results_dir, meta, "phase times have no spread")
    if other:
        md.append(other)
    md.append("")
    summary = []
    md += ["### Parameters", "", parameters_table(meta, pub, summary), ""]
    md += ["### Models (Sec. 5.5: voxelized, 6 tetrahedra per voxel, interior merged)", "", models_table(models, pub, summary), ""]
    if perf is None:
        why = ("part `performance` not in these results" if "performance" not in meta else "no rows")
        md += ["### Figs. 3-4: performance per phase", "", f"{NOT_RUN} (no performance.csv: {why}).", ""]
    else:
        md += ["### Fig. 4: time per phase per step", "", phase_times_table(runs, pub, summary), "",
               f"![time per phase]({f4})", "",
               "### Fig. 3: GFLOP/s per phase, SpMV and steps/s", "", spmv_table(runs, pub, summary), "",
               f"![GFLOP/s per phase]({f3})", "",
               "### Global-matrix update throughput (Sec. 6: ~50 GB/s above 5k elements)", "", update_table(runs, pub, summary), "",
               f"![update bandwidth]({fb})", "", triad_note(meta, cpu_triad), ""]
        if meta.get("bandwidth_convention"):
            md += [f"Convention: {meta['bandwidth_convention']}.", ""]
    md += ["### CG iterations per tolerance (Sec. 6: 5 to 18)", "", iterations_table(its, meta, pub, summary), ""]
    if meta.get("notes"):
        md += ["Notes:", ""] + [f"- {n}" for n in meta["notes"]] + [""]
    md += [vt.section(summary, f"paper: {pub['machine']['gpu']}, {pub['machine']['cpu']}; ours: GPU "
                      f"{(gpu_name or '?') if meta.get('gpu') else NOT_RUN}, CPU {machine.get('cpu_model', '?')}"), ""]
    return portable_paths("\n".join(md))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: verschoor2012.py RESULTS_DIR FIGURES_DIR")
    text = build(sys.argv[1], sys.argv[2])
    with open(os.path.join(sys.argv[2], PAPER + ".md"), "w") as f:
        f.write(text)
    print(text)
