"""Reading an experiment's result files and writing their numbers for a reader: helpers the
analysis modules share (the Markdown table writer is every module's).

Numbers are rounded to significant digits, never printed as the long floats the CSVs hold, and a
difference is called significant only when the measured spreads leave room for it."""
import csv
import glob
import json
import math
import os

import verdict_table as vt

HERE = os.path.dirname(os.path.abspath(__file__))


def read_csv(results_dir, name):
    """The rows of results_dir/name as dicts; None when the part did not run (no file, or empty)."""
    path = os.path.join(results_dir, name)
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return rows or None


def read_json(results_dir, name):
    path = os.path.join(results_dir, name)
    if not os.path.isfile(path):
        return None
    with open(path) as f:
        return json.load(f)


def published(paper):
    """analysis/published/PAPER.json: the paper's numbers with their table, figure or section."""
    with open(os.path.join(HERE, "published", paper + ".json")) as f:
        return json.load(f)


def num(v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def sig(v, digits=3):
    """`v` to `digits` significant digits: thousands separated from 1,000 up, powers of ten below
    0.001 and from 1e7, whole numbers from 100 up (a CSV's 0.1234567891234 reads 0.123, 2706.14
    reads 2,706); '' for a missing value."""
    x = num(v)
    if x is None:
        return ""
    if x == 0:
        return "0"
    mag = math.floor(math.log10(abs(x)))
    if mag < -3 or mag >= 7:
        mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
        mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
        return f"{mantissa}e{int(exponent)}"
    if mag >= digits - 1:
        return f"{x:,.0f}"
    text = f"{x:.{digits - 1 - mag}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def pct(v, digits=2):
    x = num(v)
    return "" if x is None else sig(100 * x, digits) + "%"


def spread(lo, hi):
    return f"{sig(lo)}-{sig(hi)}" if num(lo) is not None and num(hi) is not None else ""


def overlap(a, b):
    """Whether two (low, high) ranges share a point: then the difference between the two timings
    is smaller than their own spread."""
    return a[0] <= b[1] and b[0] <= a[1]


def md_cell(c):
    """A table cell's text, a bare | escaped (|u_h|, a reason quoting |r|/|r0|): unescaped, it would
    split the cell in two and GitHub and pandoc would show the table as text."""
    return str(c).replace("\\|", "|").replace("|", "\\|")


def md_table(header, rows):
    """The one Markdown table writer of the analysis modules."""
    out = ["| " + " | ".join(md_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(md_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def other_machines(results_dir):
    """The same experiment's folders of the other machines (experiments/results/<device>/<experiment>
    beside results_dir) as (device, path), by device name."""
    here = os.path.realpath(results_dir)
    root = os.path.dirname(os.path.dirname(here))
    return [(os.path.basename(os.path.dirname(d)), d)
            for d in sorted(glob.glob(os.path.join(root, "*", os.path.basename(here)))) if os.path.realpath(d) != here]


def folder_with_spreads(results_dir, has_spreads):
    """The run an experiment's section reports: results_dir's own, unless its timings carry no
    spread (has_spreads(folder) False; None: no timings there) and another machine's folder of the
    same experiment has them, from a full run (not --quick) of the same kind (with a GPU or without):
    the report states no timing without its spread. make_report takes the section's provenance and
    run validity from the same folder (a module's source_folder)."""
    if has_spreads(results_dir) in (None, True):
        return results_dir

    def meta(d):
        return read_json(d, "meta.json") or {}
    gpu = bool(meta(results_dir).get("gpu"))
    for _, d in other_machines(results_dir):
        m = meta(d)
        if has_spreads(d) and bool(m.get("gpu")) == gpu and not m.get("quick"):
            return d
    return results_dir


def results_name(folder):
    """A results folder as `<device>/<experiment>`: the report names no path of the machine that built it."""
    here = os.path.normpath(folder)
    return f"{os.path.basename(os.path.dirname(here))}/{os.path.basename(here)}"


def source_line(asked, used, meta, what):
    """The section's sentence when it reports another machine's run (folder_with_spreads)."""
    if os.path.realpath(asked) == os.path.realpath(used):
        return None
    who = f"{machine_line(meta)} (`{results_name(used)}`)" if meta else f"`{results_name(used)}`"
    note = (meta or {}).get("run_note")
    return f"This section reports {who} instead of `{results_name(asked)}`, whose {what}." + \
        (f" That run: {note.rstrip('.')}." if isinstance(note, str) and note else "")


def threads_text(m):
    """The machine's threads, as 'U of N threads' where the run could use only U of the host's N
    (pinned with taskset: machine_info's cpu_threads_usable)."""
    n, u = m.get("cpu_threads", "?"), m.get("cpu_threads_usable")
    return f"{u} of {n} threads" if isinstance(u, int) and isinstance(n, int) and u < n else f"{n} threads"


def machine_line(meta):
    """A run's machine in one line from its meta's `machine` (manifest layout): CPU model, threads, GPU;
    a meta without it (older experiment metas) gives its `gpu` name."""
    m = (meta or {}).get("machine") or {}
    if not m:
        gpu = (meta or {}).get("gpu")
        return gpu if isinstance(gpu, str) and gpu else "machine not recorded"
    gpu = m.get("gpu")
    gpu = gpu.get("name", "") if isinstance(gpu, dict) else "no GPU"
    return f"{m.get('cpu_model', '')} ({threads_text(m)}), {gpu}"


def machine_text(meta):
    """Our machine from meta.json: the host's CPU and threads, and the GPU when the run had one."""
    m = meta.get("machine") or {}
    if not m:
        return "not recorded"
    gpu = (m.get("gpu") or {}).get("name") if meta.get("gpu") else None
    cpu = f"{m.get('cpu_model', 'CPU not recorded')} ({threads_text(m)})"
    return f"GPU {gpu}, CPU {cpu}" if gpu else f"no GPU, CPU {cpu}"


def verdict_row(item, quantity, published_value, ours, verdict, why, comparable=True, significant=True):
    """verdict_table.row, its numbers rounded as the section's tables round them (its own format
    writes 2,706 as 2.71e+03); a ratio inside the measured spread reads 'not significant'."""
    r = vt.row(item, quantity, published_value, ours, verdict, why, comparable)
    for key, v in (("published", published_value), ("ours", ours)):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            r[key] = sig(v)
    if r["ratio"] != "-":
        r["ratio"] = sig(ours / published_value) if significant else "not significant"
    return r


def ratio_text(ratio, significant):
    """A ratio for a table cell: its value when the spreads allow it, else 'not significant'."""
    return sig(ratio) if significant else f"not significant ({sig(ratio, 2)})"
