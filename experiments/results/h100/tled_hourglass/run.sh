# A bash script, run by hand on the GPU machine (bash run.sh).
# tled hourglass variant on the GPU machine (issue 24): device ceilings, the GPU tests of the
# variant, the tled contract tests, the cantilever sag (cuda, fp32/fp64, hourglass and gather,
# three element sizes) and steps/s (5 runs each) at two larger sizes. Results tarred into $OUT.
set -uo pipefail
: "${OUT:?}"
ROOT=$(pwd); D=$ROOT/.dev-tled-hg
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$D/build" && python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$D/bin.tar.xz" "$D/build" || exit 1
BIN=$D/build/bin
R=$OUT/tled_hourglass; mkdir -p "$R"
nvidia-smi -L > "$R/gpu.txt" 2>&1
echo "== ceilings $SECONDS"
timeout 40 "$BIN/bench_ceilings" --benchmark_out="$R/ceilings.json" --benchmark_out_format=json \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>&1 | grep median
echo "== gpu tests $SECONDS"
timeout 60 "$BIN/test_tled_gpu" --gtest_filter='*hourglass*:*Hourglass*' > "$R/test_tled_gpu_hourglass.txt" 2>&1; echo "hourglass gpu tests rc=$?"
tail -3 "$R/test_tled_gpu_hourglass.txt"; grep -E "FAILED" "$R/test_tled_gpu_hourglass.txt" | head
timeout 60 "$BIN/test_tled_gpu" --gtest_filter='-*hourglass*:*Hourglass*' > "$R/test_tled_gpu_others.txt" 2>&1; echo "other tled gpu tests rc=$?"
tail -3 "$R/test_tled_gpu_others.txt"; grep -E "FAILED" "$R/test_tled_gpu_others.txt" | head
timeout 60 "$BIN/test_contract" --gtest_filter='*tled*' > "$R/test_contract_tled.txt" 2>&1; echo "contract tled rc=$?"
tail -3 "$R/test_contract_tled.txt"; grep -E "FAILED" "$R/test_contract_tled.txt" | head
E="$BIN/elastobench"
echo "== sag $SECONDS"
for p in fp32 fp64; do for v in hourglass gather; do for h in 0.05 0.025 0.0125; do
  o=$R/sag_${v}_${p}_h$h
  timeout 40 "$E" run -m tled --variant $v -b cuda -p $p -s cantilever --set mesh.element_size=$h --set time.dt=0 -o "$o" -q --allow-invalid > "$o.log" 2>&1
  python3 -c "
import json,sys;d=json.load(open('$o/summary.json'));t=d['time']
print('sag $v $p h=$h', d['mesh']['elements'], 'tip_z_mm=%.4f'%(-1e3*d['probes']['tip'][2]), t['steps'], t['stopped_by'], 'valid', d['validity']['valid'], 'steps/s %.0f'%d['timing']['steps_per_second'])" 2>&1
done; done; done
echo "== throughput $SECONDS"
for h in 0.005 0.0025; do for p in fp32 fp64; do for v in gather hourglass; do for k in 1 2 3 4 5; do
  [ $SECONDS -gt 200 ] && break 4
  o=$R/perf_${v}_${p}_h${h}_r$k
  timeout 30 "$E" run -m tled --variant $v -b cuda -p $p -s cantilever --set mesh.element_size=$h --set time.dt=0 --steps 3000 -o "$o" -q --allow-invalid > "$o.log" 2>&1
  python3 -c "
import json;d=json.load(open('$o/summary.json'));
print('perf $v $p h=$h r$k', d['mesh']['elements'], 'steps/s %.1f'%d['timing']['steps_per_second'], 'bytes/step', d['performance']['bytes_per_step'], 'flops/step', d['performance']['flops_per_step'], 'valid', d['validity']['valid'], 'peak_dev', d['memory']['peak_device_bytes'])" 2>&1
done; done; done; done
echo "== done $SECONDS"
# Keep summaries and logs (timeseries of the sag runs too); drop nothing else large.
tar -C "$OUT" -czf "$OUT/tled_hourglass.tgz" tled_hourglass && rm -rf "$R"
