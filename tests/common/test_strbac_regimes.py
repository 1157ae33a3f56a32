#!/usr/bin/env python3
"""analysis/strbac2015.py's Fig. 2 effects: a change between two regimes whose repeats' min-max
ranges overlap is "not significant", one outside them is given as a percentage, and rows of one
run each (results from before the repeats) say they have no spread. Table 3's totals carry the
repeats' range and Table 4's fp64/fp32 ratios the same significance rule. The section reports
another machine's run where its own machine's scaling rows are single runs and the other's have
repeats (source_folder), and says so.

    test_strbac_regimes.py ANALYSIS_DIR
"""
import json
import os
import sys
import tempfile

import pandas as pd

sys.path.insert(0, sys.argv[1])
import strbac2015 as s  # noqa: E402


def row(ms, lo=None, hi=None):
    d = {"ms_per_step": [ms]}
    if lo is not None:
        d.update({"ms_per_step_min": [lo], "ms_per_step_max": [hi], "repeats": [5]})
    return pd.DataFrame(d)


change, text, significant = s.regime_effect(row(1.0, 0.98, 1.03), row(1.02, 1.01, 1.05))
assert not significant and text.startswith("not significant (+2.0%"), text
change, text, significant = s.regime_effect(row(1.0, 0.99, 1.01), row(1.05, 1.04, 1.06))
assert significant and text == "+5.0%" and abs(change - 0.05) < 1e-12, text
change, text, significant = s.regime_effect(row(1.0), row(1.03))
assert not significant and text == "+3.0% (one run each, no spread)", text

# Table 3's total-time cells: the range scales the total with the time per step.
g = pd.DataFrame({"per_edge": [5, 10], "ms_per_step": [2.0, 4.0], "ms_per_step_min": [1.0, float("nan")],
                  "ms_per_step_max": [3.0, float("nan")]})
assert s.with_range(g, 5, 10.0) == "10.0 (5.00-15.0)", s.with_range(g, 5, 10.0)
assert s.with_range(g, 10, 20.0) == "20.0", s.with_range(g, 10, 20.0)

# Table 4: fp64/fp32 per size, "not significant" where the two precisions' ranges overlap.
def scaling_row(backend, prec, n, ms, lo, hi):
    return {"backend": backend, "precision": prec, "per_edge": n, "elements": n ** 3, "texture": 1, "threads": 2, "validity": "valid",
            "ms_per_step": ms, "ms_per_step_min": lo, "ms_per_step_max": hi, "repeats": 5}


sc = pd.DataFrame([scaling_row("cuda", "fp32", 10, 1.0, 0.99, 1.01), scaling_row("cuda", "fp64", 10, 1.5, 1.49, 1.52),
                   scaling_row("cuda", "fp32", 20, 1.0, 0.9, 1.1), scaling_row("cuda", "fp64", 20, 1.05, 1.0, 1.2)])
pub = {"values": {"fp64_throughput_fraction_best": {"value": 0.5, "cite": "Table 4"}}}
t4 = s.table4(sc, pub)
assert "| cuda | 10 | 1.00 (0.99-1.01) | 1.50 (1.49-1.52) | 1.50 |" in t4, t4
assert "| cuda | 20 | 1.00 (0.9-1.10) | 1.05 (1.00-1.20) | not significant (1.1; ranges overlap) |" in t4, t4

# source_folder: experiments/results/<device>/strbac2015 folders side by side.
root = tempfile.mkdtemp()
HEADER = ("backend,precision,threads,texture,damage,per_edge,elements,nodes,dt,steps_total,steps_timed,extrapolated,"
          "validity,ms_per_step,total_s,corner_ux,corner_uy,corner_uz,corner_rel_error,element_us,node_us,"
          "element_registers,element_gbps,stream_triad_gbps,bytes_per_step,bytes_convention,effective_gbps,"
          "fraction_of_triad,flops_per_step")
ROW = ("cuda,fp32,,1,0,10,1000,1331,0.000375,13335,13335,0,valid,0.00917,0.1222,0.0053163,0.0053155,-0.01,5.31e-05,"
       "7.33,5.18,48,18.6,3522,277924,compulsory,30.3,0.0086,379965")


def folder(device, repeats, gpu=True, quick=False):
    d = os.path.join(root, device, "strbac2015")
    os.makedirs(d)
    with open(os.path.join(d, "scaling.csv"), "w") as f:
        f.write(HEADER + (",repeats,ms_per_step_min,ms_per_step_max" if repeats else "") + "\n")
        f.write(ROW + (",5,0.00910,0.00997" if repeats else "") + "\n")
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"gpu": gpu, "quick": quick, "machine": {"cpu_model": "X", "cpu_threads": 4,
                                                           "gpu": {"name": f"GPU {device}"}}}, f)
    return d


single = folder("a_gpu", repeats=False)
cpu_only = folder("b_cpu", repeats=True, gpu=False)
assert s.source_folder(single) == single  # no other machine has a repeated GPU run yet
quick = folder("b_quick", repeats=True, quick=True)
assert s.source_folder(single) == single  # nor a full one
repeated = folder("c_gpu", repeats=True)
assert s.source_folder(single) == repeated, s.source_folder(single)
assert s.source_folder(repeated) == repeated
assert s.source_folder(cpu_only) == cpu_only  # its own rows have their repeats
text = s.build(single, os.path.join(root, "figures"))
assert "This section reports X (4 threads), GPU c_gpu" in text and "single runs without spread" in text, text[:800]
print("ok")
