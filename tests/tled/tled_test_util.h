#pragma once
// Shared helpers for the TLED tests. Every test source is compiled twice: into test_tled with the
// CPU instances and into test_tled_gpu (EB_TLED_TEST_CUDA defined, ctest label `gpu`) with the
// CUDA instances, which skip themselves when no CUDA device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "solvers/common/cuda_info.h"
#include "solvers/common/registry.h"
#include "solvers/common/scenario.h"
#include "solvers/tled/paper_cube.h"

namespace eb::tled::test {

struct Regime {
  Backend backend;
  Precision precision;
  bool texture;
};

inline std::vector<Regime> regimes() {
#if defined(EB_TLED_TEST_CUDA)
  return {{Backend::Cuda, Precision::Fp32, false},
          {Backend::Cuda, Precision::Fp32, true},
          {Backend::Cuda, Precision::Fp64, false},
          {Backend::Cuda, Precision::Fp64, true}};
#else
  return {{Backend::Cpu, Precision::Fp32, false}, {Backend::Cpu, Precision::Fp64, false}};
#endif
}

inline std::string regime_name(const ::testing::TestParamInfo<Regime>& info) {
  const Regime& r = info.param;
  return to_string(r.backend) + "_" + to_string(r.precision) + (r.texture ? "_texture" : "");
}

// A distorted (non-parallelepiped) hexahedron in VTK order, 2 cm across (element tests).
inline void distorted_hex(double x[8][3]) {
  const double base[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
  const double jitter[8][3] = {{0.05, -0.02, 0.01}, {0.1, 0.03, -0.04}, {-0.06, 0.12, 0.02}, {0.02, -0.05, 0.07},
                               {-0.03, 0.04, 0.1},  {0.08, -0.07, 0.0}, {0.15, 0.1, 0.2},   {-0.1, 0.02, -0.06}};
  for (int a = 0; a < 8; ++a)
    for (int k = 0; k < 3; ++k) x[a][k] = 0.02 * (base[a][k] + jitter[a][k]);
}

// Skips CUDA instances without a device; call first in every test body.
#define EB_TLED_SKIP_WITHOUT_DEVICE(regime)                                          \
  do {                                                                                \
    if ((regime).backend == ::eb::Backend::Cuda && ::eb::cuda_device_count() == 0)    \
      GTEST_SKIP() << "no usable CUDA device";                                       \
  } while (0)

// The paper's cube scenario with `overrides` (key=value) applied.
// The paper's cube (with the symmetry-plane in-plane constraint, solvers/tled/paper_cube.h) and
// `overrides` (key=value) applied after it.
inline Scenario cube(int per_edge, const std::vector<std::string>& overrides = {}) {
  std::vector<std::string> all = paper_cube_overrides(per_edge);
  all.insert(all.end(), overrides.begin(), overrides.end());
  return load_scenario("cube-compression", all);
}

// A 9 x 7 x 5 box (315 elements: three element blocks, a partial warp) with what the cube lacks:
// gravity, a point force, a surface traction, prescribed displacements on two curves besides the
// clamped base, at a fixed dt (the stable step is 4.7e-4 s) so that every curve's factor lies
// inside (0, 1) over the first steps. The point force sits on the loaded surface (two force
// entries on one node) unless `overrides` (key=value) move it.
inline Scenario loaded_box(const std::vector<std::string>& overrides = {}) {
  nlohmann::json doc = parse_scenario_text(R"(name = "tled-loaded-box"
[mesh]
source = "box"
origin = [0.0, 0.0, 0.0]
size = [0.045, 0.035, 0.025]
element_size = 0.005
[material]
youngs_modulus = 30000.0
poisson_ratio = 0.45
density = 1000.0
[boundary]
gravity = [0.0, -9.81, -3.0]
[[boundary.fixed]]
components = "xyz"
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] }
[[boundary.prescribed]]
components = "z"
displacement = [0.0, 0.0, -0.004]
where = { kind = "plane", point = [0.0, 0.0, 0.025], normal = [0.0, 0.0, 1.0] }
curve = { shape = "linear", start = 0.0, duration = 0.01 }
[[boundary.prescribed]]
components = "x"
displacement = [0.001, 0.0, 0.0]
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }
curve = { shape = "step", start = 0.0, duration = 0.0 }
[[boundary.point_forces]]
position = [0.045, 0.035, 0.015]
force = [0.01, -0.02, 0.005]
curve = { shape = "smooth", start = 0.0, duration = 0.005 }
[[boundary.surface_forces]]
traction = [0.0, 50.0, -20.0]
where = { kind = "plane", point = [0.045, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }
curve = { shape = "linear", start = 0.0, duration = 0.02 }
[time]
dt = 2.0e-4
end_time = 0.1
)",
                                           "toml", "tled test box");
  for (const auto& o : overrides) apply_override(doc, o);
  Scenario s = scenario_from_json(doc, "tled test box");
  validate_scenario(s);
  return s;
}

inline std::unique_ptr<Simulation> make(const Scenario& s, Backend b, Precision p, int threads = 1) {
  RunOptions o;
  o.backend = b;
  o.precision = p;
  o.threads = threads;
  return methods().find("tled", b, p).factory(s, o);
}

inline std::vector<std::string> with_texture(std::vector<std::string> o, bool texture) {
  o.push_back(std::string("tled.texture=") + (texture ? "true" : "false"));
  return o;
}

// "" when a and b are equal bit for bit, else where they first differ.
inline std::string first_bitwise_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return "sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size());
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0)
      return "entry " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
  return "";
}

// Largest displacement difference of two simulations relative to the largest displacement of
// the first; `umax_out` receives that largest displacement.
inline double relative_difference(Simulation& a, Simulation& b, double* umax_out) {
  std::vector<double> ua, va, ub, vb;
  a.copy_state_to_host(ua, va);
  b.copy_state_to_host(ub, vb);
  double umax = 0, diff = 0;
  for (size_t i = 0; i < ua.size(); ++i) {
    umax = std::max(umax, std::abs(ua[i]));
    diff = std::max(diff, std::abs(ua[i] - ub[i]));
  }
  *umax_out = umax;
  return umax > 0 ? diff / umax : diff;
}

}  // namespace eb::tled::test
