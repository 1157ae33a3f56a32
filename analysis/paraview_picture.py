"""Renders the last frame of an `elastobench run --vtk-every` series with ParaView, the way a user
would look at it: the deformed mesh coloured by |displacement|, with a colour bar.

Run by pvbatch (ParaView's Python), not by the system Python:
    xvfb-run -a pvbatch analysis/paraview_picture.py SERIES.pvd OUT.png [TITLE]
scripts/paraview_picture.sh runs the CLI, then this, with the environment pvbatch needs.

Gravity sags are a fraction of a percent of a body's size, invisible at true scale, so the
displacement is magnified until its largest value is 8% of the bounding box's diagonal; the factor
is printed in the picture.
"""
import math
import os
import sys

from paraview import simple as pv

if len(sys.argv) < 3:
    sys.exit("usage: paraview_picture.py SERIES.pvd OUT.png [TITLE]")
series, out = sys.argv[1], sys.argv[2]
title = sys.argv[3] if len(sys.argv) > 3 else os.path.basename(os.path.dirname(os.path.dirname(os.path.abspath(series))))
if not os.path.exists(series):
    sys.exit(f"paraview_picture: {series}: no such file")

reader = pv.PVDReader(FileName=series)
times = list(reader.TimestepValues) if reader.TimestepValues else [0.0]
last = times[-1]
reader.UpdatePipeline(last)
info = reader.GetDataInformation()
if info.GetNumberOfPoints() == 0:
    sys.exit(f"paraview_picture: {series}: the last frame has no points")
arrays = reader.PointData
if "displacement" not in arrays.keys():
    sys.exit(f"paraview_picture: {series}: no point array 'displacement' (has {list(arrays.keys())})")
u_max = arrays["displacement"].GetRange(-1)[1]  # -1: the magnitude's range
b = info.GetBounds()
diagonal = math.sqrt((b[1] - b[0]) ** 2 + (b[3] - b[2]) ** 2 + (b[5] - b[4]) ** 2)
if not (u_max > 0 and math.isfinite(u_max)):
    sys.exit(f"paraview_picture: {series}: |displacement| max is {u_max}: nothing to show")
factor = 0.08 * diagonal / u_max
# A round magnification reads better than 37.41x.
factor = 10 ** math.floor(math.log10(factor)) * min((1, 2, 5, 10), key=lambda m: abs(m * 10 ** math.floor(math.log10(factor)) - factor))

surface = pv.ExtractSurface(Input=reader)
warp = pv.WarpByVector(Input=surface, Vectors=["POINTS", "displacement"], ScaleFactor=factor)
view = pv.CreateView("RenderView")
view.ViewSize = [1200, 800]
# ParaView 5.10+ takes the background from its colour palette unless told not to.
if hasattr(view, "UseColorPaletteForBackground"):
    view.UseColorPaletteForBackground = 0
view.Background = [1, 1, 1]
view.OrientationAxesVisibility = 1
view.OrientationAxesLabelColor = [0, 0, 0]
view.ViewTime = last
undeformed = pv.Show(surface, view)
undeformed.SetRepresentationType("Wireframe")
undeformed.AmbientColor = undeformed.DiffuseColor = [0.6, 0.6, 0.6]
undeformed.Opacity = 0.15
shown = pv.Show(warp, view)
pv.ColorBy(shown, ("POINTS", "displacement", "Magnitude"))
lut = pv.GetColorTransferFunction("displacement")
lut.ApplyPreset("Viridis (matplotlib)", True)
lut.RescaleTransferFunction(0.0, u_max)
shown.SetScalarBarVisibility(view, True)
bar = pv.GetScalarBar(lut, view)
bar.Title = "displacement magnitude (m)"
bar.ComponentTitle = ""
bar.TitleColor = bar.LabelColor = [0, 0, 0]
bar.RangeLabelFormat = "%-#.2e"
text = pv.Text(Text=f"{title}: t = {last:g} s, displacement x{factor:g}")
label = pv.Show(text, view)
label.Color = [0, 0, 0]
label.FontSize = 14
label.WindowLocation = "Upper Left Corner"
view.ResetCamera()
view.CameraPosition = [c + d for c, d in zip(view.CameraFocalPoint, (0.9 * diagonal, 0.6 * diagonal, 1.6 * diagonal))]
view.CameraViewUp = [0, 1, 0]
view.ResetCamera()
tmp = out + ".tmp.png"
pv.SaveScreenshot(tmp, view, ImageResolution=[1200, 800])
os.replace(tmp, out)
print(f"paraview_picture: {out}: frame t = {last:g} s, |u| max {u_max:.3e} m, magnified x{factor:g}")
