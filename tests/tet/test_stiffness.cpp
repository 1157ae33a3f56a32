// Element stiffness matrices: the linear-elastic K (against the strain energy and against
// Campo's S^T D S), its spectrum (symmetric, positive semi-definite, exactly six zero
// eigenvalues) and that of R K R^T and of the neo-Hookean tangent at rest, float and double.
#include <gtest/gtest.h>

#include <Eigen/Dense>

#include "tests/tet/tet_test_util.h"

namespace eb::tet::test {
namespace {

template <class T>
class Tet4Stiffness : public ::testing::Test {};
TYPED_TEST_SUITE(Tet4Stiffness, Scalars);

struct Spectrum {
  int zeros = 0, negatives = 0;
  double asymmetry = 0, smallest_zero_gap = 0, largest_zero = 0;
};

// Eigenvalues in fp64 of the (symmetrized) matrix; "zero" means |lambda| <= tol * lambda_max.
template <class T>
Spectrum spectrum(const T K[144], double tol) {
  Eigen::Matrix<double, 12, 12> A;
  double kmax = 0;
  for (int r = 0; r < 12; ++r)
    for (int c = 0; c < 12; ++c) {
      A(r, c) = double(K[12 * r + c]);
      kmax = std::max(kmax, std::abs(A(r, c)));
    }
  Spectrum s;
  s.asymmetry = (A - A.transpose()).cwiseAbs().maxCoeff() / kmax;
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix<double, 12, 12>> es(0.5 * (A + A.transpose()));
  const auto& ev = es.eigenvalues();
  const double lmax = ev.cwiseAbs().maxCoeff();
  s.smallest_zero_gap = std::numeric_limits<double>::infinity();
  for (int k = 0; k < 12; ++k) {
    const double rel = ev(k) / lmax;
    if (std::abs(rel) <= tol) {
      ++s.zeros;
      s.largest_zero = std::max(s.largest_zero, std::abs(rel));
    } else {
      if (rel < 0) ++s.negatives;
      s.smallest_zero_gap = std::min(s.smallest_zero_gap, rel);
    }
  }
  return s;
}

template <class T>
void expect_rigid_null_space(const T K[144], const char* what, int trial, double* worst_zero, double* worst_gap) {
  // fp32 rounding leaves the zero eigenvalues at ~1e-7 lambda_max; the non-zero ones of these
  // elements are above 1e-3 lambda_max, so the split is unambiguous.
  const double zero_tol = sizeof(T) == 4 ? 1e-5 : 1e-11;
  const Spectrum s = spectrum(K, zero_tol);
  EXPECT_LT(s.asymmetry, rounding_tol<T>()) << what << " " << trial;
  EXPECT_EQ(s.zeros, 6) << what << " " << trial;
  EXPECT_EQ(s.negatives, 0) << what << " " << trial;
  EXPECT_GT(s.smallest_zero_gap, 1e-3) << what << " " << trial;
  *worst_zero = std::max(*worst_zero, s.largest_zero);
  *worst_gap = std::min(*worst_gap, s.smallest_zero_gap);
}

// K, R K R^T for random rotations, and the neo-Hookean tangent at rest and at a rigidly rotated
// and translated rest state: symmetric, PSD, six zero eigenvalues (three translations, three
// rotations) and six positive ones.
TYPED_TEST(Tet4Stiffness, SixZeroEigenvalues) {
  using T = TypeParam;
  std::mt19937_64 rng(21);
  double worst_zero = 0, worst_gap = 1;
  for (int trial = 0; trial < 40; ++trial) {
    double Xd[4][3];
    random_element(rng, Xd, 0.05 + 0.05 * trial);
    const double nu = 0.05 + 0.4 * (trial % 10) / 9.0;  // up to 0.45
    const Lame<T> m = lame_from_young_poisson(T(1e6), T(nu));
    T K[144], KR[144], KN[144];
    const double t[3] = {0.5, -0.25, 1.0}, I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    double Qd[9], xd[4][3];
    random_rotation(rng, Qd);
    map_affine(trial % 2 ? Qd : I3, t, Xd, xd);  // rest, moved rigidly on odd trials
    const Element<T> el(Xd, xd);
    ASSERT_EQ(el.status, TetStatus::kOk);
    tet4_linear_stiffness(el.ref, m, K);
    expect_rigid_null_space(K, "K", trial, &worst_zero, &worst_gap);
    T Q[9];
    cast_n(Qd, Q, 9);
    rotate_stiffness(Q, K, KR);
    expect_rigid_null_space(KR, "R K R^T", trial, &worst_zero, &worst_gap);
    ASSERT_EQ(neo_hookean_element_tangent(el.ref, el.x, m, KN), TetStatus::kOk);
    expect_rigid_null_space(KN, "neo-Hookean tangent at rest", trial, &worst_zero, &worst_gap);
  }
  std::printf("[ numbers  ] %s: largest |zero eigenvalue| %.2e, smallest positive %.2e (of lambda_max)\n",
              scalar_name<T>(), worst_zero, worst_gap);
}

// At F = I Cecka's model linearizes to the linear-elastic K with the same Lame parameters.
TYPED_TEST(Tet4Stiffness, NeoHookeanTangentAtRestIsLinearStiffness) {
  using T = TypeParam;
  std::mt19937_64 rng(22);
  double worst = 0;
  for (int trial = 0; trial < 50; ++trial) {
    double Xd[4][3];
    random_element(rng, Xd, 0.3);
    const Element<T> el(Xd);
    ASSERT_EQ(el.status, TetStatus::kOk);
    const Lame<T> m{T(5), T(2)};  // Cecka's Sec. 16.4.4 values mu = 5, lambda = 2
    T K[144], KN[144];
    tet4_linear_stiffness(el.ref, m, K);
    ASSERT_EQ(neo_hookean_element_tangent(el.ref, el.x, m, KN), TetStatus::kOk);
    double Kd[144];
    widen(K, Kd, 144);
    worst = std::max(worst, max_abs_diff(KN, Kd, 144) / max_abs(Kd, 144));
  }
  EXPECT_LT(worst, rounding_tol<T>());
}

// u^T K v = E(u + v) - E(u) - E(v) with the small-strain energy
// E(u) = V (mu eps : eps + lambda / 2 tr(eps)^2), eps = sym(grad u): an independent statement of
// K as the Hessian of the energy (exact for a quadratic, so only rounding remains). fp64.
TEST(Tet4Stiffness, IsTheHessianOfTheStrainEnergy) {
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> uni(-1, 1);
  double worst = 0;
  for (int trial = 0; trial < 100; ++trial) {
    double X[4][3];
    random_element(rng, X, 0.5);
    Tet4Reference<double> ref;
    ASSERT_EQ(tet4_reference(X, ref), TetStatus::kOk);
    const Lame<double> m{1.7, 0.9};
    double K[144];
    tet4_linear_stiffness(ref, m, K);
    auto energy = [&](const double u[12]) {
      double uu[4][3], H[9];
      for (int a = 0; a < 4; ++a)
        for (int i = 0; i < 3; ++i) uu[a][i] = u[3 * a + i];
      tet4_field_gradient(uu, ref.Dm_inv, H);
      double ee = 0, tr = H[0] + H[4] + H[8];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          const double e = 0.5 * (H[3 * i + j] + H[3 * j + i]);
          ee += e * e;
        }
      return ref.volume * (m.mu * ee + 0.5 * m.lambda * tr * tr);
    };
    double u[12], v[12], w[12], Kv[12];
    for (int k = 0; k < 12; ++k) {
      u[k] = uni(rng);
      v[k] = uni(rng);
      w[k] = u[k] + v[k];
    }
    mul12_vec(K, v, Kv);
    double uKv = 0;
    for (int k = 0; k < 12; ++k) uKv += u[k] * Kv[k];
    const double polar = energy(w) - energy(u) - energy(v);
    worst = std::max(worst, std::abs(uKv - polar) / (energy(u) + energy(v)));
  }
  EXPECT_LT(worst, 1e-12);
}

// Campo Sec. 4.1.3 (SOFA): K_local = S_e^T D_e S_e in the element's edge frame, with
// p(uvw) = u x v + v x w + w x u of the local rest positions a = 0, b, c, d and D_e scaled by
// 1 / (36 V); rotated back to the world frame it is our K. An independent construction.
TYPED_TEST(Tet4Stiffness, MatchesCampoSofaConstruction) {
  using T = TypeParam;
  std::mt19937_64 rng(24);
  double worst = 0;
  for (int trial = 0; trial < 50; ++trial) {
    double Xd[4][3];
    random_element(rng, Xd, 0.2 + 0.1 * trial);
    const double E = 3e5, nu = 0.2 + 0.005 * trial;
    // The construction in fp64, from the paper's formulas.
    double E0[9];
    ASSERT_EQ(edge_frame(Xd, E0), TetStatus::kOk);
    double loc[4][3];
    for (int a = 0; a < 4; ++a) {
      const double d[3] = {Xd[a][0] - Xd[0][0], Xd[a][1] - Xd[0][1], Xd[a][2] - Xd[0][2]};
      mul3t_vec(E0, d, loc[a]);
    }
    const double* A = loc[0];
    const double *B = loc[1], *C = loc[2], *D = loc[3];
    auto p = [](const double* u, const double* v, const double* w, double* out) {
      double t1[3], t2[3], t3[3];
      cross3(u, v, t1);
      cross3(v, w, t2);
      cross3(w, u, t3);
      for (int i = 0; i < 3; ++i) out[i] = t1[i] + t2[i] + t3[i];
    };
    double pn[4][3];
    p(B, C, D, pn[0]);
    p(C, D, A, pn[1]);
    p(D, A, B, pn[2]);
    p(A, B, C, pn[3]);
    const double sign[4] = {-1, 1, -1, 1};
    double S[12][6] = {};
    for (int a = 0; a < 4; ++a) {
      const double px = sign[a] * pn[a][0], py = sign[a] * pn[a][1], pz = sign[a] * pn[a][2];
      const double rows[3][6] = {{px, 0, 0, py, 0, pz}, {0, py, 0, px, pz, 0}, {0, 0, pz, 0, py, px}};
      for (int i = 0; i < 3; ++i)
        for (int c = 0; c < 6; ++c) S[3 * a + i][c] = rows[i][c];
    }
    double bcd[3];
    cross3(C, D, bcd);
    const double Ve = dot3(B, bcd) / 6;
    const double gamma = E * nu / ((1 + nu) * (1 - 2 * nu)) / (36 * Ve), mu = E / (1 + nu) / (36 * Ve);
    const double De[6][6] = {{gamma + mu, gamma, gamma, 0, 0, 0}, {gamma, gamma + mu, gamma, 0, 0, 0},
                             {gamma, gamma, gamma + mu, 0, 0, 0}, {0, 0, 0, mu / 2, 0, 0},
                             {0, 0, 0, 0, mu / 2, 0},             {0, 0, 0, 0, 0, mu / 2}};
    double Kloc[144] = {}, Kcampo[144];
    for (int r = 0; r < 12; ++r)
      for (int c = 0; c < 12; ++c)
        for (int k = 0; k < 6; ++k)
          for (int l = 0; l < 6; ++l) Kloc[12 * r + c] += S[r][k] * De[k][l] * S[c][l];
    rotate_stiffness(E0, Kloc, Kcampo);
    // Ours, in T.
    const Element<T> el(Xd);
    ASSERT_EQ(el.status, TetStatus::kOk);
    T K[144];
    tet4_linear_stiffness(el.ref, lame_from_young_poisson(T(E), T(nu)), K);
    worst = std::max(worst, max_abs_diff(K, Kcampo, 144) / max_abs(Kcampo, 144));
  }
  EXPECT_LT(worst, 10 * rounding_tol<T>());
  std::printf("[ numbers  ] %s: |K - Campo S^T D S| / max|K| = %.2e\n", scalar_name<T>(), worst);
}

TEST(Tet4Stiffness, LameFromYoungPoisson) {
  for (double nu : {-0.5, 0.0, 0.2, 0.3, 0.49}) {
    const double E = 5e5;
    const Lame<double> m = lame_from_young_poisson(E, nu);
    EXPECT_NEAR(m.mu * (3 * m.lambda + 2 * m.mu) / (m.lambda + m.mu), E, 1e-12 * E) << nu;
    EXPECT_NEAR(m.lambda / (2 * (m.lambda + m.mu)), nu, 1e-12) << nu;
  }
}

}  // namespace
}  // namespace eb::tet::test
