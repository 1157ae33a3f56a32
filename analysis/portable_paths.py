"""Absolute paths of the machine that generated a report do not belong in it: the report is
committed and read elsewhere. portable_paths(text) rewrites every absolute path in a text:
inside the repository -> relative to the repository root; under a `shared/` folder (the
repository's sibling that holds papers and third-party data, README "Scenarios") ->
`../shared/...`, relative to the repository root too; anything else -> its file name.
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
    # Used by scripts/import_device_results.sh on the files it files: a GPU machine's results
    # name its own folders (/tmp/eb_hexmg/..., the checkout's path there).
    import sys
    files = []
    for a in sys.argv[1:]:
        if os.path.isdir(a):
            files += [os.path.join(r, n) for r, _, ns in os.walk(a) for n in ns]
        else:
            files.append(a)
    done = rewrite_files(sorted(files))
    print(f"portable_paths: rewrote absolute paths in {len(done)} of {len(files)} files")
