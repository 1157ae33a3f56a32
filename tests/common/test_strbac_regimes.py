#!/usr/bin/env python3
"""analysis/strbac2015.py's Fig. 2 effects: a change between two regimes whose repeats' min-max
ranges overlap is "not significant", one outside them is given as a percentage, and rows of one
run each (results from before the repeats) say they have no spread.

    test_strbac_regimes.py ANALYSIS_DIR
"""
import sys

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
print("ok")
