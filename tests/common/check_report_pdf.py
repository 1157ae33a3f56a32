#!/usr/bin/env python3
"""report.pdf against the report.md it was built from (analysis/make_report.py).

Usage: check_report_pdf.py REPORT_DIR

Checks that REPORT_DIR/report.pdf is a whole PDF; that every `## ` and `### ` heading of
report.md is in its table of contents and then, in the same order, in the body (pdftotext); and
that it embeds every figure report.md references: each distinct figures/*.png must be among the
PDF's images pixel for pixel (pdfimages -png; a figure of the same size drawn from other data
does not count). Every failure names what is missing. Exit 0 when all checks pass, 1 otherwise.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unicodedata

from PIL import Image

if len(sys.argv) != 2:
    print(__doc__, file=sys.stderr)
    sys.exit(2)
report_dir = sys.argv[1]
md_path, pdf_path = os.path.join(report_dir, "report.md"), os.path.join(report_dir, "report.pdf")
failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message, file=sys.stderr)


def finish():
    if failures:
        print(f"report.pdf: {len(failures)} check(s) failed", file=sys.stderr)
        sys.exit(1)


for tool in ("pdftotext", "pdfimages"):
    if shutil.which(tool) is None:
        fail(f"{tool} not found (Debian package poppler-utils, installed by scripts/install_deps.sh)")
if not os.path.exists(md_path):
    fail(f"{md_path} not found")
if not os.path.exists(pdf_path):
    fail(f"{pdf_path} not found")
finish()

with open(pdf_path, "rb") as f:
    data = f.read()
# A PDF cut short (a build killed while writing) lacks its final %%EOF.
if not data.startswith(b"%PDF-") or b"%%EOF" not in data[-1024:]:
    fail(f"{pdf_path} is not a whole PDF ({len(data)} bytes)")
finish()

# Headings and figure references outside fenced code blocks.
headings, figures, fence = [], {}, None
with open(md_path) as f:
    for line in f:
        marker = re.match(r"^\s*(`{3,}|~{3,})", line)
        if marker:
            if fence is None:
                fence = marker.group(1)[0]
            elif marker.group(1)[0] == fence:
                fence = None
            continue
        if fence:
            continue
        m = re.match(r"^(#{2,3})\s+(.*?)\s*#*\s*$", line)
        if m:
            headings.append(m.group(2))
        for target in re.findall(r"!\[[^\]]*\]\((figures/[^)\s]+)\)", line):
            figures[target] = figures.get(target, 0) + 1


def markdown_text(heading):
    """What a heading's Markdown reads as: code spans, emphasis and links by their text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = text.replace("\\|", "|").replace("`", "")
    return re.sub(r"(\*\*|\*)(.+?)\1", r"\2", text)


# pdftotext gives ligature glyphs (ﬁ), typographic quotes and dashes (TeX turns ' and -- into
# them), and breaks lines, hyphenating words, where TeX did: compare without any of that.
QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def canonical(text):
    text = unicodedata.normalize("NFKC", text).translate(QUOTES)
    return re.sub(r"[\s\u00ad\u2010-\u2015\u2212-]+", "", text)


run = subprocess.run(["pdftotext", "-enc", "UTF-8", pdf_path, "-"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
if run.returncode != 0:
    fail(f"pdftotext failed on {pdf_path}: {run.stderr.decode(errors='replace').strip()}")
finish()
text = canonical(run.stdout.decode("utf-8", errors="replace"))

def find_in_order(wanted, pos):
    """The headings not found in text from pos on, each looked for after the one before it, and
    where the last one found ends."""
    missing = []
    for heading, key in wanted:
        at = text.find(key, pos)
        if at < 0:
            missing.append(heading)
        else:
            pos = at + len(key)
    return missing, pos


# The table of contents lists every heading in order, then the body has them again in order.
wanted = [(h, canonical(markdown_text(h))) for h in headings]
missing_toc, body_start = find_in_order(wanted, 0)
missing_body, _ = find_in_order(wanted, body_start)
if missing_toc:
    fail(f"{len(missing_toc)} of {len(wanted)} headings of report.md not in the PDF's table of contents "
         f"(in order): " + "; ".join(missing_toc))
if missing_body:
    fail(f"{len(missing_body)} of {len(wanted)} headings of report.md not in the PDF's body (in order, "
         f"after its table of contents): " + "; ".join(missing_body))
if not wanted:
    fail("report.md has no ## or ### heading")


def pixels(path):
    with Image.open(path) as im:
        # The PDF keeps a PNG's alpha as a separate soft mask: compare the colour channels.
        rgb = im.convert("RGB")
        return rgb.size, hashlib.sha256(rgb.tobytes()).hexdigest()


embedded = set()
with tempfile.TemporaryDirectory() as tmp:
    run = subprocess.run(["pdfimages", "-png", pdf_path, os.path.join(tmp, "img")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if run.returncode != 0:
        fail(f"pdfimages failed on {pdf_path}: {run.stderr.decode(errors='replace').strip()}")
    for name in os.listdir(tmp):
        embedded.add(pixels(os.path.join(tmp, name)))
not_embedded, unreadable = [], []
for target in sorted(figures):
    path = os.path.join(report_dir, target)
    try:
        if pixels(path) not in embedded:
            not_embedded.append(target)
    except OSError as e:
        unreadable.append(f"{target} ({e})")
if unreadable:
    fail("report.md references figures that cannot be read: " + "; ".join(unreadable))
if not_embedded:
    fail(f"report.pdf does not embed {len(not_embedded)} of the {len(figures)} figures report.md references: "
         + ", ".join(not_embedded))
finish()
print(f"report.pdf: {len(wanted)} headings in the contents and the body, all {len(figures)} referenced figures "
      f"embedded, {len(data) // 1024} KiB")
