#!/usr/bin/python3
"""scripts/paraview_picture.sh end to end: a real CLI run rendered by ParaView (pvbatch) into a
PNG that shows the body coloured by |displacement| (the README's picture is made this way).

usage: check_paraview_picture.py PICTURE_SH BUILD_DIR WORK_DIR
Exit 77 (skipped) only when pvbatch is not installed."""
import os
import shutil
import subprocess
import sys

import matplotlib.image as mpimg
import numpy as np

script, build, work = sys.argv[1:4]
if shutil.which("pvbatch") is None:
    print("pvbatch is not installed (Debian paraview); skipping")
    sys.exit(77)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
out = os.path.join(work, "picture.png")
# A small bunny, few steps: the check is the pipeline, not the physics.
r = subprocess.run(["bash", script, build, out, "test bunny", "-m", "hexmg", "-s", "dick2011-bunny",
                    "--set", "mesh.target_elements=3000", "--steps", "6"], capture_output=True, text=True, timeout=500)
print(r.stdout[-2000:], r.stderr[-2000:])
assert r.returncode == 0, f"paraview_picture.sh exit {r.returncode}"
assert "magnified x" in r.stdout, "the script did not report its frame"
img = mpimg.imread(out)
assert img.shape[0] == 800 and img.shape[1] == 1200, img.shape
rgb = img[..., :3]
body = np.any(rgb < 0.9, axis=2)  # anything but the white background
assert body.mean() > 0.05, f"only {body.mean():.1%} of the picture is not background"
# Viridis colours |u|: the fixed base is dark purple, the sagging ear green-yellow.
purple = (rgb[..., 2] > rgb[..., 1] + 0.1) & (rgb[..., 0] > 0.2) & (rgb[..., 1] < 0.3)
green = (rgb[..., 1] > rgb[..., 0] + 0.1) & (rgb[..., 1] > rgb[..., 2])
assert purple.sum() > 1000, f"no colour-mapped body ({purple.sum()} purple pixels)"
assert green.sum() > 50, f"no displaced region coloured ({green.sum()} green pixels)"
print(f"ok: {body.mean():.1%} of the picture is the body, {purple.sum()} purple and {green.sum()} green pixels")
