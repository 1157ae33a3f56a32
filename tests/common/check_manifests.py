#!/usr/bin/env python3
"""Checks the provenance that `elastobench reproduce` leaves: OUT/manifest.json lists the run's
experiments, and every OUT/NAME/manifest.json carries the same machine and build (git commit
included) and lists exactly NAME, so that the folder keeps its provenance when it is filed beside
experiments from other runs.   Usage: check_manifests.py OUT NAME..."""
import json
import os
import sys


def main(out, names):
    top = json.load(open(os.path.join(out, "manifest.json")))
    listed = [e["name"] for e in top["experiments"]]
    assert listed == names, f"top manifest lists {listed}, expected {names}"
    for name in names:
        own = json.load(open(os.path.join(out, name, "manifest.json")))
        assert [e["name"] for e in own["experiments"]] == [name], own["experiments"]
        assert own["build"] == top["build"], (own["build"], top["build"])
        assert own["machine"] == top["machine"]
        commit = own["build"].get("git_commit", "")
        assert len(commit.split("-")[0]) == 40 or commit == "unknown", f"git commit '{commit}'"
        assert own["experiments"][0]["seconds"] > 0
    print(f"manifests of {', '.join(names)}: OK")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
