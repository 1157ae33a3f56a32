#pragma once
// The load curve of a scenario (LoadCurve in scenario.h) in a form both backends evaluate: the
// CUDA backends run whole time loops on the device (CUDA graphs), so the factor of step n is
// computed there from the step counter with the same function the host uses.
#include "assembly/hd.h"

namespace eb {

enum class CurveShape : int { Smooth = 0, Linear = 1, Step = 2 };

// Trivially copyable, so that an array of them can be uploaded as it is.
struct CurveParams {
  int shape = int(CurveShape::Smooth);  // CurveShape
  double start = 0.0;
  double duration = 1.0;
};

// The load factor in [0, 1] at time t: "smooth" is the quintic smooth step 10s^3 - 15s^4 + 6s^5
// (zero velocity and acceleration at both ends), "linear" a ramp, "step" full load at once (also
// any curve of zero duration).
EB_HD double curve_factor(const CurveParams& c, double t) {
  if (c.shape == int(CurveShape::Step) || c.duration <= 0.0) return t >= c.start ? 1.0 : 0.0;
  double s = (t - c.start) / c.duration;
  s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
  if (c.shape == int(CurveShape::Linear)) return s;
  return s * s * s * (10.0 + s * (-15.0 + 6.0 * s));
}

}  // namespace eb
