#!/usr/bin/env bash
# hexmg on the GPU machine (H100 + 16 cores), for the lead's batched session:
#   solvers/hexmg/gpu_session.sh BIN RESULTS_DIR
# BIN holds elastobench, test_hexmg_gpu and bench_hexmg; ELASTOBENCH_DATA points at the meshes.
# Writes only under RESULTS_DIR:
#   test_hexmg_gpu.{log,json}   the CUDA tests (label gpu)
#   bench_hexmg.{log,json}      step rates per size/precision and the device's STREAM triad
#   dick2011/                   `elastobench reproduce dick2011` (full: GPU + CPU 1/4/8/16 threads)
#   hexmg_perf_check.json       269K fp32 steps/s and effective GB/s against the triad (issue #5)
# Budget: ~1.5 min tests + benchmarks, ~5 min experiment.
set -uo pipefail
BIN=${1:?usage: gpu_session.sh BIN RESULTS_DIR}
RES=${2:?usage: gpu_session.sh BIN RESULTS_DIR}
mkdir -p "$RES"
status=0
nvidia-smi > "$RES/nvidia-smi.txt" 2>&1 || true
"$BIN/test_hexmg_gpu" --gtest_output="json:$RES/test_hexmg_gpu.json" > "$RES/test_hexmg_gpu.log" 2>&1 || status=1
"$BIN/bench_hexmg" --benchmark_filter='cuda|Triad' --benchmark_min_time=0.5 --benchmark_format=json \
  --benchmark_out="$RES/bench_hexmg.json" > "$RES/bench_hexmg.log" 2>&1 || status=1
"$BIN/elastobench" reproduce dick2011 --out "$RES" --no-report > "$RES/dick2011.log" 2>&1 || status=1
python3 - "$RES" <<'PY' || status=1
import json, sys
res = sys.argv[1]
b = json.load(open(f"{res}/bench_hexmg.json"))["benchmarks"]
def find(prefix):
    return next((x for x in b if x["name"].startswith(prefix)), None)
step = find("BM_Step/cuda_fp32/269000")
triad = find("BM_Triad<float>")
out = {"device": b and json.load(open(f"{res}/bench_hexmg.json"))["context"].get("host_name"),
       "steps_per_s_269k_fp32": step and step["steps_per_s"],
       "effective_GB_per_s_269k_fp32": step and step["GB_per_s"],
       "triad_GB_per_s": triad and triad["GB_per_s"]}
if step and triad:
    out["fraction_of_triad"] = step["GB_per_s"] / triad["GB_per_s"]
    out["meets_200_steps_per_s"] = step["steps_per_s"] >= 200
    out["meets_60pct_triad"] = out["fraction_of_triad"] >= 0.6
json.dump(out, open(f"{res}/hexmg_perf_check.json", "w"), indent=1)
print(json.dumps(out))
PY
exit $status
