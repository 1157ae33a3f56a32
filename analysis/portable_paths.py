"""Absolute paths of the machine that generated a report do not belong in it: the report is
committed and read elsewhere. portable_paths(text) rewrites every absolute path in a text:
inside the repository -> relative to the repository root; under a `shared/` folder (the
repository's sibling that holds papers and third-party data, README "Scenarios") ->
`../shared/...`, relative to the repository root too; anything else -> its file name.
The report applies it to what it writes; scripts/make_paths_portable.py applies it in place to
result files filed from another machine.
"""
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Two or more segments after a leading "/" that no word character, dot, colon or slash precedes
# (so "GB/s", "fp32/fp64", "2/3" and "https://..." stay as they are).
_ABSOLUTE = re.compile(r"(?<![\w.:/~-])/(?:[\w.+-]+/)+[\w.+-]+")


def portable_path(path):
    real = os.path.normpath(path)
    if real == REPO or real.startswith(REPO + os.sep):
        return os.path.relpath(real, REPO)
    parts = real.split(os.sep)
    if "shared" in parts:
        i = len(parts) - 1 - parts[::-1].index("shared")
        return "/".join([".."] + parts[i:])
    return os.path.basename(real)


def portable_paths(text):
    return _ABSOLUTE.sub(lambda m: portable_path(m.group(0)), text)
