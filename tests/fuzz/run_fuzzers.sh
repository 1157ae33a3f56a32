#!/usr/bin/env bash
# Runs fuzz targets one after another for SECONDS each and prints, per target, the executions,
# coverage and findings libFuzzer reported (tests/fuzz/README.md).
#   usage: run_fuzzers.sh BUILD_DIR CORPUS_DIR SECONDS [TARGET...]
# CORPUS_DIR/<target>/ is the corpus (seeded by make_seeds.py; libFuzzer adds to it),
# CORPUS_DIR/artifacts/<target>/ receives crash-*, leak-*, timeout-* and oom-* inputs and
# CORPUS_DIR/logs/<target>.log the fuzzer's output. Never point CORPUS_DIR at shared data.
set -u
build=$1 corpus=$2 seconds=$3
shift 3
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(mesh_off mesh_obj mesh_ply mesh_stl mesh_msh mesh_medit mesh_vtk mesh_vtu mesh_vtp mesh_tetgen
           scenario_toml scenario_json scenario_set results_json)
fi
mkdir -p "$corpus/logs"
printf '%-14s %8s %10s %6s %7s %s\n' target seconds execs cov ft findings  # seconds: wall time of the run
for t in "${targets[@]}"; do
  mkdir -p "$corpus/$t" "$corpus/artifacts/$t"
  log="$corpus/logs/$t.log"
  start=$(date +%s)
  # -timeout: a hang is a finding; -rss/-malloc limits: so is a huge allocation from a small
  # input. UBSan reports abort (-fno-sanitize-recover), ASan's leak check runs at exit of each
  # crash-free input batch (detect_leaks=1).
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    nice -n 10 "$build/bin/fuzz_$t" "$corpus/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -max_len=65536 -print_final_stats=1 -artifact_prefix="$corpus/artifacts/$t/" >"$log" 2>&1
  took=$(( $(date +%s) - start ))
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | grep -o '[0-9]*')
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | grep -o '[0-9]*')
  found=$(ls "$corpus/artifacts/$t" | wc -l)
  printf '%-14s %8s %10s %6s %7s %s\n' "$t" "$took" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$found"
done
