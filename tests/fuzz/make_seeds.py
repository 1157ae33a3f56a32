#!/usr/bin/env python3
"""Seed corpora for the fuzz targets (tests/fuzz/README.md).

usage: make_seeds.py ELASTOBENCH MESH_DATA_DIR OUT_DIR   (ELASTOBENCH "-": only the files not made by it)

OUT_DIR/<target>/ gets: the real meshes of MESH_DATA_DIR in that target's format (fresh copies:
the fuzzer writes into its corpus folder, and the shared data must never be touched), a small
box written by `elastobench mesh convert` in every format and variant the writers produce,
hand-written ASCII variants the writers do not produce, every built-in scenario as TOML and
JSON, `--set` lines, and the summary.json of a short run.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

TARGET_EXT = {
    "mesh_off": [".off"], "mesh_obj": [".obj"], "mesh_ply": [".ply"], "mesh_stl": [".stl"],
    "mesh_msh": [".msh"], "mesh_medit": [".mesh"], "mesh_vtk": [".vtk"], "mesh_vtu": [".vtu"],
    "mesh_vtp": [".vtp"],
}

TET = "0 0 0\n1 0 0\n0 1 0\n0 0 1\n"
HAND_WRITTEN = {
    "mesh_ply": {
        "ascii.ply": "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
                     "element face 4\nproperty list uchar int vertex_indices\nend_header\n" + TET +
                     "3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n",
    },
    "mesh_stl": {
        "ascii.stl": "solid t\n" + "".join(
            "facet normal 0 0 0\nouter loop\n" + "".join("vertex %s\n" % v for v in tri) + "endloop\nendfacet\n"
            for tri in [("0 0 0", "0 1 0", "1 0 0"), ("0 0 0", "1 0 0", "0 0 1"),
                        ("0 0 0", "0 0 1", "0 1 0"), ("1 0 0", "0 1 0", "0 0 1")]) + "endsolid t\n",
    },
    "mesh_msh": {
        "v1.msh": "$NOD\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$ENDNOD\n$ELM\n1\n1 4 1 1 4 1 2 3 4\n$ENDELM\n",
        "v40.msh": "$MeshFormat\n4 0 8\n$EndMeshFormat\n$Nodes\n1 4\n1 3 0 4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n"
                   "$EndNodes\n$Elements\n1 1\n1 3 4 1\n1 1 2 3 4\n$EndElements\n",
        "physical.msh": "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n3 7 \"body\"\n$EndPhysicalNames\n"
                        "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n$Elements\n2\n1 4 2 7 1 1 2 3 4\n"
                        "2 2 2 7 1 1 2 3\n$EndElements\n",
    },
    "mesh_medit": {
        "skip.mesh": "MeshVersionFormatted 2\nDimension 3\nVertices\n4\n" + "".join(l + " 0\n" for l in TET.splitlines()) +
                     "Edges\n1\n1 2 0\nTriangles\n1\n1 3 2 0\nTetrahedra\n1\n1 2 3 4 5\nCorners\n1\n1\nEnd\n",
    },
    "mesh_vtk": {
        "ascii.vtk": "# vtk DataFile Version 3.0\ntet\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 4 float\n" + TET +
                     "CELLS 1 5\n4 0 1 2 3\nCELL_TYPES 1\n10\nCELL_DATA 1\nSCALARS material_id int 1\n"
                     "LOOKUP_TABLE default\n3\nPOINT_DATA 4\nVECTORS u double\n" + "0 0 0\n" * 4,
        "v51.vtk": "# vtk DataFile Version 5.1\ntet\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 4 float\n" + TET +
                   "CELLS 2 4\nOFFSETS vtktypeint64\n0 4\nCONNECTIVITY vtktypeint64\n0 1 2 3\nCELL_TYPES 1\n10\n"
                   "CELL_DATA 1\nFIELD FieldData 1\ngmsh:physical 1 1 int\n2\n",
        "polydata.vtk": "# vtk DataFile Version 3.0\ntri\nASCII\nDATASET POLYDATA\nPOINTS 4 float\n" + TET +
                        "POLYGONS 4 16\n3 0 2 1\n3 0 1 3\n3 0 3 2\n3 1 2 3\n",
    },
    "mesh_vtu": {
        "ascii.vtu": "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\">\n<UnstructuredGrid>\n"
                     "<Piece NumberOfPoints=\"4\" NumberOfCells=\"1\">\n<Points>\n"
                     "<DataArray type=\"Float32\" NumberOfComponents=\"3\" format=\"ascii\">" + TET.replace("\n", " ") +
                     "</DataArray>\n</Points>\n<Cells>\n<DataArray type=\"Int32\" Name=\"connectivity\" format=\"ascii\">"
                     "0 1 2 3</DataArray>\n<DataArray type=\"Int32\" Name=\"offsets\" format=\"ascii\">4</DataArray>\n"
                     "<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">10</DataArray>\n</Cells>\n"
                     "<CellData>\n<DataArray type=\"Int32\" Name=\"CellEntityIds\" format=\"ascii\">1</DataArray>\n"
                     "</CellData>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n",
    },
}


def inline_binary_vtu():
    """A .vtu with base64 inline ("binary") arrays and UInt32 headers, as VTK writes by default."""
    import base64

    def array(name, vtype, fmt, values, comps=1):
        raw = struct.pack("<%d%s" % (len(values), fmt), *values)
        text = base64.b64encode(struct.pack("<I", len(raw))).decode() + base64.b64encode(raw).decode()
        attr = ' Name="%s"' % name if name else ""
        return '<DataArray type="%s"%s NumberOfComponents="%d" format="binary">%s</DataArray>\n' % (vtype, attr, comps, text)

    pts = [float(x) for x in TET.split()]
    return ('<?xml version="1.0"?>\n<VTKFile type="UnstructuredGrid" version="0.1" byte_order="LittleEndian">\n'
            '<UnstructuredGrid>\n<Piece NumberOfPoints="4" NumberOfCells="1">\n<Points>\n' +
            array("", "Float64", "d", pts, 3) + "</Points>\n<Cells>\n" +
            array("connectivity", "Int64", "q", [0, 1, 2, 3]) + array("offsets", "Int64", "q", [4]) +
            array("types", "UInt8", "B", [10]) + "</Cells>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n")


def copy_fresh(src, dst):
    # A new file with the source's bytes: never a link back into the shared data.
    with open(src, "rb") as i, open(dst, "wb") as o:
        shutil.copyfileobj(i, o)


def run(args, **kw):
    return subprocess.run(args, check=True, capture_output=True, text=True, **kw)


def main():
    eb, data_dir, out = sys.argv[1], sys.argv[2], sys.argv[3]
    for target in list(TARGET_EXT) + ["mesh_tetgen", "scenario_toml", "scenario_json", "scenario_set", "results_json"]:
        os.makedirs(os.path.join(out, target), exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for target, files in HAND_WRITTEN.items():
            for name, text in files.items():
                with open(os.path.join(out, target, name), "w") as f:
                    f.write(text)
        with open(os.path.join(out, "mesh_vtu", "inline_binary.vtu"), "w") as f:
            f.write(inline_binary_vtu())
        with open(os.path.join(out, "mesh_tetgen", "tet.txt"), "w") as f:
            f.write("# node\n4 3 1 1\n1 0 0 0 7 1\n2 1 0 0 7 1\n3 0 1 0 7 1\n4 0 0 1 7 0\n---\n1 4 1\n1 1 2 3 4 5\n")
        for name in sorted(os.listdir(data_dir)):
            ext = os.path.splitext(name)[1].lower()
            for target, exts in TARGET_EXT.items():
                if ext in exts:
                    copy_fresh(os.path.join(data_dir, name), os.path.join(out, target, name))
        if eb == "-":
            return
        box = os.path.join(tmp, "box.vtu")
        run([eb, "mesh", "generate", "--type", "tet", "--elements-per-edge", "1", "-o", box])
        hexbox = os.path.join(tmp, "hex.vtu")
        run([eb, "mesh", "generate", "--type", "hex", "--elements-per-edge", "1", "-o", hexbox])
        surface = os.path.join(tmp, "tet.off")
        with open(surface, "w") as f:
            f.write("OFF\n4 4 0\n" + TET + "".join("3 %d %d %d\n" % t for t in [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]))
        for target, exts in TARGET_EXT.items():
            for ext in exts:
                variants = [("", [])]
                if ext in (".vtu", ".vtp"):
                    variants.append(("raw", ["--no-compress"]))
                if ext == ".msh":
                    variants = [("v2", ["--msh-version", "2"]), ("v4", ["--msh-version", "4"])]
                sources = [box, hexbox, surface] if ext in (".vtu", ".vtk", ".msh", ".mesh") else [surface]
                for src in sources:
                    for tag, flags in variants:
                        name = os.path.splitext(os.path.basename(src))[0] + (tag and "_" + tag) + ext
                        run([eb, "mesh", "convert", src, os.path.join(out, target, name)] + flags)
        for src in (box, os.path.join(tmp, "tetgen_box.vtu")):
            if src != box:
                run([eb, "mesh", "generate", "--type", "tet", "--elements-per-edge", "2", "-o", src])
            stem = os.path.splitext(src)[0]
            run([eb, "mesh", "convert", src, stem + ".node"])
            with open(os.path.join(out, "mesh_tetgen", os.path.basename(stem) + ".txt"), "w") as f:
                f.write(open(stem + ".node").read() + "\n---\n" + open(stem + ".ele").read())

        names = [line.split()[0] for line in run([eb, "scenario", "list"]).stdout.splitlines() if line.strip()]
        for name in names:
            for fmt, target in (("toml", "scenario_toml"), ("json", "scenario_json")):
                r = subprocess.run([eb, "scenario", "show", name, "--format", fmt], capture_output=True, text=True)
                if r.returncode == 0:
                    with open(os.path.join(out, target, name + "." + fmt), "w") as f:
                        f.write(r.stdout)
        sets = {
            "size": "mesh.element_size=0.05\nmesh.elements_per_edge=4",
            "gravity": "boundary.gravity=[0,0,-1]\ntime.steps=3",
            "probe": "output.probes.1.name=mid\noutput.probes.1.position=[0.5,0.05,0.05]",
            "fixed": "boundary.fixed.0.where.kind=plane\nboundary.fixed.0.where.normal=[1,0,0]",
            "material": "material.youngs_modulus=2e8\nmaterial.poisson_ratio=0.45\nmaterial.damage.enabled=true",
            "method": "hexmg.cycles=2\nsolver.variant=\"\"\ntime.mode=static\nstatic.load_steps=2",
        }
        for name, text in sets.items():
            with open(os.path.join(out, "scenario_set", name + ".txt"), "w") as f:
                f.write(text)
        run_dir = os.path.join(tmp, "run")
        subprocess.run([eb, "run", "--method", "tled", "--backend", "cpu", "--precision", "fp64", "--threads", "1",
                        "--scenario", "cantilever", "--set", "mesh.elements_per_edge=2", "--steps", "3",
                        "--quiet", "--out", run_dir], capture_output=True)
        summary = os.path.join(run_dir, "summary.json")
        if os.path.exists(summary):
            copy_fresh(summary, os.path.join(out, "results_json", "summary.json"))
        with open(os.path.join(out, "results_json", "manifest.json"), "w") as f:
            json.dump({"machine": {"hostname": "h"}, "experiments": ["x"], "parts": {"a": {"quick": True}}}, f)


if __name__ == "__main__":
    main()
