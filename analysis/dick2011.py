#!/usr/bin/python3
"""Figures and tables of Dick, Georgii & Westermann 2011 (real-time multigrid finite hexahedra,
CUDA) from the data of `elastobench reproduce dick2011` (RESULTS_DIR = OUT/dick2011).

    /usr/bin/python3 analysis/dick2011.py RESULTS_DIR FIGURES_DIR

Writes Tables 1-3 as Markdown (published value, ours, ratio ours/published; published values
from analysis/published/dick2011.json with their table/figure) and draws Figs. 7-11 as PNG and
PDF into FIGURES_DIR: steps/s, speed-up over one core, GFLOP/s, GB/s and the residual reduction
of multigrid against Jacobi-preconditioned CG. Rows that were not run (e.g. the GPU in a
CPU-only run) read "not run". `build(results_dir, figures_dir)` returns the Markdown section.
Only Debian's numpy, pandas and matplotlib (Agg) are used.
"""
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import figures  # noqa: E402
import verdict_table as vt  # noqa: E402
from figures import legend_below  # noqa: E402
import result_format  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NOT_RUN = "not run"
PAPER = "dick2011"
META = {}  # meta.json of the results being drawn
DEVICES = [("gpu", "GPU"), ("cpu1", "CPU 1 core"), ("cpu4", "CPU 4 cores"), ("cpu8", "CPU 8 cores")]


def published():
    with open(os.path.join(HERE, "published", PAPER + ".json")) as f:
        return json.load(f)


def table_csv(results_dir, name):
    path = os.path.join(results_dir, name)
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        return None
    frame = pd.read_csv(path)
    return frame if len(frame) else None


def number(v, digits=3):
    """Significant-digit formatting; None/NaN read 'not run'."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return NOT_RUN
    if v == 0:
        return "0"
    mag = int(math.floor(math.log10(abs(v))))
    if mag >= 6 or mag < -3:
        return f"{v:.{digits}g}"
    return f"{v:,.{max(digits - 1 - mag, 0)}f}"


def paper(v):
    """A published value; '-' where the paper gives none."""
    return "-" if v is None else number(v)


def ratio(ours, pub, spread=None):
    """ours / pub; with spread (our min/median, max/median), a published value inside our repeats'
    range is no measured difference: "not significant"."""
    if ours is None or pub in (None, 0) or not math.isfinite(float(ours)):
        return NOT_RUN
    if spread and ours * spread[0] <= pub <= ours * spread[1]:
        return f"not significant ({ours / pub:.2g}; inside our min-max)"
    return f"{ours / pub:.3g}"


def markdown(header, rows):
    # A bare | in a cell (|r|/|r0|) splits it: the header then outnumbers the separator row and
    # GitHub and pandoc show the table as a paragraph of text.
    def row(cells):
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
    return "\n".join([row(header), "|" + "---|" * len(header)] + [row(r) for r in rows])


# ---- our measurements ----------------------------------------------------------------------------
def device_key(row):
    if row["backend"] == "cuda":
        return "gpu"
    return f"cpu{int(row['threads'])}"


def ours_table(perf):
    """{(precision, model, device): row} from performance.csv."""
    out = {}
    if perf is None:
        return out
    for _, r in perf.iterrows():
        out[(r["precision"], int(r["model"]), device_key(r))] = r
    return out


def all_cpu_threads(perf):
    if perf is None:
        return []
    cpu = perf[perf["backend"] == "cpu"]
    return sorted({int(t) for t in cpu["threads"].dropna()})


def invalid(row):
    """'invalid: <reason>' for a run whose state was not valid, else None (older results carry no
    verdict and read 'validity not recorded')."""
    if row is None:
        return None
    if "valid" not in row.index:
        return "validity not recorded"
    if str(row["valid"]).lower() in ("true", "1"):
        return None
    reason = row.get("invalid_reason", "")
    return "invalid: " + (str(reason) if isinstance(reason, str) and reason else "reason not recorded")


def requested_gbps(row):
    return row["gbps_requested"] if "gbps_requested" in row.index else row["gbps"]


# ---- Tables 1 and 2 ------------------------------------------------------------------------------
def performance_tables(pub, perf):
    ours = ours_table(perf)
    extra = [t for t in all_cpu_threads(perf) if t not in (1, 4, 8)]
    md = []
    for key, prec, title in (("table1_fp32", "fp32", "Table 1 (single precision)"),
                             ("table2_fp64", "fp64", "Table 2 (double precision)")):
        t = pub[key]
        rows = []
        for model, devs in t["rows"].items():
            m = int(model)
            for dev, label in DEVICES + [(f"cpu{x}", f"CPU {x} threads (ours only)") for x in extra]:
                p = devs.get(dev, [None, None, None])
                o = ours.get((prec, m, dev))
                bad = invalid(o)
                vals = [None, None, None] if o is None or bad else [o["steps_per_second"], o["gflops"], requested_gbps(o)]
                # GFLOP/s and GB/s are the steps/s times fixed counts: the repeats' range scales all three.
                spread = None
                if vals[0] and "steps_per_second_min" in o and math.isfinite(float(o["steps_per_second_min"])):
                    spread = (float(o["steps_per_second_min"]) / vals[0], float(o["steps_per_second_max"]) / vals[0])
                cells = [f"{m:,}", label]
                for i in range(3):
                    shown = number(vals[i])
                    if spread and i == 0:
                        shown += f" ({number(vals[0] * spread[0])}-{number(vals[0] * spread[1])})"
                    cells += [paper(p[i]), bad or shown, bad or ratio(vals[i], p[i], spread)]
                rows.append(cells)
        header = ["hexahedra", "device", "steps/s paper", "ours, median (min-max)", "ratio", "GFLOP/s paper", "ours", "ratio",
                  "GB/s paper", "ours", "ratio"]
        md.append(f"**{title}** - {t['cite']}.\n\n" + markdown(header, rows))
    md.append("GB/s in Tables 1-2 and Fig. 10 follow the paper's convention: every byte a kernel requests, cache "
              "hits included. The fraction of the machine's bandwidth is given below by compulsory bytes.")
    md.append(headline_table(perf))
    return "\n\n".join(md)


def headline_table(perf):
    """steps/s with spread, and compulsory-byte bandwidth against the same run's STREAM triad."""
    if perf is None or "fraction_of_triad_compulsory" not in perf.columns:
        return "Bandwidth against the STREAM triad: not recorded in these results."
    rows = []
    for _, r in perf.iterrows():
        bad = invalid(r)
        dev = "GPU" if r["backend"] == "cuda" else f"CPU {int(r['threads'])}"
        if bad:
            rows.append([f"{int(r['model']):,}", r["precision"], dev] + [bad] * 4)
            continue
        rows.append([f"{int(r['model']):,}", r["precision"], dev,
                     f"{number(r['steps_per_second'])} ({number(r['steps_per_second_min'])}-{number(r['steps_per_second_max'])})",
                     number(r["gbps_compulsory"]), number(r["triad_gbps"]),
                     number(100 * r["fraction_of_triad_compulsory"]) + "%"])
    proto = ("Every row times the same steps from the same state: " + str(META.get("timing_protocol", "")) + ".")
    return ("**Bandwidth by compulsory bytes** (each array once per kernel) against the STREAM triad of the same "
            "device measured in the same run (CPU rows: the CPU triad at the same thread count). " + proto + "\n\n" +
            markdown(["hexahedra", "precision", "device", "steps/s median (min-max of 5)", "GB/s compulsory",
                      "triad GB/s", "% of triad"], rows))


# ---- Table 3 -------------------------------------------------------------------------------------
def share_cell(o, share):
    """% of GPU time, with the kernel's ms per step (mean) and their per-step min-max where recorded."""
    if share is None:
        return NOT_RUN
    text = number(100 * share)
    if o is not None and "gpu_ms_min" in o and not pd.isna(o["gpu_ms_min"]):
        text += (f" ({number(float(o['gpu_ms_per_step']))} ms, {number(float(o['gpu_ms_min']))}-"
                 f"{number(float(o['gpu_ms_max']))})")
    return text


def kernel_table(pub, kernels):
    t3 = pub["table3"]
    rows = []
    ours = {}
    if kernels is not None:
        for _, r in kernels.iterrows():
            ours[(r["precision"], r["kernel"])] = r
    names = list(t3["kernels"].keys()) + ["update"]
    tot = {"fp32": [0, 0, 0], "fp64": [0, 0, 0]}
    for name in names:
        p = t3["kernels"].get(name, {})
        o32, o64 = ours.get(("fp32", name)), ours.get(("fp64", name))

        def get(o, col):
            if o is None or col not in o or pd.isna(o[col]):
                return None
            return float(o[col])

        f32, b32, b64 = get(o32, "flops_per_element"), get(o32, "bytes_per_element"), get(o64, "bytes_per_element")
        s32 = get(o32, "gpu_time_share")
        s64 = get(o64, "gpu_time_share")
        for prec, vals in (("fp32", (f32, b32, s32)), ("fp64", (get(o64, "flops_per_element"), b64, s64))):
            for i, v in enumerate(vals):
                if v is not None:
                    tot[prec][i] += v
        rows.append([p.get("paper_name", name + " (ours only: Newmark update, a separate kernel here)"),
                     paper(p.get("flops")), number(f32), ratio(f32, p.get("flops")),
                     paper(p.get("bytes_fp32")), number(b32), ratio(b32, p.get("bytes_fp32")),
                     paper(p.get("bytes_fp64")), number(b64), ratio(b64, p.get("bytes_fp64")),
                     paper(p.get("gpu_time_pct_fp32")), share_cell(o32, s32),
                     paper(p.get("gpu_time_pct_fp64")), share_cell(o64, s64)])
    tp = t3["total"]
    t32 = tot["fp32"] if kernels is not None else [None] * 3
    t64 = tot["fp64"] if kernels is not None else [None] * 3
    rows.append(["**Total per element per step**", number(tp["flops"]), number(t32[0]), ratio(t32[0], tp["flops"]),
                 number(tp["bytes_fp32"]), number(t32[1]), ratio(t32[1], tp["bytes_fp32"]),
                 number(tp["bytes_fp64"]), number(t64[1]), ratio(t64[1], tp["bytes_fp64"]), "100",
                 number(100 * t32[2]) if t32[2] else NOT_RUN, "100", number(100 * t64[2]) if t64[2] else NOT_RUN])
    header = ["kernel", "FLOPs paper", "ours", "ratio", "bytes fp32 paper", "ours", "ratio", "bytes fp64 paper", "ours",
              "ratio", "% GPU time fp32 paper", "ours", "% fp64 paper", "ours"]
    elems = None
    if kernels is not None:
        elems = int(kernels["elements"].iloc[0])
    note = (f"Ours: the largest model run ({elems:,} elements); % GPU time: the kernel's mean over the profiled steps "
            "of one run over the step's, with one step's time (ms) and its min-max over those steps where recorded; "
            "bytes count every byte each kernel reads or writes, "
            "as the paper does (cache hits included). Our assembly writes each coefficient once instead of the paper's "
            "read-modify-write, and our coarsest CG is converged (Jacobi-preconditioned) instead of a few iterations." if elems
            else "No kernel data.")
    return f"**Table 3** - {t3['cite']}.\n\n" + markdown(header, rows) + "\n\n" + note


# ---- Figures 7-10 ---------------------------------------------------------------------------------
def bar_figures(pub, perf, figures_dir):
    if perf is None:
        return []
    ours = ours_table(perf)
    models = [int(m) for m in pub["table1_fp32"]["rows"].keys()]
    threads = all_cpu_threads(perf)
    devs = [("gpu", "GPU")] + [(f"cpu{t}", f"CPU {t}") for t in threads]
    links = []
    specs = [("fig7_steps_per_second", "steps/s", 0, False), ("fig8_speedup", "speed-up over 1 core", 0, True),
             ("fig9_gflops", "GFLOP/s", 1, False), ("fig10_gbps", "GB/s (effective)", 2, False)]
    col = {0: "steps_per_second", 1: "gflops", 2: "gbps"}
    col[2] = "gbps_requested" if "gbps_requested" in perf.columns else "gbps"
    for name, ylabel, idx, speedup in specs:
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=False)
        for ax, (key, prec) in zip(axes, (("table1_fp32", "fp32"), ("table2_fp64", "fp64"))):
            width = 0.8 / len(devs)
            x = np.arange(len(models))
            for i, (dev, label) in enumerate(devs):
                vals = []
                for m in models:
                    o = ours.get((prec, m, dev))
                    v = None if o is None or invalid(o) else float(o[col[idx]])
                    if speedup and v is not None:
                        base = ours.get((prec, m, "cpu1"))
                        v = v / float(base[col[0]]) if base is not None and not invalid(base) else None
                    vals.append(np.nan if v is None else v)
                ax.bar(x + (i - len(devs) / 2 + 0.5) * width, vals, width, label=f"ours {label}")
            # published values (Tables 1-2) as markers
            for j, (dev, label) in enumerate(DEVICES):
                pv = []
                for m in models:
                    p = pub[key]["rows"][str(m)][dev]
                    v = p[idx]
                    if speedup:
                        v = p[0] / pub[key]["rows"][str(m)]["cpu1"][0]
                    pv.append(v)
                ax.plot(x, pv, marker="os^v"[j], linestyle="--", color="k", alpha=0.35 + 0.15 * j,
                        label=f"paper {label}")
            ax.set_xticks(x)
            ax.set_xticklabels([f"{m / 1000:.1f}K" for m in models])
            ax.set_xlabel("hexahedra")
            ax.set_ylabel(ylabel)
            ax.set_yscale("log")
            ax.set_title(prec)
            ax.grid(True, which="both", alpha=0.3)
        title = f"{name.split('_')[0].replace('fig', 'Fig. ')}: {ylabel}"
        fig.suptitle(f"Dick 2011 {title}")
        fig.tight_layout()
        # Below the panels: inside, it hid the tallest bars.
        legend_below(fig, axes, ncol=5)
        links.append((title, figures.save(fig, figures_dir, f"dick2011_{name}")))
    return links


# ---- Figure 11 ------------------------------------------------------------------------------------
def convergence_figure(conv, figures_dir):
    if conv is None:
        return None
    groups = list(conv.groupby(["model", "precision"]))
    fig, axes = plt.subplots(1, len(groups), figsize=(4.2 * len(groups), 3.8), squeeze=False)
    for ax, ((model, prec), g) in zip(axes[0], groups):
        for solver, color in (("multigrid", "red"), ("jacobi_cg", "green")):
            s = g[g["solver"] == solver]
            if len(s):
                ax.semilogy(s["seconds"], s["reduction"], color=color, marker="." if solver == "multigrid" else None,
                            label="multigrid V-cycles" if solver == "multigrid" else "Jacobi-PCG")
        edge = g["edge_mm"].iloc[0]
        ax.set_title(f"{int(g['elements'].iloc[0]):,} hex ({edge:.2f} mm), {prec}", fontsize=9)
        ax.set_xlabel("time on 1 CPU core (s)")
        ax.set_ylabel("|r| / |r0|")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Dick 2011 Fig. 11: residual reduction against time (E = 1 MPa, nu = 0.3, rho = 1e5, dt = 50 ms, 1/100 g)")
    # Without it each panel's y label runs into its left neighbour's tick labels.
    fig.tight_layout()
    return figures.save(fig, figures_dir, "dick2011_fig11_convergence")


def convergence_summary(conv, mgf):
    if conv is None:
        return "Fig. 11: not run."
    rows = []
    for (model, prec), g in conv.groupby(["model", "precision"]):
        mg = g[g["solver"] == "multigrid"]
        cg = g[g["solver"] == "jacobi_cg"]
        t_mg = float(mg["seconds"].max()) if len(mg) else None
        red_mg = float(mg["reduction"].min()) if len(mg) else None
        red_cg_same = None
        if len(cg) and t_mg is not None:
            within = cg[cg["seconds"] <= t_mg]
            red_cg_same = float(within["reduction"].min()) if len(within) else None
        factors, verdict = None, NOT_RUN
        if mgf is not None:
            f = list(mgf[(mgf["model"] == model) & (mgf["precision"] == prec)]["factor"])
            factors = ", ".join(f"{v:.2f}" for v in f)
            verdict = rate_verdict(f)
        rows.append([f"{int(g['elements'].iloc[0]):,}", prec, number(t_mg), number(red_mg), number(red_cg_same),
                     factors or NOT_RUN, verdict])
    return ("**Fig. 11 in numbers** - residual reduction reached by the multigrid V-cycles (until 1e-6 or 30 cycles) "
            "and by Jacobi-PCG within the same time on one core; the factor of every V-cycle, and the verdict on the "
            "paper's claim of a constant rate. The times are one solve's residual history per model (the figure's "
            "axis), not repeated timings.\n\n" +
            markdown(["hexahedra", "precision", "multigrid time (s)", "multigrid |r|/|r0|", "Jacobi-PCG |r|/|r0| in that time",
                      "V-cycle factors", "constant rate?"], rows))


def rate_verdict(f):
    """Whether per-cycle factors are constant: after the first cycle (which starts from the
    previous step's solution) every factor within a factor 1.5 of the median."""
    later = [v for v in f[1:] if v > 0]
    if len(later) < 3:
        return "too few cycles to judge"
    med = float(np.median(later))
    lo, hi = min(later), max(later)
    if hi <= 1.5 * med and lo >= med / 1.5:
        return f"yes: {lo:.2f}-{hi:.2f} (median {med:.2f})"
    return f"no: the factor moves from {later[0]:.2f} to {later[-1]:.2f} (range {lo:.2f}-{hi:.2f})"


# ---- Sec. 6 accuracy with 2 V-cycles ----------------------------------------------------------------
def accuracy_section(acc, figures_dir):
    if acc is None:
        return "Accuracy of 2 V-cycles per step: not run."
    rows = []
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for model, g in acc.groupby("model"):
        ax.semilogy(g["time"], g["error_displacement"], label=f"{int(g['elements'].iloc[0]):,} hex: displacement")
        ax.semilogy(g["time"], g["error_increment"], linestyle="--", label=f"{int(g['elements'].iloc[0]):,} hex: step increment")
        rows.append([f"{int(g['elements'].iloc[0]):,}", str(len(g)), number(float(g["error_displacement"].median())),
                     number(float(g["error_displacement"].max())), number(float(g["error_increment"].median())),
                     number(float(g["error_increment"].max())), number(float(g["two_cycle_reduction"].median())),
                     number(float(g["cycles_reference"].median()))])
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel("relative error of 2 V-cycles")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.suptitle("Dick 2011 Sec. 6: 2 V-cycles per step against a solve to 1e-8 (CPU fp64)")
    link = figures.save(fig, figures_dir, "dick2011_accuracy")
    worst = float(acc["error_displacement"].max())
    verdict = ("Verdict: the paper's 'high simulation accuracy using only 2 V-cycles' holds for the displacement "
               f"(worst relative error {worst:.2g})" if worst < 1e-2 else
               f"Verdict: 2 V-cycles leave a relative displacement error up to {worst:.2g}: not 'high accuracy'")
    inc = float(acc["error_increment"].median())
    verdict += (f"; the step's increment itself is only solved to a median relative error of {inc:.2g}, so most of the "
                "displacement's accuracy comes from the previous steps, i.e. from the good initial guess." if inc > 0.05 else ".")
    return ("**Accuracy of 2 V-cycles per step** (Sec. 6): each step solved with the method's 2 V-cycles and, from the "
            "same assembled system, to a residual reduction of 1e-8; the run continues with the 2-cycle solution.\n\n" +
            markdown(["hexahedra", "steps", "displacement error median", "max", "increment error median", "max",
                      "|r|/|r0| after 2 cycles (median)", "cycles to 1e-8 (median)"], rows) +
            f"\n\n![Sec. 6: error of 2 V-cycles per step]({link})\n\n" + verdict)


# ---- V-cycle on shapes with thin features -----------------------------------------------------------
SHAPE_VARIANTS = {
    "paper": "paper (Sec. 3.2 geometric coarse grids, V-cycle)",
    "smoothed_p": "smoothed P (1 block-Jacobi step on P0, Galerkin, same V-cycle)",
    "smoothed_p_pcg": "smoothed P, MG-PCG (CG iterations, symmetric V-cycle 2+2)",
}


REFERENCE_NAMES = {"direct": "direct (LDL^T, refined)", "mg_pcg": "MG-PCG"}


def reference_name(shape, reference):
    """The reference of a model's energy errors, with the relative residual it reached (meta.json)."""
    name = REFERENCE_NAMES.get(reference, reference)
    study = META.get("mg_shapes_studies", {}).get(shape, {})
    if "reference_relative_residual" in study:  # no '|' here: the name goes into table cells
        name += f", relative residual {number(study['reference_relative_residual'], 2)}"
    return name


def shapes_section(shp):
    if shp is None:
        return "V-cycle factors on test shapes: not run."
    if "variant" not in shp.columns:  # results written before the corrected variants existed
        shp = shp.assign(variant="paper")
    if "reference" not in shp.columns:  # results written before the MG-PCG reference existed
        shp = shp.assign(reference="direct")
    variants = list(dict.fromkeys(shp["variant"]))
    stats = {}
    for (shape, variant), g in shp.groupby(["shape", "variant"], sort=False):
        # Energy factors are left out (empty) once the energy error is below the references'
        # agreement (1e-11 of ||x||_A); the residual factor is kept for every iteration.
        ef = list(g["energy_factor"].dropna())
        rf = list(g["residual_factor"])
        tail = ef[-5:] if len(ef) > 5 else ef[1:] or ef
        stats[(shape, variant)] = {
            "g": g, "first": ef[0] if ef else float("nan"), "asym": float(np.median(tail)) if tail else float("nan"),
            "worst": max(ef[1:] or ef or [float("nan")]), "worst_r": max(rf[1:] or rf),
            "error": float(g["energy_error"].iloc[-1]), "n": len(g),
            "residual": float(g["relative_residual"].iloc[-1]) if "relative_residual" in g else float("nan"),
            "oc": float(g["operator_complexity"].iloc[0]) if "operator_complexity" in g else float("nan"),
            "work": float(g["work_per_cycle"].iloc[0]) if "work_per_cycle" in g else float("nan")}
    shapes = list(dict.fromkeys(shp["shape"]))
    reference = {sh: str(shp[shp["shape"] == sh]["reference"].iloc[0]) for sh in shapes}
    side = []
    for shape in shapes:
        row = [shape, f"{int(shp[shp['shape'] == shape]['elements'].iloc[0]):,}", reference_name(shape, reference[shape])]
        for v in variants:
            st = stats.get((shape, v))
            row.append(NOT_RUN if st is None else f"{number(st['asym'])} / {number(st['worst'])}")
        side.append(row)
    detail = []
    for shape in shapes:
        for v in variants:
            st = stats.get((shape, v))
            if st is None:
                continue
            g = st["g"]
            detail.append([shape, v, str(int(g["levels"].iloc[0])), str(st["n"]), number(st["first"]), number(st["asym"]),
                           number(st["worst"]), number(st["worst_r"]), number(st["residual"]), number(st["error"]),
                           number(st["oc"]), number(st["work"])])
    bunny = [sh for sh in shapes if sh.startswith("bunny")]
    verdicts, target = [], []
    for sh in bunny:
        row = [f"{int(shp[shp['shape'] == sh]['elements'].iloc[0]):,}", reference_name(sh, reference[sh])]
        for v in variants:
            st = stats.get((sh, v))
            row.append(NOT_RUN if st is None else
                       f"{number(st['worst_r'])} / {number(st['worst'])} ({st['n']}, {number(st['residual'])})")
        target.append(row)
    for v in variants:
        if v == "paper" or not bunny:
            continue
        runs = [stats[(sh, v)] for sh in bunny if (sh, v) in stats]
        worst = max(max(st["worst"], st["worst_r"]) for st in runs)
        ok = worst <= 0.2
        verdicts.append(f"`{v}` {'meets' if ok else 'misses'} it (worst {number(worst)})")
    check = ""
    if "energy_factor_pcg_reference" in shp.columns:
        both = shp.dropna(subset=["energy_factor", "energy_factor_pcg_reference"])
        if len(both):
            diff = (both["energy_factor"] - both["energy_factor_pcg_reference"]).abs()
            checked = [sh for sh in shapes if sh in set(both["shape"])]
            check = (f" Where both references were solved ({', '.join(checked)}), the energy factors against the two "
                     f"differ by at most {number(float(diff.max()))} (max over {len(both)} iterations).")
    legend = "; ".join(f"`{v}`: {SHAPE_VARIANTS.get(v, v)}" for v in variants)
    return ("**Why the V-cycle stalls on the bunny, and a corrected construction** - residual and energy-norm error "
            "factor per iteration (CPU fp64, the first step from rest, from a zero initial guess, every construction "
            "until the residual fell 1e-10 or 30 iterations) on shapes built to expose thin features, clamped on z = 0 "
            "and loaded across the thin direction, and on the bunny at the paper's four sizes. The energy error is "
            "measured against a direct solve (sparse LDL^T with one step of iterative refinement) up to 50K "
            "hexahedra, and above (the direct solve of the 269K bunny would need hours and ~55 GB) against CG "
            "preconditioned by the symmetric smoothed-P V-cycle (`MG-PCG`), run until its recurrence residual fell "
            "1e-13 (the true relative residual stops at a few 1e-13 in fp64, as the refined direct solve's does); energy "
            "factors are given while the energy error is above 1e-11 of ||x||_A, where both references agree." + check +
            " The coarse grids of Sec. 3.2 "
            "are geometric: a feature one or two voxels thick is covered by coarse cells much larger than it, whose "
            "trilinear functions cannot represent its bending, and the smoother cannot remove those smooth, low-energy "
            "errors. The corrected variants smooth the trilinear prolongation with the fine operator, so that coarse "
            "functions can bend with thin features (wider coarse stencils: operator complexity and work per cycle, "
            "matrix entries read per cycle over nnz(A_0), are in the last table). " + legend + ".\n\n" +
            (("Target (issue): residual and energy factor <= 0.2 in every iteration after the first, until the residual "
              f"fell 1e-10 or 30 iterations, on the bunny at {', '.join(sh.split('_')[-1] for sh in bunny)} hexahedra.\n\n"
              "Verdict: " + "; ".join(verdicts) + ".\n\n") if verdicts else "") +
            ((markdown(["bunny hexahedra", "reference"] +
                       [f"{v}: worst residual / energy factor after the first (iterations, residual reached)" for v in variants],
                       target) + "\n\n") if target else "") +
            markdown(["shape", "hexahedra", "reference"] + [f"{v}: asymptotic / worst energy factor" for v in variants], side) +
            "\n\n" +
            markdown(["shape", "variant", "levels", "iterations", "first factor", "asymptotic factor (median of last 5)",
                      "worst factor (after the first)", "worst residual factor (after the first)", "residual reached",
                      "energy error reached", "operator complexity", "work per cycle"],
                     detail))


# ---- published | ours | ratio | verdict ---------------------------------------------------------------
def summary_rows(pub, perf, kernels, mgf, acc, meta):
    """Every table and figure of issue 5 (Tables 1-3, Figs. 7-11, the 2-V-cycle accuracy claim),
    each with a verdict from the numbers of its table above."""
    rows = []
    ours = ours_table(perf)
    # The GTX 480's theoretical bandwidth, as the paper implies it (76 GB/s is "about half").
    nominal = float(pub["text"]["gpu_nominal_bandwidth_gbps"]["value"])

    def ok(o):
        return o is not None and invalid(o) is None

    def sps(prec, model, dev):
        o = ours.get((prec, model, dev))
        return float(o["steps_per_second"]) if ok(o) else None

    for key, prec, item in (("table1_fp32", "fp32", "Table 1"), ("table2_fp64", "fp64", "Table 2")):
        p = pub[key]["rows"]["269000"]["gpu"][0]
        o = ours.get((prec, 269000, "gpu"))
        if ok(o):
            bw = float(o["triad_gbps"]) / nominal
            rows.append(vt.row(item, f"GPU steps/s, 269,000 hexahedra, {prec}", p, float(o["steps_per_second"]), "differs",
                               f"the H100 runs {float(o['steps_per_second']) / p:.0f}x the paper's GTX 480, whose theoretical "
                               f"bandwidth (~{nominal:.0f} GB/s, implied by the paper) is 1/{bw:.0f} of our measured triad."))
        else:
            rows.append(vt.row(item, f"GPU steps/s, 269,000 hexahedra, {prec}", p, "not run", "not run", "no valid GPU run."))
    t3 = pub["table3"]["total"]["bytes_fp32"]
    if kernels is not None:
        b = float(kernels[kernels["precision"] == "fp32"]["bytes_per_element"].sum())
        close = 2 / 3 <= b / t3 <= 1.5
        rows.append(vt.row("Table 3", "bytes per element per step, fp32, all kernels", t3, b,
                           "reproduced" if close else "differs",
                           ("within 1.5x of the paper's count" if close else "more than 1.5x from the paper's count") +
                           ": our assembly writes each coefficient once instead of a read-modify-write, and our coarsest "
                           "CG is converged."))
    else:
        rows.append(vt.row("Table 3", "bytes per element per step", t3, "not run", "not run", "no kernel data."))
    p7 = pub["table1_fp32"]["rows"]
    small, big = sps("fp32", 11900, "gpu"), sps("fp32", 269000, "gpu")
    pg = p7["11900"]["gpu"][0] / p7["269000"]["gpu"][0]
    if small and big:
        g = small / big
        rows.append(vt.row("Fig. 7", "GPU fp32 steps/s, 11,900 over 269,000 hexahedra", pg, g,
                           "reproduced" if g / pg > 0.5 and g / pg < 2 else "differs",
                           f"22.6x the elements cost the H100 {g:.1f}x the time per step, the GTX 480 {pg:.1f}x." if abs(g / pg - 1) < 1
                           else f"22.6x the elements cost the H100 only {g:.1f}x the time per step (the GTX 480 {pg:.1f}x): "
                           "the small models do not fill it."))
    for prec, key in (("fp32", "gpu_speedup_vs_1_core_269k_fp32"), ("fp64", "gpu_speedup_vs_1_core_269k_fp64")):
        g, c = sps(prec, 269000, "gpu"), sps(prec, 269000, "cpu1")
        p = pub["text"][key]["value"]
        if g and c:
            og, oc = ours.get((prec, 269000, "gpu")), ours.get((prec, 269000, "cpu1"))
            tri = float(og["triad_gbps"]) / float(oc["triad_gbps"])
            rows.append(vt.row("Fig. 8", f"GPU speed-up over one core, 269,000 hexahedra, {prec}", p, g / c, "differs",
                               f"ours is {g / c / p:.0f}x the paper's; our GPU has {tri:.0f}x the triad of one of our "
                               "cores, so the speed-up measures the machines."))
    g, c = sps("fp32", 269000, "gpu"), sps("fp32", 269000, "cpu8")
    if g and c:
        p = pub["text"]["gpu_speedup_vs_8_cores"]["value"]
        rows.append(vt.row("Fig. 8", "GPU speed-up over 8 cores, 269,000 hexahedra, fp32", p, g / c, "differs",
                           f"ours is {g / c:.0f}x (paper: about {p:g}x) on a newer GPU against 8 cores of our host."))
    o = ours.get(("fp32", 269000, "gpu"))
    if ok(o):
        p9 = pub["table1_fp32"]["rows"]["269000"]["gpu"][1]
        fl = float(kernels[kernels["precision"] == "fp32"]["flops_per_element"].sum()) if kernels is not None else None
        why = f"{float(o['gflops']) / p9:.0f}x the paper's"
        if fl:
            why += (f": the steps/s ratio of Table 1 times our {fl:,.0f} FLOPs per element per step over the paper's "
                    f"{pub['table3']['total']['flops']:,}.")
        rows.append(vt.row("Fig. 9", "GPU GFLOP/s, 269,000 hexahedra, fp32", p9, float(o["gflops"]), "differs",
                           why if fl else why + "."))
        frac = float(requested_gbps(o)) / float(o["triad_gbps"])
        pf = pub["text"]["gpu_fraction_of_peak_bandwidth"]["value"]
        rows.append(vt.row("Fig. 10", "GPU bandwidth fraction, 269,000 hexahedra, fp32 (requested bytes)", pf, frac,
                           "reproduced" if frac >= pf else "differs",
                           f"{requested_gbps(o):.0f} GB/s requested is {frac:.0%} of our measured triad; the paper's "
                           f"{pf:.0%} is of the GTX 480's theoretical bandwidth (~{nominal:.0f} GB/s implied).", comparable=False))
    if mgf is not None and len(mgf):
        big = mgf[mgf["model"] == mgf["model"].max()]
        if "fp64" in set(big["precision"]):
            big = big[big["precision"] == "fp64"]
        later = [v for v in big[big["cycle"] > 1]["factor"] if v > 0]
        verdict = rate_verdict([0] + later) if later else "too few cycles to judge"
        const = verdict.startswith("yes")
        med = float(np.median(later)) if later else None
        rows.append(vt.row("Fig. 11", f"V-cycle residual factor per cycle, bunny {int(big['model'].iloc[0]):,} hexahedra, "
                           f"{big['precision'].iloc[0]} (median)", "constant rate",
                           med if med is not None else "not run", "reproduced" if const else "differs",
                           ("the rate is constant: " if const else "the rate is not constant: ") + verdict.split(": ", 1)[-1] +
                           "; the corrected constructions are studied above."))
    if acc is not None:
        worst = float(acc["error_displacement"].max())
        rows.append(vt.row("Sec. 6 accuracy", "worst relative displacement error with 2 V-cycles a step", "high accuracy",
                           worst, "reproduced" if worst < 1e-2 else "differs",
                           "below 1%, as 'high accuracy' claims." if worst < 1e-2 else
                           f"{worst:.1%} at worst, not 'high accuracy': the 2 cycles lean on the previous step's solution."))
    return rows


def kernel_spreads(folder):
    """Whether Table 3's GPU times record their per-step min-max (None: no kernels.csv)."""
    k = table_csv(folder, "kernels.csv")
    return None if k is None else "gpu_ms_min" in k.columns


def source_folder(results_dir):
    """results_dir, or another machine's full run whose kernel times carry their spread where these
    do not (result_format.folder_with_spreads)."""
    return result_format.folder_with_spreads(results_dir, kernel_spreads)


def shapes_part(asked, used):
    """The V-cycle study on test shapes (CPU fp64: iteration counts and energy errors, no timing).
    A run chosen for its kernel spreads may have left this part out (the GPU call's limit); the
    study then comes from the asked folder's run, which the section says."""
    shp = table_csv(used, "mg_shapes.csv")
    parts_done = META.get("parts_done")
    done = bool(parts_done.get("shapes")) if parts_done else shp is not None
    if (shp is not None and done) or used == asked or table_csv(asked, "mg_shapes.csv") is None:
        return shapes_section(shp)
    with open(os.path.join(asked, "meta.json")) as f:
        asked_meta = json.load(f)
    kept = META.get("mg_shapes_studies")
    META["mg_shapes_studies"] = asked_meta.get("mg_shapes_studies", {})
    try:
        text = shapes_section(table_csv(asked, "mg_shapes.csv"))
    finally:
        if kept is None:
            META.pop("mg_shapes_studies", None)
        else:
            META["mg_shapes_studies"] = kept
    return (f"The test-shape study below is from {result_format.machine_line(asked_meta)} "
            f"(`{result_format.results_name(asked)}`): "
            f"the run this section reports did not include that part (CPU, fp64; counts, not timings).\n\n" + text)


def build(results_dir, figures_dir):
    asked, results_dir = results_dir, source_folder(results_dir)
    pub = published()
    perf = table_csv(results_dir, "performance.csv")
    kernels = table_csv(results_dir, "kernels.csv")
    conv = table_csv(results_dir, "convergence.csv")
    mgf = table_csv(results_dir, "mg_factor.csv")
    meta = {}
    if os.path.isfile(os.path.join(results_dir, "meta.json")):
        with open(os.path.join(results_dir, "meta.json")) as f:
            meta = json.load(f)
    META.clear()
    META.update(meta)
    parts = [f"## Dick, Georgii & Westermann 2011 - multigrid finite hexahedra (`hexmg`)\n\n{pub['paper']}  \n"
             f"Paper machine: {pub['machine']['gpu']}; {pub['machine']['cpu']}. "
             f"Ours: GPU {meta.get('gpu') or NOT_RUN}, CPU threads {meta.get('cpu_threads', NOT_RUN)}"
             f"{' (quick run: two smallest models, CPU only)' if meta.get('quick') else ''}."]
    other = result_format.source_line(asked, results_dir, meta, "kernel times have no spread")
    if other:
        parts.append(other)
    parts.append(performance_tables(pub, perf))
    parts.append(kernel_table(pub, kernels))
    # The alt text is the PDF's caption.
    for title, link in bar_figures(pub, perf, figures_dir):
        parts.append(f"![{title}]({link})")
    link = convergence_figure(conv, figures_dir)
    if link:
        parts.append(f"![Fig. 11: residual reduction against time]({link})")
    parts.append(convergence_summary(conv, mgf))
    parts.append(accuracy_section(table_csv(results_dir, "accuracy.csv"), figures_dir))
    parts.append(shapes_part(asked, results_dir))
    if meta.get("notes"):
        parts.append("Notes:\n\n" + "\n".join(f"- {n}" for n in meta["notes"]))
    parts.append(vt.section(summary_rows(pub, perf, kernels, mgf, table_csv(results_dir, "accuracy.csv"), meta),
                            f"paper: {pub['machine']['gpu']}; {pub['machine']['cpu']}; ours: GPU {meta.get('gpu') or NOT_RUN}, "
                            "CPU of its host"))
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: dick2011.py RESULTS_DIR FIGURES_DIR")
    text = build(sys.argv[1], sys.argv[2])
    os.makedirs(sys.argv[2], exist_ok=True)
    with open(os.path.join(sys.argv[2], PAPER + ".md"), "w") as f:
        f.write(text)
    print(text)
