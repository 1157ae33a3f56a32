#!/usr/bin/env bash
# hexmg performance probe on the GPU machine (PERF_NOTES.md): same-run A/B timing of the launch
# variants, per-phase event timings and an Nsight Compute table of every kernel of one step.
#   solvers/hexmg/perf_probe.sh BIN RESULTS_DIR [SIZE]
# BIN holds elastobench, test_hexmg_gpu and bench_hexmg; ELASTOBENCH_DATA points at the meshes.
# Variants (environment of the CUDA backend): EB_HEXMG_PDL=0|1, EB_HEXMG_ORDER=colour|lattice.
# Writes under RESULTS_DIR: test_hexmg_gpu.log, ab_<variant>_<rep>.json (bench_hexmg),
# profile_<variant>.json (summary.json of a hexmg.profile=true run), ncu_<variant>.csv.
# Budget: ~1 min tests, ~1.5 min A/B, ~1.5 min ncu.
set -uo pipefail
BIN=${1:?usage: perf_probe.sh BIN RESULTS_DIR [SIZE]}
RES=${2:?usage: perf_probe.sh BIN RESULTS_DIR [SIZE]}
SIZE=${3:-269000}
mkdir -p "$RES"
status=0
"$BIN/test_hexmg_gpu" --gtest_output="json:$RES/test_hexmg_gpu.json" > "$RES/test_hexmg_gpu.log" 2>&1 || status=1
tail -3 "$RES/test_hexmg_gpu.log"

declare -A ENVS=([old]="EB_HEXMG_PDL=0 EB_HEXMG_ORDER=colour" [order]="EB_HEXMG_PDL=0 EB_HEXMG_ORDER=lattice"
                 [pdl]="EB_HEXMG_PDL=1 EB_HEXMG_ORDER=colour" [new]="EB_HEXMG_PDL=1 EB_HEXMG_ORDER=lattice")
VARIANTS=${EB_PROBE_VARIANTS:-old order pdl new}
"$BIN/bench_hexmg" --benchmark_filter='Triad' --benchmark_format=json --benchmark_out="$RES/triad.json" > /dev/null 2>&1 || status=1
for rep in 1 2; do
  for v in $VARIANTS; do
    env ${ENVS[$v]} "$BIN/bench_hexmg" --benchmark_filter="cuda_fp32/$SIZE/" --benchmark_min_time=0.5 \
      --benchmark_format=json --benchmark_out="$RES/ab_${v}_$rep.json" > /dev/null 2>&1 || status=1
  done
done
for v in old new; do
  env ${ENVS[$v]} "$BIN/bench_hexmg" --benchmark_filter="cuda_fp64/$SIZE/" --benchmark_min_time=0.5 \
    --benchmark_format=json --benchmark_out="$RES/ab64_${v}_1.json" > /dev/null 2>&1 || status=1
done
python3 - "$RES" $VARIANTS <<'PY'
import json, sys, glob, statistics
res, variants = sys.argv[1], sys.argv[2:]
triad = next(b for b in json.load(open(f"{res}/triad.json"))["benchmarks"] if b["name"].startswith("BM_Triad<float>"))["GB_per_s"]
print(f"triad fp32 {triad:.0f} GB/s")
for prefix in ("ab", "ab64"):
    for v in variants:
        runs = [json.load(open(f))["benchmarks"][0] for f in sorted(glob.glob(f"{res}/{prefix}_{v}_*.json"))]
        if not runs: continue
        sps = [r["steps_per_s"] for r in runs]
        gbs = [r["GB_per_s"] for r in runs]
        print(f"{prefix:5s} {v:6s} steps/s {' '.join(f'{x:.1f}' for x in sps):>14s}  GB/s {statistics.median(gbs):7.0f}  "
              f"triad fraction {statistics.median(gbs) / triad:.3f}")
PY

# Per-phase event timings (kernels launched one by one, no graph).
for v in old new; do
  env ${ENVS[$v]} "$BIN/elastobench" run -m hexmg -b cuda -p fp32 -s dick2011-bunny --set mesh.target_elements=$SIZE \
    --set hexmg.profile=true --steps 30 --warmup 5 -q -o /tmp/eb_probe_$v > /dev/null 2>&1 || status=1
  cp /tmp/eb_probe_$v/summary.json "$RES/profile_$v.json" 2>/dev/null
done

# Nsight Compute: every kernel of the third step (graph nodes profiled one by one; caches and
# clocks left as they are, so the durations are those of a kernel running alone).
if command -v ncu > /dev/null; then
  per_step=$(python3 -c "import json;print(json.load(open('$RES/profile_new.json'))['details'].get('kernels_per_step', 0))" 2>/dev/null || echo 0)
  [ "$per_step" -gt 0 ] 2>/dev/null || per_step=225
  for v in old new; do
    env ${ENVS[$v]} timeout 240 ncu --csv --page raw --print-units base --cache-control none --clock-control none \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,launch__grid_size \
      --launch-skip $((2 * per_step)) --launch-count "$per_step" \
      "$BIN/elastobench" run -m hexmg -b cuda -p fp32 -s dick2011-bunny --set mesh.target_elements=$SIZE --steps 4 \
      --warmup 0 -q -o /tmp/eb_ncu_$v > "$RES/ncu_$v.csv" 2> "$RES/ncu_$v.err" || status=1
  done
  python3 - "$RES" <<'PY'
import csv, sys, collections, re
res = sys.argv[1]
for v in ("old", "new"):
    try:
        rows = list(csv.reader(open(f"{res}/ncu_{v}.csv")))
    except OSError:
        continue
    head = next((i for i, r in enumerate(rows) if "Kernel Name" in r), None)
    if head is None:
        print(v, "no ncu rows"); continue
    h = rows[head]; data = rows[head + 2:]
    col = {k: h.index(k) for k in h}
    def num(r, k):
        try: return float(r[col[k]].replace(",", ""))
        except (KeyError, ValueError): return 0.0
    agg = collections.OrderedDict()
    for r in data:
        name = re.sub(r"^void |\(.*$|eb::hexmg::\(anonymous namespace\)::", "", r[col["Kernel Name"]])
        key = (name, int(num(r, "launch__grid_size")))
        a = agg.setdefault(key, [0, 0.0, 0.0, 0.0])
        a[0] += 1; a[1] += num(r, "gpu__time_duration.sum"); a[2] += num(r, "dram__bytes_read.sum") + num(r, "dram__bytes_write.sum"); a[3] += num(r, "lts__t_bytes.sum")
    tot = sum(a[1] for a in agg.values())
    print(f"== ncu {v}: {len(data)} kernels, {tot / 1e6:.3f} ms summed (units as ncu reports: ns)")
    for (name, grid), (n, t, dram, l2) in sorted(agg.items(), key=lambda kv: -kv[1][1])[:25]:
        print(f"{name[:34]:34s} grid {grid:6d} x{n:3d} {t / 1e3:8.1f} us  DRAM {dram / 1e6:8.1f} MB  L2 {l2 / 1e6:8.1f} MB  {dram / max(t, 1):6.0f} GB/s")
PY
fi
exit $status
