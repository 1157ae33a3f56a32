#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install, build, then reproduce every paper's
# experiment (`reproduce all`: quick sizes on the CPU when no GPU is usable, the papers' sizes
# beside one), writing results, figures, the report (Markdown and PDF) and VTK files under OUT
# (default out/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
OUT=${OUT:-out}
build/bin/elastobench list
build/bin/elastobench reproduce all --out "$OUT"
echo "main: results in $OUT/, report in $OUT/report/report.md and report.pdf"
