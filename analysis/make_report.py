#!/usr/bin/env python3
"""Builds ElastoBench's report from a results directory.

Usage: make_report.py RESULTS_DIR OUT_DIR [--quiet] [--no-pdf]

RESULTS_DIR holds one folder per experiment (written by `elastobench reproduce`) and optionally
manifest.json. For every experiment folder NAME that has an analysis module analysis/NAME.py
defining build(results_dir, figures_dir) -> str (a Markdown section), the module draws its
figures into OUT_DIR/figures/ and returns its section; the sections are assembled into
OUT_DIR/report.md. Only result files are read: nothing here runs a simulation.
The report lists every run's validity per experiment (runs/*/summary.json; results written
before runs recorded it say "validity not recorded"), and carries no absolute path of the
machine it was made on (analysis/portable_paths.py).
OUT_DIR/report.pdf is then built from report.md by pandoc and lualatex (layout in
analysis/report_pdf.lua); --no-pdf skips it. Without those tools the run stops before drawing
anything and names the Debian packages that scripts/install_deps.sh installs.
Exit status: 0 on success, 2 when RESULTS_DIR is not a results directory or an option is unknown,
1 when a module fails or the PDF cannot be built.
"""
import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from portable_paths import portable_paths  # noqa: E402
from run_validity import run_records, run_validity_table  # noqa: E402
import verdict_table as vt  # noqa: E402
import result_format  # noqa: E402


def load_module(name):
    # An experiment named with hyphens (head-to-head) has its analysis in a module of underscores.
    path = os.path.join(HERE, name.replace("-", "_") + ".py")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location("eb_analysis_" + name.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module if hasattr(module, "build") else None


def _umask_mode(path):
    """mkstemp makes files only their owner may read; the report's files are for everyone."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def write_atomic(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        _umask_mode(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def provenance_rows(manifest):
    m, b = manifest.get("machine", {}), manifest.get("build", {})
    gpu = m.get("gpu") or {}
    return [
        ("CPU", f"{m.get('cpu_model', '?')} ({result_format.threads_text(m)})"),
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
            other.setdefault(f"{m.get('cpu_model', '?')} ({result_format.threads_text(m)}), {gpu}, "
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
        found = {"machine": meta.get("machine") or machine, "build": json.loads(builds.pop()),
                 "quick": meta.get("quick", "?")}
        # The parts the run finished (meta.json's parts_done), so that one cut short by a device
        # call's limit does not read as all of them.
        done = [p for p, ok in (meta.get("parts_done") or {}).items() if ok]
        if done:
            found["parts"] = {p: {"machine": found["machine"], "build": found["build"]} for p in done}
        return found
    if "machine" in meta:
        return {"machine": meta["machine"], "build": {"git_commit": "not recorded"}, "quick": meta.get("quick", "?")}
    return provenance_from_benchmarks(folder)


def provenance_from_benchmarks(folder):
    """A folder of Google Benchmark JSON (bench_sparse): the machine and build the newest file's
    context records (eb_machine, eb_build, eb_git_commit), None without them."""
    newest = None
    for path in glob.glob(os.path.join(folder, "*.json")):
        try:
            with open(path) as f:
                context = json.load(f).get("context") or {}
        except (OSError, ValueError):
            continue
        if "eb_machine" in context and (newest is None or context.get("date", "") > newest.get("date", "")):
            newest = context
    if newest is None:
        return None
    build = newest.get("eb_build", "")
    parts = [p.strip() for p in build.split(",")]
    return {"machine": json.loads(newest["eb_machine"]),
            "build": {"git_commit": newest.get("eb_git_commit", "not recorded"),
                      **({"build_type": parts[0], "cxx_compiler": parts[1],
                          "cuda_compiler": parts[2].replace("CUDA ", "")} if len(parts) == 3 else {})},
            "quick": False}


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


def section_order(name):
    """One section per paper (folders named author + year), then the head-to-head, then the shared
    layers' own studies (linalg), each group alphabetical."""
    if re.fullmatch(r"[a-z]+\d{4}", name):
        return (0, name)
    return (1 if name == "head-to-head" else 2, name)


VERDICT_CELL = re.compile(r"\| \*\*(" + "|".join(re.escape(v) for v in vt.VERDICTS) + r")\*\*:")


def verdict_counts(section):
    """(title, {verdict: rows}) of a paper's section, counted from its Published | ours table."""
    title = section.lstrip().splitlines()[0].lstrip("# ").strip()
    counts = {v: 0 for v in vt.VERDICTS}
    for m in VERDICT_CELL.finditer(section):
        counts[m.group(1)] += 1
    return title, counts


def machine_names(per_experiment):
    """The distinct machines the experiments' provenance names (GPU and CPU), in first-seen order."""
    seen = []
    for man in per_experiment.values():
        if not man:
            continue
        runs = [man] + [p for p in (man.get("parts") or {}).values() if isinstance(p, dict)]
        for r in runs:
            m = r.get("machine") or {}
            if not m:
                continue
            gpu = m.get("gpu") or {}
            name = (gpu.get("name") + " with " if gpu.get("name") else "CPU only: ") + \
                f"{m.get('cpu_model', '?')} ({result_format.threads_text(m)})"
            if name not in seen:
                seen.append(name)
    return seen


def front_page(results_dir, figures_dir, names, sections, per_experiment):
    """What a reader takes away: verdicts per paper, the machines, the head-to-head's headline."""
    md = ["## At a glance", "", "### What was reproduced", "",
          "Each paper's section ends with a Published | ours | ratio | verdict table: one row per table or figure "
          "of the paper (or per quantity of one). The rows per verdict:", "",
          "| paper | " + " | ".join(vt.VERDICTS) + " | rows |", "|---|" + "---|" * (len(vt.VERDICTS) + 1)]
    totals = {v: 0 for v in vt.VERDICTS}
    for name, text in zip(names, sections):
        if section_order(name)[0] != 0:
            continue
        title, counts = verdict_counts(text)
        for v in vt.VERDICTS:
            totals[v] += counts[v]
        md.append(f"| {title} | " + " | ".join(str(counts[v]) for v in vt.VERDICTS) + f" | {sum(counts.values())} |")
    md.append("| **all papers** | " + " | ".join(f"**{totals[v]}**" for v in vt.VERDICTS) +
              f" | **{sum(totals.values())}** |")
    md += ["", "### Machines", ""] + [f"- {m}" for m in machine_names(per_experiment)] + [""]
    h2h = load_module("head-to-head")
    if h2h is not None and hasattr(h2h, "front_page") and "head-to-head" in names:
        headline = h2h.front_page(os.path.join(results_dir, "head-to-head"), figures_dir)
        if headline:
            md += ["### Head to head", "", headline]
    return "\n".join(md) + "\n"


def link_figures(markdown, figures_dir):
    """Modules name their images as they sit in figures_dir; report.md is one folder up."""
    def fix(match):
        target = match.group(2)
        if "/" not in target and os.path.exists(os.path.join(figures_dir, target)):
            target = "figures/" + target
        return f"![{match.group(1)}]({target})"
    return re.sub(r"!\[([^\]]*)\]\(([^)\s]+)\)", fix, markdown)


# What the PDF needs beyond Python: (program, Debian package) checked before anything is drawn,
# and the packages whose absence only LaTeX notices (styles, fonts), named when a build fails.
PDF_PROGRAMS = (("pandoc", "pandoc"), ("lualatex", "texlive-luatex"))
PDF_PACKAGES = "pandoc texlive-luatex texlive-latex-recommended lmodern fonts-dejavu-core fonts-dejavu-extra"
PDF_HINT = (f"the PDF needs Debian's {PDF_PACKAGES} (scripts/install_deps.sh installs them); "
            "--no-pdf skips it")


def missing_pdf_programs():
    return [f"{program} (Debian package {package})" for program, package in PDF_PROGRAMS
            if shutil.which(program) is None]


def build_pdf(out_dir):
    """OUT_DIR/report.md -> OUT_DIR/report.pdf, or None and a message on stderr. The PDF appears
    whole or not at all; a report.pdf of an earlier run is removed when this one fails, since it
    would no longer match report.md."""
    pdf = os.path.join(out_dir, "report.pdf")
    # pandoc picks its writer from the output's extension.
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix=".report.", suffix=".pdf")
    os.close(fd)
    # gfm: report.md is written for GitHub's renderer, so `$`, `~` and `<word>` mean there what they
    # mean here (pandoc's own Markdown would read math, subscripts and raw HTML into them).
    # Its `#` title becomes the document's title, `##`/`###` sections and subsections in the TOC.
    command = ["pandoc", "report.md", "--from", "gfm-raw_html", "--lua-filter", os.path.join(HERE, "report_pdf.lua"),
               "--pdf-engine", "lualatex", "--toc", "--toc-depth=2", "--shift-heading-level-by=-1", "--output", tmp]
    try:
        run = subprocess.run(command, cwd=out_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if run.returncode == 0 and os.path.getsize(tmp) > 0:
            _umask_mode(tmp)
            os.replace(tmp, pdf)
            # Warnings (a glyph missing from the fonts, an image not found) matter even when quiet.
            if run.stderr.strip():
                print(run.stderr.rstrip(), file=sys.stderr)
            return pdf
        failure = f"exit status {run.returncode}" if run.returncode else "empty output"
    except OSError as e:
        failure = str(e)
        run = None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    if os.path.exists(pdf):
        os.remove(pdf)
    details = "\n".join((run.stderr if run else "").strip().splitlines()[-40:])
    print(f"make_report: report.pdf not built: pandoc with lualatex failed ({failure})"
          + (":\n" + details if details else "") + f"\nmake_report: {PDF_HINT}", file=sys.stderr)
    return None


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    options = [a for a in argv[1:] if a.startswith("--")]
    quiet = "--quiet" in options
    pdf = "--no-pdf" not in options
    unknown = [o for o in options if o not in ("--quiet", "--no-pdf")]
    if len(args) != 2 or unknown:
        if unknown:
            print(f"make_report: unknown option {unknown[0]}", file=sys.stderr)
        print(__doc__, file=sys.stderr)
        return 2
    results_dir, out_dir = args
    if not os.path.isdir(results_dir):
        print(f"make_report: results directory not found: {results_dir}", file=sys.stderr)
        return 2
    # Before any figure is drawn: a missing program would otherwise show only at the end.
    missing = missing_pdf_programs() if pdf else []
    if missing:
        print(f"make_report: {', '.join(missing)} not found: {PDF_HINT}", file=sys.stderr)
        return 1
    manifest = None
    manifest_path = os.path.join(results_dir, "manifest.json")
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    figures_dir = os.path.join(out_dir, "figures")
    os.makedirs(figures_dir, exist_ok=True)

    experiments = sorted((d for d in os.listdir(results_dir)
                          if os.path.isdir(os.path.join(results_dir, d)) and d not in ("report",)), key=section_order)
    sections, section_names, failures, per_experiment, validity = [], [], [], {}, []
    for name in experiments:
        module = load_module(name)
        if module is None:
            if not quiet:
                print(f"make_report: no analysis module for '{name}', skipped", file=sys.stderr)
            continue
        # A module may report another machine's run of its experiment (source_folder): the
        # section's provenance and validity then come from that folder too.
        folder = os.path.join(results_dir, name)
        folder = getattr(module, "source_folder", lambda d: d)(folder)
        own = os.path.join(folder, "manifest.json")
        if os.path.exists(own):
            with open(own) as f:
                per_experiment[name] = json.load(f)
        else:
            per_experiment[name] = provenance_from_runs(folder)
        validity += [f"`{name}`: " + run_validity_table(folder), ""]
        try:
            sections.append(module.build(os.path.join(results_dir, name), figures_dir))
            section_names.append(name)
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
              front_page(results_dir, figures_dir, section_names, sections, per_experiment),
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
    if pdf:
        built = build_pdf(out_dir)
        if built is None:
            return 1
        if not quiet:
            print(f"make_report: wrote {built}", file=sys.stderr)
    elif os.path.exists(os.path.join(out_dir, "report.pdf")):
        # It was built from an earlier report.md.
        os.remove(os.path.join(out_dir, "report.pdf"))
        print(f"make_report: --no-pdf: removed the earlier {os.path.join(out_dir, 'report.pdf')}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
