#!/usr/bin/env bash
# Runs on the GPU machine over a copy of the working tree with .devcarry/ carried (made here by
# scripts/stage_device.sh). Parts, in order, as arguments (default: all; one device call has
# 10 minutes, so split `tled` and `hexmg` across calls when both run in full):
#   common  ctest -L gpu and the device ceilings (bench_ceilings)          ~1 min
#   tled    `reproduce strbac2015` in full (GPU, CPU 1/all threads, CalculiX) within EB_TLED_TIMEOUT s
#           (default 450), then bench_tled (EB_TLED_BENCH=0: not)                       ~8 min
#   hexmg   bench_hexmg, ncu DRAM bytes of a step, `reproduce dick2011`, hexmg_perf_check.json ~4 min
#   bcsr    test_bcsr_pcg_gpu, `reproduce verschoor2012` (GPU), ncu DRAM bytes of a bcsr-pcg step  ~8 min
#   sanitize compute-sanitizer memcheck + racecheck over the GPU test binaries, error table  <=9 min
#   repeat  the determinism tests (hexmg, tled, bcsr-pcg) EB_REPEAT times (default 20), one process each ~3 min
#   gputests every GPU test binary (test_*_gpu, test_common_cuda, test_contract's Cuda/*) as one
#           process each, faster than ctest's process per case; a summary line per binary  ~3 min
#   corot   `reproduce campo2015` in full (corot-cg), EB_CAMPO_TIMEOUT s (default 330)      ~4 min
#   nr      `reproduce cecka2011` in full (nr-neohookean), EB_CECKA_TIMEOUT s (default 300),
#           then bench_device_assembly                                                    ~5 min
#   hexmg-smoothed  the smoothed GPU tests, per-kernel ncu durations (EB_SMOOTHED_NCU=0: none) and
#           timed runs of hexmg's smoothed variants, once per EB_SMOOTHED_SETS entry (comma-joined
#           --set K=V lists, e.g. "hexmg.coarse_row_warp=true hexmg.coarse_row_warp=false")  ~4 min
#   setup   nothing: the unpacking and links every call makes (device_parallel.sh runs it first)
#   h2h     `reproduce head-to-head`, a process per part (EB_H2H_PARTS, EB_H2H_SECONDS each)  <=8 min
#   h2h-search  head-to-head corot time-to-accuracy searches, one process per GPU at once:
#           EB_H2H_SEARCH="SCENE:METHODS[:CONFIGS[:TOLERANCES[:TRIAL_S]]] ..." (the i-th on GPU i mod the GPU
#           count, those sharing a GPU one after another; CONFIGS, e.g. cuda-fp64, sets
#           corot_accuracy, TOLERANCES corot_tolerances, TRIAL_S the job's corot_trial_seconds),
#           EB_H2H_SECONDS each GPU's limit (default 540), EB_H2H_TRIAL_S corot_trial_seconds
#           (default 30); a scene whose reference is in .devcarry/refs/corot_reference_SCENE.csv
#           or an earlier job's folder reads it (corot_reference_from); each into its own folder <=9 min
#   sparse  bench_sparse (linalg SpMV/PCG per format, cuSPARSE, Eigen), one process and JSON per
#           matrix (EB_SPARSE_SIZES, default the ~0.1M and ~1M DOF matrices and the real meshes;
#           box240, box400, bunny256 each in a call of their own), 5 repetitions, EB_SPARSE_BUDGET s
#           in all (default 470), one bench_sparse.tgz
# Results go to $OUT as at most 8 files under 16 MB (the transfer's limits): logs, JSON, and one
# tarball per experiment without VTK frames. File them here with scripts/import_device_results.sh.
set -uo pipefail
: "${OUT:?OUT must name the output folder}"
ROOT=$(pwd)
parts=${*:-common tled hexmg}
# Scratch folders of the parts; scripts/device_parallel.sh gives each of its jobs its own.
T=${EB_TMP:-/tmp}
mkdir -p "$T"
export LD_LIBRARY_PATH=$ROOT/.devcarry/lib:$ROOT/.devcarry/ccx/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$ROOT/.devcarry/ccx/bin:$PATH
export ELASTOBENCH_SOURCE_DIR=$ROOT ELASTOBENCH_DATA=$ROOT/.devcarry/meshes
# The binaries come packed (stage_device.sh); Python's tarfile unpacks them whatever tools the image has.
if [ -f .devcarry/bin.tar.xz ] && [ ! -d .devcarry/build/bin ]; then
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .devcarry/bin.tar.xz .devcarry/build || exit 1
fi
# ctest files hold the absolute paths of the build made on the staging machine: recreate them.
B=$(cat .devcarry/build_dir_here)
[ -e "$B" ] || { mkdir -p "$(dirname "$B")" && ln -s "$ROOT/.devcarry/build" "$B"; }
S=$(dirname "$B")
[ -e "$S/tests" ] || for d in tests analysis solvers experiments scripts; do ln -sfn "$ROOT/$d" "$S/$d"; done
# `reproduce EXPERIMENT` into DIR (emptied first) within SECONDS, PARTS if given; its log to $OUT;
# VTK frames dropped (the transfer's limits).
reproduce_into() {
  local dir=$1 experiment=$2 seconds=$3 parts=$4
  rm -rf "$dir"
  timeout "$seconds" "$B/bin/elastobench" reproduce "$experiment" --no-report -q -o "$dir" \
    ${parts:+--parts "$parts"} > "$OUT/$experiment.log" 2>&1
  echo "$experiment exit $?"
  find "$dir" -name vtk -type d -prune -exec rm -rf {} +
}
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
    bcsr)
      # bcsr-pcg: its GPU tests with their output kept (the per-phase CUDA-vs-CPU errors), then
      # `reproduce verschoor2012` (GPU rows and the CPU rows it runs; EB_VERSCHOOR_PARTS selects
      # parts), then Nsight Compute's DRAM bytes of every kernel of one step of the largest bunny.
      [ -x "$B/bin/test_bcsr_pcg_gpu" ] && (cd "$B" && timeout 240 bin/test_bcsr_pcg_gpu > "$OUT/test_bcsr_pcg_gpu.txt" 2>&1; echo "test_bcsr_pcg_gpu exit $?")
      grep -E "PASSED|FAILED" "$OUT/test_bcsr_pcg_gpu.txt" | head -20
      R=$T/eb_verschoor; rm -rf $R
      timeout "${EB_VERSCHOOR_TIMEOUT:-420}" "$B/bin/elastobench" reproduce verschoor2012 --no-report -q -o $R \
        ${EB_VERSCHOOR_PARTS:+--parts $EB_VERSCHOOR_PARTS} > "$OUT/verschoor2012.log" 2>&1
      echo "verschoor2012 exit $?"
      find $R -name vtk -type d -prune -exec rm -rf {} +
      if command -v ncu >/dev/null && [ "${EB_BCSR_NCU:-1}" = "1" ]; then
        for p in fp32 fp64; do
          timeout 150 ncu --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
            --launch-skip 200 --launch-count 90 --csv "$B/bin/elastobench" run -m bcsr-pcg -s verschoor2012-bunny \
            --set mesh.element_size=0.00515625 --set bcsr-pcg.graph=false --backend cuda --precision $p --steps 4 -q --allow-invalid \
            -o $T/eb_ncu_$p > "$R/ncu_bunny128_$p.csv" 2> "$R/ncu_bunny128_$p.log"
          echo "ncu $p exit $?"
        done
      fi
      tar czf "$OUT/verschoor2012.tgz" -C $R . ;;
    tled)
      R=$T/eb_tled; rm -rf $R
      timeout "${EB_TLED_TIMEOUT:-450}" "$B/bin/elastobench" reproduce strbac2015 --no-report -q -o $R > "$OUT/strbac2015.log" 2>&1
      echo "strbac2015 exit $?"
      find $R \( -name vtk -type d \) -prune -exec rm -rf {} +
      find $R -path '*calculix*' -size +300k -delete
      tar czf "$OUT/strbac2015.tgz" -C $R .
      # bench_tled: element-steps/s and effective bandwidth of the step, GPU cases and the CPU at
      # 10/20 elements per edge.
      if [ "${EB_TLED_BENCH:-1}" = 1 ]; then
        timeout 120 "$B/bin/bench_tled" --benchmark_filter='tled/cuda|tled/cpu/.*/(10|20)$' --benchmark_min_time=0.2 \
          --benchmark_out="$OUT/bench_tled.json" --benchmark_out_format=json > /dev/null 2>&1
        echo "bench_tled exit $?"
      fi ;;
    hexmg)
      # bench_hexmg (step rates per size and precision, the device's STREAM triad), Nsight Compute's
      # DRAM bytes of every kernel of one 269K fp32 step, `reproduce dick2011` and the headline
      # (scripts/hexmg_perf_check.py); the GPU tests run in `common`. EB_DICK2011_PARTS (e.g.
      # performance) runs only those parts here; the CPU-only ones are added elsewhere with
      # `reproduce dick2011 --parts ...` into the imported folder. EB_HEXMG_TIMEOUT: the part's seconds;
      # EB_HEXMG_NCU=0: no Nsight Compute pass (the report does not read it).
      R=$T/eb_hexmg; rm -rf $R; mkdir -p $R
      "$B/bin/bench_hexmg" --benchmark_filter="${EB_HEXMG_BENCH_FILTER:-cuda|Triad}" --benchmark_min_time=0.5 \
        --benchmark_format=json --benchmark_out="$R/bench_hexmg.json" > "$R/bench_hexmg.log" 2>&1
      echo "bench_hexmg exit $?"
      if command -v ncu > /dev/null && [ "${EB_HEXMG_NCU:-1}" = 1 ]; then
        # Steps 3 and 4 of a run (the first two capture and warm the graph), every kernel of a step.
        timeout 200 ncu --csv --page raw --print-units base --cache-control none --clock-control none \
          --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --launch-skip 450 --launch-count 225 \
          "$B/bin/elastobench" run -m hexmg -b cuda -p fp32 -s dick2011-bunny --set mesh.target_elements=269000 --steps 4 \
          --warmup 0 -q -o $T/eb_ncu_step > "$R/ncu_step.csv" 2> "$R/ncu_step.err"
        echo "ncu exit $?"
      fi
      left=$(( ${EB_HEXMG_TIMEOUT:-520} - SECONDS ))
      timeout $(( left > 1 ? left : 1 )) "$B/bin/elastobench" reproduce dick2011 --out $R --no-report \
        ${EB_DICK2011_PARTS:+--parts "$EB_DICK2011_PARTS"} > "$R/dick2011.log" 2>&1
      echo "dick2011 exit $?"
      python3 scripts/hexmg_perf_check.py $R
      find $R -name vtk -type d -prune -exec rm -rf {} +
      tar czf "$OUT/hexmg.tgz" -C $R . ;;
    hexmg-smoothed)
      # Where a step of hexmg's smoothed hierarchy goes on the GPU (its variants run 1-20 steps/s
      # where vcycle runs 100s): Nsight Compute's duration, grid and block of every kernel of
      # 3 steps (the first computes the Galerkin operators) of the ~100K-hexahedron bunny, fp32,
      # per smoothed variant; then a timed 20-step run of each (summary.json), per settings entry.
      # smoothed-pcg refuses the scene's hexmg.cycles, so the default is smoothed-vcycle alone.
      R=$T/eb_hexmg_sm; rm -rf $R; mkdir -p $R
      [ -x "$B/bin/test_hexmg_gpu" ] && (cd "$B" && timeout 240 bin/test_hexmg_gpu --gtest_filter='*Smoothed*' \
        > "$R/test_hexmg_gpu_smoothed.txt" 2>&1; echo "test_hexmg_gpu smoothed exit $?")
      for sets in ${EB_SMOOTHED_SETS:-default}; do
        tag=$(echo "$sets" | tr -c 'A-Za-z0-9_.-' '_'); args=()
        [ "$sets" = default ] || for kv in ${sets//,/ }; do args+=(--set "$kv"); done
        for v in ${EB_SMOOTHED_VARIANTS:-smoothed-vcycle}; do
          if command -v ncu > /dev/null && [ "${EB_SMOOTHED_NCU:-1}" = 1 ]; then
            timeout 200 ncu --csv --page raw --print-units base --cache-control none --clock-control none \
              --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread \
              "$B/bin/elastobench" run -m hexmg --variant $v -b cuda -p fp32 -s dick2011-bunny "${args[@]}" \
              --set mesh.target_elements=${EB_SMOOTHED_ELEMENTS:-100000} --steps 3 --warmup 0 -q -o $T/eb_sm_ncu_$v \
              > "$R/ncu_${v}_$tag.csv" 2> "$R/ncu_${v}_$tag.err"
            echo "ncu $v $sets exit $?"
          fi
          timeout 120 "$B/bin/elastobench" run -m hexmg --variant $v -b cuda -p fp32 -s dick2011-bunny "${args[@]}" \
            --set mesh.target_elements=${EB_SMOOTHED_ELEMENTS:-100000} --steps 20 -q -o $R/run_${v}_$tag > "$R/run_${v}_$tag.log" 2>&1
          echo "run $v $sets exit $?"
          find $R -name vtk -type d -prune -exec rm -rf {} +
        done
      done
      tar czf "$OUT/hexmg_smoothed.tgz" -C $R . ;;
    setup) ;;
    sanitize)
      # One process per test binary rather than ctest's one per test case: the sanitizer's start-up
      # per process would eat the call's 10 minutes. The budget is shared evenly by the runs; a run
      # cut by its timeout prints no ERROR SUMMARY, so the table says so instead of a count.
      CS=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
      tools=${EB_SANITIZE_TOOLS:-memcheck racecheck}
      # EB_SANITIZE_BINS: test binaries by name (default: every GPU test binary staged).
      if [ -n "${EB_SANITIZE_BINS:-}" ]; then bins=$(for b in $EB_SANITIZE_BINS; do echo "$B/bin/$b"; done)
      else bins=$(ls "$B"/bin/test_*_gpu "$B"/bin/test_common_cuda "$B"/bin/test_contract 2>/dev/null); fi
      runs=$(( $(echo $bins | wc -w) * $(echo $tools | wc -w) ))
      per_run=$(( ${EB_SANITIZE_BUDGET:-500} / (runs > 0 ? runs : 1) ))
      table="$OUT/sanitize_summary.txt"
      printf '%-20s %-10s %-8s %s\n' binary tool errors status > "$table"
      for tool in $tools; do
        for bin in $bins; do
          name=$(basename "$bin"); log=$T/eb_cs_${tool}_$name.log
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
      for bin in test_hexmg_gpu test_tled_gpu test_bcsr_pcg_gpu; do
        [ -x "$B/bin/$bin" ] || continue
        (cd "$B" && timeout 240 "bin/$bin" --gtest_filter='*Determinism*' --gtest_repeat="$n" --gtest_brief=1 \
          > "$OUT/repeat_$bin.log" 2>&1)
        echo "$bin determinism x$n: exit $? ($(grep -c '^\[  PASSED  \]' "$OUT/repeat_$bin.log") passing rounds)"
      done ;;
    sparse)
      # cuSPARSE is the toolkit's shared library: the image's CUDA 13 has it.
      export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/cuda/lib64
      # One process and one JSON per matrix, in the order given. EB_SPARSE_SIZES: matrix names
      # (tests/linalg/bench_sparse.cpp: box<n>, bunny<r>, armadillo, armadillo_rcm, hand_rcm,
      # raptor19409_rcm; a bare n means box<n>); meshes not staged (EB_DEVICE_MESHES) are left
      # out, as the log says. The default is the ~0.1-1M-DOF set; box240, box400 and bunny256
      # (2.7-12M DOFs: minutes of host-side conversions each) go in calls of their own, split by
      # precision if need be: EB_SPARSE_SIZES=bunny256 EB_SPARSE_FILTER=fp64 EB_SPARSE_PART=fp64.
      # bench_sparse rewrites its JSON whole after every benchmark (--eb_json_out: temporary file
      # + rename), so a matrix cut by its timeout keeps a valid file of what finished. Each matrix
      # gets at most EB_SPARSE_TIMEOUT s, all of them EB_SPARSE_BUDGET s (then the rest is
      # skipped, listed). JSON and logs (bench_sparse_<matrix>[_<EB_SPARSE_PART>].*) travel as one
      # tarball of linalg/ (the transfer takes 8 files), rebuilt after each matrix through a
      # temporary name; unpack it into experiments/results/<device>/.
      R=$T/eb_sparse; rm -rf $R; mkdir -p $R/linalg
      budget_end=$((SECONDS + ${EB_SPARSE_BUDGET:-470}))
      for m in ${EB_SPARSE_SIZES:-bunny53 armadillo_rcm hand_rcm raptor19409_rcm box80 armadillo bunny116 box160}; do
        case $m in *[!0-9]*) ;; *) m=box$m ;; esac
        left=$((budget_end - SECONDS)) t=${EB_SPARSE_TIMEOUT:-200}
        [ $left -lt $t ] && t=$left
        if [ $t -lt 20 ]; then echo "bench_sparse $m: not run (EB_SPARSE_BUDGET spent)"; continue; fi
        f=$R/linalg/bench_sparse_$m${EB_SPARSE_PART:+_$EB_SPARSE_PART}
        EB_BENCH_SPARSE_MATRICES=$m timeout "$t" "$B/bin/bench_sparse" \
          --benchmark_filter="${EB_SPARSE_FILTER:-.}" --benchmark_repetitions=5 --benchmark_min_time=0.05 \
          --benchmark_report_aggregates_only=true --eb_json_out="$f.json" > "$f.log" 2>&1
        rc=$?
        rm -f "$f.json.tmp"
        ok=$(grep -c '"aggregate_name": "median"' "$f.json" 2>/dev/null) bad=$(grep -c '"error_occurred": true' "$f.json" 2>/dev/null)
        echo "bench_sparse $m: exit $rc$([ $rc = 124 ] && echo ", cut at ${t}s"), ${ok:-0} benchmarks, ${bad:-0} failed runs"
        tar czf "$OUT/bench_sparse.tgz.part" -C $R linalg && mv "$OUT/bench_sparse.tgz.part" "$OUT/bench_sparse.tgz"
      done
      grep -h "bench_sparse: " $R/linalg/*.log ;;
    gputests)
      for bin in "$B"/bin/test_*_gpu "$B"/bin/test_common_cuda "$B"/bin/test_contract; do
        [ -x "$bin" ] || continue
        name=$(basename "$bin") filter=
        [ "$name" = test_contract ] && filter=--gtest_filter='Cuda/*'
        (cd "$B" && timeout "${EB_GPUTEST_TIMEOUT:-240}" "$bin" $filter --gtest_brief=1 > "$T/eb_$name.log" 2>&1)
        rc=$?
        echo "$name: exit $rc, $(grep -oE '^\[  PASSED  \] [0-9]+' "$T/eb_$name.log" | grep -oE '[0-9]+$' || echo 0) passed, $(grep -cE '^\[  FAILED  \] [A-Za-z].*\(' "$T/eb_$name.log") failed"
        { echo "### $name: exit $rc"; cat "$T/eb_$name.log"; } >> $T/eb_gputests.log
      done
      grep -E '^\[  FAILED  \]|^### ' $T/eb_gputests.log | sort -u | head -40
      gzip -c $T/eb_gputests.log > "$OUT/gputests.log.gz" ;;
    corot)
      reproduce_into $T/eb_campo campo2015 "${EB_CAMPO_TIMEOUT:-330}" "${EB_CAMPO_PARTS:-}"
      tar czf "$OUT/campo2015.tgz" -C $T/eb_campo . ;;
    nr)
      R=$T/eb_cecka
      reproduce_into $R cecka2011 "${EB_CECKA_TIMEOUT:-300}" "${EB_CECKA_PARTS:-}"
      if [ -x "$B/bin/bench_device_assembly" ] && [ "${EB_CECKA_BENCH:-1}" = 1 ]; then
        timeout 120 "$B/bin/bench_device_assembly" --benchmark_filter='assembly/.*/(camile_hand|sphere28)/' \
          --benchmark_out="$R/bench_device_assembly.json" --benchmark_out_format=json > "$R/bench_device_assembly.log" 2>&1
        echo "bench_device_assembly exit $?"
      fi
      tar czf "$OUT/cecka2011.tgz" -C $R . ;;
    h2h)
      # `reproduce head-to-head`, one experiment part per process into one folder (a part that
      # runs out of time loses only itself): EB_H2H_PARTS (default corot solvers nonlinear scale),
      # EB_H2H_SECONDS seconds each (default 240), EB_H2H_OPTIONS extra arguments (--option K=V).
      R=$T/eb_h2h; rm -rf $R
      for p in ${EB_H2H_PARTS:-corot solvers nonlinear scale}; do
        timeout "${EB_H2H_SECONDS:-240}" "$B/bin/elastobench" reproduce head-to-head --no-report -q -o $R --parts "$p" \
          ${EB_H2H_OPTIONS:-} > "$OUT/head-to-head_$p.log" 2>&1
        echo "head-to-head $p exit $?"
      done
      find $R -name vtk -type d -prune -exec rm -rf {} +
      tar czf "$OUT/head-to-head.tgz" -C $R . ;;
    h2h-search)
      # Searches of several scenes/method lists at once, one process per GPU (a GPU's searches run
      # one after another within its limit); a search cut by the limit keeps every trial and
      # accuracy row it wrote. Two processes never share a GPU, so their timings do not mix.
      R=$T/eb_h2h_search; rm -rf $R; mkdir -p $R
      ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true); [ "$ngpu" -ge 1 ] || ngpu=1
      i=0; declare -A queue
      for job in ${EB_H2H_SEARCH:?EB_H2H_SEARCH must list SCENE:METHODS jobs}; do
        g=$((i % ngpu)); queue[$g]="${queue[$g]:-} $job"; i=$((i + 1))
      done
      for g in "${!queue[@]}"; do
        (
          end=$(( $(date +%s) + ${EB_H2H_SECONDS:-540} ))
          k=0
          for job in ${queue[$g]}; do
            k=$((k + 1)); dir="$R/$(printf '%s_gpu%s_%02d' "${job%%:*}" "$g" "$k")"
            IFS=: read -r sc methods configs tolerances trial_s <<< "$job"; left=$(( end - $(date +%s) ))
            [ $left -gt 10 ] || { echo "h2h-search $job: no time left on GPU $g"; continue; }
            extra=()
            [ -n "$configs" ] && extra+=(--option corot_accuracy="$configs")
            [ -n "$tolerances" ] && extra+=(--option corot_tolerances="$tolerances")
            # The scene's reference from .devcarry/refs, else from an earlier job of this call.
            ref=$(ls "$ROOT/.devcarry/refs/corot_reference_$sc.csv" "$R"/*/head-to-head/corot_reference_$sc.csv 2>/dev/null | head -1)
            [ -n "$ref" ] && extra+=(--option corot_reference_from="$(dirname "$ref")")
            CUDA_VISIBLE_DEVICES=$g OMP_NUM_THREADS=$(( $(nproc) / ngpu )) timeout $left "$B/bin/elastobench" reproduce head-to-head \
              --parts corot --no-report -o "$dir" --option corot_scenes="$sc" --option corot_sizes=none \
              --option corot_trial_seconds="${trial_s:-${EB_H2H_TRIAL_S:-30}}" --option corot_methods="$methods" "${extra[@]}" \
              > "$dir.log" 2>&1
            echo "h2h-search $job on GPU $g exit $?"
          done
        ) &
      done
      wait
      tar czf "$OUT/h2h_search.tgz" -C $R . ;;
    *) echo "unknown part '$part' (common, gputests, tled, hexmg, hexmg-smoothed, bcsr, corot, nr, sanitize, repeat, sparse, h2h, h2h-search, setup)"; exit 2 ;;
  esac
  echo "== $part: ${SECONDS}s"
done
ls -la "$OUT"
