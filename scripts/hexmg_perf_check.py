#!/usr/bin/env python3
"""hexmg's headline on the GPU machine: 269K fp32 steps/s (bench_hexmg) and its bandwidth as a
fraction of the device's STREAM triad, by compulsory bytes and by the DRAM bytes that Nsight Compute
measured for every kernel of one step (ncu_step.csv), never by requested bytes. Run by
scripts/device_session.sh hexmg on its results folder; writes RESULTS_DIR/hexmg_perf_check.json.
    hexmg_perf_check.py RESULTS_DIR"""
import csv
import json
import sys

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
