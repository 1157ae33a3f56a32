// hexmg's validity() and solver_stats() (issue 9, items 1 and 5), on each backend: a valid load
// counts no inversion below the method's det F threshold (an inverting load is the contract's,
// tests/contract/test_validity.cpp), a non-finite state stops advance() without an exception and
// names the element in connectivity() order, tolerance mode counts the solves that missed their
// tolerance, fixed cycles report no `converged` (only the reduction reached), and the linear
// variant says it checks no det F.
#include <cmath>

#include "assembly/hexmg/hex_element.h"
#include "tests/hexmg/hexmg_test_util.h"

namespace eb::hexmg::test {
namespace {

class Validity : public ::testing::TestWithParam<Regime> {};

TEST_P(Validity, ValidLoadHasNoInversion) {
  const Regime r = GetParam();
  EB_HEXMG_SKIP_WITHOUT_DEVICE(r);
  auto sim = make(load_scenario("cantilever", {"mesh.element_size=0.05"}), r);
  sim->advance(10);
  const ValidityCounts v = sim->validity();
  EXPECT_TRUE(v.det_f_checked);
  EXPECT_EQ(v.inverted_threshold, kInvertedVolumeRatio);
  EXPECT_EQ(v.inverted_element_steps, 0);
  EXPECT_EQ(v.first_inverted_step, -1);
  EXPECT_EQ(v.first_inverted_element, -1);
  // A beam sagging 13 mm under gravity: det F stays within a few percent of 1.
  EXPECT_GT(v.min_det_f, 0.95);
  EXPECT_LE(v.min_det_f, 1.0 + 1e-6);
  EXPECT_EQ(v.solver_failures, 0);
  EXPECT_EQ(v.nonfinite_steps, 0);
  // Fixed V-cycles: no tolerance to meet, only the reduction reached.
  const SolverStats st = sim->solver_stats();
  EXPECT_FALSE(st.converged.has_value());
  EXPECT_EQ(st.iterations, 2);
  EXPECT_GT(st.initial_residual, 0.0);
  EXPECT_LT(st.reduction(), 1.0);
}

TEST_P(Validity, NonFiniteStateStopsAdvanceAndNamesTheElement) {
  const Regime r = GetParam();
  EB_HEXMG_SKIP_WITHOUT_DEVICE(r);
  auto sim = make(clamped_cube(4), r);
  // A NaN at one node; the first element (connectivity() order) that holds it.
  const int32_t node = int32_t(sim->nodes().size()) - 1;
  int64_t first_elem = -1;
  const auto& conn = sim->connectivity();
  for (size_t i = 0; i < conn.size() && first_elem < 0; ++i)
    if (conn[i] == node) first_elem = int64_t(i / 8);
  ASSERT_GE(first_elem, 0);
  std::vector<double> u(sim->slot_displacement().size(), 0.0);
  u[3 * size_t(sim->model().slot_of_node[node]) + 2] = std::nan("");
  sim->set_state(u, {});
  ValidityCounts v = sim->validity();  // the state itself, checked on demand
  EXPECT_EQ(v.nonfinite_steps, 1);
  EXPECT_EQ(v.first_nonfinite_step, 0);
  EXPECT_EQ(v.first_nonfinite_element, first_elem);
  EXPECT_NO_THROW(sim->advance(3));
  const int64_t done = sim->steps_done();
  EXPECT_NO_THROW(sim->advance(3));
  EXPECT_EQ(sim->steps_done(), done) << "advance() went on after a non-finite state";
  v = sim->validity();
  EXPECT_EQ(v.nonfinite_steps, 1);
  EXPECT_EQ(v.first_nonfinite_step, 0);
  EXPECT_EQ(v.first_nonfinite_element, first_elem);
}

TEST_P(Validity, ToleranceModeCountsSolverFailures) {
  const Regime r = GetParam();
  EB_HEXMG_SKIP_WITHOUT_DEVICE(r);
  // One V-cycle cannot reduce the residual 1e12 times.
  auto sim = make(clamped_cube(4, {"solver.variant=tolerance", "hexmg.tolerance=1e-12", "hexmg.max_iterations=1"}), r);
  sim->advance(3);
  const ValidityCounts v = sim->validity();
  EXPECT_EQ(v.solver_failures, 3);
  EXPECT_EQ(v.first_solver_failure_step, 1);
  const SolverStats st = sim->solver_stats();
  ASSERT_TRUE(st.converged.has_value());
  EXPECT_FALSE(*st.converged);
  EXPECT_EQ(st.iterations, 1);
  // A tolerance it can meet: converged, no failure.
  auto ok = make(clamped_cube(4, {"solver.variant=tolerance", "hexmg.tolerance=1e-3", "hexmg.max_iterations=50"}), r);
  ok->advance(3);
  EXPECT_EQ(ok->validity().solver_failures, 0);
  const SolverStats so = ok->solver_stats();
  ASSERT_TRUE(so.converged.has_value());
  EXPECT_TRUE(*so.converged);
  EXPECT_LE(so.reduction(), 1e-3);
}

TEST_P(Validity, LinearVariantChecksNoDetF) {
  const Regime r = GetParam();
  EB_HEXMG_SKIP_WITHOUT_DEVICE(r);
  auto sim = make(clamped_cube(3, {"hexmg.corotated=false"}), r);
  sim->advance(2);
  EXPECT_FALSE(sim->validity().det_f_checked);
}

INSTANTIATE_TEST_SUITE_P(Regimes, Validity, ::testing::ValuesIn(regimes()), regime_name);

}  // namespace
}  // namespace eb::hexmg::test
