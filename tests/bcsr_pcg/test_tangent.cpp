// The static iterations' consistent tangent (solvers/tet_model/corotational_tangent.h, assembled
// by element_system with twist = 1) is the derivative of the element's co-rotational force: the
// 12 x 12 local matrix equals minus the central finite difference of the local right-hand side
// (static coefficients: b = body - R K_e (R^T x - X)) in the nodal displacements, on regular and
// distorted tetrahedra in states of a random rotation (up to pi) times a stretch of up to 30%,
// compression included. The warped matrix R K_e R^T alone (twist = 0) must miss it there by far,
// so that the check can tell the two apart; at a pure rotation both equal the derivative.
//
// Tolerance. Central differences with step h = 1e-6 of the edge have a truncation error
// ~ h^2 |f'''| ~ 1e-12 and a rounding error ~ eps |f| / h ~ 1e-10 of the stiffness scale
// (|K_e|, its largest entry): 1e-7 of |K_e| leaves a margin of ~100; measured at most 7e-10.
// The rotation's derivative at 30% stretch is ~0.1-0.3 of |K_e|: the warped matrix misses by
// ~1e-1, six orders above the tolerance.
#include <cstdio>

#include "solvers/bcsr_pcg/bcsr_pcg_element.h"
#include "tests/bcsr_pcg/bcsr_pcg_test_util.h"

namespace eb::bcsr_pcg::test {
namespace {

struct Local {
  double A[12][12];
  double b[12];
};

Local local_system(const double X[4][3], const double u[4][3], double twist) {
  tet::Tet4Reference<double> ref;
  EXPECT_EQ(tet::tet4_reference(X, ref), tet::TetStatus::kOk);
  double Dm[9];
  for (int i = 0; i < 3; ++i)
    for (int a = 0; a < 3; ++a) Dm[3 * i + a] = X[a + 1][i] - X[0][i];
  double R[9], det;
  element_rotation(ref.Dm_inv, u, R, det);
  ElementCoefficients<double> k{0, 0, 1, 1, {0, 0, 0}, twist};
  const tet::Lame<double> lame = tet::lame_from_young_poisson(1.0e6, 0.3);
  const double v[4][3] = {};
  Local out{};
  auto put = [&](int a, int bn, const double* vals) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) out.A[3 * a + i][3 * bn + j] = vals[3 * i + j];
  };
  element_system(R, Dm, ref.Dm_inv, ref.volume, lame, k, u, v, put, out.b, 1);
  return out;
}

// u = Q S X - X for rotation Q (axis, angle) and stretch S (symmetric), plus a random wobble.
void deformed(const double X[4][3], const Eigen::Matrix3d& F, double wobble, std::mt19937& rng, double u[4][3]) {
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  for (int a = 0; a < 4; ++a) {
    const Eigen::Vector3d x = F * Eigen::Vector3d(X[a][0], X[a][1], X[a][2]);
    for (int i = 0; i < 3; ++i) u[a][i] = x[i] - X[a][i] + wobble * d(rng);
  }
}

// Largest |A + db/du| over the largest |A| entry.
double tangent_error(const double X[4][3], const double u[4][3], double twist) {
  const Local at = local_system(X, u, twist);
  double scale = 0, worst = 0;
  for (auto& row : at.A)
    for (double x : row) scale = std::max(scale, std::abs(x));
  const double h = 1e-6;
  for (int c = 0; c < 12; ++c) {
    double up[4][3], um[4][3];
    std::memcpy(up, u, sizeof(up));
    std::memcpy(um, u, sizeof(um));
    up[c / 3][c % 3] += h;
    um[c / 3][c % 3] -= h;
    const Local p = local_system(X, up, twist), m = local_system(X, um, twist);
    for (int r = 0; r < 12; ++r) worst = std::max(worst, std::abs(at.A[r][c] + (p.b[r] - m.b[r]) / (2 * h)));
  }
  return worst / scale;
}

TEST(StaticTangent, ConsistentTangentIsTheForceDerivative) {
  const double regular[4][3] = {{0, 0, 0}, {1, 0, 0}, {0.5, std::sqrt(3.0) / 2, 0}, {0.5, std::sqrt(3.0) / 6, std::sqrt(6.0) / 3}};
  const double sliver[4][3] = {{0, 0, 0}, {1, 0.1, 0}, {0.2, 0.7, 0.05}, {0.4, 0.3, 0.25}};
  std::mt19937 rng(24);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  double worst_consistent = 0, least_warped = 1e300;
  for (const auto* X : {regular, sliver})
    for (int trial = 0; trial < 20; ++trial) {
      const Eigen::Vector3d axis = Eigen::Vector3d(d(rng), d(rng), d(rng)).normalized();
      const Eigen::Matrix3d Q = Eigen::AngleAxisd(3.14159 * d(rng), axis).toRotationMatrix();
      Eigen::Matrix3d G;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) G(i, j) = 0.3 * d(rng);
      const Eigen::Matrix3d S = Eigen::Matrix3d::Identity() + 0.5 * (G + G.transpose());
      double u[4][3];
      deformed(X, Q * S, 0.0, rng, u);
      worst_consistent = std::max(worst_consistent, tangent_error(X, u, 1.0));
      least_warped = std::min(least_warped, tangent_error(X, u, 0.0));
    }
  // A pure rotation: no stress, so the warped matrix is the derivative too.
  double u[4][3];
  deformed(regular, Eigen::AngleAxisd(1.0, Eigen::Vector3d(1, 2, 3).normalized()).toRotationMatrix(), 0.0, rng, u);
  const double rotation_consistent = tangent_error(regular, u, 1.0), rotation_warped = tangent_error(regular, u, 0.0);
  std::printf("consistent tangent against finite differences: worst %.2e of |K_e|; warped: least miss %.2e; pure "
              "rotation: %.2e / %.2e\n",
              worst_consistent, least_warped, rotation_consistent, rotation_warped);
  EXPECT_LE(worst_consistent, 1e-7);
  EXPECT_GE(least_warped, 1e-3);
  EXPECT_LE(rotation_consistent, 1e-7);
  EXPECT_LE(rotation_warped, 1e-7);
}

}  // namespace
}  // namespace eb::bcsr_pcg::test
