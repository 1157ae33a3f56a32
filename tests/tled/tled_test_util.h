#pragma once
// Shared helpers for the TLED tests. Every test source is compiled twice: into test_tled with the
// CPU instances and into test_tled_gpu (EB_TLED_TEST_CUDA defined, ctest label `gpu`) with the
// CUDA instances, which skip themselves when no CUDA device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

inline std::unique_ptr<Simulation> make(const Scenario& s, Backend b, Precision p, int threads = 1) {
  RunOptions o;
  o.backend = b;
  o.precision = p;
  o.threads = threads;
  return methods().find("tled", b, p).factory(s, o);
}

inline std::vector<std::string> with_texture(std::vector<std::string> o, bool texture) {
  o.push_back(std::string("solver.texture=") + (texture ? "true" : "false"));
  return o;
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
