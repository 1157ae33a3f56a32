#pragma once
// Co-rotational linear tetrahedra: the element rotation R, by polar decomposition of F
// (Verschoor & Jalba 2012 Sec. 3.3) or by the edge frame of SOFA's "large" method (Campo 2015
// Sec. 4.1.3), the rotated stiffness R K R^T and the co-rotational internal force
// f = R K (R^T x - X) (Verschoor's f0 = R K X is the constant part of it). R here acts on every
// node: the papers' 12 x 12 block-diagonal R_e = diag(R, R, R, R).
//
// Polar decomposition, and its policy for inverted elements. F = U Sigma V^T is computed with
// U, V proper rotations (det +1) and singular values s0 >= s1 >= |s2|, where s2 takes the sign
// of det F; R = U V^T. For det F > 0 this is exactly the polar factor of F; for det F <= 0 it
// is the rotation closest to F among proper ones, i.e. the polar factor with the sign of the
// column of the smallest singular value flipped (Irving, Teran & Fedkiw 2004), so R stays a
// rotation and the linear forces push the element back out of inversion. R is continuous as an
// element passes through det F = 0 (only the sign of s2 changes). It is undefined only where
// the two smallest singular values coincide while det F <= 0 (or F has rank 1 or 0); there a
// deterministic proper rotation is returned.
//   How: one-sided Jacobi on the columns of F (scaled by its largest entry) gives V and F V with
// orthogonal columns; U follows by Gram-Schmidt on those columns, with u2 = u0 x u1, which makes
// U proper and carries the sign of det F into s2. Chosen over Higham's scaled Newton iteration
// (used in assembly/hexmg) because Newton needs F^{-1}, i.e. det F away from zero, and
// converges to the reflection when det F < 0; over an eigen-solve of F^T F because forming
// F^T F squares the condition number (R then loses about eps (s0 / s1)^2, 0.02 in fp32 for
// s = (1e3, 1, 1e-3)); over closed-form cubic roots, which lose small or clustered singular
// values to cancellation. No trigonometric functions, a bounded number of sweeps, the same
// code path for every F: suited to one thread per element.
#include "assembly/tet/tet4.h"

namespace eb::tet {

// One-sided (Hestenes) Jacobi: plane rotations applied from the right to the columns w_k of a
// 3 x 3 matrix until they are mutually orthogonal, accumulated in the columns v_k (from I):
// afterwards W = A V with V orthogonal, so |w_k| are the singular values of A. Each rotation
// takes its angle from the columns' current dot products, so the squared matrix A^T A is
// never formed and V is accurate for badly conditioned A too. 3 x 3 converges quadratically
// (typically 3-4 sweeps in fp64); the sweep count is bounded.
constexpr int kJacobiSweeps = 10;

template <class T>
EB_HD void one_sided_jacobi3(T w[3][3], T v[3][3]) {
  // Rounding leaves |w_p . w_q| at a few eps |w_p| |w_q|: orthogonal enough below 4 eps.
  const T tol = T(4) * machine_epsilon<T>();
  for (int sweep = 0; sweep < kJacobiSweeps; ++sweep) {
    bool rotated = false;
    for (int pq = 0; pq < 3; ++pq) {
      const int p = pq == 2 ? 1 : 0, q = pq == 0 ? 1 : 2;
      const T alpha = dot3(w[p], w[p]), beta = dot3(w[q], w[q]), gamma = dot3(w[p], w[q]);
      if (!(abs_value(gamma) > tol * std::sqrt(alpha * beta))) continue;
      rotated = true;
      // tan of the angle that makes the pair orthogonal: the smaller root of
      // t^2 + 2 zeta t - 1 = 0 (Rutishauser's form, no cancellation).
      const T zeta = (beta - alpha) / (T(2) * gamma);
      const T az = abs_value(zeta);
      T t = az > T(1e15) ? T(0.5) / az : T(1) / (az + std::sqrt(az * az + T(1)));
      if (zeta < T(0)) t = -t;
      const T c = T(1) / std::sqrt(t * t + T(1)), s = t * c;
      for (int i = 0; i < 3; ++i) {
        const T wp = w[p][i], wq = w[q][i], vp = v[p][i], vq = v[q][i];
        w[p][i] = c * wp - s * wq;
        w[q][i] = s * wp + c * wq;
        v[p][i] = c * vp - s * vq;
        v[q][i] = s * vp + c * vq;
      }
    }
    if (!rotated) break;
  }
}

// F = U diag(sigma) V^T with U, V proper rotations (row-major), sigma0 >= sigma1 >= |sigma2|
// (the last to rounding), sign(sigma2) = sign(det F) (to rounding: sigma2 ~ 0 has either sign). kInverted when det F <= 0 (the decomposition is still complete),
// kNonFinite (U = V = I, sigma = 0) when F holds NaN or infinity.
template <class T>
EB_HD TetStatus signed_svd3(const T F[9], T U[9], T sigma[3], T V[9]) {
  set_identity3(U);
  set_identity3(V);
  sigma[0] = sigma[1] = sigma[2] = T(0);
  if (!all_finite(F, 9)) return TetStatus::kNonFinite;
  T scale = T(0);
  for (int k = 0; k < 9; ++k) scale = abs_value(F[k]) > scale ? abs_value(F[k]) : scale;
  if (scale == T(0)) return TetStatus::kInverted;  // F = 0: det F = 0, U = V = I
  // Columns of F / scale (no overflow or underflow in the dot products), and of V = I.
  const T inv_scale = T(1) / scale;
  T w[3][3], v[3][3];
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 3; ++i) {
      w[k][i] = F[3 * i + k] * inv_scale;
      v[k][i] = i == k ? T(1) : T(0);
    }
  one_sided_jacobi3(w, v);
  // Sort the columns by |w_k| descending (three compare-and-swaps).
  T n2[3] = {dot3(w[0], w[0]), dot3(w[1], w[1]), dot3(w[2], w[2])};
  for (int pass = 0; pass < 3; ++pass) {
    const int i = pass == 1 ? 1 : 0, j = i + 1;
    if (n2[i] < n2[j]) {
      const T tn = n2[i];
      n2[i] = n2[j];
      n2[j] = tn;
      for (int k = 0; k < 3; ++k) {
        const T tw = w[i][k], tv = v[i][k];
        w[i][k] = w[j][k];
        v[i][k] = v[j][k];
        w[j][k] = tw;
        v[j][k] = tv;
      }
    }
  }
  T vc[3];
  cross3(v[0], v[1], vc);
  if (dot3(vc, v[2]) < T(0))
    for (int k = 0; k < 3; ++k) {
      v[2][k] = -v[2][k];
      w[2][k] = -w[2][k];
    }
  // U: u0 = w0 / |w0|, where |w0| = s0 / scale >= 1 (the largest singular value bounds every
  // entry), u1 by Gram-Schmidt, u2 = u0 x u1.
  T u[3][3];
  const T n0 = std::sqrt(n2[0]);
  for (int i = 0; i < 3; ++i) u[0][i] = w[0][i] / n0;
  T g[3];
  const T p = dot3(u[0], w[1]);
  for (int i = 0; i < 3; ++i) g[i] = w[1][i] - p * u[0][i];
  T n1 = std::sqrt(dot3(g, g));
  if (!(n1 > T(16) * machine_epsilon<T>())) {
    // Rank <= 1: any unit vector orthogonal to u0 will do; take the axis least aligned with u0.
    const T a0 = abs_value(u[0][0]), a1 = abs_value(u[0][1]), a2 = abs_value(u[0][2]);
    const int axis = a0 <= a1 ? (a0 <= a2 ? 0 : 2) : (a1 <= a2 ? 1 : 2);
    const T q = u[0][axis];
    for (int i = 0; i < 3; ++i) g[i] = (i == axis ? T(1) : T(0)) - q * u[0][i];
    n1 = std::sqrt(dot3(g, g));
  }
  for (int i = 0; i < 3; ++i) u[1][i] = g[i] / n1;
  cross3(u[0], u[1], u[2]);
  // s0 = |w0| >= s1 = |w1| by the sort; s2 signed by the orientation of U.
  sigma[0] = n0 * scale;
  sigma[1] = std::sqrt(n2[1]) * scale;
  sigma[2] = dot3(u[2], w[2]) * scale;
  for (int k = 0; k < 3; ++k) {
    for (int i = 0; i < 3; ++i) {
      U[3 * i + k] = u[k][i];
      V[3 * i + k] = v[k][i];
    }
  }
  return det3(F) > T(0) ? TetStatus::kOk : TetStatus::kInverted;
}

// The rotation of the element: R = U V^T from signed_svd3 (see the policy above). kOk for
// det F > 0, kInverted for det F <= 0 (R is still a proper rotation), kNonFinite with R = I.
template <class T>
EB_HD TetStatus polar_rotation(const T F[9], T R[9]) {
  T U[9], sigma[3], V[9];
  const TetStatus st = signed_svd3(F, U, sigma, V);
  mul3_nt(U, V, R);
  return st;
}

// Minimum sine of the angle between edges 01 and 02 for the edge frame to be defined: sqrt(eps),
// where the frame's normal is still known to about sqrt(eps) (its error is ~eps / sine).
template <class T>
EB_HD T edge_frame_min_sine() {
  return std::sqrt(machine_epsilon<T>());
}

// SOFA's element frame (Campo Sec. 4.1.3): columns r0 = (x1-x0)/|x1-x0|,
// r2 = (x1-x0) x (x2-x0) / |...|, r1 = r2 x r0. It depends only on nodes 0, 1, 2 and on their
// order (the vertex-order anisotropy Campo's Sec. 2.6 mentions). kDegenerate (E = I) when edge
// 01 has zero length or edges 01 and 02 are parallel (sine below edge_frame_min_sine).
template <class T>
EB_HD TetStatus edge_frame(const T x[4][3], T E[9]) {
  set_identity3(E);
  T e1[3], e2[3], n[3];
  for (int i = 0; i < 3; ++i) {
    e1[i] = x[1][i] - x[0][i];
    e2[i] = x[2][i] - x[0][i];
  }
  cross3(e1, e2, n);
  const T l1 = std::sqrt(dot3(e1, e1)), l2 = std::sqrt(dot3(e2, e2)), ln = std::sqrt(dot3(n, n));
  if (!(is_finite(l1) && is_finite(l2) && is_finite(ln))) return TetStatus::kNonFinite;
  if (!(l1 > T(0)) || !(ln > edge_frame_min_sine<T>() * l1 * l2)) return TetStatus::kDegenerate;
  T r0[3], r1[3], r2[3];
  for (int i = 0; i < 3; ++i) {
    r0[i] = e1[i] / l1;
    r2[i] = n[i] / ln;
  }
  cross3(r2, r0, r1);
  for (int i = 0; i < 3; ++i) {
    E[3 * i + 0] = r0[i];
    E[3 * i + 1] = r1[i];
    E[3 * i + 2] = r2[i];
  }
  return TetStatus::kOk;
}

// The co-rotation of the edge method: R = E(x) E0^T with E0 = edge_frame(X) precomputed. SOFA
// works in the element frame (local rest positions E0^T (X - X0), local current positions
// E^T (x - x0), force E K_local (difference)); with K_local = E0^T K E0 that is exactly
// R K (R^T x - X) with this R (translations are in K's null space). On a status other than
// kOk, R = I.
template <class T>
EB_HD TetStatus edge_frame_rotation(const T x[4][3], const T E0[9], T R[9]) {
  T E[9];
  const TetStatus st = edge_frame(x, E);
  if (st != TetStatus::kOk) {
    set_identity3(R);
    return st;
  }
  mul3_nt(E, E0, R);
  return st;
}

// KR = R K R^T: every 3 x 3 block K_ab becomes R K_ab R^T (Verschoor's K_re, Campo's
// R S^T D S R^T). KR must not alias K.
template <class T>
EB_HD void rotate_stiffness(const T R[9], const T K[144], T KR[144]) {
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      T blk[9], tmp[9], out[9];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) blk[3 * i + j] = K[(3 * a + i) * 12 + 3 * b + j];
      mul3(R, blk, tmp);
      mul3_nt(tmp, R, out);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) KR[(3 * a + i) * 12 + 3 * b + j] = out[3 * i + j];
    }
}

// y = R K w for a 12-vector w given in the unrotated frame (R applied node by node).
template <class T>
EB_HD void rotated_stiffness_times(const T R[9], const T K[144], const T w[12], T y[12]) {
  T z[12];
  mul12_vec(K, w, z);
  for (int a = 0; a < 4; ++a) mul3_vec(R, z + 3 * a, y + 3 * a);
}

// y = R K R^T d without forming R K R^T (matrix-free CG, Campo Sec. 4.1.6's "delta force").
template <class T>
EB_HD void corotated_stiffness_apply(const T R[9], const T K[144], const T d[12], T y[12]) {
  T w[12];
  for (int a = 0; a < 4; ++a) mul3t_vec(R, d + 3 * a, w + 3 * a);
  rotated_stiffness_times(R, K, w, y);
}

// Co-rotational internal force f = R K (R^T x - X) (Campo Sec. 4.1.4; Verschoor's
// R K x - f0 with f0 = R K X). Zero for any rigid motion x = R X + t.
template <class T>
EB_HD void corotated_force(const T R[9], const T K[144], const T x[4][3], const T X[4][3], T f[12]) {
  T w[12];
  for (int a = 0; a < 4; ++a) {
    mul3t_vec(R, x[a], w + 3 * a);
    for (int i = 0; i < 3; ++i) w[3 * a + i] -= X[a][i];
  }
  rotated_stiffness_times(R, K, w, f);
}

}  // namespace eb::tet
