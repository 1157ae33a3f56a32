#!/usr/bin/env bash
# The test job on a fresh Debian 12 machine: install, build, run every test that can run here.
# Tests needing a CUDA device carry the label `gpu` and report themselves skipped without one.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j "${JOBS:-$(nproc)}" ${CTEST_ARGS:-}
