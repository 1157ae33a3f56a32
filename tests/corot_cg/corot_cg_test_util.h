#pragma once
// Shared helpers for the corot-cg tests. Sources are compiled into test_corot_cg (CPU instances)
// and, in CUDA builds, into test_corot_cg_gpu (EB_COROT_CG_TEST_CUDA, ctest label `gpu`), whose
// CUDA instances skip themselves without a device.
//
// box_toml: a 10 x 3 x 3 box of 2 cm cubes, 6 tetrahedra each (540 elements), clamped at x = 0,
// with gravity, a point force on a curve, Rayleigh damping and a ground plane under it that the
// free end reaches: every term of a step is non-zero.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "solvers/common/cuda_info.h"
#include "solvers/common/registry.h"
#include "solvers/common/scenario.h"
#include "solvers/corot_cg/corot_cg_simulation.h"

namespace eb::corot_cg::test {

struct Regime {
  Backend backend;
  Precision precision;
};

inline std::vector<Regime> regimes() {
#if defined(EB_COROT_CG_TEST_CUDA)
  return {{Backend::Cuda, Precision::Fp32}, {Backend::Cuda, Precision::Fp64}};
#else
  return {{Backend::Cpu, Precision::Fp32}, {Backend::Cpu, Precision::Fp64}};
#endif
}
inline std::string regime_name(const ::testing::TestParamInfo<Regime>& info) {
  return to_string(info.param.backend) + "_" + to_string(info.param.precision);
}

#define EB_COROT_CG_SKIP_WITHOUT_DEVICE(backend)                                     \
  do {                                                                               \
    if ((backend) == ::eb::Backend::Cuda && ::eb::cuda_device_count() == 0)          \
      GTEST_SKIP() << "no usable CUDA device: " << ::eb::cuda_device_info(0).reason; \
  } while (0)

inline std::filesystem::path data_dir() {
  std::filesystem::path d = EB_MESH_DATA_DIR;
  if (const char* env = std::getenv("ELASTOBENCH_DATA"); env && *env) d = env;
  return std::filesystem::is_directory(d) ? d : std::filesystem::path();
}

inline Scenario scenario_from_toml(const std::string& toml, const std::vector<std::string>& overrides = {}) {
  nlohmann::json doc = parse_scenario_text(toml, "toml", "corot-cg test");
  for (const auto& o : overrides) apply_override(doc, o);
  Scenario s = scenario_from_json(doc, "corot-cg test");
  validate_scenario(s);
  return s;
}

inline const char* box_toml() {
  return R"(name = "corot-box"
[mesh]
source = "box"
origin = [0.0, 0.0, 0.0]
size = [0.2, 0.06, 0.06]
divisions = [10, 3, 3]
[material]
youngs_modulus = 2.0e5
poisson_ratio = 0.35
density = 1000.0
[boundary]
gravity = [0.0, 0.0, -9.81]
ground = { enabled = true, height = -0.004, normal = [0.0, 0.0, 1.0], stiffness = 2.0e4 }
random_impulses = { enabled = true, every = 7, min_force = 0.5, max_force = 2.0, seed = 11 }
point_forces = [ { position = [0.2, 0.03, 0.06], force = [0.0, 0.5, -1.0], curve = { shape = "smooth", start = 0.0, duration = 0.1 } } ]
[[boundary.fixed]]
components = "xyz"
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }
[time]
dt = 0.01
steps = 50
damping = 0.5
rayleigh_stiffness = 0.002
)";
}

// One thread: the CI machine's two cores are shared, and an OpenMP barrier waiting for a
// descheduled thread costs milliseconds per loop.
inline RunOptions run_options(Backend b, Precision p, int threads = 1) {
  RunOptions o;
  o.backend = b;
  o.precision = p;
  o.threads = threads;
  o.data_dir = data_dir();
  return o;
}

inline std::vector<double> random_vector(size_t n, double scale, unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(-scale, scale);
  std::vector<double> v(n);
  for (double& x : v) x = d(g);
  return v;
}

inline double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return den > 0 ? num / den : num;
}

}  // namespace eb::corot_cg::test
