// tet4 geometry (reference data, gradients, F, degenerate elements) and mass matrices, float
// and double.
#include <gtest/gtest.h>

#include <limits>

#include "meshes/geometry.h"
#include "tests/tet/tet_test_util.h"

namespace eb::tet::test {
namespace {

template <class T>
class Tet4Geometry : public ::testing::Test {};
TYPED_TEST_SUITE(Tet4Geometry, Scalars);

// sum_a X_a (grad N_a)^T = I and sum_a grad N_a = 0 (a linear field is reproduced exactly),
// the volume agrees with the mesh layer's, and an affine map x = A X + t gives F = A.
TYPED_TEST(Tet4Geometry, GradientsReproduceLinearFields) {
  using T = TypeParam;
  std::mt19937_64 rng(11);
  double worst_identity = 0, worst_sum = 0, worst_volume = 0, worst_F = 0;
  for (int trial = 0; trial < 200; ++trial) {
    double Xd[4][3];
    const double centre[3] = {0.3, -0.2, 0.1};
    random_element(rng, Xd, 0.1 + trial * 0.01, centre);
    const Element<T> el(Xd);
    ASSERT_EQ(el.status, TetStatus::kOk);
    const auto& X = el.X;
    const Tet4Reference<T>& ref = el.ref;
    // The mesh layer's volume of the same (rounded) coordinates.
    mesh::Vec3 p[4];
    for (int a = 0; a < 4; ++a) p[a] = {double(X[a][0]), double(X[a][1]), double(X[a][2])};
    const double v = mesh::tet_signed_volume(p[0], p[1], p[2], p[3]);
    worst_volume = std::max(worst_volume, std::abs(double(ref.volume) - v) / v);
    EXPECT_NEAR(double(tet4_signed_volume(X)), v, 1e2 * rounding_tol<T>() * v);
    T G[4][3];
    tet4_shape_gradients(ref.Dm_inv, G);
    double gmax = 0;
    for (int a = 0; a < 4; ++a)
      for (int j = 0; j < 3; ++j) gmax = std::max(gmax, std::abs(double(G[a][j])));
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int a = 0; a < 4; ++a) s += G[a][j];
      worst_sum = std::max(worst_sum, std::abs(s) / gmax);
    }
    // Relative to the centroid, so that the check measures the gradients, not the offset.
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double s = 0;
        for (int a = 0; a < 4; ++a) s += (double(X[a][i]) - centre[i]) * double(G[a][j]);
        worst_identity = std::max(worst_identity, std::abs(s - (i == j ? 1.0 : 0.0)));
      }
    double A[9], t[3] = {0.05, -0.1, 0.2}, xd[4][3];
    random_deformation(rng, 0.3, A);
    map_affine(A, t, Xd, xd);
    T x[4][3], F[9];
    cast4(xd, x);
    tet4_deformation_gradient(x, ref.Dm_inv, F);
    worst_F = std::max(worst_F, max_abs_diff(F, A, 9) / max_abs(A, 9));
  }
  const double tol = rounding_tol<T>();
  EXPECT_LT(worst_identity, 10 * tol);
  EXPECT_LT(worst_sum, tol);
  EXPECT_LT(worst_volume, tol);
  EXPECT_LT(worst_F, 20 * tol);
  std::printf("[ numbers  ] %s: |sum X grad N - I| %.2e, |sum grad N| %.2e, volume rel %.2e, F rel %.2e\n",
              scalar_name<T>(), worst_identity, worst_sum, worst_volume, worst_F);
}

TYPED_TEST(Tet4Geometry, OrientationIsReportedAndHarmless) {
  using T = TypeParam;
  std::mt19937_64 rng(12);
  double Xd[4][3];
  random_element(rng, Xd);
  T X[4][3], Y[4][3];
  cast4(Xd, X);
  cast4(Xd, Y);
  std::swap(Y[2], Y[3]);  // the same element, negatively oriented
  Tet4Reference<T> rx, ry;
  ASSERT_EQ(tet4_reference(X, rx), TetStatus::kOk);
  ASSERT_EQ(tet4_reference(Y, ry), TetStatus::kInverted);
  EXPECT_LT(tet4_signed_volume(Y), T(0));
  EXPECT_NEAR(double(rx.volume), double(ry.volume), rounding_tol<T>() * double(rx.volume));
  // The same stiffness up to the node permutation.
  T Kx[144], Ky[144];
  const Lame<T> m{T(2), T(1)};
  tet4_linear_stiffness(rx, m, Kx);
  tet4_linear_stiffness(ry, m, Ky);
  const int perm[4] = {0, 1, 3, 2};
  double kmax = 0, diff = 0;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          const double kx = Kx[(3 * a + i) * 12 + 3 * b + j];
          const double ky = Ky[(3 * perm[a] + i) * 12 + 3 * perm[b] + j];
          kmax = std::max(kmax, std::abs(kx));
          diff = std::max(diff, std::abs(kx - ky));
        }
  EXPECT_LT(diff, rounding_tol<T>() * kmax);
}

// Degenerate and non-finite reference elements: a status, zero outputs, nothing non-finite.
TYPED_TEST(Tet4Geometry, DegenerateElementsAreReported) {
  using T = TypeParam;
  const T r = degenerate_volume_ratio<T>();
  struct Case {
    const char* name;
    T X[4][3];
    TetStatus expect;
  };
  // Longest edge of the "flat" family: sqrt(2) (between nodes 1 and 2), so the threshold
  // volume is r * 2^1.5; node 3 at height h gives V = h / 6.
  const T l3 = T(2 * std::sqrt(2.0));
  const T h_below = T(0.5) * T(6) * r * l3, h_above = T(2) * T(6) * r * l3;
  const T inf = std::numeric_limits<T>::infinity(), nan = std::numeric_limits<T>::quiet_NaN();
  const Case cases[] = {
      {"coplanar", {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {T(0.3), T(0.3), 0}}, TetStatus::kDegenerate},
      {"collinear", {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {T(0.5), 1, 0}}, TetStatus::kDegenerate},
      {"two coincident nodes", {{0, 0, 0}, {1, 0, 0}, {1, 0, 0}, {0, 0, 1}}, TetStatus::kDegenerate},
      {"one point", {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}, {1, 2, 3}}, TetStatus::kDegenerate},
      {"below the threshold", {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {T(0.2), T(0.2), h_below}}, TetStatus::kDegenerate},
      {"above the threshold", {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {T(0.2), T(0.2), h_above}}, TetStatus::kOk},
      {"NaN", {{0, 0, 0}, {1, 0, 0}, {0, nan, 0}, {0, 0, 1}}, TetStatus::kNonFinite},
      {"infinity", {{0, 0, 0}, {inf, 0, 0}, {0, 1, 0}, {0, 0, 1}}, TetStatus::kNonFinite},
  };
  for (const Case& c : cases) {
    Tet4Reference<T> ref;
    for (T& v : ref.Dm_inv) v = T(7);
    EXPECT_EQ(tet4_reference(c.X, ref), c.expect) << c.name;
    EXPECT_TRUE(all_finite(ref.Dm_inv, 9) && is_finite(ref.volume)) << c.name;
    if (c.expect != TetStatus::kOk) {
      EXPECT_EQ(ref.volume, T(0)) << c.name;
      for (T v : ref.Dm_inv) EXPECT_EQ(v, T(0)) << c.name;
    }
  }
}

// The fp64 threshold is the mesh layer's: every mesh the readers accept passes here.
TEST(Tet4Geometry, Fp64ThresholdIsTheMeshLayers) {
  EXPECT_EQ(degenerate_volume_ratio<double>(), mesh::kDegenerateRelVolume);
}

TEST(Tet4Geometry, CastReferenceKeepsTheFp64Geometry) {
  std::mt19937_64 rng(13);
  double X[4][3];
  random_element(rng, X);
  Tet4Reference<double> rd;
  ASSERT_EQ(tet4_reference(X, rd), TetStatus::kOk);
  const Tet4Reference<float> rf = cast_reference<float>(rd);
  for (int k = 0; k < 9; ++k) EXPECT_EQ(rf.Dm_inv[k], float(rd.Dm_inv[k]));
  EXPECT_EQ(rf.volume, float(rd.volume));
}

// Consistent mass: per direction the entries sum to rho V, each row to the lumped mass, and it
// equals rho int N_a N_b dV by a quadrature exact for quadratics (Keast's 4-point rule).
TYPED_TEST(Tet4Geometry, MassMatrices) {
  using T = TypeParam;
  const T rho = T(1234.5), V = T(0.0173);
  T M[16];
  tet4_consistent_mass(rho, V, M);
  double total = 0;
  for (int a = 0; a < 4; ++a) {
    double row = 0;
    for (int b = 0; b < 4; ++b) {
      row += M[4 * a + b];
      EXPECT_EQ(M[4 * a + b], M[4 * b + a]);
    }
    EXPECT_NEAR(row, double(tet4_lumped_mass(rho, V)), rounding_tol<T>() * row);
    total += row;
  }
  EXPECT_NEAR(total, double(rho) * double(V), rounding_tol<T>() * total);
  // Points at barycentric (alpha, beta, beta, beta) permutations, weight V/4 each.
  const double alpha = 0.5854101966249685, beta = 0.1381966011250105;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      double q = 0;
      for (int p = 0; p < 4; ++p) q += (a == p ? alpha : beta) * (b == p ? alpha : beta) * double(V) / 4;
      EXPECT_NEAR(double(M[4 * a + b]), double(rho) * q, rounding_tol<T>() * double(rho) * q);
    }
}

}  // namespace
}  // namespace eb::tet::test
