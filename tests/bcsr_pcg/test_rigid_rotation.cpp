// A rigid rotation produces no elastic force (the point of the co-rotational formulation, Sec.
// 3.3): for u = (Q - I) X with a rotation Q (random axes; 0.05, 0.7, 2.0 and 3.1 rad), the Rotation phase recovers
// R_e = Q in every element, and the Matrix phase with the static coefficients at load factor 0
// (pure elastic force: no inertia, no body force) gives element vectors local_rhs ~ 0; so does
// the assembled right-hand side. "~ 0" is measured against the force of a comparable strain: the
// same run for x = Q (I + eps S) X, S a random symmetric matrix of unit 2-norm and eps = |Q - I|_2,
// i.e. a displacement gradient of the rotation's size that is all strain.
//
// Tolerances (relative to that strain force). Two kinds of rounding leave a force: u = (Q - I) X
// is rigid only to u_p |u| ~ u_p |X| (u_p the unit roundoff, 6e-8 in fp32: u itself is stored in
// the precision), a strain of u_p |X| / h, i.e. u_p |X| / (h eps) of the comparable strain force;
// and the element arithmetic (w = R^T (x_b - x_0) - (X_b - X_0) rounds at the edge h, the
// product R K w at |K| h), u_p / eps of it. So the element vectors must be within
// 100 u_p (|X| / h + 1 / eps) (|X| / h = 13 here, eps = |Q - I|_F from 0.07 to 2.8): measured at most
// 15 u_p (...) in fp64 and 5 u_p (...) in fp32, and the assembled vector, which sums up to 24
// element vectors per node, within 24 times that (measured at most 84 and 16 times u_p (...)).
// R is compared with Q absolutely: u_p (|X| / h) from the rounded u (measured 2e-15 and 9e-7);
// tolerance 100 u_p |X| / h. A co-rotation that misses (R = I, R^T for R, one node's frame) leaves
// a force of order 1 relative.
#include <cstdio>

#include "tests/bcsr_pcg/bcsr_pcg_test_util.h"

namespace eb::bcsr_pcg::test {
namespace {

class RigidRotation : public ::testing::TestWithParam<Regime> {};

struct Forces {
  std::vector<double> R, local_rhs, rhs;
};
Forces static_forces(BcsrPcgSimulation& sim, const Eigen::Matrix3d& A, uint32_t seed) {
  const BcsrPcgSetup& s = sim.setup();
  sim.set_array(PhaseArray::u, affine_displacement(s.nodes, A));
  sim.set_array(PhaseArray::v, random_values(3 * size_t(s.num_nodes), 0.5, seed));  // ignored: no inertia term
  sim.set_coefficients(sim.static_coefficients(0.0));
  sim.set_load_time(0.0, 0.0);
  sim.run_phase(Phase::Rotation);
  sim.run_phase(Phase::Matrix);
  sim.run_phase(Phase::Update);
  return {sim.get_array(PhaseArray::R), sim.get_array(PhaseArray::local_rhs), sim.get_array(PhaseArray::rhs)};
}

TEST_P(RigidRotation, ProducesNoElasticForce) {
  const Regime r = GetParam();
  EB_BCSR_PCG_SKIP_WITHOUT_DEVICE(r);
  const double unit = r.precision == Precision::Fp32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
  auto sim = make(test_box(), r);
  const BcsrPcgSetup& s = sim->setup();
  double X = 0, h = 1e300;  // largest |X|, shortest element edge scale (largest |Dm| entry per element)
  for (const auto& x : s.nodes) X = std::max(X, std::sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]));
  for (int64_t e = 0; e < s.num_elements; ++e) {
    double d = 0;
    for (int k = 0; k < 9; ++k) d = std::max(d, std::abs(s.Dm[size_t(9 * e + k)]));
    h = std::min(h, d);
  }
  const double angles[] = {0.05, 0.7, 2.0, 3.1};
  for (uint32_t seed : {0u, 1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    const Eigen::Vector3d axis = Eigen::Map<const Eigen::Vector3d>(random_values(3, 1.0, seed + 50).data()).normalized();
    const Eigen::Matrix3d Q = Eigen::AngleAxisd(angles[seed], axis).toRotationMatrix();
    const double eps = (Q - Eigen::Matrix3d::Identity()).norm();  // Frobenius >= 2-norm: a generous strain
    Eigen::Matrix3d S = Eigen::Map<const Eigen::Matrix3d>(random_values(9, 1.0, seed + 100).data());
    S = 0.5 * (S + S.transpose());
    S /= S.operatorNorm();
    const double tol = 100 * unit * (X / h + 1 / eps);
    const Forces rigid = static_forces(*sim, Q, seed);
    const Forces strained = static_forces(*sim, Q * (Eigen::Matrix3d::Identity() + eps * S), seed);

    double r_err = 0;
    for (size_t e = 0; e < rigid.R.size() / 9; ++e)
      for (int k = 0; k < 9; ++k) r_err = std::max(r_err, std::abs(rigid.R[9 * e + size_t(k)] - Q(k / 3, k % 3)));
    const double f_ref = max_abs(strained.local_rhs), rel = max_abs(rigid.local_rhs) / f_ref;
    // The assembled vector sums up to 24 element vectors' rounding per node, while a homogeneous
    // strain's element forces cancel at interior nodes: both against the element strain force.
    const double rel_global = max_abs(rigid.rhs) / f_ref;
    std::printf("%s rotation %.2f rad: |R - Q| %.2e; element force %.2e, assembled %.2e of the strain's element force "
                "(%.3e N); in units of u_p (|X|/h + 1/eps): %.1f, %.1f\n",
                regime_label(r).c_str(), angles[seed], r_err, rel, rel_global, f_ref, rel / tol * 100,
                rel_global / tol * 100);
    EXPECT_LE(r_err, 100 * unit * X / h);
    ASSERT_GT(f_ref, 0.0);
    EXPECT_LE(rel, tol);
    EXPECT_LE(rel_global, 24 * tol);
  }
}

INSTANTIATE_TEST_SUITE_P(BcsrPcg, RigidRotation, ::testing::ValuesIn(regimes()), regime_name);

}  // namespace
}  // namespace eb::bcsr_pcg::test
