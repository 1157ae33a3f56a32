// hexmg.galerkin_every (smoothed-* variants, smoothed_hierarchy.h; its validation is in
// test_shared_cg.cpp with the other keys): with K > 1 the coarse operators are recomputed exactly on the
// steps 0, K, 2K, ... (bit-equal to a fresh Galerkin product of that step's fine operator) and
// kept bit for bit in between, while smoothed-pcg still reaches its tolerance on every step.
#include <cstdio>

#include "solvers/hexmg/smoothed_plan.h"
#include "tests/hexmg/hexmg_test_util.h"
#include "tests/hexmg/shape_scenario.h"

namespace eb::hexmg::test {
namespace {

using SA = HexmgSimulation::SmoothedArray;
using SP = HexmgSimulation::SmoothedPhaseKind;

// max |a - b| (0 when bit-equal).
double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

TEST(GalerkinEvery, RefreshedOnScheduleAndPcgStillConverges) {
  constexpr int K = 3;
  Scenario sc = shape_scenario("plate_1", {"hexmg.tolerance=1e-5", "hexmg.max_iterations=60",
                                           "hexmg.galerkin_every=" + std::to_string(K)});
  sc.solver.variant = "smoothed-pcg";
  auto sim = make(sc, {Backend::Cpu, Precision::Fp32}, 1);
  const int nl = sim->model().n_levels();
  ASSERT_GE(nl, 3);
  std::vector<std::vector<double>> last_A(static_cast<size_t>(nl)), last_AP(static_cast<size_t>(nl));
  for (int step = 0; step < 7; ++step) {
    sim->advance(1);
    const SolverStats st = sim->solver_stats();
    std::printf("step %d: %d iterations, residual %.3e -> %.3e\n", step, st.iterations, st.initial_residual,
                st.final_residual);
    EXPECT_TRUE(st.converged) << "step " << step;
    EXPECT_LE(st.final_residual, 1e-5 * st.initial_residual) << "step " << step;
    // The coarse operators this step used against a fresh Galerkin product of its fine operator
    // (still in place after the step); then the used ones are put back so the run goes on lagged.
    const bool due = step % K == 0;
    for (int l = 1; l < nl; ++l) {
      const std::vector<double> A = sim->smoothed_array(SA::A, l), AP = sim->smoothed_array(SA::AP, l);
      if (!due) {
        EXPECT_EQ(max_diff(A, last_A[size_t(l)]), 0.0) << "step " << step << " level " << l << ": refreshed early";
        EXPECT_EQ(max_diff(AP, last_AP[size_t(l)]), 0.0) << "step " << step << " level " << l;
      }
      last_A[size_t(l)] = A;
      last_AP[size_t(l)] = AP;
    }
    for (int l = 1; l < nl; ++l) sim->run_smoothed_phase(SP::Galerkin, l);
    for (int l = 1; l < nl; ++l) {
      const double d = max_diff(sim->smoothed_array(SA::A, l), last_A[size_t(l)]);
      if (due)
        EXPECT_EQ(d, 0.0) << "step " << step << " level " << l << ": not the current Galerkin operator";
      else
        EXPECT_GT(d, 0.0) << "step " << step << " level " << l << ": the fine operator did not move (test is void)";
      sim->set_smoothed_array(SA::A, l, last_A[size_t(l)]);
      sim->set_smoothed_array(SA::AP, l, last_AP[size_t(l)]);
    }
  }
}

}  // namespace
}  // namespace eb::hexmg::test
