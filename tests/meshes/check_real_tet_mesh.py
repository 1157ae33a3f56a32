#!/usr/bin/python3
"""Checks one third-party tetrahedral mesh against an independent reading of the file.

usage: check_real_tet_mesh.py MESH_CLI DATA_DIR FILE

The file is read here without any ElastoBench code: .vtu/.vtk through VTK's own Python reader,
.msh (Gmsh v1 and v4.1 ASCII) and .mesh (Medit) by the small parsers below, which follow the
format documents rather than our C++ readers. From that reading: node and tetrahedron counts,
nodes no tetrahedron uses, and every tetrahedron's signed volume in the file's corner order.
Then `MESH_CLI mesh info --json FILE` must report the same counts and total volume, no inverted
or degenerate tetrahedron, and the file itself must hold only positive tetrahedra (so loading
needs no reorientation). Exit 77 (skip) when the data folder or file is absent. $ELASTOBENCH_DATA,
when set, replaces DATA_DIR.
"""
import json
import os
import subprocess
import sys

import numpy as np


def read_vtk(path):
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy

    reader = vtk.vtkXMLUnstructuredGridReader() if path.endswith(".vtu") else vtk.vtkUnstructuredGridReader()
    reader.SetFileName(path)
    reader.Update()
    grid = reader.GetOutput()
    points = vtk_to_numpy(grid.GetPoints().GetData()).astype(np.float64)
    types = vtk_to_numpy(grid.GetCellTypesArray())
    conn = vtk_to_numpy(grid.GetCells().GetConnectivityArray())
    offsets = vtk_to_numpy(grid.GetCells().GetOffsetsArray())
    tets = np.array([conn[offsets[c]:offsets[c + 1]] for c in np.nonzero(types == 10)[0]], dtype=np.int64)
    return points, tets.reshape(-1, 4)


def read_msh(path):
    lines = open(path).read().split("\n")
    i = 0
    tags, coords, tets = {}, [], []
    version = "1"
    while i < len(lines):
        head = lines[i].strip()
        if head == "$MeshFormat":
            version = lines[i + 1].split()[0]
            i += 2
        elif head == "$NOD":  # v1: count, then "tag x y z"
            n = int(lines[i + 1])
            for k in range(n):
                f = lines[i + 2 + k].split()
                tags[int(f[0])] = len(coords)
                coords.append([float(v) for v in f[1:4]])
            i += 2 + n
        elif head == "$ELM":  # v1: "tag type phys elem nnodes n1 .."
            n = int(lines[i + 1])
            for k in range(n):
                f = [int(v) for v in lines[i + 2 + k].split()]
                if f[1] == 4:
                    tets.append(f[5:9])
            i += 2 + n
        elif head == "$Nodes" and version.startswith("4"):  # blocks: "dim tag param n", n tags, n xyz
            blocks = int(lines[i + 1].split()[0])
            i += 2
            for _ in range(blocks):
                n = int(lines[i].split()[3])
                block_tags = [int(lines[i + 1 + k]) for k in range(n)]
                for k in range(n):
                    tags[block_tags[k]] = len(coords)
                    coords.append([float(v) for v in lines[i + 1 + n + k].split()[:3]])
                i += 1 + 2 * n
        elif head == "$Elements" and version.startswith("4"):  # blocks: "dim tag type n", "tag n1 .."
            blocks = int(lines[i + 1].split()[0])
            i += 2
            for _ in range(blocks):
                f = lines[i].split()
                etype, n = int(f[2]), int(f[3])
                if etype == 4:
                    tets.extend([int(v) for v in lines[i + 1 + k].split()[1:5]] for k in range(n))
                i += 1 + n
        else:
            i += 1
    index = np.vectorize(tags.__getitem__)
    return np.array(coords), index(np.array(tets, dtype=np.int64))


def read_medit(path):
    tokens = open(path).read().split()
    coords, tets = None, None
    i = 0
    while i < len(tokens):
        key = tokens[i].lower()
        if key == "vertices":
            n = int(tokens[i + 1])
            coords = np.array(tokens[i + 2:i + 2 + 4 * n], dtype=np.float64).reshape(n, 4)[:, :3]
            i += 2 + 4 * n
        elif key == "tetrahedra":
            n = int(tokens[i + 1])
            tets = np.array(tokens[i + 2:i + 2 + 5 * n], dtype=np.int64).reshape(n, 5)[:, :4] - 1
            i += 2 + 5 * n
        else:
            i += 1
    return coords, tets


def main():
    cli, data_dir, name = sys.argv[1:4]
    data_dir = os.environ.get("ELASTOBENCH_DATA") or data_dir  # as the C++ tests do
    path = os.path.join(data_dir, name)
    if not os.path.isfile(path):
        print(f"skip: {path} not found (third-party data, see SOURCES.md)")
        return 77
    ext = os.path.splitext(name)[1]
    points, tets = read_vtk(path) if ext in (".vtu", ".vtk") else read_msh(path) if ext == ".msh" else read_medit(path)
    x = points[tets]
    volumes = np.einsum("ij,ij->i", x[:, 1] - x[:, 0], np.cross(x[:, 2] - x[:, 0], x[:, 3] - x[:, 0])) / 6.0
    unused = len(points) - len(np.unique(tets))
    print(f"{name}: {len(points)} nodes ({unused} unused), {len(tets)} tets, volume {volumes.sum():.9g}, "
          f"smallest tet volume {volumes.min():.3g}")

    out = subprocess.run([cli, "mesh", "info", "--json", path], capture_output=True, text=True)
    if out.returncode != 0:
        print(out.stdout, out.stderr)
        return 1
    info = json.loads(out.stdout)
    failures = []

    def expect(what, ours, theirs):
        if ours != theirs:
            failures.append(f"{what}: mesh info says {ours}, the independent reading {theirs}")

    expect("nodes", info["nodes"], len(points))
    expect("tetrahedra", info["tetrahedra"], len(tets))
    expect("unused nodes", info["unused_nodes"], unused)
    expect("inverted", info["inverted"], 0)
    expect("degenerate", info["degenerate"], 0)
    if not np.all(volumes > 0):
        failures.append(f"{int(np.sum(volumes <= 0))} tetrahedra are not positive in the file's own order")
    if abs(info["volume"] - volumes.sum()) > 1e-9 * abs(volumes.sum()):
        failures.append(f"volume: mesh info says {info['volume']}, the independent reading {volumes.sum()}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
