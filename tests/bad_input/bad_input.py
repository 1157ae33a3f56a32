#!/usr/bin/env python3
"""Bad input through the real CLI: every mesh format and every scenario key type.

usage: bad_input.py ELASTOBENCH [mesh|scenario|all]

Each case writes a file, runs `elastobench mesh convert FILE out.vtu` (meshes) or
`elastobench scenario check FILE` (scenarios) and requires exit 2, a message on stderr that
names the file and the line (text formats) or the key (scenarios), and no output file. The
cases are generated here from a small valid input per format and per key, so that adding a
format or a scenario key adds its cases.
"""
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

EB = sys.argv[1]
WHICH = sys.argv[2] if len(sys.argv) > 2 else "all"

# --- meshes ------------------------------------------------------------------------------------
# A template per text format: {X} is a vertex coordinate (default 1), {I} an element's vertex
# index (default valid), {N} the vertex count. The line holding each is found by search.
TET_FACES = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
TEMPLATES = {
    "off": ("OFF\n{N} 4 0\n0 0 0\n1 0 0\n0 {X} 0\n0 0 1\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 {I}\n",
            {"N": "4", "I": "3"}),
    "obj": ("v 0 0 0\nv 1 0 0\nv 0 {X} 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 {I}\n", {"I": "4"}),
    "ply": ("ply\nformat ascii 1.0\nelement vertex {N}\nproperty float x\nproperty float y\nproperty float z\n"
            "element face 4\nproperty list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 {X} 0\n0 0 1\n"
            "3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 {I}\n", {"N": "4", "I": "3"}),
    "stl": ("solid t\nfacet normal 0 0 0\nouter loop\nvertex 0 0 0\nvertex 0 {X} 0\nvertex 1 0 0\nendloop\nendfacet\n"
            "facet normal 0 0 0\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 0 1\nendloop\nendfacet\n"
            "facet normal 0 0 0\nouter loop\nvertex 0 0 0\nvertex 0 0 1\nvertex 0 1 0\nendloop\nendfacet\n"
            "facet normal 0 0 0\nouter loop\nvertex 1 0 0\nvertex 0 1 0\nvertex 0 0 1\nendloop\nendfacet\nendsolid t\n", {}),
    "msh1": ("$NOD\n{N}\n1 0 0 0\n2 1 0 0\n3 0 {X} 0\n4 0 0 1\n$ENDNOD\n$ELM\n1\n1 4 1 1 4 1 2 3 {I}\n$ENDELM\n",
             {"N": "4", "I": "4"}),
    "msh2": ("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n{N}\n1 0 0 0\n2 1 0 0\n3 0 {X} 0\n4 0 0 1\n$EndNodes\n"
             "$Elements\n1\n1 4 2 0 1 1 2 3 {I}\n$EndElements\n", {"N": "4", "I": "4"}),
    "msh4": ("$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 {N} 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 {X} 0\n0 0 1\n"
             "$EndNodes\n$Elements\n1 1 1 1\n3 1 4 1\n1 1 2 3 {I}\n$EndElements\n", {"N": "4", "I": "4"}),
    "mesh": ("MeshVersionFormatted 2\nDimension 3\nVertices\n{N}\n0 0 0 0\n1 0 0 0\n0 {X} 0 0\n0 0 1 0\n"
             "Tetrahedra\n1\n1 2 3 {I} 0\nEnd\n", {"N": "4", "I": "4"}),
    "vtk": ("# vtk DataFile Version 3.0\ntet\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS {N} float\n0 0 0\n1 0 0\n0 {X} 0\n"
            "0 0 1\nCELLS 1 5\n4 0 1 2 {I}\nCELL_TYPES 1\n10\n", {"N": "4", "I": "3"}),
    "vtu": ('<?xml version="1.0"?>\n<VTKFile type="UnstructuredGrid" version="0.1">\n<UnstructuredGrid>\n'
            '<Piece NumberOfPoints="{N}" NumberOfCells="1">\n<Points>\n'
            '<DataArray type="Float32" NumberOfComponents="3" format="ascii">\n0 0 0 1 0 0\n0 {X} 0 0 0 1\n</DataArray>\n'
            '</Points>\n<Cells>\n<DataArray type="Int32" Name="connectivity" format="ascii">\n0 1 2 {I}\n</DataArray>\n'
            '<DataArray type="Int32" Name="offsets" format="ascii">4</DataArray>\n'
            '<DataArray type="UInt8" Name="types" format="ascii">10</DataArray>\n</Cells>\n</Piece>\n'
            '</UnstructuredGrid>\n</VTKFile>\n', {"N": "4", "I": "3"}),
    "vtp": ('<?xml version="1.0"?>\n<VTKFile type="PolyData" version="0.1">\n<PolyData>\n'
            '<Piece NumberOfPoints="{N}" NumberOfPolys="4">\n<Points>\n'
            '<DataArray type="Float32" NumberOfComponents="3" format="ascii">\n0 0 0 1 0 0\n0 {X} 0 0 0 1\n</DataArray>\n'
            '</Points>\n<Polys>\n<DataArray type="Int32" Name="connectivity" format="ascii">\n0 2 1 0 1 3 0 3 2 1 2 {I}\n'
            '</DataArray>\n<DataArray type="Int32" Name="offsets" format="ascii">3 6 9 12</DataArray>\n</Polys>\n</Piece>\n'
            '</PolyData>\n</VTKFile>\n', {"N": "4", "I": "3"}),
}
INDEX_ARRAY = {"vtk": "CELLS", "vtu": 'Name="connectivity"', "vtp": 'Name="connectivity"'}
EXTENSION = {"msh1": "msh", "msh2": "msh", "msh4": "msh"}

# Duplicated input, where the format has something to duplicate: a node tag, a section, a piece.
DUPLICATED = {
    "ply": lambda t: t.replace("element face 4", "element vertex 4\nproperty float x\nproperty float y\nproperty float z\nelement face 4", 1),
    "msh1": lambda t: t.replace("2 1 0 0", "1 1 0 0", 1),
    "msh2": lambda t: t.replace("2 1 0 0", "1 1 0 0", 1),
    "msh4": lambda t: t.replace("1\n2\n3\n4\n", "1\n1\n3\n4\n", 1),
    "mesh": lambda t: t.replace("Tetrahedra", "Vertices\n1\n5 5 5 0\nTetrahedra", 1),
    "vtk": lambda t: t.replace("CELLS", "POINTS 1 float\n5 5 5\nCELLS", 1),
    "vtu": lambda t: t.replace("</Piece>", "</Piece>\n<Piece NumberOfPoints=\"0\" NumberOfCells=\"0\"></Piece>", 1),
    "vtp": lambda t: t.replace("</Piece>", "</Piece>\n<Piece NumberOfPoints=\"0\" NumberOfPolys=\"0\"></Piece>", 1),
}
# Formats without indices (STL stores coordinates per triangle) have no out-of-range index, and
# OFF, OBJ and STL have nothing that can be given twice.


def fill(template, defaults, **values):
    v = {"X": "1", "N": "4", "I": "3"}
    v.update(defaults)
    v.update(values)
    return template.replace("{X}", v["X"]).replace("{N}", v["N"]).replace("{I}", v["I"])


def line_of(template, marker):
    return template[:template.index(marker)].count("\n") + 1


def mesh_cases():
    cases = []
    for fmt, (template, defaults) in TEMPLATES.items():
        ext = EXTENSION.get(fmt, fmt)
        x_line = line_of(template, "{X}")
        valid = fill(template, defaults)
        add = lambda kind, text, line: cases.append(("mesh", "%s-%s" % (fmt, kind), "%s_%s.%s" % (fmt, kind, ext), text, line))
        add("valid", valid, 0)  # the baseline must read, or every other case proves nothing
        add("malformed", fill(template, defaults, X="1.0x"), x_line)
        add("nan", fill(template, defaults, X="nan"), x_line)
        add("inf", fill(template, defaults, X="-inf"), x_line)
        add("overflow", fill(template, defaults, X="1e999"), x_line)
        add("truncated", valid[:len(valid) * 2 // 5], -1)
        if "{I}" in template:
            # VTK readers check indices once the arrays are read: they name the line where the
            # cell array starts, and the cell.
            i_line = line_of(template, INDEX_ARRAY[fmt]) if fmt in INDEX_ARRAY else line_of(template, "{I}")
            add("index-out-of-range", fill(template, defaults, I="9"), i_line)
            # OBJ counts negative indices back from the latest vertex: -9 is out of range there.
            add("index-negative", fill(template, defaults, I="-9" if fmt == "obj" else "-2"), i_line)
            # Legacy VTK reads its cell list value by value and names the value's line.
            add("index-wrong-type", fill(template, defaults, I="2.5"), line_of(template, "{I}") if fmt == "vtk" else i_line)
        if "{N}" in template:
            n_line = line_of(template, "{N}")
            add("count-huge", fill(template, defaults, N="1000000000000"), n_line)
            add("count-negative", fill(template, defaults, N="-4"), n_line)
            add("count-wrong-type", fill(template, defaults, N="four"), n_line)
        if fmt in DUPLICATED:
            add("duplicated", DUPLICATED[fmt](valid), -1)
    cases += tetgen_cases()
    return cases


def tetgen_cases():
    """TetGen's two files: the .node file's coordinates and count, the .ele file's indices."""
    node = "# nodes\n{N} 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 {X} 0\n4 0 0 1\n"
    ele = "1 4 0\n1 1 2 3 {I}\n"
    defaults = {"N": "4", "I": "4"}
    cases = []
    add = lambda kind, n, e, expect: cases.append(("mesh", "tetgen-" + kind, "tetgen_%s.node" % kind, (n, e), expect))
    x_line, n_line, i_line = line_of(node, "{X}"), line_of(node, "{N}"), line_of(ele, "{I}")
    add("valid", fill(node, defaults), fill(ele, defaults), 0)
    for kind, x in (("malformed", "1.0x"), ("nan", "nan"), ("inf", "-inf"), ("overflow", "1e999")):
        add(kind, fill(node, defaults, X=x), fill(ele, defaults), (".node", x_line))
    add("truncated", fill(node, defaults)[:40], fill(ele, defaults), (".node", -1))
    for kind, i in (("index-out-of-range", "9"), ("index-negative", "-2"), ("index-wrong-type", "2.5")):
        add(kind, fill(node, defaults), fill(ele, defaults, I=i), (".ele", i_line))
    for kind, n in (("count-huge", "1000000000000"), ("count-negative", "-4"), ("count-wrong-type", "four")):
        add(kind, fill(node, defaults, N=n), fill(ele, defaults), (".node", n_line))
    add("duplicated", fill(node, defaults).replace("2 1 0 0", "1 1 0 0"), fill(ele, defaults), (".node", x_line - 1))
    return cases


BINARY_CONVERSIONS = [  # (name, extension, extra convert flags): what our writers produce
    ("stl-binary", "stl", []), ("ply-binary", "ply", []), ("msh2-ascii", "msh", ["--msh-version", "2"]),
    ("vtk-binary", "vtk", []), ("vtu-compressed", "vtu", []), ("vtu-raw", "vtu", ["--no-compress"]),
    ("vtp-compressed", "vtp", []), ("vtp-raw", "vtp", ["--no-compress"]),
]


def binary_cases(tmp):
    """Truncated and corrupted copies of files our writers produce (no line numbers in binary data)."""
    box = os.path.join(tmp, "box.vtu")
    subprocess.run([EB, "mesh", "generate", "--type", "tet", "--elements-per-edge", "2", "-o", box], check=True,
                   capture_output=True)
    surface = os.path.join(tmp, "surface.off")
    with open(surface, "w") as f:
        f.write(fill(*TEMPLATES["off"]))
    cases = []
    for name, ext, flags in BINARY_CONVERSIONS:
        path = os.path.join(tmp, "src_%s.%s" % (name, ext))
        src = surface if ext in ("stl", "ply", "vtp") else box
        subprocess.run([EB, "mesh", "convert", src, path] + flags, check=True, capture_output=True)
        data = open(path, "rb").read()
        cases.append(("mesh", name + "-truncated", "%s_truncated.%s" % (name, ext), data[:len(data) * 3 // 5], None))
        # Bytes flipped in the second half (the data, not the header). Binary STL holds only
        # coordinates, which any bytes make, so a NaN is written into its first one instead.
        bad = bytearray(data)
        if ext == "stl":
            bad[84 + 12:84 + 16] = b"\x00\x00\xc0\x7f"
        else:
            for k in range(len(bad) // 2, len(bad), 7):
                bad[k] ^= 0xFF
        cases.append(("mesh", name + "-corrupt", "%s_corrupt.%s" % (name, ext), bytes(bad), None))
    return cases


# --- scenarios ---------------------------------------------------------------------------------
def flatten(doc, prefix=""):
    out = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += flatten(v, prefix + k + ".")
    elif isinstance(doc, list) and doc and isinstance(doc[0], dict):
        out += flatten(doc[0], prefix + "0.")
    else:
        out.append((prefix[:-1], doc))
    return out


def set_key(doc, key, value):
    parts = key.split(".")
    node = doc
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node[p]
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


# Values out of their documented range, by key (README's scenario table; validate_scenario).
OUT_OF_RANGE = {
    "material.youngs_modulus": -1.0, "material.poisson_ratio": 0.5, "material.density": 0.0,
    "time.dt": -0.01, "time.steps": -5, "time.damping": -1.0, "time.courant": 0.0, "time.end_time": -1.0,
    "time.max_steps": 0, "time.rest_velocity": -1.0, "mesh.element_size": -0.1, "mesh.elements_per_edge": -1,
    "mesh.size": [1.0, -0.1, 0.1], "output.vtk_every": -1, "output.probe_every": -1,
    "boundary.fixed.0.where.tolerance": -1.0, "static.load_steps": 0, "static.tolerance": 0.0,
    "static.max_iterations": 0, "mesh.scale": 0.0, "boundary.fixed.0.components": "xw",
    "time.rayleigh_stiffness": -1.0, "boundary.ground.stiffness": -1.0,
}
ENUM_KEYS = {"mesh.source", "time.mode", "boundary.fixed.0.where.kind", "mesh.tetrahedralizer", "mesh.cube_split"}


def scenario_docs():
    out = {}
    for name in ("cantilever", "cube-compression"):
        r = subprocess.run([EB, "scenario", "show", name, "--format", "json"], check=True, capture_output=True, text=True)
        out[name] = json.loads(r.stdout)
    return out


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, float) and v != v:
        return "nan"
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return json.dumps(v)


def scenario_cases(tmp):
    cases = []
    docs = scenario_docs()
    base = docs["cantilever"]
    # The lists of tables the built-in scenario leaves empty get one entry each, so that their
    # keys are covered too; the baseline case checks that the result is a valid scenario.
    curve = {"shape": "linear", "start": 0.0, "duration": 0.5}
    plane = {"kind": "plane", "point": [1.0, 0.0, 0.0], "normal": [1.0, 0.0, 0.0], "tolerance": 0.001}
    base["boundary"]["point_forces"] = [{"position": [1.0, 0.05, 0.05], "force": [0.0, 0.0, -1.0], "curve": dict(curve)}]
    base["boundary"]["surface_forces"] = [{"where": dict(plane), "traction": [0.0, 0.0, -1.0], "curve": dict(curve)}]
    base["boundary"]["prescribed"] = [{"where": {"kind": "box", "min": [0.9, 0.0, 0.0], "max": [1.0, 0.1, 0.1]},
                                       "components": "z", "displacement": [0.0, 0.0, -0.01], "curve": dict(curve)}]
    base["material"]["overrides"] = [{"min": [0.0, 0.0, 0.0], "max": [0.5, 0.1, 0.1], "material_id": -1,
                                      "youngs_modulus": 2e8, "poisson_ratio": 0.3, "density": 1200.0}]
    cases.append(("scenario", "baseline", "baseline.json", json.loads(json.dumps(base)), None))
    leaves = [(k, v) for k, v in flatten(base) if k.split(".")[0] not in ("name", "description")]
    for key, value in leaves:
        def variant(kind, new, fmt="json"):
            doc = json.loads(json.dumps(base))
            set_key(doc, key, new)
            cases.append(("scenario", "%s-%s-%s" % (key, kind, fmt), "%s_%s.%s" % (key.replace(".", "_"), kind, fmt), doc, key))
        # Wrong type: a number where text is expected and text where anything else is.
        variant("wrong-type", 17 if isinstance(value, str) else "seventeen")
        if isinstance(value, float) or (isinstance(value, list) and value and isinstance(value[0], float)):
            for kind, bad in (("nan", float("nan")), ("inf", float("inf"))):
                variant(kind, [bad] + value[1:] if isinstance(value, list) else bad, "toml")
        if isinstance(value, list) and value and not isinstance(value[0], dict):
            variant("wrong-length", value + value[:1])
        if key in OUT_OF_RANGE:
            variant("out-of-range", OUT_OF_RANGE[key])
        if key in ENUM_KEYS:
            variant("unknown-choice", "nosuch")
    for key, value in OUT_OF_RANGE.items():
        if key not in dict(leaves):
            doc = json.loads(json.dumps(base))
            try:
                set_key(doc, key, value)
            except (KeyError, IndexError):
                continue
            cases.append(("scenario", key + "-out-of-range-added", key.replace(".", "_") + "_oor_added.json", doc, key))
    # Duplicated keys, malformed and truncated files (TOML: the line; JSON: the key or position).
    toml_text = subprocess.run([EB, "scenario", "show", "cantilever"], check=True, capture_output=True, text=True).stdout
    lines = toml_text.splitlines()
    mesh_line = next(i for i, l in enumerate(lines) if l.strip() == "[mesh]")
    dup = lines[:mesh_line + 2] + [lines[mesh_line + 1]] + lines[mesh_line + 2:]
    cases.append(("scenario-text", "toml-duplicated-key", "dup.toml", "\n".join(dup) + "\n", ":%d:" % (mesh_line + 3)))
    dup_table = lines + ["[mesh]", "elements_per_edge = 3"]
    cases.append(("scenario-text", "toml-duplicated-table", "dup_table.toml", "\n".join(dup_table) + "\n", ":%d:" % (len(lines) + 1)))
    json_text = json.dumps(base, indent=1)
    k = json_text.index('"material": {') + len('"material": {')
    cases.append(("scenario-text", "json-duplicated-key", "dup.json", json_text[:k] + '"density": 5, ' + json_text[k:],
                  "material.density"))
    bad = list(lines)
    bad[mesh_line + 1] = bad[mesh_line + 1].split("=")[0] + "= 1.0.0"
    cases.append(("scenario-text", "toml-malformed", "malformed.toml", "\n".join(bad) + "\n", ":%d:" % (mesh_line + 2)))
    cases.append(("scenario-text", "toml-truncated", "truncated.toml", toml_text[:toml_text.index("[", len(toml_text) // 2) + 3], ":"))
    cases.append(("scenario-text", "json-truncated", "truncated.json", json_text[:len(json_text) // 2], "invalid JSON"))
    cases.append(("scenario-text", "json-malformed", "malformed.json", json_text.replace(":", "=", 1), "invalid JSON"))
    cases.append(("scenario-text", "toml-non-ascii-bare-key", "non_ascii.toml",
                  "\n".join(lines[:mesh_line + 1] + ["\u00e9lements = 3"] + lines[mesh_line + 1:]) + "\n", ":%d:" % (mesh_line + 2)))
    cases.append(("scenario-text", "json-number-overflow", "overflow.json", json_text.replace('"density": 1000.0', '"density": 1e400', 1),
                  "invalid JSON"))
    cases.append(("scenario-text", "json-deep", "deep.json", '{"mesh": ' + "[" * 5000 + "]" * 5000 + "}", "deep"))
    return cases


def run_case(tmp, case):
    kind, name, file_name, content, expect = case
    folder = os.path.join(tmp, "case_%08x" % (abs(hash(name)) & 0xFFFFFFFF))
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, file_name)
    if kind == "scenario":
        if file_name.endswith(".toml"):
            text = to_toml(content)
        else:
            text = json.dumps(content, indent=1, allow_nan=True)
        open(path, "w").write(text)
    elif isinstance(content, tuple):  # TetGen: .node and .ele
        open(path, "w").write(content[0])
        open(os.path.splitext(path)[0] + ".ele", "w").write(content[1])
    elif isinstance(content, bytes):
        open(path, "wb").write(content)
    else:
        open(path, "w").write(content)
    out = os.path.join(folder, "out.vtu")
    cmd = [EB, "mesh", "convert", path, out] if kind == "mesh" else [EB, "scenario", "check", path]
    r = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=120)
    msg = (r.stderr + r.stdout).strip()
    problems = []
    if kind == "mesh" and expect == 0:
        if r.returncode != 0:
            problems.append("the valid baseline failed (exit %d)" % r.returncode)
        return name, problems, msg
    if kind == "scenario" and expect is None:
        if r.returncode != 0:
            problems.append("the valid baseline failed (exit %d)" % r.returncode)
        return name, problems, msg
    if r.returncode != 2:
        problems.append("exit %d, expected 2" % r.returncode)
    if kind == "mesh":
        if isinstance(expect, tuple):  # (extension of the file named, line)
            path = os.path.splitext(path)[0] + expect[0]
            expect = expect[1]
        if expect is None:
            pattern = re.escape(path) + r"[:]"
        elif expect == -1:
            pattern = re.escape(path) + r":\d+: "
        else:
            pattern = re.escape(path) + r":%d: " % expect
        if not re.search(pattern, msg):
            problems.append("message lacks /%s/" % pattern)
        if os.path.exists(out):
            problems.append("left an output file")
    elif kind == "scenario":
        if path not in msg or expect not in msg:
            problems.append("message lacks the file and the key '%s'" % expect)
    else:
        if path not in msg or expect not in msg:
            problems.append("message lacks the file and '%s'" % expect)
    return name, problems, msg


def to_toml(doc):
    """Scenario JSON -> TOML text, written here so that non-finite values can be expressed."""
    lines = []

    def table(prefix, d):
        scalars = [(k, v) for k, v in d.items() if not isinstance(v, dict) and not (isinstance(v, list) and v and isinstance(v[0], dict))]
        if prefix:
            lines.append("[%s]" % prefix)
        for k, v in scalars:
            lines.append("%s = %s" % (json.dumps(k), inline(v)))
        for k, v in d.items():
            sub = (prefix + "." if prefix else "") + json.dumps(k)
            if isinstance(v, dict):
                table(sub, v)
            elif isinstance(v, list) and v and isinstance(v[0], dict):
                for item in v:
                    lines.append("[[%s]]" % sub)
                    for ik, iv in item.items():
                        lines.append("%s = %s" % (json.dumps(ik), inline(iv)))

    def inline(v):
        if isinstance(v, dict):
            return "{" + ", ".join("%s = %s" % (json.dumps(k), inline(x)) for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "[" + ", ".join(inline(x) for x in v) + "]"
        return toml_value(v)

    table("", doc)
    return "\n".join(lines) + "\n"


def main():
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        if WHICH in ("mesh", "all"):
            cases += mesh_cases() + binary_cases(tmp)
        if WHICH in ("scenario", "all"):
            cases += scenario_cases(tmp)
        failures = 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            for name, problems, msg in pool.map(lambda c: run_case(tmp, c), cases):
                if problems:
                    failures += 1
                    print("FAIL %s: %s\n     %s" % (name, "; ".join(problems), msg.splitlines()[-1] if msg else "(no message)"))
                else:
                    print("ok   %s" % name)
        print("%d cases, %d failures" % (len(cases), failures))
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
