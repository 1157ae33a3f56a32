#!/usr/bin/python3
"""Figures and tables of Cecka, Lew & Darve 2011 (GPU assembly for neo-Hookean Newton-Raphson +
DCG) from the data of `elastobench reproduce cecka2011` (RESULTS_DIR = OUT/cecka2011).

    /usr/bin/python3 analysis/cecka2011.py RESULTS_DIR FIGURES_DIR

Reads table16_1.csv, stages.csv, assembly.csv, realtime.csv, newton.csv, comparison.csv and meta.json
(columns: experiments/cecka2011/cecka2011.cpp) and draws, as PNG into FIGURES_DIR:
  cecka2011_fig16_10_11_stages.png   Figs. 16.10-16.11: share of each stage per configuration
  cecka2011_fig16_12_assembly.png    Fig. 16.12: assembly time per strategy x format x hardware
`build(results_dir, figures_dir)` returns the Markdown section: Table 16.1 with the published
row beside ours, the stage breakdown, the assembly times against their bound, the real-time hand
the Newton residual sequences with their observed order and verdict, and the published | ours |
ratio | verdict table. A part not run reads "not run"; a row of an
invalid run shows its reason and is left out of the figures. Python's csv module and matplotlib
(Agg) only.
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PAPER = "cecka2011"
NOT_RUN = "not run"
STAGES = ["nr", "assembly", "spmv", "cg (without spmv)", "transfer"]


def read_csv(path):
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def as_float(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def validity(r):
    """The row's validity column ("valid" or "invalid: ..."); results before it was renamed: status."""
    return r.get("validity", r.get("status", ""))


def table_md(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def fig_stages(rows, figures_dir):
    configs = []
    for r in rows:
        if r["configuration"] not in configs:
            configs.append(r["configuration"])
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, c in enumerate(configs):
        bottom = 0.0
        for k, st in enumerate(STAGES):
            share = next((as_float(r["share"]) for r in rows if r["configuration"] == c and r["stage"] == st), None)
            if share is None:
                continue
            ax.bar(i, share, bottom=bottom, color="C%d" % k, label=st if i == 0 else None)
            bottom += share
    ax.set_xticks(range(len(configs)))
    ax.set_xticklabels(configs)
    ax.set_ylabel("share of the step")
    ax.set_title("Figs. 16.10-16.11: time per stage")
    ax.legend(fontsize=8)
    path = os.path.join(figures_dir, "cecka2011_fig16_10_11_stages.png")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def fig_assembly(rows, figures_dir):
    rows = [r for r in rows if r["precision"] == "fp32" and as_float(r["median_ms"]) is not None]
    labels = ["%s %s (%s, %s thr)" % (r["strategy"], r["format"], r["hardware"], r["threads"]) for r in rows]
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(rows) + 1.5))
    ax.barh(range(len(rows)), [as_float(r["median_ms"]) for r in rows], color="C0", label="measured")
    ax.scatter([as_float(r["bound_ms"]) or 0 for r in rows], range(len(rows)), color="k", marker="|", label="bound")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("ms per assembly (fp32)")
    ax.set_title("Fig. 16.12: assembly per strategy x format x hardware")
    ax.legend(fontsize=8)
    path = os.path.join(figures_dir, "cecka2011_fig16_12_assembly.png")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def short(s):
    v = as_float(s)
    return "" if v is None else "%.3g" % v


def newton_md(rows, meta):
    """The Newton residual of every iteration (newton.csv) and the verdict meta.json's newton holds."""
    md = ["### Newton convergence near the solution", ""]
    if rows is None:
        return md + [NOT_RUN, ""]
    if meta.get("model"):
        md += ["%s; order = %s." % (meta["model"], meta.get("order", "")), ""]
    md += [table_md(["case", "step", "k", "r_k", "r_k/r_0", "CG its", "order", "C = (r_k+1/r_0)/(r_k/r_0)^2",
                     "judged", "converged"],
                    [[r["case"], r["step"], r["iteration"], short(r["residual"]), short(r["relative"]),
                      r["cg_iterations"], short(r["order"]), short(r["quadratic_constant"]), r["order_judged"],
                      r["converged"]] for r in rows]), ""]
    md += ["Verdict: Newton is %s." % meta.get("verdict", "not judged (no verdict in meta.json)"), ""]
    return md


def build(results_dir, figures_dir):
    os.makedirs(figures_dir, exist_ok=True)
    meta = {}
    if os.path.exists(os.path.join(results_dir, "meta.json")):
        with open(os.path.join(results_dir, "meta.json")) as f:
            meta = json.load(f)
    md = ["## Cecka, Lew & Darve 2011: GPU assembly for neo-Hookean Newton-Raphson", ""]
    if meta.get("substitutions"):
        md += ["Substitutions: " + "; ".join("%s: %s" % kv for kv in meta["substitutions"].items()), ""]
    t = read_csv(os.path.join(results_dir, "table16_1.csv"))
    md += ["### Table 16.1: relative L2 error of the fp32 tangent", ""]
    if t is None:
        md += [NOT_RUN, ""]
    else:
        md += [table_md(["strategy", "format", "sphere", "nodes/elements", "ours", "published (CPU float COO)",
                         "max diff to cpu-opt fp32", "mesher"],
                        [[r["strategy"], r["format"], r["sphere"], r["nodes"] + "/" + r["elements"],
                          r["rel_l2_error_fp32"], r["published_cpu_coo"], r["max_rel_diff_to_cpu_opt_fp32"],
                          r.get("mesher", "generator")] for r in t]),
               ""]
    s = read_csv(os.path.join(results_dir, "stages.csv"))
    md += ["### Figs. 16.10-16.11: stage breakdown", ""]
    if s is None:
        md += [NOT_RUN, ""]
    else:
        md += [table_md(["configuration", "stage", "ms/step", "share", "speed-up vs all-CPU", "validity"],
                        [[r["configuration"], r["stage"], r["ms_per_step"], r["share"], r["speedup_vs_all_cpu"],
                          validity(r)] for r in s]), ""]
        valid = [r for r in s if validity(r) == "valid"]
        if valid:
            md += ["![stages](%s)" % os.path.basename(fig_stages(valid, figures_dir)), ""]
    a = read_csv(os.path.join(results_dir, "assembly.csv"))
    md += ["### Fig. 16.12: assembly time", ""]
    if a is None:
        md += [NOT_RUN, ""]
    else:
        md += [table_md(["strategy", "hw", "threads", "format", "precision", "median ms", "Mnz/s", "bound ms",
                         "ratio to bound"],
                        [[r["strategy"], r["hardware"], r["threads"], r["format"], r["precision"], r["median_ms"],
                          "%.1f" % (as_float(r["nonzeros_per_s"]) / 1e6), r["bound_ms"], r["ratio_to_bound"]]
                         for r in a]), ""]
        md += ["![assembly](%s)" % os.path.basename(fig_assembly(a, figures_dir)), ""]
    rt = read_csv(os.path.join(results_dir, "realtime.csv"))
    md += ["### Real-time hand", ""]
    md += [NOT_RUN, ""] if rt is None else [
        table_md(["strategy", "backend", "steps/s", "NR min/median/mean/max", "CG/step", "validity"],
                 [[r["strategy"], r["backend"], r["steps_per_s"],
                   "%s/%s/%s/%s" % (r["newton_min"], r.get("newton_median", "-"), r["newton_mean"], r["newton_max"]), r["cg_per_step"], validity(r)]
                  for r in rt]), ""]
    md += newton_md(read_csv(os.path.join(results_dir, "newton.csv")), meta.get("newton", {}))
    c = read_csv(os.path.join(results_dir, "comparison.csv"))
    md += ["### Published | ours | ratio | verdict", ""]
    md += [NOT_RUN, ""] if c is None else [
        table_md(["claim", "published", "ours", "ratio", "verdict"],
                 [[r["claim"], r["published"], r["ours"], r["ratio"], r["verdict"]] for r in c]), ""]
    return "\n".join(md)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(build(sys.argv[1], sys.argv[2]))
