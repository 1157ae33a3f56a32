#!/usr/bin/env python3
"""Builds ElastoBench's report from a results directory.

Usage: make_report.py RESULTS_DIR OUT_DIR [--quiet]

RESULTS_DIR holds one folder per experiment (written by `elastobench reproduce`) and optionally
manifest.json. For every experiment folder NAME that has an analysis module analysis/NAME.py
defining build(results_dir, figures_dir) -> str (a Markdown section), the module draws its
figures into OUT_DIR/figures/ and returns its section; the sections are assembled into
OUT_DIR/report.md. Only result files are read: nothing here runs a simulation.
The report lists every run's validity per experiment (runs/*/summary.json; results written
before runs recorded it say "validity not recorded"), and carries no absolute path of the
machine it was made on (analysis/portable_paths.py).
Exit status: 0 on success, 2 when RESULTS_DIR is not a results directory, 1 when a module fails.
"""
import glob
import importlib.util
import json
import os
import re
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from portable_paths import portable_paths  # noqa: E402
from run_validity import run_records, run_validity_table  # noqa: E402


def load_module(name):
    # An experiment named with hyphens (head-to-head) has its analysis in a module of underscores.
    path = os.path.join(HERE, name.replace("-", "_") + ".py")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location("eb_analysis_" + name.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module if hasattr(module, "build") else None


def write_atomic(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def provenance_rows(manifest):
    m, b = manifest.get("machine", {}), manifest.get("build", {})
    gpu = m.get("gpu") or {}
    return [
        ("CPU", f"{m.get('cpu_model', '?')} ({m.get('cpu_threads', '?')} threads)"),
        ("GPU", gpu.get("name", "none: " + str(m.get("gpu_unavailable_reason", "")))),
        ("git commit", f"`{b['git_commit']}`" if b.get("git_commit", "not recorded") != "not recorded" else "not recorded"),
        ("build", f"{b.get('build_type', '?')}, {b.get('cxx_compiler', '?')}, CUDA {b.get('cuda_compiler') or 'off'}"
                  if "build_type" in b else "not recorded"),
        ("date", str(m.get("date", "?"))),
        ("quick mode", str(manifest.get("quick", "?"))),
        ("parts", parts_provenance(manifest)),
    ]


def parts_provenance(manifest):
    """`reproduce --parts` lets one folder combine parts run on different machines (GPU timings on
    the device, CPU-only studies elsewhere); the manifest keeps each part's machine and build."""
    parts = manifest.get("parts") or {}
    if not parts:
        return "all, on the machine above"
    top = (json.dumps(manifest.get("machine", {}).get("cpu_model")), manifest.get("build", {}).get("git_commit"))
    same, other = [], {}
    for name, who in parts.items():
        m, b = who.get("machine", {}), who.get("build", {})
        if (json.dumps(m.get("cpu_model")), b.get("git_commit")) == top:
            same.append(name)
        else:
            gpu = (m.get("gpu") or {}).get("name", "no GPU")
            commit = str(b.get("git_commit", "not recorded"))[:12]
            other.setdefault(f"{m.get('cpu_model', '?')} ({m.get('cpu_threads', '?')} threads), {gpu}, "
                             f"commit `{commit}`, {m.get('date', '?')}", []).append(name)
    text = (", ".join(same) + " on the machine above") if same else ""
    for where, names in other.items():
        text += ("; " if text else "") + ", ".join(names) + ": " + where
    return text


def provenance_from_runs(folder):
    """Results filed before the per-experiment manifests: the machine and build that every run's
    summary.json (or run.json) records (the first run's, when they all agree), else the machine of meta.json."""
    meta = {}
    if os.path.exists(os.path.join(folder, "meta.json")):
        with open(os.path.join(folder, "meta.json")) as f:
            meta = json.load(f)
    builds, machine = set(), None
    for path in run_records(folder):
        with open(path) as f:
            run = json.load(f)
        if "build" in run:
            builds.add(json.dumps(run["build"], sort_keys=True))
            machine = machine or run.get("machine")
    if len(builds) == 1:
        return {"machine": meta.get("machine") or machine, "build": json.loads(builds.pop()),
                "quick": meta.get("quick", "?")}
    if "machine" in meta:
        return {"machine": meta["machine"], "build": {"git_commit": "not recorded"}, "quick": meta.get("quick", "?")}
    return None


def provenance(manifest, per_experiment):
    """One column per experiment: experiments of one results folder may come from different runs
    (each GPU session refreshes some of them), so each carries the manifest of the run that made
    it (NAME/manifest.json, filed by scripts/import_device_results.sh); the folder's manifest.json
    covers the experiments it lists."""
    names = sorted(per_experiment)
    if not names:
        if not manifest:
            return "_No manifest.json: provenance unknown._\n"
        return "| | |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in provenance_rows(manifest)) + "\n"
    columns = []
    for name in names:
        own = per_experiment[name]
        listed = manifest and name in [e.get("name") for e in manifest.get("experiments", [])]
        src = own or (manifest if listed else None)
        columns.append(dict(provenance_rows(src)) if src else None)
    keys = [k for k, _ in provenance_rows({})]
    lines = ["| | " + " | ".join(f"`{n}`" for n in names) + " |", "|---|" + "---|" * len(names)]
    for k in keys:
        lines.append(f"| {k} | " + " | ".join(c[k] if c else "not recorded" for c in columns) + " |")
    return "\n".join(lines) + "\n"


def link_figures(markdown, figures_dir):
    """Modules name their images as they sit in figures_dir; report.md is one folder up."""
    def fix(match):
        target = match.group(2)
        if "/" not in target and os.path.exists(os.path.join(figures_dir, target)):
            target = "figures/" + target
        return f"![{match.group(1)}]({target})"
    return re.sub(r"!\[([^\]]*)\]\(([^)\s]+)\)", fix, markdown)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    quiet = "--quiet" in argv
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    results_dir, out_dir = args
    if not os.path.isdir(results_dir):
        print(f"make_report: results directory not found: {results_dir}", file=sys.stderr)
        return 2
    manifest = None
    manifest_path = os.path.join(results_dir, "manifest.json")
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    figures_dir = os.path.join(out_dir, "figures")
    os.makedirs(figures_dir, exist_ok=True)

    experiments = sorted(d for d in os.listdir(results_dir)
                         if os.path.isdir(os.path.join(results_dir, d)) and d not in ("report",))
    sections, failures, per_experiment, validity = [], [], {}, []
    for name in experiments:
        module = load_module(name)
        if module is None:
            if not quiet:
                print(f"make_report: no analysis module for '{name}', skipped", file=sys.stderr)
            continue
        own = os.path.join(results_dir, name, "manifest.json")
        if os.path.exists(own):
            with open(own) as f:
                per_experiment[name] = json.load(f)
        else:
            per_experiment[name] = provenance_from_runs(os.path.join(results_dir, name))
        validity += [f"`{name}`: " + run_validity_table(os.path.join(results_dir, name)), ""]
        try:
            sections.append(module.build(os.path.join(results_dir, name), figures_dir))
            if not quiet:
                print(f"make_report: {name}: done", file=sys.stderr)
        except Exception:
            failures.append(name)
            traceback.print_exc()
    if not sections and not failures:
        print(f"make_report: no experiment results with an analysis module in {results_dir}", file=sys.stderr)
        return 2

    report = ["# ElastoBench report", "",
              "Generated by `elastobench report` from result files; published values are in "
              "analysis/published/ with their table/figure and page.", "",
              "## Provenance", "", provenance(manifest, per_experiment),
              "## Run validity", "",
              "A run is invalid when its state is (non-finite values, inverted elements, solver failures, growth beyond "
              "10 x the mesh diagonal; README \"Results\"); no table or figure below uses a number from an invalid run, "
              "each shows `invalid: <reason>` in its place.", ""] + validity
    for s in sections:
        report += [link_figures(s.rstrip(), figures_dir), ""]
    # Figures are referenced relative to report.md.
    write_atomic(os.path.join(out_dir, "report.md"), portable_paths("\n".join(report) + "\n"))
    if not quiet:
        print(f"make_report: wrote {os.path.join(out_dir, 'report.md')}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
