// Cecka's compressible neo-Hookean tet4: energy, stress and tangent against closed forms and
// central finite differences (fp64), rigid rotations (float, double), inverted elements.
#include <gtest/gtest.h>

#include <limits>

#include "tests/tet/tet_test_util.h"

namespace eb::tet::test {
namespace {

template <class T>
class NeoHookean : public ::testing::Test {};
TYPED_TEST_SUITE(NeoHookean, Scalars);

// W for F = diag(2, 1, 1): mu/2 (4 + 1 + 1 - 3) + lambda/2 ln^2 2 - mu ln 2; P = mu F +
// (lambda ln 2 - mu) F^{-T}.
TYPED_TEST(NeoHookean, ClosedFormUniaxialStretch) {
  using T = TypeParam;
  const Lame<T> m{T(2), T(5)};
  const T F[9] = {2, 0, 0, 0, 1, 0, 0, 0, 1};
  NeoHookeanKinematics<T> k;
  ASSERT_EQ(neo_hookean_kinematics(F, k), TetStatus::kOk);
  const double l2 = std::log(2.0), lam = 2, mu = 5;
  const double W = mu / 2 * 3 + lam / 2 * l2 * l2 - mu * l2;
  EXPECT_NEAR(double(neo_hookean_energy_density(k, m)), W, rounding_tol<T>() * W);
  T P[9];
  neo_hookean_pk1(k, m, P);
  const double c = lam * l2 - mu;
  const double Pexp[9] = {2 * mu + c / 2, 0, 0, 0, mu + c, 0, 0, 0, mu + c};
  for (int i = 0; i < 9; ++i) EXPECT_NEAR(double(P[i]), Pexp[i], rounding_tol<T>() * mu) << i;
}

// Rotations are stress free: P(Q) = 0, W(Q) = 0, and the element force of x = Q X + t is zero.
TYPED_TEST(NeoHookean, RigidRotationHasNoStress) {
  using T = TypeParam;
  std::mt19937_64 rng(41);
  const Lame<T> m{T(2), T(5)};
  double worst_P = 0, worst_W = 0, worst_f = 0;
  for (int trial = 0; trial < 100; ++trial) {
    double Qd[9], Xd[4][3], xd[4][3];
    random_rotation(rng, Qd);
    random_element(rng, Xd, 0.5);
    const double t[3] = {0.2, 0.1, -0.3};
    map_affine(Qd, t, Xd, xd);
    T Q[9];
    cast_n(Qd, Q, 9);
    const Element<T> el(Xd, xd);
    ASSERT_EQ(el.status, TetStatus::kOk);
    NeoHookeanKinematics<T> k;
    ASSERT_EQ(neo_hookean_kinematics(Q, k), TetStatus::kOk);
    T P[9];
    neo_hookean_pk1(k, m, P);
    double Pd[9];
    widen(P, Pd, 9);
    worst_P = std::max(worst_P, max_abs(Pd, 9) / 5.0);
    worst_W = std::max(worst_W, std::abs(double(neo_hookean_energy_density(k, m))) / 5.0);
    T f[12], K[144], E;
    ASSERT_EQ(neo_hookean_element_force(el.ref, el.x, m, f, &E), TetStatus::kOk);
    tet4_linear_stiffness(el.ref, m, K);
    double fd[12], Kd[144];
    widen(f, fd, 12);
    widen(K, Kd, 144);
    worst_f = std::max(worst_f, max_abs(fd, 12) / (max_abs(Kd, 144) * 0.5));
  }
  const double tol = rounding_tol<T>();
  EXPECT_LT(worst_P, tol);
  EXPECT_LT(worst_W, tol);
  EXPECT_LT(worst_f, 10 * tol);
  std::printf("[ numbers  ] %s: rotation |P| / mu %.2e, |W| / mu %.2e, |f| / (|K| size) %.2e\n",
              scalar_name<T>(), worst_P, worst_W, worst_f);
}

double rel_diff(const double* a, const double* b, int n) {
  double d = 0, s = 0;
  for (int i = 0; i < n; ++i) {
    d = std::max(d, std::abs(a[i] - b[i]));
    s = std::max(s, std::abs(b[i]));
  }
  return d / s;
}

// Random deformed elements (strains up to 40%, any rotation, mu = 5, lambda = 2 or 50).
struct Sample {
  Tet4Reference<double> ref;
  double x[4][3];
  Lame<double> m;
};
Sample sample(std::mt19937_64& rng, int trial) {
  Sample s;
  double X[4][3], F[9];
  random_element(rng, X, 0.2 + 0.1 * (trial % 7));
  EXPECT_EQ(tet4_reference(X, s.ref), TetStatus::kOk);
  random_deformation(rng, 0.4, F);
  const double t[3] = {0.1, 0.2, 0.3};
  map_affine(F, t, X, s.x);
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < 3; ++i) s.x[a][i] += 0.03 * std::cos(1.0 + 5.0 * a + 2.0 * i + trial);
  s.m = Lame<double>{trial % 2 ? 50.0 : 2.0, 5.0};
  return s;
}

// f = dE/dx by central differences: h = 1e-5 of the element size (truncation ~h^2, rounding
// ~1e-16 / h, both far below 1e-6).
TEST(NeoHookean, ForceIsTheEnergyGradient) {
  std::mt19937_64 rng(42);
  double worst = 0;
  for (int trial = 0; trial < 100; ++trial) {
    Sample s = sample(rng, trial);
    double f[12], E;
    ASSERT_EQ(neo_hookean_element_force(s.ref, s.x, s.m, f, &E), TetStatus::kOk);
    const double h = 1e-5 * std::cbrt(s.ref.volume);
    double fd[12];
    for (int r = 0; r < 12; ++r) {
      double Ep, Em, dummy[12];
      double& xr = s.x[r / 3][r % 3];
      const double x0 = xr;
      xr = x0 + h;
      ASSERT_EQ(neo_hookean_element_force(s.ref, s.x, s.m, dummy, &Ep), TetStatus::kOk);
      xr = x0 - h;
      ASSERT_EQ(neo_hookean_element_force(s.ref, s.x, s.m, dummy, &Em), TetStatus::kOk);
      xr = x0;
      fd[r] = (Ep - Em) / (2 * h);
    }
    worst = std::max(worst, rel_diff(f, fd, 12));
  }
  EXPECT_LT(worst, 1e-6);
  std::printf("[ numbers  ] |f - dE/dx (central FD)| / max|f| = %.2e\n", worst);
}

// The element tangent is df/dx by central differences.
TEST(NeoHookean, TangentIsTheForceDerivative) {
  std::mt19937_64 rng(43);
  double worst = 0, worst_sym = 0;
  for (int trial = 0; trial < 100; ++trial) {
    Sample s = sample(rng, trial);
    double K[144], Kfd[144];
    ASSERT_EQ(neo_hookean_element_tangent(s.ref, s.x, s.m, K), TetStatus::kOk);
    const double h = 1e-5 * std::cbrt(s.ref.volume);
    for (int c = 0; c < 12; ++c) {
      double fp[12], fm[12];
      double& xc = s.x[c / 3][c % 3];
      const double x0 = xc;
      xc = x0 + h;
      ASSERT_EQ(neo_hookean_element_force(s.ref, s.x, s.m, fp), TetStatus::kOk);
      xc = x0 - h;
      ASSERT_EQ(neo_hookean_element_force(s.ref, s.x, s.m, fm), TetStatus::kOk);
      xc = x0;
      for (int r = 0; r < 12; ++r) Kfd[12 * r + c] = (fp[r] - fm[r]) / (2 * h);
    }
    worst = std::max(worst, rel_diff(K, Kfd, 144));
    double KT[144];
    for (int r = 0; r < 12; ++r)
      for (int c = 0; c < 12; ++c) KT[12 * r + c] = K[12 * c + r];
    worst_sym = std::max(worst_sym, rel_diff(K, KT, 144));
  }
  EXPECT_LT(worst, 1e-6);
  EXPECT_LT(worst_sym, 1e-13);
  std::printf("[ numbers  ] |K - df/dx (central FD)| / max|K| = %.2e, asymmetry %.2e\n", worst, worst_sym);
}

// dP/dF (9 x 9) against central differences of P, and dpdf_apply against the 9 x 9 matrix. The
// same check applied to Eq. 7 exactly as printed (F^{-T}_li F^{-T}_jk in the last term) fails
// for these non-symmetric F, which is why the code uses F^{-1}_li F^{-1}_jk (see neo_hookean.h).
TEST(NeoHookean, TangentModulusIsTheStressDerivative) {
  std::mt19937_64 rng(44);
  double worst = 0, worst_apply = 0, worst_printed = 0;
  for (int trial = 0; trial < 100; ++trial) {
    double F[9];
    random_deformation(rng, 0.4, F);
    const Lame<double> m{trial % 2 ? 50.0 : 2.0, 5.0};
    NeoHookeanKinematics<double> k;
    ASSERT_EQ(neo_hookean_kinematics(F, k), TetStatus::kOk);
    double A[81], Afd[81], printed[81];
    neo_hookean_dpdf(k, m, A);
    const double h = 1e-6;
    for (int c = 0; c < 9; ++c) {
      double Fp[9], Fm[9], Pp[9], Pm[9];
      std::copy(F, F + 9, Fp);
      std::copy(F, F + 9, Fm);
      Fp[c] += h;
      Fm[c] -= h;
      NeoHookeanKinematics<double> kp, km;
      neo_hookean_kinematics(Fp, kp);
      neo_hookean_kinematics(Fm, km);
      neo_hookean_pk1(kp, m, Pp);
      neo_hookean_pk1(km, m, Pm);
      for (int r = 0; r < 9; ++r) Afd[9 * r + c] = (Pp[r] - Pm[r]) / (2 * h);
      // dpdf_apply on the unit direction e_c is column c.
      double e[9] = {}, col[9];
      e[c] = 1;
      neo_hookean_dpdf_apply(k, m, e, col);
      for (int r = 0; r < 9; ++r) worst_apply = std::max(worst_apply, std::abs(col[r] - A[9 * r + c]));
    }
    const double* G = k.FinvT;
    const double cc = m.mu - m.lambda * k.log_J;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int kk = 0; kk < 3; ++kk)
          for (int l = 0; l < 3; ++l)
            printed[(3 * i + j) * 9 + 3 * kk + l] = (i == kk && j == l ? m.mu : 0.0) +
                                                    m.lambda * G[3 * i + j] * G[3 * kk + l] + cc * G[3 * l + i] * G[3 * j + kk];
    worst = std::max(worst, rel_diff(A, Afd, 81));
    worst_printed = std::max(worst_printed, rel_diff(printed, Afd, 81));
  }
  EXPECT_LT(worst, 1e-6);
  EXPECT_LT(worst_apply, 1e-12 * 50);
  EXPECT_GT(worst_printed, 1e-2);
  std::printf("[ numbers  ] |dP/dF - FD| / max = %.2e; Eq. 7 as printed: up to %.2e\n", worst, worst_printed);
}

// J <= 0: kInverted and zero outputs; NaN: kNonFinite.
TYPED_TEST(NeoHookean, InvertedAndNonFiniteElements) {
  using T = TypeParam;
  const T X[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  Tet4Reference<T> ref;
  ASSERT_EQ(tet4_reference(X, ref), TetStatus::kOk);
  const Lame<T> m{T(2), T(5)};
  struct Case {
    T z;  // node 3 moved to (0, 0, z)
    TetStatus expect;
  } cases[] = {{T(-0.5), TetStatus::kInverted}, {T(0), TetStatus::kInverted},
               {std::numeric_limits<T>::quiet_NaN(), TetStatus::kNonFinite}};
  for (const Case& c : cases) {
    T x[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, c.z}};
    T f[12], K[144], E = T(7);
    for (T& v : f) v = T(7);
    for (T& v : K) v = T(7);
    EXPECT_EQ(neo_hookean_element_force(ref, x, m, f, &E), c.expect);
    EXPECT_EQ(neo_hookean_element_tangent(ref, x, m, K), c.expect);
    EXPECT_EQ(E, T(0));
    for (T v : f) EXPECT_EQ(v, T(0));
    for (T v : K) EXPECT_EQ(v, T(0));
  }
}

}  // namespace
}  // namespace eb::tet::test
