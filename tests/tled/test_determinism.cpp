// Two runs of the same scenario end in bit-identical states where the algorithm fixes every
// summation order, and within rounding of each other where it does not. Compiled into test_tled
// (the CPU backend: 1 thread against 2) and test_tled_gpu (the CUDA backend: one run in a single
// advance(), through the CUDA graph, against one in uneven chunks of single steps and graphs).
//
// What fixes the order (gather assembly, the default and the paper's):
//  - element kernel: one thread per element, writing only its own force slots and its own damage
//    history; its det F checks are integer atomics (a count, minima of step << 32 | element),
//    whose results do not depend on the order of arrival, and the minimum det F goes to one slot
//    per warp, written by that warp's lane 0 alone;
//  - node kernel: one thread per node sums its element slots in the order of the setup's slot
//    lists, sorted once on the host; no atomics;
//  - boundary kernel: a R is added with atomicAdd once per force entry. A node with one entry
//    gets one add per step, so the order cannot matter; a node with two entries (a point force on
//    a loaded surface, two surface loads meeting at an edge) gets two adds in whatever order the
//    threads arrive, so its last bit may differ between runs. The scenario here has one entry per
//    node (its point force is moved off the traction face); tests/tled/test_kernels.cpp covers the
//    shared node to a tolerance.
// The atomic assembly (solver.variant = atomic) adds element forces to nodal forces with floating-
// point atomics (CUDA atomicAdd, OpenMP atomic) in the order threads arrive: not deterministic.
// Its runs are compared to the tolerance that test_assembly_variants uses for atomic against
// gather after 1,000 steps (1e-4 fp32, 1e-10 fp64 relative to the largest displacement; two
// summation orders of the same sums, the state a few hundred steps on), and its validity counts,
// which do not depend on the forces' last bits here (no element near det F = 0), must agree.
#include <cstring>

#include "tests/tled/tled_test_util.h"

namespace eb::tled::test {
namespace {

struct DeterminismCase {
  Regime regime;
  bool atomic;
};

std::string case_name(const ::testing::TestParamInfo<DeterminismCase>& i) {
  const Regime& r = i.param.regime;
  return to_string(r.backend) + "_" + to_string(r.precision) + (r.texture ? "_texture" : "") +
         (i.param.atomic ? "_atomic" : "_gather");
}

std::vector<DeterminismCase> cases() {
  std::vector<DeterminismCase> out;
  for (const Regime& r : regimes())
    for (bool atomic : {false, true}) out.push_back({r, atomic});
  return out;
}

constexpr int kSteps = 230;  // past the 50 steps of the prescribed ramp; 4 graphs + 30 single steps

struct RunResult {
  std::vector<double> u, v, damage;
  ValidityCounts validity;
};

// threads: CPU threads (ignored by CUDA); chunked: advance in uneven chunks instead of at once.
RunResult run_once(const DeterminismCase& c, int threads, bool chunked) {
  Scenario s = loaded_box({"boundary.point_forces.0.position=[0.02, 0.035, 0.015]"});
  s.method_options["tled"]["texture"] = c.regime.texture;
  s.solver.variant = c.atomic ? "atomic" : "gather";
  s.material.damage = {true, 0.5, 200.0, 50.0};  // damage grows during the run
  auto sim = make(s, c.regime.backend, c.regime.precision, threads);
  if (chunked) {
    for (int chunk : {1, 50, 3, 176}) sim->advance(chunk);  // odd parities, graphs and single steps
  } else {
    sim->advance(kSteps);
  }
  RunResult r;
  sim->copy_state_to_host(r.u, r.v);
  std::vector<mesh::Field> f;
  sim->cell_fields(f);
  for (const auto& x : f)
    if (x.name == "damage") r.damage = x.values;
  r.validity = sim->validity();
  return r;
}

class Determinism : public ::testing::TestWithParam<DeterminismCase> {};

TEST_P(Determinism, TwoRunsAgree) {
  const DeterminismCase c = GetParam();
  EB_TLED_SKIP_WITHOUT_DEVICE(c.regime);
  const bool cpu = c.regime.backend == Backend::Cpu;
  const RunResult a = run_once(c, 1, false), b = run_once(c, cpu ? 2 : 1, !cpu);
  double umax = 0, dmax = 0;
  for (double x : a.u) umax = std::max(umax, std::abs(x));
  for (double x : a.damage) dmax = std::max(dmax, x);
  ASSERT_GT(umax, 1e-3) << "the run did not get under way";
  EXPECT_GT(dmax, 0.0) << "no damage: the history is not exercised";
  EXPECT_EQ(a.validity.inverted_element_steps, 0);
  EXPECT_EQ(b.validity.inverted_element_steps, 0);
  EXPECT_EQ(a.validity.nonfinite_steps, 0);
  if (!c.atomic) {
    EXPECT_EQ(first_bitwise_difference(a.u, b.u), "") << "displacements";
    EXPECT_EQ(first_bitwise_difference(a.v, b.v), "") << "velocities";
    EXPECT_EQ(first_bitwise_difference(a.damage, b.damage), "") << "damage";
    EXPECT_EQ(std::memcmp(&a.validity.min_det_f, &b.validity.min_det_f, sizeof(double)), 0)
        << a.validity.min_det_f << " vs " << b.validity.min_det_f;
    return;
  }
  double diff = 0, ddiff = 0;
  for (size_t i = 0; i < a.u.size(); ++i) diff = std::max(diff, std::abs(a.u[i] - b.u[i]));
  for (size_t e = 0; e < a.damage.size(); ++e) ddiff = std::max(ddiff, std::abs(a.damage[e] - b.damage[e]));
  const bool fp32 = c.regime.precision == Precision::Fp32;
  std::printf("atomic assembly, two runs: |u_a - u_b|_max / |u|_max = %.2e, |d_a - d_b|_max = %.2e\n", diff / umax, ddiff);
  EXPECT_LE(diff / umax, fp32 ? 1e-4 : 1e-10);
  EXPECT_LE(ddiff, fp32 ? 1e-3 : 1e-9);  // the damage tolerances of test_cpu_vs_cuda
  EXPECT_NEAR(a.validity.min_det_f, b.validity.min_det_f, fp32 ? 1e-5 : 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Tled, Determinism, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace eb::tled::test
