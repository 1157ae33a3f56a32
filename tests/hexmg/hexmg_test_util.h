#pragma once
// Shared helpers for the hexmg tests. Every per-backend test source is compiled twice: into
// test_hexmg with the CPU instances and into test_hexmg_gpu (EB_HEXMG_TEST_CUDA defined, ctest
// label `gpu`) with the CUDA instances, which skip themselves when no CUDA device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "solvers/common/cuda_info.h"
#include "solvers/common/scenario.h"
#include "solvers/hexmg/hexmg_simulation.h"

namespace eb::hexmg::test {

struct Regime {
  Backend backend;
  Precision precision;
};

inline std::vector<Regime> regimes() {
#if defined(EB_HEXMG_TEST_CUDA)
  return {{Backend::Cuda, Precision::Fp32}, {Backend::Cuda, Precision::Fp64}};
#else
  return {{Backend::Cpu, Precision::Fp32}, {Backend::Cpu, Precision::Fp64}};
#endif
}

inline std::string regime_name(const ::testing::TestParamInfo<Regime>& info) {
  return to_string(info.param.backend) + "_" + to_string(info.param.precision);
}

#define EB_HEXMG_SKIP_WITHOUT_DEVICE(regime)                                       \
  do {                                                                              \
    if ((regime).backend == ::eb::Backend::Cuda && ::eb::cuda_device_count() == 0)  \
      GTEST_SKIP() << "no usable CUDA device";                                     \
  } while (0)


// Round-off scale of a precision (tolerances are multiples of it).
inline double eps_of(Precision p) { return p == Precision::Fp32 ? 1.2e-7 : 2.2e-16; }

inline Scenario from_toml(const std::string& toml, const std::vector<std::string>& overrides = {}) {
  nlohmann::json doc = parse_scenario_text(toml, "toml", "hexmg test");
  for (const auto& o : overrides) apply_override(doc, o);
  Scenario s = scenario_from_json(doc, "hexmg test");
  validate_scenario(s);
  return s;
}

// A cube of edge 0.1 m with n elements per edge, bottom face (z = 0) clamped, gravity, the
// material of Dick 2011 Fig. 11 (E = 1e6 Pa, nu = 0.3, rho = 1e5 kg/m^3, dt = 50 ms).
inline Scenario clamped_cube(int n, const std::vector<std::string>& overrides = {}) {
  const std::string toml = R"(name = "hexmg-test-cube"
[mesh]
source = "box"
origin = [0.0, 0.0, 0.0]
size = [0.1, 0.1, 0.1]
elements_per_edge = )" + std::to_string(n) + R"(
[material]
youngs_modulus = 1.0e6
poisson_ratio = 0.3
density = 1.0e5
[boundary]
gravity = [0.0, 0.0, -9.81]
[[boundary.fixed]]
components = "xyz"
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] }
[time]
dt = 0.05
damping = 1.0
steps = 10
)";
  return from_toml(toml, overrides);
}

inline std::unique_ptr<HexmgSimulation> make(const Scenario& s, Regime r, int threads = 1) {
  RunOptions o;
  o.backend = r.backend;
  o.precision = r.precision;
  o.threads = threads;
  return make_hexmg(s, o);
}

// The whole-run comparisons advance 20 steps as single steps and graph batches.
inline void advance_twenty(HexmgSimulation& sim) {
  for (int chunk : {1, 7, 12}) sim.advance(chunk);
}

// |u_a - u_b| / |u_b| over the nodes' displacements.
inline double relative_difference(HexmgSimulation& a, HexmgSimulation& b) {
  std::vector<double> ua, va, ub, vb;
  a.copy_state_to_host(ua, va);
  b.copy_state_to_host(ub, vb);
  double num = 0, den = 0;
  for (size_t i = 0; i < ua.size(); ++i) {
    num += (ua[i] - ub[i]) * (ua[i] - ub[i]);
    den += ub[i] * ub[i];
  }
  return den > 0 ? std::sqrt(num / den) : INFINITY;
}

// Whole-run tolerance of a backend against the CPU backend in the same precision after 20
// bunny steps. fp64: 1e-10 (summation order and FMA contraction only; measured ~2e-12). fp32:
// the valid bunny load (1/100 g) strains the bunny by ~1e-3, and the co-rotated elastic forces
// R^T (p + u) - p cancel to the strain, so fp32 keeps ~eps32 / strain ~ 1e-4 of the state:
// CPU fp32 is 2.3e-4 from CPU fp64 there, and CUDA fp32 3.4e-4 from CPU fp32 (H100). Hence
// 1e-3 against the same precision, and fp32_accuracy_check() against fp64.
inline double whole_run_tolerance(Precision p) { return p == Precision::Fp32 ? 1e-3 : 1e-10; }

// fp32 only: `sim` is as close to the CPU fp64 solution as the CPU fp32 backend is (within 4x,
// rounding of independent summation orders), i.e. it loses no accuracy of its own.
inline void fp32_accuracy_check(const Scenario& sc, HexmgSimulation& sim, HexmgSimulation& cpu32) {
  auto ref = make(sc, {Backend::Cpu, Precision::Fp64}, 4);
  advance_twenty(*ref);
  const double e_sim = relative_difference(sim, *ref), e_cpu = relative_difference(cpu32, *ref);
  std::printf("fp32 against CPU fp64 after 20 steps: this run %.3e, CPU fp32 %.3e\n", e_sim, e_cpu);
  EXPECT_LE(e_sim, 4 * e_cpu + 1e-6);
}

}  // namespace eb::hexmg::test
