#!/usr/bin/env bash
# Runs on the GPU machine over a copy of the working tree with .devcarry/ carried (made here by
# scripts/stage_device.sh). Parts, in order, as arguments (default: all; one device call has
# 10 minutes, so split `tled` and `hexmg` across calls when both run in full):
#   common  ctest -L gpu and the device ceilings (bench_ceilings)          ~1 min
#   tled    `reproduce strbac2015` in full (GPU, CPU 1/all threads, CalculiX) ~5 min
#   hexmg   solvers/hexmg/gpu_session.sh: tests, bench_hexmg, `reproduce dick2011` ~4 min
#   probe   solvers/hexmg/perf_probe.sh: A/B launch variants, phase timings, ncu per kernel ~4 min
#   sanitize compute-sanitizer memcheck + racecheck over the GPU test binaries, error table  <=9 min
#   repeat  the determinism tests (hexmg, tled) EB_REPEAT times (default 20), one process each   ~2 min
#   sparse  bench_sparse (linalg SpMV/PCG per format, cuSPARSE, Eigen), one process and JSON per
#           matrix size (EB_SPARSE_SIZES, default 80 160 240 400), 5 repetitions      ~6 min
# Results go to $OUT as at most 8 files under 16 MB (the transfer's limits): logs, JSON, and one
# tarball per experiment without VTK frames. File them here with scripts/import_device_results.sh.
set -uo pipefail
: "${OUT:?OUT must name the output folder}"
ROOT=$(pwd)
parts=${*:-common tled hexmg}
export LD_LIBRARY_PATH=$ROOT/.devcarry/lib:$ROOT/.devcarry/ccx/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$ROOT/.devcarry/ccx/bin:$PATH
export ELASTOBENCH_SOURCE_DIR=$ROOT ELASTOBENCH_DATA=$ROOT/.devcarry/meshes
# ctest files hold the absolute paths of the build made on the staging machine: recreate them.
B=$(cat .devcarry/build_dir_here)
[ -e "$B" ] || { mkdir -p "$(dirname "$B")" && ln -s "$ROOT/.devcarry/build" "$B"; }
S=$(dirname "$B")
[ -e "$S/tests" ] || for d in tests analysis solvers experiments scripts; do ln -sfn "$ROOT/$d" "$S/$d"; done
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv | tee "$OUT/nvidia_smi.csv"
for part in $parts; do
  SECONDS=0
  case $part in
    common)
      (cd "$B" && timeout 400 ctest -L gpu --timeout 150 -j2 --output-on-failure --repeat until-fail:${EB_CTEST_REPEAT:-1} > "$OUT/ctest_gpu.log" 2>&1)
      grep -E "tests passed|Failed" "$OUT/ctest_gpu.log" | head
      # The per-kernel tests again with their output kept: the CUDA-vs-CPU errors they measure
      # (ctest keeps a test's output only when it fails).
      [ -x "$B/bin/test_tled_gpu" ] && (cd "$B" && timeout 60 bin/test_tled_gpu --gtest_filter='Kernels/*:*Determinism*' > "$OUT/test_tled_gpu_kernels.txt" 2>&1)
      [ -x "$B/bin/test_hexmg_gpu" ] && (cd "$B" && timeout 60 bin/test_hexmg_gpu --gtest_filter='Kernels/*' > "$OUT/test_hexmg_gpu_kernels.txt" 2>&1)
      "$B/bin/bench_ceilings" --benchmark_out="$OUT/ceilings.json" --benchmark_out_format=json \
        --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>&1 | grep median ;;
    tled)
      R=/tmp/eb_tled; rm -rf $R
      timeout 450 "$B/bin/elastobench" reproduce strbac2015 --no-report -q -o $R > "$OUT/strbac2015.log" 2>&1
      echo "strbac2015 exit $?"
      find $R \( -name vtk -type d \) -prune -exec rm -rf {} +
      find $R -path '*calculix*' -size +300k -delete
      tar czf "$OUT/strbac2015.tgz" -C $R . ;;
    hexmg)
      R=/tmp/eb_hexmg; rm -rf $R
      timeout "${EB_HEXMG_TIMEOUT:-520}" bash solvers/hexmg/gpu_session.sh "$B/bin" $R
      echo "hexmg session exit $?"
      find $R -name vtk -type d -prune -exec rm -rf {} +
      tar czf "$OUT/hexmg.tgz" -C $R . ;;
    probe)
      R=/tmp/eb_probe; rm -rf $R
      timeout 540 bash solvers/hexmg/perf_probe.sh "$B/bin" $R
      echo "hexmg probe exit $?"
      tar czf "$OUT/probe.tgz" -C $R . ;;
    sanitize)
      # One process per test binary rather than ctest's one per test case: the sanitizer's start-up
      # per process would eat the call's 10 minutes. The budget is shared evenly by the runs; a run
      # cut by its timeout prints no ERROR SUMMARY, so the table says so instead of a count.
      CS=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
      tools=${EB_SANITIZE_TOOLS:-memcheck racecheck}
      # EB_SANITIZE_BINS: test binaries by name (default: every GPU test binary staged).
      if [ -n "${EB_SANITIZE_BINS:-}" ]; then bins=$(for b in $EB_SANITIZE_BINS; do echo "$B/bin/$b"; done)
      else bins=$(ls "$B"/bin/test_*_gpu "$B"/bin/test_common_cuda 2>/dev/null); fi
      runs=$(( $(echo $bins | wc -w) * $(echo $tools | wc -w) ))
      per_run=$(( ${EB_SANITIZE_BUDGET:-500} / (runs > 0 ? runs : 1) ))
      table="$OUT/sanitize_summary.txt"
      printf '%-20s %-10s %-8s %s\n' binary tool errors status > "$table"
      for tool in $tools; do
        for bin in $bins; do
          name=$(basename "$bin"); log=/tmp/eb_cs_${tool}_$name.log
          (cd "$B" && timeout -k 10 "$per_run" "$CS" --tool "$tool" --print-limit 100 \
            "$bin" --gtest_brief=1 ${EB_SANITIZE_FILTER:+--gtest_filter=$EB_SANITIZE_FILTER} > "$log" 2>&1)
          rc=$?
          # memcheck ends with "ERROR SUMMARY: N errors", racecheck with "RACECHECK SUMMARY: ... (N errors, M warnings)".
          errors=$(sed -n -e 's/^========= ERROR SUMMARY: \([0-9]*\) error.*/\1/p' \
            -e 's/^========= RACECHECK SUMMARY: .*(\([0-9]*\) errors*, \([0-9]*\) warning.*/\1 (+\2 warnings)/p' "$log" | tail -1)
          status="exit $rc"; [ "$rc" = 124 ] && status="timeout after ${per_run}s, incomplete"
          printf '%-20s %-10s %-8s %s\n' "$name" "$tool" "${errors:-?}" "$status" >> "$table"
          { echo "### $name --tool $tool: $status"; cat "$log"; } >> "$OUT/sanitize_$tool.log"
        done
      done
      cat "$table" ;;
    repeat)
      # gtest's own repeat: one process, so a state leaking from one run into the next shows too.
      n=${EB_REPEAT:-20}
      for bin in test_hexmg_gpu test_tled_gpu; do
        [ -x "$B/bin/$bin" ] || continue
        (cd "$B" && timeout 240 "bin/$bin" --gtest_filter='*Determinism*' --gtest_repeat="$n" --gtest_brief=1 \
          > "$OUT/repeat_$bin.log" 2>&1)
        echo "$bin determinism x$n: exit $? ($(grep -c '^\[  PASSED  \]' "$OUT/repeat_$bin.log") passing rounds)"
      done ;;
    sparse)
      # cuSPARSE is the toolkit's shared library: the image's CUDA 13 has it.
      export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64
      for n in ${EB_SPARSE_SIZES:-80 160 240 400}; do
        EB_BENCH_SPARSE_SIZES=$n timeout "${EB_SPARSE_TIMEOUT:-200}" "$B/bin/bench_sparse" \
          --benchmark_filter="${EB_SPARSE_FILTER:-.}" --benchmark_repetitions=5 --benchmark_min_time=0.05 \
          --benchmark_report_aggregates_only=true \
          --benchmark_out="$OUT/bench_sparse_box$n.json" --benchmark_out_format=json > "$OUT/bench_sparse_box$n.log" 2>&1
        echo "bench_sparse box$n: exit $?"
      done ;;
    *) echo "unknown part '$part' (common, tled, hexmg, probe, sanitize, repeat, sparse)"; exit 2 ;;
  esac
  echo "== $part: ${SECONDS}s"
done
ls -la "$OUT"
