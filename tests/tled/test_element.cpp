// Element mathematics of assembly/tled/hex8_tled.h (host instantiation, float and double):
// geometry, kinematics, stress against an energy derivative, nodal forces against the energy
// gradient, damage law, the device load-curve twin, and the closed-form uniaxial solution.
#include <gtest/gtest.h>

#include <cmath>

#include "assembly/tled/hex8_tled.h"
#include "solvers/common/scenario.h"
#include "solvers/tled/exact_solution.h"
#include "tests/tled/tled_test_util.h"

namespace eb::tled {
namespace {

using test::distorted_hex;

template <class T>
class ElementMath : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ElementMath, Scalars);

TYPED_TEST(ElementMath, SignsAndAntipodes) {
  for (int a = 0; a < 8; ++a)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(hex_sign(hex_antipode(a), k), -hex_sign(a, k));
  EXPECT_EQ(hex_sign(0, 0), -1);
  EXPECT_EQ(hex_sign(6, 0) + hex_sign(6, 1) + hex_sign(6, 2), 3);
}

TYPED_TEST(ElementMath, AffineFieldGivesExactGradientOnDistortedHex) {
  using T = TypeParam;
  double xd[8][3];
  distorted_hex(xd);
  T x[8][3], G[9], V;
  for (int a = 0; a < 8; ++a)
    for (int k = 0; k < 3; ++k) x[a][k] = T(xd[a][k]);
  ASSERT_GT(hex8_reference_geometry(x, G, V), T(0));
  // u = A X is reproduced exactly by the trilinear interpolation, so F = I + A at the centre.
  const double A[3][3] = {{0.1, -0.2, 0.05}, {0.03, -0.15, 0.07}, {-0.04, 0.02, 0.2}};
  T u[8][3], F[9];
  for (int a = 0; a < 8; ++a)
    for (int i = 0; i < 3; ++i) u[a][i] = T(A[i][0] * xd[a][0] + A[i][1] * xd[a][1] + A[i][2] * xd[a][2]);
  deformation_gradient(u, G, F);
  const double tol = sizeof(T) == 4 ? 2e-5 : 1e-12;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(double(F[3 * i + j]), (i == j ? 1.0 : 0.0) + A[i][j], tol);
  // Partition of unity: the shape-function gradients sum to zero.
  for (int j = 0; j < 3; ++j) {
    double sum = 0;
    for (int a = 0; a < 8; ++a) {
      T dN[3];
      hex8_shape_gradient(G, a, dN);
      sum += double(dN[j]);
    }
    EXPECT_NEAR(sum, 0.0, sizeof(T) == 4 ? 1e-3 : 1e-10);
  }
}

TYPED_TEST(ElementMath, VolumeOfParallelepipedAndInvertedElement) {
  using T = TypeParam;
  // A sheared box: V = 0.01 * 0.02 * 0.03 regardless of shear.
  T x[8][3], G[9], V;
  for (int a = 0; a < 8; ++a) {
    const T X = T(hex_sign(a, 0) > 0 ? 0.01 : 0), Y = T(hex_sign(a, 1) > 0 ? 0.02 : 0), Z = T(hex_sign(a, 2) > 0 ? 0.03 : 0);
    x[a][0] = X + T(0.5) * Z;
    x[a][1] = Y;
    x[a][2] = Z;
  }
  ASSERT_GT(hex8_reference_geometry(x, G, V), T(0));
  EXPECT_NEAR(double(V), 6e-6, 6e-6 * 1e-5);
  // Mirroring one axis inverts the element.
  for (int a = 0; a < 8; ++a) x[a][2] = -x[a][2];
  EXPECT_LE(hex8_reference_geometry(x, G, V), T(0));
}

// Psi(C) of Eq. 16, evaluated directly, for the finite-difference checks (double).
double psi_of_F(const double F[9], double mu, double kappa) {
  const NeoHookeanState<double> st = neo_hookean_pk2(F, mu, kappa);
  return st.psi_dev + st.psi_vol;
}

TEST(ElementMathDouble, StressIsTwiceEnergyDerivative) {
  const double mu = 10344.8, kappa = 1e5;
  const double F[9] = {1.05, 0.1, -0.03, 0.02, 0.9, 0.04, -0.05, 0.06, 0.85};
  const NeoHookeanState<double> st = neo_hookean_pk2(F, mu, kappa);
  // dPsi/dF = F S (first Piola-Kirchhoff): central differences of Psi w.r.t. F.
  const int sym[3][3] = {{0, 3, 5}, {3, 1, 4}, {5, 4, 2}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double Fp[9], Fm[9];
      for (int k = 0; k < 9; ++k) Fp[k] = Fm[k] = F[k];
      const double h = 1e-6;
      Fp[3 * i + j] += h;
      Fm[3 * i + j] -= h;
      const double fd = (psi_of_F(Fp, mu, kappa) - psi_of_F(Fm, mu, kappa)) / (2 * h);
      double P = 0;
      for (int k = 0; k < 3; ++k) P += F[3 * i + k] * st.S[sym[k][j]];
      EXPECT_NEAR(P, fd, 1e-6 * (std::abs(fd) + mu));
    }
}

TYPED_TEST(ElementMath, StressFreeUnderRigidRotation) {
  using T = TypeParam;
  const double c = std::cos(0.7), s = std::sin(0.7);
  const T R[9] = {T(c), T(-s), T(0), T(s), T(c), T(0), T(0), T(0), T(1)};
  const NeoHookeanState<T> st = neo_hookean_pk2(R, T(10344.8), T(1e5));
  for (int k = 0; k < 6; ++k) EXPECT_NEAR(double(st.S[k]), 0.0, sizeof(T) == 4 ? 0.05 : 1e-9);
  EXPECT_NEAR(double(st.J), 1.0, 1e-6);
}

TEST(ElementMathDouble, NodalForcesAreEnergyGradient) {
  double xd[8][3];
  distorted_hex(xd);
  double G[9], V;
  ASSERT_GT(hex8_reference_geometry(xd, G, V), 0.0);
  double u[8][3];
  for (int a = 0; a < 8; ++a)
    for (int i = 0; i < 3; ++i) u[a][i] = 1e-3 * std::sin(1.3 * a + 2.1 * i);
  const TledMaterial<double> mat{10344.8, 1e5, 0, 1, 0};
  double f[4][3];
  tled_element_forces<double, false>(u, G, V, mat, nullptr, f);
  // W(u) = V Psi(F(u)); f_a = dW/du_a for every node, the antipodes included (f = -f_a).
  auto energy = [&](double uu[8][3]) {
    double F[9];
    deformation_gradient(uu, G, F);
    return V * psi_of_F(F, mat.mu, mat.kappa);
  };
  double total[3] = {0, 0, 0};
  for (int a = 0; a < 8; ++a)
    for (int i = 0; i < 3; ++i) {
      double up[8][3], um[8][3];
      for (int b = 0; b < 8; ++b)
        for (int k = 0; k < 3; ++k) up[b][k] = um[b][k] = u[b][k];
      const double h = 1e-8;
      up[a][i] += h;
      um[a][i] -= h;
      const double fd = (energy(up) - energy(um)) / (2 * h);
      const double fa = a < 4 ? f[a][i] : -f[hex_antipode(a)][i];
      EXPECT_NEAR(fa, fd, 1e-6 * (std::abs(fd) + 1e-3)) << "node " << a << " component " << i;
      total[i] += fa;
    }
  for (double t : total) EXPECT_NEAR(t, 0.0, 1e-12);  // self-equilibrated
}

TYPED_TEST(ElementMath, DamageLaw) {
  using T = TypeParam;
  T beta = 0;
  const T gamma = T(0.5), m = T(200), psi0 = T(160);
  EXPECT_EQ(damage_update(T(100), psi0, m, gamma, beta), T(0));  // below the threshold
  EXPECT_EQ(beta, T(0));
  const T d1 = damage_update(T(360), psi0, m, gamma, beta);
  EXPECT_NEAR(double(beta), 200.0, 1e-3);
  EXPECT_NEAR(double(d1), 0.5 * (1 - std::exp(-1.0)), 1e-6);
  // Unloading keeps the history: beta is a running maximum, d never decreases.
  const T d2 = damage_update(T(170), psi0, m, gamma, beta);
  EXPECT_EQ(d2, d1);
  EXPECT_NEAR(double(damage_update(T(1e6), psi0, m, gamma, beta)), 0.5, 1e-6);  // saturates at gamma
}

TYPED_TEST(ElementMath, DamageScalesForces) {
  using T = TypeParam;
  double xd[8][3];
  distorted_hex(xd);
  T x[8][3], G[9], V, u[8][3];
  for (int a = 0; a < 8; ++a)
    for (int k = 0; k < 3; ++k) {
      x[a][k] = T(xd[a][k]);
      u[a][k] = T(-2e-3 * xd[a][k] / 0.02 * (k == 2 ? 1.0 : -0.4));
    }
  hex8_reference_geometry(x, G, V);
  const TledMaterial<T> mat{T(10344.8), T(1e5), T(0.5), T(50), T(0)};
  T f0[4][3], f1[4][3], beta = 0;
  tled_element_forces<T, false>(u, G, V, mat, nullptr, f0);
  tled_element_forces<T, true>(u, G, V, mat, &beta, f1);
  ASSERT_GT(beta, T(0));
  const double d = 0.5 * (1 - std::exp(-double(beta) / 50.0));
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(double(f1[a][i]), (1 - d) * double(f0[a][i]), 1e-4 * std::abs(double(f0[a][i])) + 1e-12);
}

TEST(ExactSolution, LateralStressVanishes) {
  const double mu = 10344.8, kappa = 1e5;
  const UniaxialSolution s = uniaxial_neo_hookean(mu, kappa, 0.8);
  const double F[9] = {s.lateral_stretch, 0, 0, 0, s.lateral_stretch, 0, 0, 0, 0.8};
  const NeoHookeanState<double> st = neo_hookean_pk2(F, mu, kappa);
  EXPECT_NEAR(st.S[0], 0.0, 1e-9 * mu);
  EXPECT_NEAR(st.S[1], 0.0, 1e-9 * mu);
  EXPECT_NEAR(st.S[2], s.S_zz, 1e-9 * mu);
  EXPECT_LT(s.S_zz, 0.0);  // compression
  EXPECT_NEAR(st.psi_dev, s.psi_dev, 1e-9);
  // nu = 0.45: nearly but not exactly volume preserving.
  EXPECT_GT(s.J, 0.9);
  EXPECT_LT(s.J, 1.0);
}

}  // namespace
}  // namespace eb::tled
