#pragma once
// The consistent tangent of the co-rotational linear tetrahedron, shared by the tet methods'
// static Newton iterations (bcsr-pcg assembles it, corot-cg applies it matrix-free).
//
// The element force f = R K_e (R^T x - X) (corotation.h) is f_a = V P g_a with the first
// Piola-Kirchhoff stress P = 2 mu (F - R) + lambda tr(S - I) R, S = R^T F, g_a the shape
// gradients: the gradient of the energy mu |F - R|^2 + lambda/2 tr(S - I)^2. Its derivative is
//   dP = 2 mu dF + lambda tr(R^T dF) R + (lambda tr(S - I) - 2 mu) dR,
// with dR = R Omega, Omega skew, from R^T dF - dF^T R = S Omega + Omega S (the polar factor's
// derivative). "Stiffness warping", R K_e R^T, keeps only dP = R sigma(sym(R^T dF)); the rest is
//   dP - dP_warped = R skew(Q a),  a = axial(R^T dF - dF^T R),
//   Q = mu I + c (tr(S) I - S)^{-1},  c = lambda tr(S - I) - 2 mu,
// which gives, per node pair, the 3 x 3 block V R [g_a]x^T Q [g_b]x R^T ([g]x the cross-product
// matrix). It vanishes at S = I (Q = mu I - mu I) and grows with the stress: it is the geometric
// stiffness whose absence makes Newton on the warped tangent converge only linearly where soft
// (bending) modes are as stiff as the stress (slender parts under gravity). Q is symmetric; its
// eigenvalues mu + c / (s_j + s_k) (s the principal stretches) are negative under compression,
// so the element block may be indefinite although the assembled tangent of a stable equilibrium
// is positive definite.
#include "assembly/tet/mat3.h"
#include "assembly/tet/tet4.h"

namespace eb::tet {

// Q of an element with rotation R and deformation gradient F (row-major). Returns false (Q = 0:
// the warped tangent alone) where tr(S) I - S is singular or the result not finite, i.e. for a
// nearly inverted element, whose run is invalid anyway.
template <class T>
EB_HD bool corotational_twist_matrix(const T R[9], const T F[9], Lame<T> m, T Q[9]) {
  T S[9];
  mul3_tn(R, F, S);
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j) {
      const T s = T(0.5) * (S[3 * i + j] + S[3 * j + i]);
      S[3 * i + j] = s;
      S[3 * j + i] = s;
    }
  const T tr = S[0] + S[4] + S[8];
  T A[9];  // tr(S) I - S
  for (int k = 0; k < 9; ++k) A[k] = -S[k];
  A[0] += tr;
  A[4] += tr;
  A[8] += tr;
  const T det = det3(A);
  for (int k = 0; k < 9; ++k) Q[k] = T(0);
  // tr(S) I - S has eigenvalues s_j + s_k ~ 2 for a moderately strained element.
  if (!(abs_value(det) > T(1e-6))) return false;
  T AinvT[9];
  inverse_transpose3(A, det, AinvT);  // A is symmetric: its inverse transpose is its inverse
  const T c = m.lambda * (tr - T(3)) - T(2) * m.mu;
  for (int k = 0; k < 9; ++k) Q[k] = c * AinvT[k];
  Q[0] += m.mu;
  Q[4] += m.mu;
  Q[8] += m.mu;
  return all_finite(Q, 9);
}

// blk += scale [ga]x^T Q [gb]x (unrotated: the caller rotates blk by R on both sides, as it does
// the material block).
template <class T>
EB_HD void add_twist_block(const T ga[3], const T gb[3], const T Q[9], T scale, T blk[9]) {
  const T Ca[9] = {T(0), -ga[2], ga[1], ga[2], T(0), -ga[0], -ga[1], ga[0], T(0)};
  const T Cb[9] = {T(0), -gb[2], gb[1], gb[2], T(0), -gb[0], -gb[1], gb[0], T(0)};
  T QC[9], M[9];
  mul3(Q, Cb, QC);
  mul3_tn(Ca, QC, M);
  for (int k = 0; k < 9; ++k) blk[k] += scale * M[k];
}

}  // namespace eb::tet
