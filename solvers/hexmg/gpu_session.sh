#!/usr/bin/env bash
# hexmg on the GPU machine (H100 + 16 cores), for the lead's batched session:
#   solvers/hexmg/gpu_session.sh BIN RESULTS_DIR
# BIN holds elastobench, test_hexmg_gpu and bench_hexmg; ELASTOBENCH_DATA points at the meshes.
# Writes only under RESULTS_DIR:
#   test_hexmg_gpu.{log,json}   the CUDA tests (label gpu), with EB_HEXMG_TESTS=1
#   bench_hexmg.{log,json}      step rates per size/precision and the device's STREAM triad
#   dick2011/                   `elastobench reproduce dick2011` (full: GPU + CPU 1/4/8/16 threads)
#   ncu_step.csv                Nsight Compute DRAM bytes of every kernel of one 269K fp32 step
#   hexmg_perf_check.json       269K fp32 steps/s and its bandwidth as a fraction of the triad by
#                               compulsory bytes and by measured DRAM bytes (never requested bytes)
# Budget: ~1.5 min tests + benchmarks, ~1 min ncu, ~6 min experiment.
set -uo pipefail
BIN=${1:?usage: gpu_session.sh BIN RESULTS_DIR}
RES=${2:?usage: gpu_session.sh BIN RESULTS_DIR}
mkdir -p "$RES"
status=0
nvidia-smi > "$RES/nvidia-smi.txt" 2>&1 || true
# The CUDA tests run in device_session.sh's `common` part (ctest -L gpu); EB_HEXMG_TESTS=1 runs them here too.
if [ "${EB_HEXMG_TESTS:-0}" = 1 ]; then
  "$BIN/test_hexmg_gpu" --gtest_output="json:$RES/test_hexmg_gpu.json" > "$RES/test_hexmg_gpu.log" 2>&1 || status=1
fi
"$BIN/bench_hexmg" --benchmark_filter="${EB_HEXMG_BENCH_FILTER:-cuda|Triad}" --benchmark_min_time=0.5 --benchmark_format=json \
  --benchmark_out="$RES/bench_hexmg.json" > "$RES/bench_hexmg.log" 2>&1 || status=1
if command -v ncu > /dev/null; then
  # Steps 3 and 4 of a run (the first two capture and warm the graph), every kernel of a step.
  timeout 200 ncu --csv --page raw --print-units base --cache-control none --clock-control none \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --launch-skip 450 --launch-count 225 \
    "$BIN/elastobench" run -m hexmg -b cuda -p fp32 -s dick2011-bunny --set mesh.target_elements=269000 --steps 4 \
    --warmup 0 -q -o /tmp/eb_ncu_step > "$RES/ncu_step.csv" 2> "$RES/ncu_step.err" || status=1
fi
# EB_DICK2011_PARTS (e.g. performance): only those parts here, the CPU-only ones added elsewhere
# with `reproduce dick2011 --parts ...` into the imported folder (one device call has 10 minutes).
"$BIN/elastobench" reproduce dick2011 --out "$RES" --no-report ${EB_DICK2011_PARTS:+--parts "$EB_DICK2011_PARTS"} \
  > "$RES/dick2011.log" 2>&1 || status=1
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
    out["requested_GB_per_s_269k_fp32"] = step["GB_per_s"]
    out["compulsory_GB_per_s_269k_fp32"] = step["compulsory_GB_per_s"]
    out["fraction_of_triad_compulsory"] = step["compulsory_GB_per_s"] / triad["GB_per_s"]
    out["meets_200_steps_per_s"] = step["steps_per_s"] >= 200
import csv
try:
    rows = list(csv.reader(open(f"{res}/ncu_step.csv")))
    head = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
    h = rows[head]; data = rows[head + 2:]
    def col(r, k):
        try: return float(r[h.index(k)].replace(",", ""))
        except ValueError: return 0.0
    dram = sum(col(r, "dram__bytes_read.sum") + col(r, "dram__bytes_write.sum") for r in data)
    out["ncu_kernels"] = len(data)
    out["dram_bytes_per_step"] = dram
    if step and triad:
        out["dram_GB_per_s_269k_fp32"] = dram * step["steps_per_s"] / 1e9
        out["fraction_of_triad_dram"] = out["dram_GB_per_s_269k_fp32"] / triad["GB_per_s"]
except (OSError, StopIteration) as e:
    out["ncu_error"] = str(e)
json.dump(out, open(f"{res}/hexmg_perf_check.json", "w"), indent=1)
print(json.dumps(out))
PY
exit $status
