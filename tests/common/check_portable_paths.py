#!/usr/bin/python3
"""No committed result, report or published-value file names an absolute path of the machine
that made it (issue 9): every text file under experiments/results/, paper/ and
analysis/published/ that git tracks must be left unchanged by analysis/portable_paths.py's
rewrite.   Usage: check_portable_paths.py REPO_ROOT"""
import os
import subprocess
import sys

root = os.path.abspath(sys.argv[1])
sys.path.insert(0, os.path.join(root, "analysis"))
from portable_paths import portable_paths  # noqa: E402

try:
    tracked = subprocess.run(["git", "-C", root, "ls-files", "experiments/results", "paper", "analysis/published"],
                             capture_output=True, text=True, check=True).stdout.split()
except (OSError, subprocess.CalledProcessError) as e:
    print(f"not a git checkout ({e}); nothing to check")
    sys.exit(77)
bad = []
for rel in tracked:
    path = os.path.join(root, rel)
    try:
        text = open(path, encoding="utf-8").read()
    except (UnicodeDecodeError, FileNotFoundError):
        continue
    if "\0" in text:
        continue
    for n, line in enumerate(text.splitlines(), 1):
        if portable_paths(line) != line:
            bad.append(f"{rel}:{n}: {line.strip()[:160]}")
            break
if bad:
    print("absolute paths in committed files (fix with: /usr/bin/python3 scripts/make_paths_portable.py FILE...):")
    print("\n".join(bad))
    sys.exit(1)
print(f"{len(tracked)} committed result/report files: no absolute paths")
