#!/usr/bin/env python3
"""Per method (every one `elastobench list --json` reports with a CPU backend): bad elements and
failing runs end in the documented exit code, naming the element and the step.

usage: method_faults.py ELASTOBENCH [plain|sanitized]

  inverted element in the mesh file          exit 2, "<file>: element N ... is inverted"
  zero-volume element in the mesh file       exit 2, "<file>: element N ... degenerate"
  unconstrained body under gravity, dynamic  exit 0, valid: a free fall (the body moves down)
  unconstrained body, static solve           exit 1, naming the step and what failed there: an
                                             element (inverted) or the missed solver tolerance
  a load that inverts elements mid-run       exit 1, "element N inverted ... at step S"
  a mesh needing more memory than available  exit 1, the estimate and the limit, nothing written
  a model larger than the host's memory      exit 1, "out of host memory" (or the mesh's estimate
                                             and the limit), nothing written (RLIMIT_DATA 250 MB)
  an option of the method's section of the wrong type   exit 2 naming the key
Each method first runs the valid mesh file, so that a refusal is the bad element's doing.
"""
import concurrent.futures
import json
import os
import re
import resource
import subprocess
import sys
import tempfile

EB = os.path.abspath(sys.argv[1])


def run(args, cwd, data_limit=None):
    """elastobench ARGS; data_limit (bytes): the process's RLIMIT_DATA (`ulimit -d`), standing in
    for a host with that little memory."""
    def limit():
        resource.setrlimit(resource.RLIMIT_DATA, (data_limit, data_limit))
    r = subprocess.run([EB] + args, capture_output=True, text=True, cwd=cwd, timeout=300,
                       preexec_fn=limit if data_limit else None)
    return r.returncode, (r.stderr + r.stdout)


def check(results, name, ok, detail=""):
    """Records a case's outcome in results, a list of (passed, line) that main prints in order."""
    if ok:
        results.append((True, "ok   " + name))
    else:
        results.append((False, "FAIL %s: %s" % (name, detail.strip().splitlines()[-1] if detail.strip() else "")))


def msh_elements(path):
    lines = open(path).read().split("\n")
    start = lines.index("$Elements") + 2
    end = lines.index("$EndElements")
    return lines, start, end


def rewrite_element(src, dst, index, change):
    """Copies a .msh v2 file, changing the node list of element `index` (0-based)."""
    lines, start, end = msh_elements(src)
    fields = lines[start + index].split()
    ntags = int(fields[2])
    nodes = fields[3 + ntags:]
    lines[start + index] = " ".join(fields[:3 + ntags] + change(nodes))
    open(dst, "w").write("\n".join(lines))


# The runs that step the built-in beam use cubes of 0.05 m (80 of them; hexmg needs cubes): at the
# cantilever's own 0.02 m (1,250 cubes) the implicit methods' free falls and crushes took minutes
# of the sanitizer build's test time, and they fail (or fall) alike at either size. (Setting
# mesh.elements_per_edge instead would not do: the scenario's mesh.element_size overrides it.)
SMALL = ["--set", "mesh.element_size=0.05"]
# A host of 250 MB against the cantilever at 2.5 mm (640,000 cubes): its mesh fits, no method's
# model does. AddressSanitizer's shadow memory does not run under a data limit: that build skips it.
HOST_MEMORY = 250 * 1000 * 1000
HOST_ELEMENT_SIZE = 0.0025
SANITIZED = len(sys.argv) > 2 and sys.argv[2] == "sanitized"


def method_cases(m, info, tmp):
    """Every case of one method; returns its results (see check)."""
    results = []
    cube = os.path.join(tmp, "cube.off")
    common = ["-s", "cantilever", "--set", "time.dt=0", "--quiet"]
    base = ["run", "-m", m, "-b", "cpu"] + common
    kind = None
    for k in ("hex", "tet"):
        rc, _ = run(base + ["--set", "mesh.source=file", "--set", "mesh.file=%s/%s.msh" % (tmp, k), "--steps", "2",
                            "--out", "%s/ok_%s_%s" % (tmp, m, k)], tmp)
        if rc == 0:
            kind = k
            break
    check(results, "%s-valid-mesh-file" % m, kind is not None, "neither a hex nor a tet mesh file runs")
    if kind is None:
        return results
    for what, pattern in (("inverted", "is inverted"), ("degenerate", r"is degenerate \(zero volume\)")):
        path = "%s/%s_%s.msh" % (tmp, kind, what)
        out = "%s/%s_%s" % (tmp, m, what)
        rc, msg = run(base + ["--set", "mesh.source=file", "--set", "mesh.file=" + path, "--steps", "2",
                              "--out", out], tmp)
        check(results, "%s-%s-element" % (m, what),
              rc == 2 and re.search(re.escape(path) + r": element 2 \[index 1\] .*" + pattern, msg)
              and not os.path.exists(out), "exit %d: %s" % (rc, msg))
    # No fixed nodes: under gravity the body falls freely, a valid run.
    out = "%s/%s_free" % (tmp, m)
    rc, msg = run(base + ["--set", "boundary.fixed=[]", *SMALL, "--steps", "40",
                          "--out", out], tmp)
    ok = rc == 0
    if ok:
        s = json.load(open(os.path.join(out, "summary.json")))
        ok = s["validity"]["valid"] is True and s["displacement"]["min"][2] < 0
    check(results, "%s-unconstrained-dynamic" % m, ok, "exit %d: %s" % (rc, msg))
    if "static" in info["modes"]:
        # A static solve of a free body is singular: the run is invalid, naming the step. How it
        # fails is the method's: a solve that goes on inverts an element (bcsr-pcg, corot-cg); a
        # Newton solver that halves its updates to keep every element valid (nr-neohookean)
        # misses its tolerance instead.
        rc, msg = run(base + ["--set", "boundary.fixed=[]", *SMALL,
                              "--set", "time.mode=static", "--out", "%s/%s_free_static" % (tmp, m)], tmp)
        check(results, "%s-unconstrained-static" % m,
              rc == 1 and re.search(r"(element \d+ .*|missed the solver tolerance, the first) at step \d+", msg),
              "exit %d: %s" % (rc, msg))
    # The method's own section: every option given a value of the wrong type.
    for key, default in sorted(info["options"].items()):
        wrong = "seventeen" if not isinstance(default, str) else "17"
        out = "%s/%s_opt" % (tmp, m)
        rc, msg = run(base + ["--set", "%s.%s=%s" % (m, key, wrong), "--out", out], tmp)
        check(results, "%s-option-%s-wrong-type" % (m, key), rc == 2 and ("%s.%s" % (m, key)) in msg
              and not os.path.exists(out), "exit %d: %s" % (rc, msg))
    # Far more memory than any machine has: refused before allocating, giving both numbers.
    out = "%s/%s_huge" % (tmp, m)
    rc, msg = run(base + ["--set", "mesh.element_size=1e-5", "--out", out], tmp)
    check(results, "%s-memory-limit" % m, rc == 1 and re.search(r"mesh.element_size 1e-05\) needs at least [0-9.e+]+ GB "
                                                      r"of host memory; [0-9.e+]+ GB are available", msg)
          and not os.path.exists(out), "exit %d: %s" % (rc, msg))
    # A model whose mesh fits but whose method does not, on a host of HOST_MEMORY bytes: the
    # allocation that fails ends the run with exit 1 and the message, not the out-of-memory
    # killer (host_memory.h's data limit), and nothing is written.
    if not SANITIZED:
        out = "%s/%s_host" % (tmp, m)
        rc, msg = run(base + ["--set", "mesh.element_size=%g" % HOST_ELEMENT_SIZE, "--steps", "1", "--out", out], tmp,
                      data_limit=HOST_MEMORY)
        check(results, "%s-host-memory-exhausted" % m,
              rc == 1 and (re.search(r"out of host memory: an allocation failed", msg) or
                           re.search(r"needs at least [0-9.e+]+ GB of host memory", msg))
              and not os.path.exists(out), "exit %d: %s" % (rc, msg))
    # A closed surface voxelized at a spacing whose grid no machine holds, or to 2e9
    # voxels: refused before the grid's arrays are allocated, giving both numbers.
    for key, value, pattern in (
            ("mesh.element_size", "3e-5", r"a voxel grid of 33335 x 33335 x 33335 at spacing 3e-05 \(about "
                                          r"[0-9.e+]+ voxels inside\) needs at least [0-9.e+]+ GB of host memory; "
                                          r"[0-9.e+]+ GB are available"),
            ("mesh.target_elements", "2000000000", r"cube\.off: voxelizing to 2000000000 elements needs at "
                                                   r"least [0-9.e+]+ GB of host memory")):
        out = "%s/%s_voxels" % (tmp, m)
        rc, msg = run(base + ["--set", "mesh.source=file", "--set", "mesh.file=" + cube, "--set",
                              "boundary.fixed=[]", "--set", "mesh.element_size=0", "--set",
                              "%s=%s" % (key, value), "--out", out], tmp)
        check(results, "%s-voxel-memory-limit-%s" % (m, key.split(".")[1]), rc == 1 and re.search(pattern, msg)
              and not os.path.exists(out), "exit %d: %s" % (rc, msg))
    # A million g: elements invert within the run.
    rc, msg = run(base + ["--set", "boundary.gravity=[0,0,-1e7]", *SMALL,
                          "--steps", "60", "--out", "%s/%s_crush" % (tmp, m)], tmp)
    check(results, "%s-inverting-load" % m, rc == 1 and re.search(r"element \d+ inverted .* at step \d+", msg),
          "exit %d: %s" % (rc, msg))
    return results


def main():
    listing = json.loads(subprocess.run([EB, "list", "--json"], capture_output=True, text=True, check=True).stdout)
    methods = sorted({e["method"] for e in listing["methods"] if e["backend"] == "cpu"})
    info = listing["method_info"]
    with tempfile.TemporaryDirectory() as tmp:
        # Cubes of edge 0.1 along the cantilever's 1 m beam (hexmg needs equal cubes), and the
        # same box in tetrahedra.
        for kind in ("hex", "tet"):
            run(["mesh", "generate", "--type", kind, "--size", "1", "0.1", "0.1", "--divisions", "10", "1", "1",
                 "-o", "%s.vtu" % kind], tmp)
            run(["mesh", "convert", "%s.vtu" % kind, "%s.msh" % kind, "--msh-version", "2"], tmp)
        # Hexahedra: top and bottom faces exchanged (inverted), top face on the bottom one (flat).
        # Tetrahedra: two corners exchanged (inverted), a corner repeated (flat).
        bad = {
            "hex": {"inverted": lambda n: n[4:] + n[:4], "degenerate": lambda n: n[:4] + n[:4]},
            "tet": {"inverted": lambda n: [n[0], n[1], n[3], n[2]], "degenerate": lambda n: [n[0], n[1], n[2], n[2]]},
        }
        for kind, cases in bad.items():
            for what, change in cases.items():
                rewrite_element(os.path.join(tmp, kind + ".msh"), os.path.join(tmp, "%s_%s.msh" % (kind, what)), 1, change)
        # A closed unit cube as a triangle surface (for the voxelizer's limits).
        cube = os.path.join(tmp, "cube.off")
        with open(cube, "w") as f:
            f.write("OFF\n8 12 0\n")
            for i in range(8):
                f.write("%d %d %d\n" % (i & 1, (i >> 1) & 1, (i >> 2) & 1))
            for a, b, c in ((0, 2, 1), (1, 2, 3), (4, 5, 6), (5, 7, 6), (0, 1, 4), (1, 5, 4), (2, 6, 3), (3, 6, 7),
                            (0, 4, 2), (2, 4, 6), (1, 3, 5), (3, 7, 5)):
                f.write("3 %d %d %d\n" % (a, b, c))
        # The methods are independent (each its own output folders): two at a time, so that one
        # method's long runs do not leave the other core idle at the end of the CI test run.
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            per_method = list(pool.map(lambda m: method_cases(m, info[m], tmp), methods))
    fails = 0
    for results in per_method:
        for passed, line in results:
            fails += 0 if passed else 1
            print(line)
    print("%d methods, %d failures" % (len(methods), fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
