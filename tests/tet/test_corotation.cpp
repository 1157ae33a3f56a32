// Co-rotation: the polar decomposition (against Eigen's SVD, pure stretch, the inverted-element
// policy, rank-deficient and non-finite F), SOFA's edge frame, and the co-rotational force
// (zero for rigid motions, objective, K u for small displacements), float and double.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <limits>

#include "tests/tet/tet_test_util.h"

namespace eb::tet::test {
namespace {

template <class T>
class Corotation : public ::testing::Test {};
TYPED_TEST_SUITE(Corotation, Scalars);

// The reference: Eigen's two-sided Jacobi SVD in fp64, with the column of the smallest singular
// value of U flipped when U V^T is a reflection (the policy of corotation.h).
void reference_rotation(const double F[9], double R[9]) {
  Eigen::Matrix3d A;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) A(i, j) = F[3 * i + j];
  Eigen::JacobiSVD<Eigen::Matrix3d> svd(A, Eigen::ComputeFullU | Eigen::ComputeFullV);
  Eigen::Matrix3d U = svd.matrixU();
  const Eigen::Matrix3d V = svd.matrixV();
  if ((U * V.transpose()).determinant() < 0) U.col(2) *= -1;
  const Eigen::Matrix3d Rm = U * V.transpose();
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) R[3 * i + j] = Rm(i, j);
}

// max |U diag(S) V^T - F| / scale.
template <class T>
double reconstruction_error(const T U[9], const T S[3], const T V[9], const double F[9], double scale) {
  double Ud[9], Vd[9], US[9], rec[9];
  widen(U, Ud, 9);
  widen(V, Vd, 9);
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) US[3 * i + k] = Ud[3 * i + k] * double(S[k]);
  mul3_nt(US, Vd, rec);
  double e = 0;
  for (int k = 0; k < 9; ++k) e = std::max(e, std::abs(rec[k] - F[k]) / scale);
  return e;
}

template <class T>
double orthonormality_error(const T R[9]) {
  double Rd[9], RtR[9];
  widen(R, Rd, 9);
  mul3_tn(Rd, Rd, RtR);
  double e = std::abs(det3(Rd) - 1);
  for (int k = 0; k < 9; ++k) e = std::max(e, std::abs(RtR[k] - (k % 4 == 0 ? 1.0 : 0.0)));
  return e;
}

// Random F = Q (I + H), half of them reflected (det F < 0), strains up to 60%: R is a proper
// rotation, equal to Eigen's polar factor (with the flip policy), and U diag(sigma) V^T = F.
TYPED_TEST(Corotation, PolarMatchesEigenSvd) {
  using T = TypeParam;
  std::mt19937_64 rng(31);
  double worst_orth = 0, worst_R = 0, worst_rec = 0;
  int inverted = 0;
  for (int trial = 0; trial < 400; ++trial) {
    double Fd[9];
    random_deformation(rng, 0.6 * (trial % 10 + 1) / 10.0, Fd);
    if (trial % 2)
      for (int i = 0; i < 3; ++i) Fd[3 * i + 2] = -Fd[3 * i + 2];
    T F[9], R[9], U[9], S[3], V[9];
    cast_n(Fd, F, 9);
    widen(F, Fd, 9);  // the reference decomposes exactly the rounded F
    const TetStatus st = polar_rotation(F, R);
    const bool neg = det3(Fd) <= 0;
    inverted += neg;
    EXPECT_EQ(st, neg ? TetStatus::kInverted : TetStatus::kOk) << trial;
    worst_orth = std::max(worst_orth, orthonormality_error(R));
    double Rref[9];
    reference_rotation(Fd, Rref);
    worst_R = std::max(worst_R, max_abs_diff(R, Rref, 9));
    EXPECT_EQ(signed_svd3(F, U, S, V), st);
    EXPECT_GE(S[0], S[1]);
    EXPECT_GE(double(S[1]), std::abs(double(S[2])) - rounding_tol<T>() * double(S[0]));
    EXPECT_EQ(S[2] < 0, neg) << trial;
    worst_rec = std::max(worst_rec, reconstruction_error(U, S, V, Fd, double(S[0])));
  }
  EXPECT_GT(inverted, 150);
  const double tol = rounding_tol<T>();
  EXPECT_LT(worst_orth, tol);
  EXPECT_LT(worst_R, tol);
  EXPECT_LT(worst_rec, tol);
  std::printf("[ numbers  ] %s: |R^T R - I|, |det R - 1| %.2e; |R - R_eigen| %.2e; |U S V^T - F| / s0 %.2e\n",
              scalar_name<T>(), worst_orth, worst_R, worst_rec);
}

// F = Q S with S symmetric positive definite: R = Q, in particular R = I for a pure stretch.
// The polar factor moves by up to |dF| / (s1 + s2) for a perturbation dF of F, so the error
// is measured relative to that condition number s0 / (s1 + s2) (the rounding of F to T).
TYPED_TEST(Corotation, PureStretchHasTheRotationOfItsFrame) {
  using T = TypeParam;
  std::mt19937_64 rng(32);
  const double stretches[][3] = {{1, 1, 1}, {2, 1, 0.5}, {1.5, 1.5, 0.7}, {1e3, 1, 1e-3}, {1, 1, 1e-6}};
  double worst = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const double* s = stretches[trial % 5];
    double P[9], Q[9], PD[9], S[9], Fd[9];
    random_rotation(rng, P);
    const double D[9] = {s[0], 0, 0, 0, s[1], 0, 0, 0, s[2]};
    mul3(P, D, PD);
    mul3_nt(PD, P, S);
    const bool pure = trial < 50;
    if (pure)
      set_identity3(Q);
    else
      random_rotation(rng, Q);
    mul3(Q, S, Fd);
    T F[9], R[9];
    cast_n(Fd, F, 9);
    const TetStatus st = polar_rotation(F, R);
    // The sign of det F survives the rounding of F (and det3's own) only where
    // eps s0^3 is well below det F = s0 s1 s2.
    if (machine_epsilon<T>() * s[0] * s[0] < 1e-2 * s[1] * s[2]) {
      EXPECT_EQ(st, TetStatus::kOk) << trial;
    }
    worst = std::max(worst, max_abs_diff(R, Q, 9) / (s[0] / (s[1] + s[2])));
  }
  EXPECT_LT(worst, rounding_tol<T>());
  std::printf("[ numbers  ] %s: pure stretch |R - Q| / condition %.2e\n", scalar_name<T>(), worst);
}

// signed_svd3 on prescribed spectra (distinct, equal, clustered, tiny, rank-deficient, badly
// conditioned): U and V proper rotations, sigma sorted, U diag(sigma) V^T = F, and R = U V^T
// equal to Eigen's polar factor within rounding times the condition number s0 / (s1 + s2).
TYPED_TEST(Corotation, SignedSvdOnHardSpectra) {
  using T = TypeParam;
  std::mt19937_64 rng(39);
  const double spectra[][3] = {{3, 2, 1},   {1, 1, 1},        {2, 1, 1},    {5, 5, 1e-3},         {1, 1e-6, 0},
                               {1, 1e-6, 1e-7}, {1, 1 + 1e-7, 1 - 1e-7}, {1e3, 1, 1e-3}, {1, 0, 0}, {2, 1, -0.5}};
  double worst_orth = 0, worst_rec = 0, worst_R = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const double* sp = spectra[trial % 10];
    double P[9], Q[9], PD[9], Fd[9];
    random_rotation(rng, P);
    random_rotation(rng, Q);
    const double D[9] = {sp[0], 0, 0, 0, sp[1], 0, 0, 0, sp[2]};
    mul3(P, D, PD);
    mul3_nt(PD, Q, Fd);
    T F[9], U[9], S[3], V[9], R[9];
    cast_n(Fd, F, 9);
    widen(F, Fd, 9);
    signed_svd3(F, U, S, V);
    EXPECT_GE(S[0], S[1]);
    EXPECT_GE(S[1], 0);
    EXPECT_GE(double(S[1]), std::abs(double(S[2])) - rounding_tol<T>() * sp[0]);
    worst_orth = std::max({worst_orth, orthonormality_error(U), orthonormality_error(V)});
    worst_rec = std::max(worst_rec, reconstruction_error(U, S, V, Fd, sp[0]));
    const double cond = sp[0] / (sp[1] + std::abs(sp[2]));
    if (cond < 1e5) {  // R is defined (to rounding) only there
      polar_rotation(F, R);
      double Rref[9];
      reference_rotation(Fd, Rref);
      worst_R = std::max(worst_R, max_abs_diff(R, Rref, 9) / cond);
    }
  }
  const double tol = rounding_tol<T>();
  EXPECT_LT(worst_orth, tol);
  EXPECT_LT(worst_rec, tol);
  EXPECT_LT(worst_R, tol);
  std::printf("[ numbers  ] %s: hard spectra: U, V orthonormality %.2e, |U S V^T - F| / s0 %.2e, |R - R_eigen| / cond %.2e\n",
              scalar_name<T>(), worst_orth, worst_rec, worst_R);
}

// The inverted-element policy: F = Q W diag(s0, s1, -s2) W^T gives R = Q (the column of the
// smallest singular value flipped), for s2 from 0.5 down to 0 and on both sides of det F = 0,
// so R is continuous through inversion; the status says kInverted for det F <= 0.
TYPED_TEST(Corotation, InvertedPolicyFlipsTheSmallestSingularValue) {
  using T = TypeParam;
  std::mt19937_64 rng(33);
  double worst = 0;
  for (int trial = 0; trial < 60; ++trial) {
    double Q[9], W[9];
    random_rotation(rng, Q);
    random_rotation(rng, W);
    for (double s2 : {0.5, 1e-2, 1e-5, 0.0, -1e-5, -1e-2, -0.5}) {
      const double D[9] = {2.0, 0, 0, 0, 1.2, 0, 0, 0, s2};
      double WD[9], S[9], Fd[9];
      mul3(W, D, WD);
      mul3_nt(WD, W, S);
      mul3(Q, S, Fd);
      T F[9], R[9];
      cast_n(Fd, F, 9);
      const TetStatus st = polar_rotation(F, R);
      if (s2 < 0) {
        EXPECT_EQ(st, TetStatus::kInverted) << s2;
      }
      if (s2 > 1e-3) {
        EXPECT_EQ(st, TetStatus::kOk) << s2;
      }
      EXPECT_LT(orthonormality_error(R), rounding_tol<T>());
      worst = std::max(worst, max_abs_diff(R, Q, 9));
    }
  }
  EXPECT_LT(worst, rounding_tol<T>());
  std::printf("[ numbers  ] %s: |R - Q| through inversion %.2e\n", scalar_name<T>(), worst);
}

// Rank-deficient and non-finite F: a proper rotation always, the defined part of it where there
// is one (rank 1: R v = u for F = s u v^T), R = I for F = 0 and for NaN / infinity.
TYPED_TEST(Corotation, RankDeficientAndNonFiniteF) {
  using T = TypeParam;
  std::mt19937_64 rng(34);
  for (int trial = 0; trial < 50; ++trial) {
    double P[9], Q[9];
    random_rotation(rng, P);
    random_rotation(rng, Q);
    const double s = 0.1 + trial;
    T F1[9], R[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) F1[3 * i + j] = T(s * Q[3 * i] * P[3 * j]);  // s q0 p0^T
    polar_rotation(F1, R);  // det F is zero up to rounding: either status
    EXPECT_LT(orthonormality_error(R), rounding_tol<T>());
    for (int i = 0; i < 3; ++i) {
      const double Rp = double(R[3 * i]) * P[0] + double(R[3 * i + 1]) * P[3] + double(R[3 * i + 2]) * P[6];
      EXPECT_NEAR(Rp, Q[3 * i], rounding_tol<T>());
    }
  }
  const T zero[9] = {};
  T R[9];
  EXPECT_EQ(polar_rotation(zero, R), TetStatus::kInverted);
  for (int k = 0; k < 9; ++k) EXPECT_EQ(R[k], k % 4 == 0 ? T(1) : T(0));
  for (T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
    T F[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    F[5] = bad;
    EXPECT_EQ(polar_rotation(F, R), TetStatus::kNonFinite);
    for (int k = 0; k < 9; ++k) EXPECT_EQ(R[k], k % 4 == 0 ? T(1) : T(0));
  }
}

// SOFA's edge frame: E(Q X + t) = Q E(X), so the edge rotation of a rigid motion is Q; its
// columns follow Campo's construction; collinear nodes 0, 1, 2 are reported.
TYPED_TEST(Corotation, EdgeFrame) {
  using T = TypeParam;
  std::mt19937_64 rng(35);
  double worst = 0;
  for (int trial = 0; trial < 100; ++trial) {
    double Xd[4][3], Qd[9], xd[4][3];
    random_element(rng, Xd, 0.1 + 0.02 * trial);
    random_rotation(rng, Qd);
    const double t[3] = {1.0, 2.0, -0.5};
    map_affine(Qd, t, Xd, xd);
    const Element<T> el(Xd, xd);
    const auto& X = el.X;
    T E0[9], R[9];
    ASSERT_EQ(edge_frame(X, E0), TetStatus::kOk);
    EXPECT_LT(orthonormality_error(E0), rounding_tol<T>());
    // r0 along edge 01, r2 normal to face 012: local coordinates (bx, 0, 0), (cx, cy > 0, 0).
    for (int a = 1; a <= 2; ++a) {
      T d[3], l[3];
      for (int i = 0; i < 3; ++i) d[i] = X[a][i] - X[0][i];
      mul3t_vec(E0, d, l);
      if (a == 1) {
        EXPECT_GT(l[0], T(0));
      }
      EXPECT_NEAR(double(l[2]), 0.0, rounding_tol<T>());
      if (a == 1) {
        EXPECT_NEAR(double(l[1]), 0.0, rounding_tol<T>());
      }
      if (a == 2) {
        EXPECT_GT(l[1], T(0));
      }
    }
    ASSERT_EQ(edge_frame_rotation(el.x, E0, R), TetStatus::kOk);
    worst = std::max(worst, max_abs_diff(R, Qd, 9));
  }
  EXPECT_LT(worst, 10 * rounding_tol<T>());
  const T collinear[4][3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 0, 1}};
  const T E0[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  T R[9];
  EXPECT_EQ(edge_frame_rotation(collinear, E0, R), TetStatus::kDegenerate);
  for (int k = 0; k < 9; ++k) EXPECT_EQ(R[k], E0[k]);
  const T nan_node[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, std::numeric_limits<T>::quiet_NaN(), 0}, {0, 0, 1}};
  EXPECT_EQ(edge_frame_rotation(nan_node, E0, R), TetStatus::kNonFinite);
}

// A rigid motion x = Q X + t (any angle) gives zero co-rotational force with both rotations.
TYPED_TEST(Corotation, RigidMotionGivesZeroForce) {
  using T = TypeParam;
  std::mt19937_64 rng(36);
  double worst[2] = {0, 0};
  for (int trial = 0; trial < 100; ++trial) {
    double Xd[4][3], Qd[9], xd[4][3];
    random_element(rng, Xd, 0.5);
    random_rotation(rng, Qd);
    const double t[3] = {0.3, -0.4, 0.2};
    map_affine(Qd, t, Xd, xd);
    const Element<T> el(Xd, xd);
    ASSERT_EQ(el.status, TetStatus::kOk);
    T K[144];
    tet4_linear_stiffness(el.ref, lame_from_young_poisson(T(1e5), T(0.3)), K);
    double Kd[144];
    widen(K, Kd, 144);
    const double scale = max_abs(Kd, 144) * 0.5;  // |K| times the element size
    for (int edge = 0; edge < 2; ++edge) {
      T R[9], f[12];
      ASSERT_EQ(element_rotation(bool(edge), el, R), TetStatus::kOk);
      corotated_force(R, K, el.x, el.X, f);
      double fd[12];
      widen(f, fd, 12);
      worst[edge] = std::max(worst[edge], max_abs(fd, 12) / scale);
    }
  }
  EXPECT_LT(worst[0], 10 * rounding_tol<T>());
  EXPECT_LT(worst[1], 10 * rounding_tol<T>());
  std::printf("[ numbers  ] %s: rigid-motion |f| / (|K| size): polar %.2e, edge frame %.2e\n",
              scalar_name<T>(), worst[0], worst[1]);
}

// Objectivity f(Q x + t) = Q f(x) for deformed elements; Verschoor's form R K R^T x - R K X and
// the matrix-free R K R^T d agree with the explicit rotated matrix.
TYPED_TEST(Corotation, ObjectiveAndConsistentForms) {
  using T = TypeParam;
  std::mt19937_64 rng(37);
  double worst_obj = 0, worst_forms = 0;
  for (int trial = 0; trial < 100; ++trial) {
    double Xd[4][3], Fd[9], xd[4][3], Qd[9], yd[4][3];
    random_element(rng, Xd, 0.5);
    random_deformation(rng, 0.3, Fd);
    const double t0[3] = {0.1, 0.0, -0.1}, t1[3] = {-0.2, 0.3, 0.1};
    map_affine(Fd, t0, Xd, xd);
    for (int a = 0; a < 4; ++a)  // plus a non-affine part
      for (int i = 0; i < 3; ++i) xd[a][i] += 0.05 * std::sin(3.0 * a + i + trial);
    random_rotation(rng, Qd);
    for (int a = 0; a < 4; ++a) {
      mul3_vec(Qd, xd[a], yd[a]);
      for (int i = 0; i < 3; ++i) yd[a][i] += t1[i];
    }
    const Element<T> ex(Xd, xd), ey(Xd, yd);
    ASSERT_EQ(ex.status, TetStatus::kOk);
    const auto &X = ex.X, &x = ex.x;
    T K[144];
    tet4_linear_stiffness(ex.ref, Lame<T>{T(1), T(1)}, K);
    for (int edge = 0; edge < 2; ++edge) {
      T R[9], S[9], fx[12], fy[12];
      ASSERT_EQ(element_rotation(bool(edge), ex, R), TetStatus::kOk);
      ASSERT_EQ(element_rotation(bool(edge), ey, S), TetStatus::kOk);
      corotated_force(R, K, x, X, fx);
      corotated_force(S, K, ey.x, X, fy);
      double fxd[12], Qfx[12];
      widen(fx, fxd, 12);
      for (int a = 0; a < 4; ++a) mul3_vec(Qd, fxd + 3 * a, Qfx + 3 * a);
      worst_obj = std::max(worst_obj, max_abs_diff(fy, Qfx, 12) / max_abs(fxd, 12));
      // f = (R K R^T) x - R K X, and corotated_stiffness_apply = (R K R^T) d.
      T KR[144], xv[12], Xv[12], KRx[12], RKX[12], ap[12];
      rotate_stiffness(R, K, KR);
      for (int a = 0; a < 4; ++a)
        for (int i = 0; i < 3; ++i) {
          xv[3 * a + i] = x[a][i];
          Xv[3 * a + i] = X[a][i];
        }
      mul12_vec(KR, xv, KRx);
      rotated_stiffness_times(R, K, Xv, RKX);
      corotated_stiffness_apply(R, K, xv, ap);
      double diff = 0, scale = 0;
      for (int r = 0; r < 12; ++r) {
        diff = std::max(diff, std::abs(double(KRx[r]) - double(RKX[r]) - double(fx[r])));
        diff = std::max(diff, std::abs(double(KRx[r]) - double(ap[r])));
        scale = std::max(scale, std::abs(double(KRx[r])));
      }
      worst_forms = std::max(worst_forms, diff / scale);
    }
  }
  EXPECT_LT(worst_obj, 100 * rounding_tol<T>());
  EXPECT_LT(worst_forms, 10 * rounding_tol<T>());
  std::printf("[ numbers  ] %s: objectivity %.2e, forms %.2e (relative)\n", scalar_name<T>(),
              worst_obj, worst_forms);
}

// Small displacements: R = I + O(u), so f = K u + O(|u|^2) for both rotations. fp64.
TEST(Corotation, SmallDisplacementsGiveLinearForces) {
  std::mt19937_64 rng(38);
  std::uniform_real_distribution<double> uni(-1, 1);
  for (int trial = 0; trial < 20; ++trial) {
    double X[4][3], u[12];
    random_element(rng, X, 1.0);
    for (double& v : u) v = uni(rng);
    const Element<double> rest(X);
    ASSERT_EQ(rest.status, TetStatus::kOk);
    double K[144];
    tet4_linear_stiffness(rest.ref, Lame<double>{1.0, 1.0}, K);
    for (int edge = 0; edge < 2; ++edge) {
      double rel[2];
      for (int s = 0; s < 2; ++s) {
        const double eps = s == 0 ? 1e-3 : 1e-4;
        double x[4][3], us[12], R[9], f[12], Ku[12];
        for (int k = 0; k < 12; ++k) us[k] = eps * u[k];
        for (int a = 0; a < 4; ++a)
          for (int i = 0; i < 3; ++i) x[a][i] = X[a][i] + us[3 * a + i];
        const Element<double> el(X, x);
        ASSERT_EQ(element_rotation(bool(edge), el, R), TetStatus::kOk);
        corotated_force(R, K, x, X, f);
        mul12_vec(K, us, Ku);
        double d = 0;
        for (int k = 0; k < 12; ++k) d = std::max(d, std::abs(f[k] - Ku[k]));
        rel[s] = d / max_abs(Ku, 12);
      }
      EXPECT_LT(rel[0], 1e-2) << edge;
      // Second order: ten times smaller u, about ten times smaller relative difference.
      EXPECT_LT(rel[1], 0.2 * rel[0]) << edge;
    }
  }
}

}  // namespace
}  // namespace eb::tet::test
