#!/usr/bin/env bash
# The main job on a fresh Debian 12 machine: install, build, then reproduce every paper's
# experiment in quick mode on the CPU backend, writing results, figures, the report and VTK
# files under OUT (default out/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
OUT=${OUT:-out}
build/bin/elastobench list
build/bin/elastobench reproduce all --quick --out "$OUT"
echo "main: results in $OUT/, report in $OUT/report/report.md"
