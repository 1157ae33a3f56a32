#!/usr/bin/python3
"""Independent check of our VTK output: Debian's python3-vtk9 opens the .pvd time series
written by write_vtk_series and finds every array with the right size. Exit 77 = skipped."""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

try:
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy
except ImportError:
    print("python3-vtk9 is not installed; skipping")
    sys.exit(77)

writer, out_dir = sys.argv[1], sys.argv[2]
counts = subprocess.run([writer, out_dir], check=True, capture_output=True, text=True).stdout.split()
npoints, ncells, nsurf_points, nsurf_tris = map(int, counts)

POINT = {"displacement": 3, "velocity": 3, "fixed": 1}
CELL = {"von_mises_stress": 1, "strain_energy_density": 1, "damage": 1, "rotation_angle": 1, "material_id": 1}


def datasets(pvd):
    root = ET.parse(pvd).getroot()
    return [(float(d.get("timestep")), os.path.join(os.path.dirname(pvd), d.get("file")))
            for d in root.iter("DataSet")]


errors = []
# The collection reader resolves the files the way ParaView does.
reader = vtk.vtkPVDReader() if hasattr(vtk, "vtkPVDReader") else None
steps = datasets(os.path.join(out_dir, "volume.pvd"))
if [t for t, _ in steps] != [0.0, 0.1, 0.2]:
    errors.append(f"time steps {steps}")
for t, f in steps:
    r = vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(f)
    r.Update()
    g = r.GetOutput()
    if g.GetNumberOfPoints() != npoints or g.GetNumberOfCells() != ncells:
        errors.append(f"{f}: {g.GetNumberOfPoints()} points / {g.GetNumberOfCells()} cells")
    for name, comps in POINT.items():
        a = g.GetPointData().GetArray(name)
        if a is None or a.GetNumberOfTuples() != npoints or a.GetNumberOfComponents() != comps:
            errors.append(f"{f}: point array {name} missing or wrong size")
    for name, comps in CELL.items():
        a = g.GetCellData().GetArray(name)
        if a is None or a.GetNumberOfTuples() != ncells or a.GetNumberOfComponents() != comps:
            errors.append(f"{f}: cell array {name} missing or wrong size")
    disp = vtk_to_numpy(g.GetPointData().GetArray("displacement"))
    pts = vtk_to_numpy(g.GetPoints().GetData())
    if abs(disp[:, 0] - 0.01 * round(t * 10) * pts[:, 0]).max() > 1e-12:
        errors.append(f"{f}: displacement values differ")
    if vtk_to_numpy(g.GetCellData().GetArray("material_id")).tolist() != [3] * ncells:
        errors.append(f"{f}: material ids differ")

for t, f in datasets(os.path.join(out_dir, "skin.pvd")):
    r = vtk.vtkXMLPolyDataReader()
    r.SetFileName(f)
    r.Update()
    p = r.GetOutput()
    if p.GetNumberOfPoints() != nsurf_points or p.GetNumberOfPolys() != nsurf_tris:
        errors.append(f"{f}: {p.GetNumberOfPoints()} points / {p.GetNumberOfPolys()} triangles")
    a = p.GetPointData().GetArray("displacement")
    if a is None or a.GetNumberOfTuples() != nsurf_points:
        errors.append(f"{f}: displacement missing")

if errors:
    print("\n".join(errors))
    sys.exit(1)
print(f"ok: {len(steps)} volume steps ({npoints} points, {ncells} cells) and the surface series read by VTK {vtk.vtkVersion.GetVTKVersion()}")
