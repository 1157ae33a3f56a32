// The tangent is the derivative of the force (central finite differences of the assembled force,
// fp64), and Newton with it converges quadratically near the solution (the residual sequence).
#include <cmath>
#include <cstdio>
#include <limits>

#include "tests/nr_neohookean/nr_test_util.h"

namespace eb::nr_neohookean::test {
namespace {

#if !defined(EB_NR_TEST_CUDA)
TEST(Tangent, EqualsCentralDifferencesOfTheForce) {
  const NrSetup s = build_nr_setup(cube(2, {"nr-neohookean.format=csr"}), run_options(Backend::Cpu, Precision::Fp64));
  const std::vector<double> x = perturbed_positions(s, 0.15, 3);
  const StrategyRun at = run_strategy<double>("cpu-opt", s, x, 0);
  const linalg::AssembledMatrix<double> K = from_flat(s, linalg::Format::Csr, at.values);
  double kmax = 0;
  for (double v : K.val) kmax = std::max(kmax, std::abs(v));
  const double h = 1e-6 * 0.025;  // element size 25 mm
  double worst = 0;
  int64_t columns = 0;
  for (int64_t j = 0; j < 3 * s.num_nodes; ++j) {
    if (s.constrained[size_t(j / 3)] >> (j % 3) & 1) continue;
    std::vector<double> xp = x, xm = x;
    xp[size_t(j)] += h;
    xm[size_t(j)] -= h;
    const StrategyRun p = run_strategy<double>("cpu-opt", s, xp, 0), m = run_strategy<double>("cpu-opt", s, xm, 0);
    // Column j of K, free rows: K(i, j) for every stored (i, j).
    for (size_t k = 0; k < K.val.size(); ++k) {
      if (K.col[k] != j) continue;
      const int64_t i = K.row[k];
      if (s.constrained[size_t(i / 3)] >> (i % 3) & 1) continue;
      const double fd = (p.force[size_t(i)] - m.force[size_t(i)]) / (2 * h);
      worst = std::max(worst, std::abs(fd - K.val[k]) / kmax);
    }
    ++columns;
  }
  std::printf("tangent vs central differences: %lld columns, max |FD - K| / max |K| = %.3g\n", (long long)columns, worst);
  EXPECT_GT(columns, 20);
  EXPECT_LT(worst, 1e-6);
}
#endif

// Near the solution the residual falls quadratically: r_{k+1} / r0 <= C (r_k / r0)^2 once r_k / r0
// < 1e-2, until rounding (1e-13 r0). CG solves to 1e-13 here, so the Newton step is exact to
// that level. A 5% compression of the cube (one static load step).
TEST(Newton, ConvergesQuadratically) {
  EB_NR_SKIP_WITHOUT_DEVICE();
  const Scenario sc = cube(3, {"time.mode=\"static\"", "static.tolerance=1e-13", "static.max_iterations=25",
                               "nr-neohookean.cg_tolerance=1e-13", "nr-neohookean.cg_max_iterations=20000"});
  auto sim = make_sim(sc, Precision::Fp64);
  sim->solve_static(0.25);
  const StepRecord& r = sim->history().back();
  std::printf("Newton residuals:");
  for (double v : r.residuals) std::printf(" %.3e", v);
  std::printf("\n");
  ASSERT_TRUE(r.converged) << r.failure;
  const double r0 = r.residuals.front();
  int quadratic_pairs = 0;
  for (size_t k = 0; k + 1 < r.residuals.size(); ++k) {
    const double a = r.residuals[k] / r0, b = r.residuals[k + 1] / r0;
    if (a < 1e-2 && b > 1e-12) {
      EXPECT_LE(b, 10 * a * a) << "iteration " << k;
      ++quadratic_pairs;
    }
  }
  EXPECT_GE(quadratic_pairs, 1);
  EXPECT_LE(r.residuals.size(), 10u);
}

// The same in dynamic steps, per integrator: each assembles the exact derivative of its own h(phi)
// (midpoint: dt/4 K at the midpoint; backward Euler: dt K at the end), so Newton converges
// quadratically in both. The cube's prescribed motion over a long step (20% compression in 4
// steps of 0.25 s from rest) makes several iterations per step.
class DynamicNewton : public ::testing::TestWithParam<const char*> {};

TEST_P(DynamicNewton, ConvergesQuadratically) {
  EB_NR_SKIP_WITHOUT_DEVICE();
  const Scenario sc = cube(3, {"time.dt=0.25", "time.end_time=1.0", "nr-neohookean.nr_tolerance=1e-12",
                               "nr-neohookean.nr_max_iterations=25", "nr-neohookean.cg_tolerance=1e-13",
                               "nr-neohookean.cg_max_iterations=20000",
                               std::string("nr-neohookean.integrator=\"") + GetParam() + "\""});
  auto sim = make_sim(sc, Precision::Fp64);
  sim->advance(4);
  int quadratic_pairs = 0;
  for (const StepRecord& r : sim->history()) {
    ASSERT_TRUE(r.converged) << "step " << r.step << ": " << r.failure;
    std::printf("%s step %lld residuals:", GetParam(), (long long)r.step);
    for (double v : r.residuals) std::printf(" %.3e", v);
    std::printf("\n");
    const double r0 = r.residuals.front();
    for (size_t k = 0; k + 1 < r.residuals.size(); ++k) {
      const double a = r.residuals[k] / r0, b = r.residuals[k + 1] / r0;
      if (a < 1e-2 && b > 1e-11) {  // below ~1e-11 r0: rounding
        EXPECT_LE(b, 10 * a * a) << "step " << r.step << " iteration " << k;
        ++quadratic_pairs;
      }
    }
  }
  EXPECT_GE(quadratic_pairs, 2);
}

// A body brought to rest: its steps' first residuals fall to the rounding floor, where a relative
// tolerance cannot be met. Newton stops there (StepRecord::at_rounding) instead of failing, and
// only there: one iteration of the loading step, far above the floor, still fails.
TEST(Newton, StopsAtTheRoundingFloorOfABodyAtRest) {
  EB_NR_SKIP_WITHOUT_DEVICE();
  std::vector<std::string> o = {"mesh.element_size=0.05", "material.youngs_modulus=1.0e7", "time.damping=20.0",
                                "time.dt=0.02", "nr-neohookean.integrator=\"backward-euler\"",
                                "nr-neohookean.nr_relative_tolerance=1e-8", "nr-neohookean.nr_tolerance=1e-30",
                                "nr-neohookean.nr_min_iterations=1"};
  auto sim = make_sim(load_scenario("cantilever", o), Precision::Fp64);
  sim->advance(100);
  double scale = 0;
  int at_rounding = 0;
  for (const StepRecord& r : sim->history()) {
    ASSERT_TRUE(r.converged) << "step " << r.step << ": " << r.failure;
    scale = std::max(scale, r.residuals.front());
    if (!r.at_rounding) continue;
    ++at_rounding;
    EXPECT_LE(r.residuals.back(), std::sqrt(std::numeric_limits<double>::epsilon()) * scale) << "step " << r.step;
  }
  std::printf("%d of 100 steps converged at the rounding floor\n", at_rounding);
  EXPECT_GT(at_rounding, 10);
  EXPECT_FALSE(sim->history().front().at_rounding);

  o.push_back("nr-neohookean.nr_max_iterations=1");
  auto one = make_sim(load_scenario("cantilever", o), Precision::Fp64);
  one->advance(1);
  EXPECT_FALSE(one->history().front().converged);
}

INSTANTIATE_TEST_SUITE_P(Integrators, DynamicNewton, ::testing::Values("midpoint", "backward-euler"),
                         [](const auto& i) { return std::string(i.param) == "midpoint" ? "Midpoint" : "BackwardEuler"; });

}  // namespace
}  // namespace eb::nr_neohookean::test
