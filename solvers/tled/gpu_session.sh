#!/usr/bin/env bash
# One batched GPU session for TLED (issue #4): GPU tests, bench_tled, the full strbac2015
# experiment and its analysis, plus the kernels' register/spill report. Everything goes under $OUT.
#   solvers/tled/gpu_session.sh BUILD_DIR            (run from the repository root; $OUT must be set)
# Budget: tests ~1 min, bench ~2 min, experiment ~5 min on an H100 with 16 cores.
# At most 8 files come back from the device machine, at most 2 folders deep, so the results are
# packed into a few files: tests.xml, bench.json, registers.txt, strbac2015.tar.gz, session.log.
set -uo pipefail
BUILD=${1:?usage: gpu_session.sh BUILD_DIR}
: "${OUT:?set OUT to the output folder}"
BIN=$BUILD/bin
LOG=$OUT/session.log
mkdir -p "$OUT"
exec > >(tee -a "$LOG") 2>&1
export ELASTOBENCH_SOURCE_DIR=${ELASTOBENCH_SOURCE_DIR:-$(pwd)}

echo "== device"; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,clocks.max.mem --format=csv || true
"$BIN/elastobench" list || true

echo "== registers per thread (cuobjdump of the tled kernels)"
if command -v cuobjdump > /dev/null; then
  cuobjdump -res-usage "$BIN/elastobench" 2>/dev/null | grep -A1 -E "tled_(element|node|boundary)_kernel" > "$OUT/registers.txt" || true
  head -40 "$OUT/registers.txt"
else
  echo "cuobjdump not found; registers are also in strbac2015/*.csv (cudaFuncGetAttributes)" | tee "$OUT/registers.txt"
fi

echo "== GPU tests (label gpu) and the CPU tests of tled"
"$BIN/test_tled_gpu" --gtest_output=xml:"$OUT/tests.xml"
echo "test_tled_gpu exit $?"
"$BIN/test_tled" --gtest_output=xml:"$OUT/tests_cpu.xml" > /dev/null
echo "test_tled exit $?"

echo "== bench_tled (GPU cases and the CPU at 10/20 per edge)"
timeout 240 "$BIN/bench_tled" --benchmark_filter='tled/cuda|tled/cpu/.*/(10|20)$' --benchmark_min_time=0.2 \
  --benchmark_out="$OUT/bench.json" --benchmark_out_format=json
echo "bench_tled exit $?"

echo "== elastobench reproduce strbac2015 (full)"
RES=$OUT/res
timeout 420 "$BIN/elastobench" reproduce strbac2015 --no-report -q -o "$RES"
echo "reproduce exit $?"
/usr/bin/python3 analysis/strbac2015.py "$RES/strbac2015" "$RES/figures" > /dev/null 2>&1 || \
  python3 analysis/strbac2015.py "$RES/strbac2015" "$RES/figures" > /dev/null 2>&1 || echo "analysis not run here"
rm -rf "$RES/strbac2015/calculix"/*.frd "$RES/strbac2015/calculix"/*.12d  # large CalculiX result files
tar czf "$OUT/strbac2015.tar.gz" -C "$RES" . && rm -rf "$RES"
ls -la "$OUT"
