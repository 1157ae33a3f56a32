#!/usr/bin/env bash
# Runs on the GPU machine over a copy of the working tree with .devcarry/ carried (see
# scripts/stage_device.sh): GPU tests, device ceilings, then each method's own GPU session
# script (solvers/*/gpu_session.sh BUILD_BIN RESULTS_DIR). Everything lands in $OUT as a
# tarball (the transfer takes at most 8 files) plus the logs.
set -uo pipefail
ROOT=$(pwd)
export LD_LIBRARY_PATH=$ROOT/.devcarry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ELASTOBENCH_SOURCE_DIR=$ROOT ELASTOBENCH_DATA=$ROOT/.devcarry/meshes
R=/tmp/eb_results
mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee "$R/nvidia_smi.csv"
# ctest files hold absolute paths of the build made on the staging machine: recreate that path.
HERE_BUILD=$(cat .devcarry/build_dir_here)
if [ ! -e "$HERE_BUILD" ]; then mkdir -p "$(dirname "$HERE_BUILD")" && ln -s "$ROOT/.devcarry/build" "$HERE_BUILD"; fi
SRC_HERE=$(dirname "$HERE_BUILD")
if [ ! -e "$SRC_HERE/tests" ]; then for d in tests analysis solvers experiments scripts; do ln -sfn "$ROOT/$d" "$SRC_HERE/$d"; done; fi
BIN=$HERE_BUILD/bin
"$BIN/elastobench" list --json > "$R/list.json" 2>&1
(cd "$HERE_BUILD" && ctest -L gpu --output-on-failure --timeout 600 2>&1) | tee "$R/ctest_gpu.log" | tail -25
"$BIN/bench_ceilings" --benchmark_format=json --benchmark_out="$R/ceilings.json" --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true 2>&1 | tail -12
for s in solvers/*/gpu_session.sh; do
  [ -f "$s" ] || continue
  m=$(basename "$(dirname "$s")")
  echo "== $s"
  mkdir -p "$R/$m"
  timeout "${EB_METHOD_TIMEOUT:-900}" bash "$s" "$BIN" "$R/$m" 2>&1 | tee "$R/$m/session.log" | tail -30
done
tar -czf "$OUT/results.tgz" -C "$R" .
cp "$R/ctest_gpu.log" "$OUT/" 2>/dev/null || true
ls -la "$OUT"
