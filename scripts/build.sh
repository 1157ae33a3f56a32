#!/usr/bin/env bash
# Installs the Debian packages (idempotent), configures and builds ElastoBench into build/.
# Environment: BUILD_DIR (default build), BUILD_TYPE (Release), JOBS (all cores),
# EB_SKIP_INSTALL=1 to skip the apt step, extra CMake arguments in CMAKE_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${EB_SKIP_INSTALL:-0}" != "1" ]; then
  bash scripts/install_deps.sh
fi
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" ${CMAKE_ARGS:-}
cmake --build "$BUILD_DIR" -j "$JOBS"
