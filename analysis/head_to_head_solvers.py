"""The solver comparison of `elastobench reproduce head-to-head` (part `solvers`, issue 24): the
solvers on the same linear systems, residual against wall time and time to a relative residual of
1e-6. Reads only the part's files (experiments/head_to_head/solvers_part.cpp states them):

    solvers_systems.csv   one row per system
    solvers.csv           one row per system and solver (status ok / not converged / absent: why)
    solvers_history.csv   relative residual against seconds since the solve began

draw(results_dir, figures_dir) returns the Markdown (tables and figures, PNG and PDF written into
figures_dir) that analysis/head_to_head.py puts into the report. Run alone:

    python3 analysis/head_to_head_solvers.py RESULTS_DIR FIGURES_DIR
"""

import csv
import math
import os
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402
from result_format import md_table  # noqa: E402
from figures import legend_below  # noqa: E402

STEM = "head_to_head_solvers"
FLOOR = 1e-8  # lowest residual drawn in the history panels


def read_csv(results_dir, name):
    path = os.path.join(results_dir, name)
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        return float("nan")
    return x


def fmt_s(v):
    x = num(v)
    if not math.isfinite(x):
        return "-"
    if x >= 100:
        return f"{x:.0f} s"
    if x >= 1:
        return f"{x:.2f} s"
    if x >= 1e-3:
        return f"{x * 1e3:.1f} ms"
    return f"{x * 1e6:.0f} us"


def spread(row, col):
    """median [min-max] of a timed column."""
    m, lo, hi = row.get(col), row.get(col + "_min"), row.get(col + "_max")
    if not math.isfinite(num(m)):
        return "-"
    if row.get("runs") in (None, "", "1"):
        return fmt_s(m)
    return f"{fmt_s(m)} [{fmt_s(lo)}-{fmt_s(hi)}]"


def system_key(r):
    return (r["scene"], r["family"], r["size"])


def system_title(s):
    return f"{s['scene']} ({s['family']}, {s['size']}): {int(s['unknowns']):,} unknowns, {int(s['entries']):,} entries"




def save(fig, figures_dir, stem):
    """The bare file name: make_report.py puts the report's figures/ before it."""
    figures.save(fig, figures_dir, stem)
    return stem + ".png"


def log_axes(ax, xlabel, ylabel, title):
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.grid(True, which="major", alpha=0.3)


def solver_colours(*tables):
    """One colour per solver in both figures, whatever subset of solvers each draws."""
    solvers = sorted({r["solver"] for t in tables for r in t})
    return {s: plt.cm.tab20(i % 20) for i, s in enumerate(solvers)}


def history_figure(systems, history, rows, figures_dir):
    """One panel per system: relative residual against seconds (log-log), one line per solver."""
    keys = list(systems)
    if not keys or not history:
        return None
    cols = min(3, len(keys))
    nrows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.9 * nrows), squeeze=False)
    solvers = sorted({h["solver"] for h in history})
    colour = solver_colours(history, rows)
    for ax, key in zip([a for row in axes for a in row], keys):
        s = systems[key]
        for solver in solvers:
            pts = [h for h in history if system_key(h) == key and h["solver"] == solver]
            pts = [(num(h["seconds"]), num(h["relative_residual"]), h["kind"]) for h in pts]
            # The start (t = 0) has no place on a log axis: the solve's clock starts at its first point.
            pts = [(t, r, k) for t, r, k in pts if t > 0 and r > 0 and math.isfinite(t) and math.isfinite(r)]
            if not pts:
                continue
            kind = pts[0][2]
            t, r = [p[0] for p in pts], [p[1] for p in pts]
            if kind == "end":
                # A direct solve ends far below the iterative solvers' 1e-6 (round-off): drawn at
                # the panel's floor as a down-pointing marker, its residual in the tables.
                ax.plot(t, [max(x, FLOOR) for x in r], "v" if min(r) < FLOOR else "s", color=colour[solver],
                        label=solver, markersize=6)
                continue
            style = {"iteration": "-", "decade": "--o"}.get(kind, "-")
            ax.plot(t, r, style, color=colour[solver], label=solver, markersize=3.5, linewidth=1.2)
        ax.axhline(1e-6, color="grey", linewidth=0.8, linestyle=":")
        ax.set_ylim(bottom=FLOOR * 0.7)
        log_axes(ax, "seconds since the solve began (setup excluded)", "||b - Ax|| / ||b||",
                 f"{s['scene']} {s['family']}, {int(s['unknowns']):,} unknowns")
    for ax in [a for row in axes for a in row][len(keys):]:
        ax.set_axis_off()
    fig.tight_layout()
    legend_below(fig, axes.flat, ncol=6)
    return save(fig, figures_dir, STEM + "_history")


def time_to_tolerance_figure(systems, rows, history, figures_dir):
    """Setup + solve to 1e-6 against unknowns, per family (log-log), one line per solver."""
    ok = [r for r in rows if r["status"] == "ok"]
    if not ok:
        return None
    families = sorted({r["family"] for r in ok})
    # Colour by solver, marker by scene: with the colour cycle alone, sixteen lines repeated colours.
    colour = solver_colours(rows, history)
    marker = {scene: "osD^v<>p"[i % 8] for i, scene in enumerate(sorted({r["scene"] for r in ok}))}
    # One family a row: their legends (up to sixteen entries) go beside the panels.
    fig, axes = plt.subplots(len(families), 1, figsize=(9, 4.2 * len(families)), squeeze=False)
    for ax, fam in zip(axes[:, 0], families):
        by = OrderedDict()
        for r in ok:
            if r["family"] == fam:
                by.setdefault((r["solver"], r["scene"]), []).append((int(r["unknowns"]), num(r["total_s"])))
        for (solver, scene), pts in by.items():
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", marker=marker[scene], color=colour[solver],
                    markersize=3.5, label=f"{solver} ({scene})")
        log_axes(ax, "unknowns", "setup + solve to 1e-6 (s, median)", f"{fam} systems")
        # Beside the panel: inside, the entries covered points of either family.
        ax.legend(fontsize=6, ncol=1, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    return save(fig, figures_dir, STEM + "_time")


def draw(results_dir, figures_dir):
    """Markdown for the solver comparison, with its figures written into figures_dir."""
    os.makedirs(figures_dir, exist_ok=True)
    sys_rows = read_csv(results_dir, "solvers_systems.csv")
    rows = read_csv(results_dir, "solvers.csv")
    history = read_csv(results_dir, "solvers_history.csv") or []
    out = ["## Solvers on the same linear systems", ""]
    if not sys_rows or rows is None:
        out.append(f"No solver comparison in {results_dir} (run `elastobench reproduce head-to-head --parts solvers`).")
        return "\n".join(out) + "\n"
    systems = OrderedDict((system_key(s), s) for s in sys_rows)
    out += [
        "Every solver starts from x = 0 on the same matrix and right-hand side (one implicit step of hexmg on "
        "hexahedra, of bcsr-pcg on tetrahedra) and stops at ||b - Ax|| <= 1e-6 ||b||. Times are medians of 5 runs "
        "[min-max]; *setup* is the solver's own preparation (hierarchy, factorization, upload), *solve* the "
        "iterations or triangular solves; the residual is the true one, recomputed in fp64 from the assembled "
        "matrix. A solver that missed the tolerance is shown once, as it stopped; one that could not run says why.",
        "",
        md_table(["system", "family", "size", "elements", "unknowns", "entries", "note"],
                 [[s["scene"], s["family"], s["size"], f"{int(s['elements']):,}", f"{int(s['unknowns']):,}",
                   f"{int(s['entries']):,}", s.get("note", "")] for s in sys_rows]),
        "",
    ]
    absent = OrderedDict()
    for key, s in systems.items():
        mine = [r for r in rows if system_key(r) == key]
        table = []
        ok = sorted((r for r in mine if r["status"] == "ok"), key=lambda r: num(r["total_s"]))
        for r in ok + [r for r in mine if r["status"] == "not converged"]:
            table.append([r["solver"], r["backend"], r["threads"], r["status"], spread(r, "setup_s"), spread(r, "solve_s"),
                          fmt_s(r["total_s"]), r["iterations"] if r["iterations"] != "0" else "-",
                          f"{num(r['relative_residual']):.1e}", r["runs"]])
        for r in mine:
            if r["status"].startswith("absent"):
                absent.setdefault(r["solver"] + ": " + r["status"][len("absent: "):], []).append(f"{s['scene']} {s['family']}")
        out += [f"**{system_title(s)}**", "",
                md_table(["solver", "backend", "threads/device", "status", "setup (median [min-max])", "solve (median [min-max])",
                          "setup + solve (the medians' sum)", "iterations",
                          "residual", "runs"], table), ""]
    if absent:
        out += ["Solvers absent from some systems:", ""]
        out += [f"- {why} ({len(where)} systems)" for why, where in absent.items()]
        out.append("")
    fig = history_figure(systems, history, rows, figures_dir)
    if fig:
        out += [f"![Residual against wall time]({fig})", "",
                "Residual against wall time (log axes): solid lines have a point per iteration (or V-cycle); dashed "
                "lines with markers are separate solves to 1e-1, 1e-2, ... (libraries and the device, which offer no "
                "per-iteration moment: the same iterates, stopped earlier); triangles at the floor (1e-8) are the "
                "direct solvers' end, whose residual (round-off) is in the tables.", ""]
    fig = time_to_tolerance_figure(systems, rows, history, figures_dir)
    if fig:
        out += [f"![Time to 1e-6 against size]({fig})", "", "Setup + solve to a relative residual of 1e-6 against the "
                "system's unknowns (medians; log axes).", ""]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: head_to_head_solvers.py RESULTS_DIR FIGURES_DIR")
    print(draw(sys.argv[1], sys.argv[2]))
