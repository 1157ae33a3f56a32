#pragma once
// Cecka, Lew & Darve 2011's supplemental data S(e) of an affine tetrahedron (Sec. 16.4.2): what
// an element routine needs of the reference configuration, precomputed once.
//   Full9: S = Dm^{-1} (9 values, row-major), Dm = [X1-X0, X2-X0, X3-X0] (node 0 as the base:
//          tet4.h's convention; the paper takes node 4).
//   Qr6:   the orientation-preserving QR of Dm = Q R (det Q = +1, R upper triangular with a
//          positive diagonal), S = R^{-1}'s upper triangle (6 values: r00 r01 r02 r11 r12 r22).
// Why Qr6 gives the same forces and tangent: with Dm^{-1} = R^{-1} Q^T, the element computes
// F' = Ds R^{-1} = F Q instead of F; the material is isotropic, so W(F Q) = W(F), P(F Q) = P(F) Q,
// and f_a = V P(F) Q (row a of R^{-1}) = V P(F') (row a of R^{-1}) (likewise the tangent). Both
// forms give the volume without storing it: V = 1 / (6 |det S|).
#include "assembly/tet/tet4.h"

namespace eb::tet {

enum class SupplementalForm : int { Full9 = 0, Qr6 = 1 };

EB_HD constexpr int supplemental_size(SupplementalForm f) { return f == SupplementalForm::Qr6 ? 6 : 9; }

// S from the reference edge matrix Dm (row-major, edges as columns) of a positively oriented,
// non-degenerate element (tet_model guarantees both). fp64 on the host; then cast.
template <class T>
EB_HD void supplemental_from_dm(const T Dm[9], SupplementalForm form, T* S) {
  if (form == SupplementalForm::Full9) {
    const T d = det3(Dm);
    T inv_t[9];
    inverse_transpose3(Dm, d, inv_t);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) S[3 * i + j] = inv_t[3 * j + i];
    return;
  }
  // Modified Gram-Schmidt on Dm's columns: Dm = Q R, R_kk = |q_k| > 0.
  T c[3][3];
  for (int k = 0; k < 3; ++k)
    for (int i = 0; i < 3; ++i) c[k][i] = Dm[3 * i + k];
  T R[9] = {T(0), T(0), T(0), T(0), T(0), T(0), T(0), T(0), T(0)};
  for (int k = 0; k < 3; ++k) {
    for (int j = 0; j < k; ++j) {
      const T r = dot3(c[j], c[k]);
      R[3 * j + k] = r;
      for (int i = 0; i < 3; ++i) c[k][i] -= r * c[j][i];
    }
    const T n = std::sqrt(dot3(c[k], c[k]));
    R[4 * k] = n;
    for (int i = 0; i < 3; ++i) c[k][i] /= n;
  }
  // Q = [c0 c1 c2] has det +1 exactly when det Dm > 0 (det R > 0). R^{-1}, upper triangular:
  const T a = T(1) / R[0], d = T(1) / R[4], f = T(1) / R[8];
  const T b = -R[1] * a * d;
  const T e = -R[5] * d * f;
  const T cc = (R[1] * R[5] - R[2] * R[4]) * a * d * f;
  S[0] = a, S[1] = b, S[2] = cc, S[3] = d, S[4] = e, S[5] = f;
}

// The element's reference data as the element routines take it (tet4.h): Dm^{-1}, or R^{-1}
// padded with zeros, and V = 1 / (6 |det S|).
template <class T>
EB_HD Tet4Reference<T> reference_from_supplemental(const T* S, SupplementalForm form) {
  Tet4Reference<T> r;
  if (form == SupplementalForm::Full9) {
    for (int k = 0; k < 9; ++k) r.Dm_inv[k] = S[k];
  } else {
    r.Dm_inv[0] = S[0], r.Dm_inv[1] = S[1], r.Dm_inv[2] = S[2];
    r.Dm_inv[3] = T(0), r.Dm_inv[4] = S[3], r.Dm_inv[5] = S[4];
    r.Dm_inv[6] = T(0), r.Dm_inv[7] = T(0), r.Dm_inv[8] = S[5];
  }
  r.volume = T(1) / (T(6) * abs_value(det3(r.Dm_inv)));
  return r;
}

}  // namespace eb::tet
