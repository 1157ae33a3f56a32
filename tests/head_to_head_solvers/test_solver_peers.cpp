// Every CPU solver of the head-to-head comparison solves small elasticity systems (hexmg's step
// on the cantilever in hexahedra, bcsr-pcg's on the cantilever in tetrahedra) to a relative
// residual of 1e-6, and its solution agrees with Eigen's SimplicialLDLT; the tet system's
// element-wise product equals its assembled matrix.
#include <gtest/gtest.h>

#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>
#include <cmath>
#include <random>

#include "experiments/head_to_head/solver_peers.h"
#include "experiments/head_to_head/solver_system.h"
#include "solvers/linalg/spmv_cpu.h"

namespace eb::head_to_head {
namespace {

RunOptions one_thread() {
  RunOptions ro;
  ro.threads = 1;
  return ro;
}

const SolverSystem& hex() {
  static const SolverSystem s = hex_system(load_scenario("cantilever", {"mesh.element_size=0.05"}), one_thread());
  return s;
}
const SolverSystem& tet() {
  static const SolverSystem s = tet_system(load_scenario("cantilever", {"mesh.element_size=0.05"}), one_thread(), 3);
  return s;
}

std::vector<double> direct_solution(const SolverSystem& s) {
  std::vector<Eigen::Triplet<double>> t;
  for (std::size_t k = 0; k < s.A.nnz(); ++k) t.emplace_back(s.A.row[k], s.A.col[k], s.A.val[k]);
  Eigen::SparseMatrix<double> A(s.A.rows, s.A.cols);
  A.setFromTriplets(t.begin(), t.end());
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> f(A);
  EXPECT_EQ(f.info(), Eigen::Success);
  const Eigen::VectorXd x = f.solve(Eigen::Map<const Eigen::VectorXd>(s.b.data(), Eigen::Index(s.b.size())));
  return {x.data(), x.data() + x.size()};
}

void check_peers(const SolverSystem& sys) {
  const std::vector<double> ref = direct_solution(sys);
  double ref_norm = 0;
  for (double v : ref) ref_norm += v * v;
  ref_norm = std::sqrt(ref_norm);
  ASSERT_GT(ref_norm, 0);
  PeerSettings ps;
  int ran = 0;
  for (const Peer& p : solver_peers(ps)) {
    if (p.backend != "cpu" || (p.family != "any" && p.family != sys.family)) continue;
    if (!p.unavailable.empty()) {
      std::cout << "[ NOTE ] " << p.name << " absent: " << p.unavailable << "\n";
      continue;
    }
#if defined(__SANITIZE_ADDRESS__)
    // OpenMPI's singleton start, which hypre needs, keeps its allocations to the end by design.
    if (p.name == "hypre-amg-pcg") continue;
#endif
    SCOPED_TRACE(p.name + " on the " + sys.family + " cantilever");
    SolveLimits lim;
    lim.history = true;
    const SolveRun r = p.run(sys, lim);
    ++ran;
    EXPECT_TRUE(r.converged);
    ASSERT_EQ(r.solution.size(), sys.b.size());
    // The residual recomputed here, not the one the solver reports.
    const double res = true_relative_residual(sys.csr, sys.b, r.solution.data());
    EXPECT_LE(res, 1e-6 * (1 + 1e-9));
    EXPECT_NEAR(res, r.relative_residual, 1e-3 * res + 1e-15);
    double err = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) err += (r.solution[i] - ref[i]) * (r.solution[i] - ref[i]);
    EXPECT_LE(std::sqrt(err) / ref_norm, 1e-3);
    EXPECT_GE(r.history.seconds.size(), 1u);
    EXPECT_EQ(r.history.seconds.size(), r.history.relative_residual.size());
    EXPECT_GE(r.setup_seconds, 0);
    EXPECT_GE(r.solve_seconds, 0);
  }
  EXPECT_GE(ran, 5);
}

TEST(SolverPeers, HexSystemEveryCpuSolverAgreesWithLdlt) { check_peers(hex()); }
TEST(SolverPeers, TetSystemEveryCpuSolverAgreesWithLdlt) { check_peers(tet()); }

TEST(SolverSystems, ElementWiseProductEqualsAssembledMatrix) {
  const SolverSystem& s = tet();
  ASSERT_TRUE(s.element_product);
  std::mt19937 rng(3);
  std::normal_distribution<double> g;
  std::vector<double> x(s.b.size()), y(x.size()), z(x.size());
  for (int trial = 0; trial < 3; ++trial) {
    for (auto& v : x) v = g(rng);
    s.element_product(x.data(), y.data());
    linalg::spmv(s.csr, x.data(), z.data());
    double d = 0, n = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      d = std::max(d, std::abs(y[i] - z[i]));
      n = std::max(n, std::abs(z[i]));
    }
    EXPECT_LE(d, 1e-12 * n) << "trial " << trial;
  }
}

TEST(SolverSystems, SystemsAreSymmetricWithAPositiveDiagonal) {
  for (const SolverSystem* s : {&hex(), &tet()}) {
    const auto csr = s->csr;
    std::vector<double> d(s->b.size());
    linalg::diagonal(csr, d.data());
    for (double v : d) ASSERT_GT(v, 0);
    std::map<std::pair<int, int>, double> m;
    for (std::size_t k = 0; k < s->A.nnz(); ++k) m[{s->A.row[k], s->A.col[k]}] = s->A.val[k];
    double asym = 0, big = 0;
    for (const auto& [rc, v] : m) {
      const auto it = m.find({rc.second, rc.first});
      asym = std::max(asym, std::abs(v - (it == m.end() ? 0.0 : it->second)));
      big = std::max(big, std::abs(v));
    }
    EXPECT_LE(asym, 1e-10 * big) << s->family;
  }
}

}  // namespace
}  // namespace eb::head_to_head
