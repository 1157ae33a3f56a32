// The matrix-free operator against an explicitly assembled one (fp64, Eigen): on random deformed
// states, A v from the element-by-element gathers equals the assembled (masked) matrix times v to
// 1e-12 relative, for the static (K) and the time step's ((1 + h alpha) M + h (h + beta) K)
// coefficients, ground contacts included; the operator's diagonal likewise. And the edge frame
// against the polar rotation: equal for rigid motions, close for small strains.
#include <Eigen/Dense>

#include "assembly/tet/corotation.h"
#include "corot_cg_test_util.h"

namespace eb::corot_cg::test {
namespace {

class Operator : public ::testing::TestWithParam<Backend> {};

// u = (Q - I) X + noise: a large rotation about an oblique axis plus random strain.
std::vector<double> deformed_state(const CorotCgSetup& s, double angle, double noise, unsigned seed) {
  const double a[3] = {0.3, -0.5, 0.8};
  const double len = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  Eigen::Vector3d axis(a[0] / len, a[1] / len, a[2] / len);
  const Eigen::Matrix3d Q = Eigen::AngleAxisd(angle, axis).toRotationMatrix();
  std::vector<double> u = random_vector(3 * size_t(s.num_nodes), noise, seed);
  for (size_t n = 0; n < size_t(s.num_nodes); ++n) {
    const Eigen::Vector3d X(s.nodes[n][0], s.nodes[n][1], s.nodes[n][2]);
    const Eigen::Vector3d d = Q * X - X;
    for (int i = 0; i < 3; ++i) u[3 * n + size_t(i)] += d[i];
  }
  return u;
}

// The assembled operator: sum_e R_e K_e R_e^T (+ ground k n n^T at nodes below the plane), times
// k.stiffness, plus k.mass M; fixed rows and columns replaced by the identity.
Eigen::MatrixXd assembled(const CorotCgSetup& s, const std::vector<double>& R, const std::vector<double>& u,
                          const RayleighEuler<double>& k) {
  const size_t n = 3 * size_t(s.num_nodes);
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(Eigen::Index(n), Eigen::Index(n));
  const tet::Lame<double> lame{s.lambda, s.mu};
  for (size_t e = 0; e < size_t(s.num_elements); ++e) {
    tet::Tet4Reference<double> ref;
    std::copy(s.Dm_inv.begin() + 9 * long(e), s.Dm_inv.begin() + 9 * long(e) + 9, ref.Dm_inv);
    ref.volume = s.volume[e];
    double K[144], KR[144];
    tet::tet4_linear_stiffness(ref, lame, K);
    tet::rotate_stiffness(&R[9 * e], K, KR);
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            A(3 * s.connectivity[4 * e + size_t(a)] + i, 3 * s.connectivity[4 * e + size_t(b)] + j) +=
                k.stiffness * KR[(3 * a + i) * 12 + 3 * b + j];
  }
  for (size_t node = 0; node < size_t(s.num_nodes); ++node) {
    for (int i = 0; i < 3; ++i) A(Eigen::Index(3 * node) + i, Eigen::Index(3 * node) + i) += k.mass * s.mass[node];
    if (!s.ground) continue;
    double depth = -s.ground_height;
    for (int i = 0; i < 3; ++i) depth += s.ground_normal[i] * (s.nodes[node][size_t(i)] + u[3 * node + size_t(i)]);
    if (depth < 0)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          A(Eigen::Index(3 * node) + i, Eigen::Index(3 * node) + j) +=
              k.stiffness * s.ground_stiffness * s.ground_normal[i] * s.ground_normal[j];
  }
  for (size_t r = 0; r < n; ++r)
    if (s.fixed_rows[r]) {
      A.row(Eigen::Index(r)).setZero();
      A.col(Eigen::Index(r)).setZero();
      A(Eigen::Index(r), Eigen::Index(r)) = 1.0;
    }
  return A;
}

TEST_P(Operator, MatrixFreeProductEqualsAssembledMatrix) {
  EB_COROT_CG_SKIP_WITHOUT_DEVICE(GetParam());
  for (const char* variant : {"edge", "polar"}) {
    const Scenario sc = scenario_from_toml(box_toml(), {std::string("solver.variant=") + variant});
    auto sim = make_corot_cg(sc, run_options(GetParam(), Precision::Fp64));
    const CorotCgSetup& s = sim->setup();
    for (unsigned seed : {1u, 2u, 3u}) {
      const std::vector<double> u = deformed_state(s, 0.4 * seed, 0.002, seed);
      sim->set_array(StageArray::u, u);
      sim->set_array(StageArray::v, random_vector(u.size(), 0.1, seed + 10));
      for (const RayleighEuler<double> k : {static_coefficients<double>(), rayleigh_euler<double>(0.01, 0.5, 0.002)}) {
        sim->set_coefficients(k);
        sim->run_stage(Stage::Forces);
        const std::vector<double> R = sim->get_array(StageArray::R);
        const Eigen::MatrixXd A = assembled(s, R, u, k);
        const std::vector<double> v = random_vector(u.size(), 1.0, seed + 20);
        const std::vector<double> y = sim->apply_operator(v);
        const Eigen::VectorXd ya = A * Eigen::Map<const Eigen::VectorXd>(v.data(), Eigen::Index(v.size()));
        const std::vector<double> yref(ya.data(), ya.data() + ya.size());
        EXPECT_LT(rel_diff(y, yref), 1e-12) << variant << " seed " << seed << " mass " << k.mass;
        // The diagonal the Jacobi preconditioner reads (free rows: the unmasked operator's).
        const std::vector<double> d = sim->get_array(StageArray::diag);
        std::vector<double> dref(d.size()), dgot(d.size());
        for (size_t r = 0; r < d.size(); ++r) {
          dref[r] = s.fixed_rows[r] ? 0.0 : A(Eigen::Index(r), Eigen::Index(r));
          dgot[r] = s.fixed_rows[r] ? 0.0 : d[r];
        }
        EXPECT_LT(rel_diff(dgot, dref), 1e-12) << variant << " seed " << seed;
      }
    }
  }
}

// The edge frame and the polar rotation are both exact for rigid motions, and differ by the order
// of the strain otherwise (the edge frame follows edge 01, the polar factor the average).
TEST_P(Operator, EdgeFrameAndPolarAgreeForSmallDeformations) {
  EB_COROT_CG_SKIP_WITHOUT_DEVICE(GetParam());
  std::vector<double> R[2];
  std::vector<double> u;
  for (int k = 0; k < 2; ++k) {
    const Scenario sc = scenario_from_toml(box_toml(), {std::string("solver.variant=") + (k ? "polar" : "edge")});
    auto sim = make_corot_cg(sc, run_options(GetParam(), Precision::Fp64));
    for (double noise : {0.0, 1e-7}) {
      u = deformed_state(sim->setup(), 0.9, noise * 0.02, 5);
      sim->set_array(StageArray::u, u);
      sim->set_coefficients(static_coefficients<double>());
      sim->run_stage(Stage::Forces);
      if (noise == 0.0) {
        const std::vector<double> Rr = sim->get_array(StageArray::R);
        // Rigid: every element's R is the same rotation.
        for (size_t e = 1; e < Rr.size() / 9; ++e)
          for (int q = 0; q < 9; ++q) ASSERT_NEAR(Rr[9 * e + size_t(q)], Rr[size_t(q)], 1e-12);
      } else {
        R[k] = sim->get_array(StageArray::R);
      }
    }
  }
  double worst = 0;
  for (size_t i = 0; i < R[0].size(); ++i) worst = std::max(worst, std::abs(R[0][i] - R[1][i]));
  // Strains of about 1e-7 (noise 2e-9 over 2 cm edges): rotations agree to a few 1e-7.
  EXPECT_LT(worst, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(CorotCg, Operator,
#if defined(EB_COROT_CG_TEST_CUDA)
                         ::testing::Values(Backend::Cuda),
#else
                         ::testing::Values(Backend::Cpu),
#endif
                         [](const ::testing::TestParamInfo<Backend>& i) { return to_string(i.param); });

}  // namespace
}  // namespace eb::corot_cg::test
