#pragma once
// Element mathematics of Total Lagrangian Explicit Dynamics (Strbac, Vander Sloten & Famaey
// 2015, Sec. 2.1-2.2) for the 8-node hexahedron with one-point (centre) Gauss integration.
// Written once, templated on the scalar type, and compiled for both the OpenMP loop and the CUDA
// kernel (EB_HD). The CPU backend is the readable oracle; the CUDA kernel calls the very same
// functions.
//
// Factored shape-function derivatives. At the element centre the trilinear shape functions
// have natural derivatives dN_a/dxi = s_a / 8, where s_a in {-1, +1}^3 is the natural position
// of node a. Hence (Eqs. 6-7)
//   J0 = sum_a x_a s_a^T / 8,   grad_X N_a = J0^{-T} s_a / 8 = G s_a,   G = J0^{-T} / 8,
// so the 8 x 3 derivative matrix of Eq. 7 is fully described by the 3 x 3 matrix G (9 numbers
// per element instead of 24; exact for any hexahedron, not only parallelepipeds). With it
//   grad u = sum_a u_a (G s_a)^T = D G^T,                 D = sum_a u_a s_a^T   (adds only)
//   f_a    = V0 P grad_X N_a = (V0 P G) s_a = H s_a,       P = F S            (Eq. 11)
// and since antipodal nodes have s_abar = -s_a, f_abar = -f_a: only nodes 0..3 are computed.
//
// Hourglass control: none in the paper (its Sec. 4 lists it as future work): homogeneous
// deformations such as its cube compression do not excite the zero-energy modes of the
// under-integrated hexahedron, but bending does. The `hourglass` variant adds the TLED hourglass
// forces of Joldes, Wittek & Miller 2008 (Commun. Numer. Meth. Engng 24:1315), the perturbation
// control of Flanagan & Belytschko 1981 written in the reference configuration (see
// hex8_hourglass_matrix below): f_hg = K_hg u with a constant 8 x 8 matrix per element.
#include <cmath>

#include "assembly/hd.h"

namespace eb::tled {

// Natural coordinate sign (+1/-1) of VTK hexahedron node a (0..7) along axis k (xi, eta, zeta):
// bottom face 0(-,-,-) 1(+,-,-) 2(+,+,-) 3(-,+,-), top face 4..7 the same at zeta = +1.
EB_HD constexpr int hex_sign(int a, int k) {
  return k == 0 ? (((a & 3) == 1 || (a & 3) == 2) ? 1 : -1)
                : (k == 1 ? (((a & 3) >= 2) ? 1 : -1) : (a >= 4 ? 1 : -1));
}
// The node opposite node a through the centre (s_antipode = -s_a): 0-6, 1-7, 2-4, 3-5.
EB_HD constexpr int hex_antipode(int a) { return a < 4 ? ((a + 2) & 3) + 4 : (a - 2) & 3; }

// Overloads so that templated code picks the single-precision library function for float on
// both host and device (no silent promotion to double).
EB_HD float tled_cbrt(float x) { return cbrtf(x); }
EB_HD double tled_cbrt(double x) { return cbrt(x); }
EB_HD float tled_exp(float x) { return expf(x); }
EB_HD double tled_exp(double x) { return exp(x); }
EB_HD float tled_sqrt(float x) { return sqrtf(x); }
EB_HD double tled_sqrt(double x) { return sqrt(x); }

// Reference geometry of one element (pre-computation phase, Eqs. 6-7): G (row-major) and the
// volume weight 8 det(J0) of Eq. 11. Returns det(J0); <= 0 means an inverted element.
template <class T>
EB_HD T hex8_reference_geometry(const T x[8][3], T G[9], T& volume) {
  T J[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};  // J_ij = dx_i / dxi_j
  for (int a = 0; a < 8; ++a)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) J[i][j] += x[a][i] * T(hex_sign(a, j)) / T(8);
  const T c00 = J[1][1] * J[2][2] - J[1][2] * J[2][1];
  const T c01 = J[1][2] * J[2][0] - J[1][0] * J[2][2];
  const T c02 = J[1][0] * J[2][1] - J[1][1] * J[2][0];
  const T det = J[0][0] * c00 + J[0][1] * c01 + J[0][2] * c02;
  volume = T(8) * det;
  if (!(det > T(0))) {
    for (int k = 0; k < 9; ++k) G[k] = T(0);
    return det;
  }
  // inv(J)_ij = cof(J)_ji / det, so inv(J)^T = cof(J) / det; G = cof(J) / (8 det).
  const T s = T(1) / (T(8) * det);
  G[0] = c00 * s;
  G[1] = c01 * s;
  G[2] = c02 * s;
  G[3] = (J[0][2] * J[2][1] - J[0][1] * J[2][2]) * s;
  G[4] = (J[0][0] * J[2][2] - J[0][2] * J[2][0]) * s;
  G[5] = (J[0][1] * J[2][0] - J[0][0] * J[2][1]) * s;
  G[6] = (J[0][1] * J[1][2] - J[0][2] * J[1][1]) * s;
  G[7] = (J[0][2] * J[1][0] - J[0][0] * J[1][2]) * s;
  G[8] = (J[0][0] * J[1][1] - J[0][1] * J[1][0]) * s;
  return det;
}

// grad_X N_a = G s_a (Eq. 7), for checks and output; the force path never forms it.
template <class T>
EB_HD void hex8_shape_gradient(const T G[9], int a, T dN[3]) {
  for (int j = 0; j < 3; ++j)
    dN[j] = G[3 * j] * T(hex_sign(a, 0)) + G[3 * j + 1] * T(hex_sign(a, 1)) + G[3 * j + 2] * T(hex_sign(a, 2));
}

// Eq. 8: F = I + grad u with grad u = D G^T, D = sum_a u_a s_a^T. Row-major F.
template <class T>
EB_HD void deformation_gradient(const T u[8][3], const T G[9], T F[9]) {
  T D[9];
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k) {
      T acc = T(0);
      for (int a = 0; a < 8; ++a) acc += hex_sign(a, k) > 0 ? u[a][i] : -u[a][i];
      D[3 * i + k] = acc;
    }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      F[3 * i + j] = (i == j ? T(1) : T(0)) + D[3 * i] * G[3 * j] + D[3 * i + 1] * G[3 * j + 1] +
                     D[3 * i + 2] * G[3 * j + 2];
}

template <class T>
EB_HD T det3(const T A[9]) {
  return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
         A[2] * (A[3] * A[7] - A[4] * A[6]);
}

// Symmetric 3 x 3 tensors are stored as xx, yy, zz, xy, yz, xz.
template <class T>
struct NeoHookeanState {
  T S[6];     // second Piola-Kirchhoff stress (undamaged), Eq. 18
  T J;        // det F (Eq. 9)
  T psi_dev;  // mu/2 (I1bar - 3): the undamaged deviatoric energy of Eqs. 19-21
  T psi_vol;  // kappa/2 (J - 1)^2
};

// Eqs. 9, 16-18: C = F^T F, S = mu J^{-2/3} (I - tr(C)/3 C^{-1}) + kappa J (J - 1) C^{-1}.
// For J <= 0 (inverted element) the stress is meaningless; the caller checks state.J.
template <class T>
EB_HD NeoHookeanState<T> neo_hookean_pk2(const T F[9], T mu, T kappa) {
  NeoHookeanState<T> r;
  const T C00 = F[0] * F[0] + F[3] * F[3] + F[6] * F[6];
  const T C11 = F[1] * F[1] + F[4] * F[4] + F[7] * F[7];
  const T C22 = F[2] * F[2] + F[5] * F[5] + F[8] * F[8];
  const T C01 = F[0] * F[1] + F[3] * F[4] + F[6] * F[7];
  const T C12 = F[1] * F[2] + F[4] * F[5] + F[7] * F[8];
  const T C02 = F[0] * F[2] + F[3] * F[5] + F[6] * F[8];
  const T J = det3(F);
  r.J = J;
  // C^{-1} = adj(C) / det(C) with det(C) = J^2 (taken from F: better conditioned than det C).
  const T inv_det_c = T(1) / (J * J);
  const T A00 = (C11 * C22 - C12 * C12) * inv_det_c;
  const T A11 = (C00 * C22 - C02 * C02) * inv_det_c;
  const T A22 = (C00 * C11 - C01 * C01) * inv_det_c;
  const T A01 = (C02 * C12 - C01 * C22) * inv_det_c;
  const T A12 = (C01 * C02 - C00 * C12) * inv_det_c;
  const T A02 = (C01 * C12 - C02 * C11) * inv_det_c;
  const T I1 = C00 + C11 + C22;
  const T cbrt_j = tled_cbrt(J);
  const T j23 = T(1) / (cbrt_j * cbrt_j);  // J^{-2/3}
  const T dev = mu * j23;
  const T vol = kappa * J * (J - T(1));
  const T k_inv = vol - dev * I1 / T(3);  // coefficient of C^{-1}
  r.S[0] = dev + k_inv * A00;
  r.S[1] = dev + k_inv * A11;
  r.S[2] = dev + k_inv * A22;
  r.S[3] = k_inv * A01;
  r.S[4] = k_inv * A12;
  r.S[5] = k_inv * A02;
  r.psi_dev = T(0.5) * mu * (j23 * I1 - T(3));
  r.psi_vol = T(0.5) * kappa * (J - T(1)) * (J - T(1));
  return r;
}

// Eqs. 19-22: beta is the running maximum of (psi_hat_dev - psi0) (initially 0, so it never
// goes negative); d = gamma (1 - exp(-beta / m)). Returns d and updates beta in place.
template <class T>
EB_HD T damage_update(T psi_hat_dev, T psi0, T m, T gamma, T& beta) {
  const T excess = psi_hat_dev - psi0;
  beta = excess > beta ? excess : beta;
  return gamma * (T(1) - tled_exp(-beta / m));
}

template <class T>
struct TledMaterial {
  T mu, kappa;
  T damage_gamma, damage_m, damage_psi0;  // used only by the Damage = true instantiation
};

// Steps 5-8 of the paper for one element: from the 8 nodal displacements to the nodal forces
// of nodes 0..3 (f[a] for a = 0..3; the antipodal node of a gets -f[a]). `beta` is the
// element's damage history (read and written only when Damage). Returns det F; the caller
// reports J <= 0 (or NaN) as an inverted element.
template <class T, bool Damage>
EB_HD T tled_element_forces(const T u[8][3], const T G[9], T volume, const TledMaterial<T>& mat, T* beta,
                            T f[4][3]) {
  T F[9];
  deformation_gradient(u, G, F);
  NeoHookeanState<T> st = neo_hookean_pk2(F, mat.mu, mat.kappa);
  T scale = volume;
  if constexpr (Damage) {
    const T d = damage_update(st.psi_dev, mat.damage_psi0, mat.damage_m, mat.damage_gamma, *beta);
    scale *= (T(1) - d);  // S_dam = (1 - d) S, Eq. 22
  } else {
    (void)beta;
  }
  const T* S = st.S;
  // P = F S (first Piola-Kirchhoff), then H = V0 (1 - d) P G.
  T P[9];
  for (int i = 0; i < 3; ++i) {
    const T* Fi = F + 3 * i;
    P[3 * i + 0] = Fi[0] * S[0] + Fi[1] * S[3] + Fi[2] * S[5];
    P[3 * i + 1] = Fi[0] * S[3] + Fi[1] * S[1] + Fi[2] * S[4];
    P[3 * i + 2] = Fi[0] * S[5] + Fi[1] * S[4] + Fi[2] * S[2];
  }
  T H[9];
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k < 3; ++k)
      H[3 * i + k] = scale * (P[3 * i] * G[k] + P[3 * i + 1] * G[3 + k] + P[3 * i + 2] * G[6 + k]);
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < 3; ++i) {
      const T h0 = hex_sign(a, 0) > 0 ? H[3 * i] : -H[3 * i];
      const T h1 = hex_sign(a, 1) > 0 ? H[3 * i + 1] : -H[3 * i + 1];
      const T h2 = hex_sign(a, 2) > 0 ? H[3 * i + 2] : -H[3 * i + 2];
      f[a][i] = h0 + h1 + h2;
    }
  return st.J;
}

// Hourglass base vector h_alpha (alpha = 0..3) at node a: the products of natural signs
// xi eta, eta zeta, xi zeta and xi eta zeta. Each is orthogonal to the constant vector and to the
// three sign vectors s_k, so it is invisible to the one-point gradient D = sum_a u_a s_a^T.
EB_HD constexpr int hex_hourglass_base(int alpha, int a) {
  return alpha == 0   ? hex_sign(a, 0) * hex_sign(a, 1)
         : alpha == 1 ? hex_sign(a, 1) * hex_sign(a, 2)
         : alpha == 2 ? hex_sign(a, 0) * hex_sign(a, 2)
                      : hex_sign(a, 0) * hex_sign(a, 1) * hex_sign(a, 2);
}

// Entries of the symmetric 8 x 8 hourglass matrix kept per element: the upper triangle, row by
// row (a <= b).
constexpr int kHourglassEntries = 36;
EB_HD constexpr int hourglass_index(int a, int b) {
  return a <= b ? a * 8 - a * (a - 1) / 2 + (b - a) : b * 8 - b * (b - 1) / 2 + (a - b);
}

// Pre-computation of the hourglass control (Joldes, Wittek & Miller 2008): from the reference
// node positions x, the element's G (grad_X N_a = B_a = G s_a, as the force path) and volume,
//   gamma_alpha = h_alpha - B (x^T h_alpha)          (Flanagan-Belytschko shape vectors, 8 each)
//   k = kappa_hg (lambda + 2 mu) V sum_{a,j} B_aj^2 / 8 = kappa_hg (lambda + 2 mu) V |G|_F^2
//   K_hg = k sum_alpha gamma_alpha gamma_alpha^T      (packed upper triangle, hourglass_index)
// (the coefficient as in NiftySim's tledElementH8, the implementation of that paper; sum_a
// s_a s_a^T = 8 I gives the |G|_F^2 form). Since sum_a B_a x_a^T = G (8 J0^T) = I and
// sum_a B_a = 0, gamma_alpha^T u = 0 for every field u linear in X (rigid motions, finite
// rotations included, and uniform strains), and gamma_alpha^T h_beta = 8 delta_alpha_beta.
template <class T>
EB_HD void hex8_hourglass_matrix(const T x[8][3], const T G[9], T volume, T lambda_2mu, T kappa_hg,
                                 T K[kHourglassEntries]) {
  T gamma[4][8];
  for (int al = 0; al < 4; ++al) {
    T xh[3] = {T(0), T(0), T(0)};  // x^T h_alpha
    for (int b = 0; b < 8; ++b)
      for (int j = 0; j < 3; ++j) xh[j] += x[b][j] * T(hex_hourglass_base(al, b));
    for (int a = 0; a < 8; ++a) {
      T dN[3];
      hex8_shape_gradient(G, a, dN);
      gamma[al][a] = T(hex_hourglass_base(al, a)) - (dN[0] * xh[0] + dN[1] * xh[1] + dN[2] * xh[2]);
    }
  }
  T g2 = T(0);
  for (int k = 0; k < 9; ++k) g2 += G[k] * G[k];
  const T k = kappa_hg * lambda_2mu * volume * g2;
  for (int a = 0; a < 8; ++a)
    for (int b = a; b < 8; ++b) {
      T acc = T(0);
      for (int al = 0; al < 4; ++al) acc += gamma[al][a] * gamma[al][b];
      K[hourglass_index(a, b)] = k * acc;
    }
}

// The device compiler must unroll the hourglass product fully: left to itself it kept the
// triangular loop, indexed u and f at run time and so put both in local memory (ptxas: a 192-byte
// stack frame in fp32, 384 in fp64). Host compilers ignore it.
#if defined(__CUDA_ARCH__)
#define EB_TLED_UNROLL _Pragma("unroll")
#else
#define EB_TLED_UNROLL
#endif

// Nodal hourglass forces f_a += sum_b K_ab u_b (per component), added to f (8 nodes). K(i)
// returns packed entry i, so each backend reads its own layout; each entry is read once.
template <class T, class Entry>
EB_HD void tled_hourglass_forces(const T u[8][3], const Entry& K, T f[8][3]) {
  EB_TLED_UNROLL
  for (int a = 0; a < 8; ++a) {
    EB_TLED_UNROLL
    for (int b = 0; b < 8; ++b) {
      if (b < a) continue;  // the upper triangle, with constant trip counts to unroll
      const T kab = K(hourglass_index(a, b));
      EB_TLED_UNROLL
      for (int d = 0; d < 3; ++d) f[a][d] += kab * u[b][d];
      if (b != a) {
        EB_TLED_UNROLL
        for (int d = 0; d < 3; ++d) f[b][d] += kab * u[a][d];
      }
    }
  }
}

// The 8 nodal forces of the hourglass variant: the paper's forces of nodes 0..3 (f4) spread to
// the antipodes (f_abar = -f_a) plus the hourglass forces, which do not share that symmetry.
template <class T, class Entry>
EB_HD void tled_forces_with_hourglass(const T u[8][3], const T f4[4][3], const Entry& K, T f[8][3]) {
  EB_TLED_UNROLL
  for (int a = 0; a < 8; ++a) {
    const int k = a < 4 ? a : hex_antipode(a);
    EB_TLED_UNROLL
    for (int d = 0; d < 3; ++d) f[a][d] = a < 4 ? f4[k][d] : -f4[k][d];
  }
  tled_hourglass_forces(u, K, f);
}

// Cauchy von Mises stress sigma = (1/J) F S F^T of a (possibly damage-scaled) PK2 stress.
template <class T>
EB_HD T von_mises_from_pk2(const T F[9], const T S[6], T J) {
  const T Sm[9] = {S[0], S[3], S[5], S[3], S[1], S[4], S[5], S[4], S[2]};
  T FS[9], sig[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) FS[3 * i + j] = F[3 * i] * Sm[j] + F[3 * i + 1] * Sm[3 + j] + F[3 * i + 2] * Sm[6 + j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      sig[3 * i + j] = (FS[3 * i] * F[3 * j] + FS[3 * i + 1] * F[3 * j + 1] + FS[3 * i + 2] * F[3 * j + 2]) / J;
  const T dxx = sig[0] - sig[4], dyy = sig[4] - sig[8], dzz = sig[8] - sig[0];
  return tled_sqrt(T(0.5) * (dxx * dxx + dyy * dyy + dzz * dzz) +
                   T(3) * (sig[1] * sig[1] + sig[5] * sig[5] + sig[2] * sig[2]));
}

}  // namespace eb::tled
