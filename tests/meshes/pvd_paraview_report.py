"""Runs under ParaView's pvbatch: opens each .pvd named on the command line with ParaView's own
PVD reader, which resolves the DataSet paths the way the ParaView GUI does, and writes what it
sees per time step as JSON (argv[1]). The comparison with what should be there is done by
paraview_series_test.py in plain python3, so that this part stays a thin probe of ParaView."""
import json
import sys

from paraview import servermanager
from paraview.simple import PVDReader
from vtkmodules.vtkCommonDataModel import vtkDataObject


def arrays(data):
    out = {}
    for i in range(data.GetNumberOfArrays()):
        a = data.GetArray(i)
        out[a.GetName()] = {"components": a.GetNumberOfComponents(), "tuples": a.GetNumberOfTuples(),
                            "max_norm": a.GetRange(-1)[1] if a.GetNumberOfTuples() else None}
    return out


def probe(pvd):
    reader = PVDReader(FileName=pvd)
    reader.UpdatePipelineInformation()
    times = reader.TimestepValues
    # A property proxy for several time steps, a bare float for one.
    times = [float(t) for t in times] if hasattr(times, "__len__") else [float(times)]
    frames = []
    for t in times:
        reader.UpdatePipeline(t)
        # pvbatch runs the pipeline in this process, so the reader's own output is the frame at t.
        data = reader.GetClientSideObject().GetOutputDataObject(0)
        info = data.GetInformation()
        frames.append({
            "time": t,
            "data_time": info.Get(vtkDataObject.DATA_TIME_STEP()) if info.Has(vtkDataObject.DATA_TIME_STEP()) else None,
            "class": data.GetClassName(),
            "points": data.GetNumberOfPoints(),
            "cells": data.GetNumberOfCells(),
            "point_arrays": arrays(data.GetPointData()),
            "cell_arrays": arrays(data.GetCellData()),
        })
    servermanager.ProxyManager().UnRegisterProxies()
    return {"times": times, "frames": frames}


with open(sys.argv[1], "w") as f:
    json.dump({pvd: probe(pvd) for pvd in sys.argv[2:]}, f, indent=1)
