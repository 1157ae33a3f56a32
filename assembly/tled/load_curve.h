#pragma once
// Load curves evaluated inside the time loop. The CUDA backend runs the whole time loop on the
// device (CUDA graphs), so the prescribed displacements of step n are computed there from the
// step counter; this is the device-callable twin of eb::load_factor (solvers/common/scenario.cpp)
// and tests/tled checks that the two agree for every shape.
#include "assembly/hd.h"

namespace eb::tled {

enum class CurveShape : int { Smooth = 0, Linear = 1, Step = 2 };

struct DeviceCurve {
  int shape;  // CurveShape
  double start;
  double duration;
};

EB_HD double curve_factor(const DeviceCurve& c, double t) {
  if (c.shape == int(CurveShape::Step) || c.duration <= 0.0) return t >= c.start ? 1.0 : 0.0;
  double s = (t - c.start) / c.duration;
  s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
  if (c.shape == int(CurveShape::Linear)) return s;
  return s * s * s * (10.0 + s * (-15.0 + 6.0 * s));  // quintic smooth step
}

}  // namespace eb::tled
