#!/usr/bin/python3
"""Runs each GPU test binary once, whole (BINARY or BINARY:GTEST_FILTER), and fails when one exits
non-zero or reports a failed case. On a machine without a usable CUDA device every case skips
itself, so this checks the skip path binary by binary in one process each, instead of ctest's
process per case (scripts/test.sh then leaves label `gpu` out). On a device machine the cases
run for real; `ctest -L gpu` is the way to run them there, case by case.
usage: gpu_binaries_once.py BINARY[:FILTER]..."""
import re
import subprocess
import sys

failed = []
for spec in sys.argv[1:]:
    binary, _, gtest_filter = spec.partition(":")
    args = [binary] + (["--gtest_filter=" + gtest_filter] if gtest_filter else [])
    r = subprocess.run(args, capture_output=True, text=True, timeout=550)
    out = r.stdout + r.stderr
    ran = re.search(r"\[==========\] (\d+) tests? from \d+ test suites? ran", out)
    skipped = re.search(r"\[  SKIPPED \] (\d+) tests?", out)
    bad = re.findall(r"^\[  FAILED  \] (\S+)", out, flags=re.M)
    name = binary.rsplit("/", 1)[-1] + (" " + gtest_filter if gtest_filter else "")
    if r.returncode != 0 or bad or not ran or int(ran.group(1)) == 0:
        failed.append(name)
        print(f"FAIL {name}: exit {r.returncode}, failed {sorted(set(bad))[:10]}\n{out[-3000:]}")
    else:
        print(f"ok   {name}: {ran.group(1)} cases, {skipped.group(1) if skipped else 0} skipped")
print(f"{len(sys.argv) - 1 - len(failed)} of {len(sys.argv) - 1} GPU test binaries exit 0 with no failed case")
sys.exit(1 if failed else 0)
