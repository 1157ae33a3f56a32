#!/usr/bin/python3
"""Rewrites absolute paths in result files in place, by the report's rule
(analysis/portable_paths.py): a GPU machine's results name its own folders (/tmp/eb_hexmg/...,
the checkout's path there), and no absolute path of any machine is committed
(tests/common/check_portable_paths.py checks). scripts/import_device_results.sh runs it on the
files it files.
    make_paths_portable.py FILE|DIR...
Text files only: a file with a NUL byte or that is not UTF-8 is left alone."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "analysis"))
from portable_paths import portable_paths  # noqa: E402


def rewrite_files(paths):
    """Rewrites text files in place (temporary file, then rename); returns the files changed.
    Binary files (a NUL byte, or not UTF-8) are left alone."""
    changed = []
    for path in paths:
        with open(path, "rb") as f:
            raw = f.read()
        if b"\0" in raw:
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        new = portable_paths(text)
        if new != text:
            tmp = path + ".portable.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(new)
            os.replace(tmp, path)
            changed.append(path)
    return changed


if __name__ == "__main__":
    files = []
    for a in sys.argv[1:]:
        if os.path.isdir(a):
            files += [os.path.join(r, n) for r, _, ns in os.walk(a) for n in ns]
        else:
            files.append(a)
    done = rewrite_files(sorted(files))
    print(f"make_paths_portable: rewrote absolute paths in {len(done)} of {len(files)} files")
