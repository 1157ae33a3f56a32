// Multigrid: (1) the V-cycle reduces the residual by at least 5x per cycle on a homogeneous
// clamped cube (Dick 2011 Fig. 11 material, 3 levels); (2) the multigrid solution of one step
// equals an Eigen direct sparse solve (fp64) of the same assembled system.
#include <Eigen/Sparse>
#include <Eigen/SparseLU>
#include <cstdio>

#include "tests/hexmg/hexmg_test_util.h"

namespace eb::hexmg::test {
namespace {

class Multigrid : public ::testing::TestWithParam<Regime> {};

TEST_P(Multigrid, VcycleReducesResidualFiveFold) {
  const Regime r = GetParam();
  EB_HEXMG_SKIP_WITHOUT_DEVICE(r);
  auto sim = make(clamped_cube(16), r);
  ASSERT_EQ(sim->model().n_levels(), 3);
  sim->begin_step();  // first step from rest: the residual is the full gravity load
  std::vector<double> res = {sim->system_residual()};
  const int cycles = r.precision == Precision::Fp64 ? 6 : 4;
  for (int c = 0; c < cycles; ++c) {
    sim->vcycle();
    res.push_back(sim->system_residual());
  }
  // The first cycle starts from u = 0 against the full load; the rate after it is the
  // asymptotic one. Both the mean over all cycles and every later cycle must reach 0.2.
  double worst_later = 0;
  for (int c = 1; c <= cycles; ++c) {
    const double f = res[c] / res[c - 1];
    std::printf("cycle %d: |r| = %.4e, factor %.4f\n", c, res[c], f);
    if (c > 1) worst_later = std::max(worst_later, f);
  }
  const double mean = std::pow(res[cycles] / res[0], 1.0 / cycles);
  std::printf("mean reduction factor per V-cycle: %.4f (worst after the first %.4f)\n", mean, worst_later);
  EXPECT_LE(mean, 0.2);
  EXPECT_LE(worst_later, 0.2);
}

TEST_P(Multigrid, EqualsDirectSparseSolve) {
  const Regime r = GetParam();
  EB_HEXMG_SKIP_WITHOUT_DEVICE(r);
  auto sim = make(clamped_cube(10, {"solver.variant=tolerance", "hexmg.max_iterations=60",
                                    r.precision == Precision::Fp64 ? "hexmg.tolerance=1e-12" : "hexmg.tolerance=1e-5"}),
                  r);
  ASSERT_EQ(sim->model().n_levels(), 2);
  // Two steps so that the second system has rotations and a non-trivial initial guess.
  sim->advance(1);
  sim->begin_step();
  std::vector<HexmgSimulation::Triplet> trip;
  std::vector<double> b, u0;
  sim->export_system(trip, b, u0);
  const int64_t n = int64_t(b.size());
  Eigen::SparseMatrix<double> A(n, n);
  std::vector<Eigen::Triplet<double>> t;
  for (const auto& e : trip) t.emplace_back(e.row, e.col, e.value);
  A.setFromTriplets(t.begin(), t.end());
  Eigen::SparseLU<Eigen::SparseMatrix<double>> lu(A);
  ASSERT_EQ(lu.info(), Eigen::Success);
  const Eigen::VectorXd x = lu.solve(Eigen::Map<Eigen::VectorXd>(b.data(), n));
  // The assembled system is symmetric (Dirichlet columns eliminated).
  Eigen::SparseMatrix<double> At = A.transpose();
  EXPECT_LT((A - At).norm(), 1e-6 * A.norm());
  const double r0 = sim->system_residual();
  for (int c = 0; c < 60 && sim->system_residual() > (r.precision == Precision::Fp64 ? 1e-12 : 1e-6) * r0; ++c) sim->vcycle();
  std::vector<HexmgSimulation::Triplet> unused;
  std::vector<double> b2, u;
  sim->export_system(unused, b2, u);
  double num = 0, den = 0;
  for (int64_t i = 0; i < n; ++i) {
    num += (u[i] - x[i]) * (u[i] - x[i]);
    den += x[i] * x[i];
  }
  const double rel = std::sqrt(num / den);
  std::printf("multigrid vs direct: relative difference %.3e\n", rel);
  EXPECT_LT(rel, r.precision == Precision::Fp64 ? 1e-6 : 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Backends, Multigrid, ::testing::ValuesIn(regimes()), regime_name);

}  // namespace
}  // namespace eb::hexmg::test
