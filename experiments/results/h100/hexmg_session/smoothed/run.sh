# A bash script, run by hand on the GPU machine (bash run.sh).
# hexmg smoothed hierarchy (issue 24): GPU tests, device triad, timing against vcycle (fp32 bunny).
set -uo pipefail
: "${OUT:?}"
ROOT=$(pwd); D=$ROOT/.dev-hexmg-amg
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ELASTOBENCH_SOURCE_DIR=$ROOT ELASTOBENCH_DATA=$D/meshes
python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' $D/bin.tar.xz $D/build || exit 1
B=$D/build/bin
SECONDS=0
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv > $OUT/nvidia_smi.csv
timeout 100 $B/test_hexmg_gpu --gtest_filter='*SmoothedCuda*' > $OUT/test_smoothed_gpu.txt 2>&1; echo "test_hexmg_gpu *SmoothedCuda* exit $? (${SECONDS}s)"
grep -E "^\[  (PASSED|FAILED) |difference|GPU against" $OUT/test_smoothed_gpu.txt | head -40
timeout 60 $B/test_contract --gtest_filter='Cuda/*hexmg*' > $OUT/test_contract_cuda_hexmg.txt 2>&1; echo "test_contract Cuda/*hexmg* exit $? (${SECONDS}s)"
grep -E "^\[  (PASSED|FAILED) |tests ran" $OUT/test_contract_cuda_hexmg.txt | head -20
timeout 40 $B/bench_ceilings --benchmark_out=$OUT/ceilings.json --benchmark_out_format=json \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true 2>&1 | grep median
mkdir -p t
# The built-in scenario sets hexmg.cycles (and post_smooth), keys the tolerance variants refuse.
$B/elastobench scenario show dick2011-bunny > bunny_cycles.toml
grep -v '^cycles = ' bunny_cycles.toml > bunny_tolerance.toml
grep -v '^cycles = \|^post_smooth = ' bunny_cycles.toml > bunny_pcg.toml
for size in 33300 94300; do
  for v in vcycle smoothed-vcycle smoothed-pcg smoothed-tolerance; do
    for rep in 1 2 3 4 5; do
      [ $SECONDS -gt 480 ] && break 3
      case $v in
        vcycle|smoothed-vcycle) sc=(-s bunny_cycles.toml) ;;
        smoothed-pcg) sc=(-s bunny_pcg.toml --set hexmg.tolerance=1e-5) ;;
        # fp32 floors above 1e-5 (PERF_NOTES.md): kept, with its validity stated, as the contrast
        *) sc=(-s bunny_tolerance.toml --set hexmg.tolerance=1e-5 --allow-invalid) ;;
      esac
      timeout 60 $B/elastobench run -m hexmg --variant $v -b cuda -p fp32 "${sc[@]}" \
        --set mesh.target_elements=$size --steps 110 --warmup 10 -o t/${size}_${v}_$rep -q \
        > t/${size}_${v}_$rep.log 2>&1 || echo "run $size $v $rep failed: $(tail -2 t/${size}_${v}_$rep.log)"
    done
    echo "$size $v done (${SECONDS}s)"
  done
done
find t -name vtk -type d -prune -exec rm -rf {} +
tar czf $OUT/runs.tgz -C t .
python3 - <<'PY'
import json, glob, statistics as st, os
rows = {}
for f in sorted(glob.glob('t/*/summary.json')):
    d = json.load(open(f)); name = os.path.basename(os.path.dirname(f)).rsplit('_', 1)[0]
    s = d['solver']; r = rows.setdefault(name, {'sps': [], 'it': [], 'red': [], 'valid': []})
    r['sps'].append(d['timing']['steps_per_second']); r['it'].append(s['mean_iterations'])
    r['red'].append((s.get('inner') or {}).get('reduction', {}).get('mean')); r['valid'].append(d['validity'].get('valid'))
for k, r in rows.items():
    print(k, 'n=%d' % len(r['sps']), 'steps/s median %.1f [%.1f, %.1f]' % (st.median(r['sps']), min(r['sps']), max(r['sps'])),
          'iterations/step %.2f' % st.mean(r['it']), 'mean reduction/step', r['red'][0], 'valid', set(map(str, r['valid'])))
PY
echo "total ${SECONDS}s"
