#pragma once
// Compressible neo-Hookean tetrahedra as in Cecka, Lew & Darve 2011 (Sec. 16.4.1):
//   W(F) = mu/2 (F^T F - I) : I + lambda/2 ln^2 J - mu ln J,        J = det F,
//   P(F) = mu F + (lambda ln J - mu) F^{-T},
//   dP_ij/dF_kl = mu d_ik d_jl + lambda F^{-T}_ij F^{-T}_kl + (mu - lambda ln J) F^{-1}_li F^{-1}_jk.
// The last term is the derivative of F^{-T}: d(F^{-T}) = -F^{-T} dF^T F^{-T}. Eq. 7 as printed
// writes it with F^{-T}_li F^{-T}_jk, i.e. each factor transposed; that agrees with the
// derivative only for symmetric F, and the finite-difference test (tests/tet/
// test_neo_hookean.cpp) holds for this form. At F = I the tangent is the linear-elastic one
// with the same Lame parameters, so the linearized model is tet4_linear_stiffness.
//
// Element quantities with one-point (exact: F is constant) integration and the precomputed
// Dm^{-1} and volume: energy V W, internal force f_a = V P grad N_a (= dE/dx_a, Cecka's f
// without body force), tangent K_ai,bj = V dP_iK/dF_jL g_a,K g_b,L (= df/dx, the integral of
// Cecka's Eq. 6). The energy needs ln J: an element with J <= 0 gets status kInverted and zero
// outputs (the caller reports it; the method's run is then invalid).
#include "assembly/tet/tet4.h"

namespace eb::tet {

// What every neo-Hookean quantity needs from F.
template <class T>
struct NeoHookeanKinematics {
  T F[9];
  T FinvT[9];  // F^{-T}
  T J;         // det F
  T log_J;
};

// kInverted (J <= 0) or kNonFinite: FinvT = 0, log_J = 0 (F and J are still filled).
template <class T>
EB_HD TetStatus neo_hookean_kinematics(const T F[9], NeoHookeanKinematics<T>& k) {
  for (int i = 0; i < 9; ++i) k.F[i] = F[i];
  k.J = det3(F);
  k.log_J = T(0);
  for (int i = 0; i < 9; ++i) k.FinvT[i] = T(0);
  if (!all_finite(F, 9) || !is_finite(k.J)) return TetStatus::kNonFinite;
  if (!(k.J > T(0))) return TetStatus::kInverted;
  inverse_transpose3(F, k.J, k.FinvT);
  k.log_J = std::log(k.J);
  return TetStatus::kOk;
}

template <class T>
EB_HD T neo_hookean_energy_density(const NeoHookeanKinematics<T>& k, Lame<T> m) {
  T trC = T(0);
  for (int i = 0; i < 9; ++i) trC += k.F[i] * k.F[i];
  return T(0.5) * m.mu * (trC - T(3)) + T(0.5) * m.lambda * k.log_J * k.log_J - m.mu * k.log_J;
}

template <class T>
EB_HD void neo_hookean_pk1(const NeoHookeanKinematics<T>& k, Lame<T> m, T P[9]) {
  const T c = m.lambda * k.log_J - m.mu;
  for (int i = 0; i < 9; ++i) P[i] = m.mu * k.F[i] + c * k.FinvT[i];
}

// dP = dP/dF : dF = mu dF + lambda tr(F^{-1} dF) F^{-T} + (mu - lambda ln J) F^{-T} dF^T F^{-T}
// (the tangent applied to one direction, for matrix-free products).
template <class T>
EB_HD void neo_hookean_dpdf_apply(const NeoHookeanKinematics<T>& k, Lame<T> m, const T dF[9], T dP[9]) {
  T tr = T(0);  // tr(F^{-1} dF) = F^{-T} : dF
  for (int i = 0; i < 9; ++i) tr += k.FinvT[i] * dF[i];
  T A[9], Bm[9];
  mul3_nt(k.FinvT, dF, A);   // F^{-T} dF^T
  mul3(A, k.FinvT, Bm);      // F^{-T} dF^T F^{-T}
  const T c = m.mu - m.lambda * k.log_J;
  for (int i = 0; i < 9; ++i) dP[i] = m.mu * dF[i] + m.lambda * tr * k.FinvT[i] + c * Bm[i];
}

// The full tangent as a 9 x 9 matrix, A[(3i+j)*9 + 3k+l] = dP_ij / dF_kl (see the header).
template <class T>
EB_HD void neo_hookean_dpdf(const NeoHookeanKinematics<T>& k, Lame<T> m, T A[81]) {
  const T c = m.mu - m.lambda * k.log_J;
  const T* G = k.FinvT;  // G[3r+s] = F^{-T}_rs = F^{-1}_sr
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int kk = 0; kk < 3; ++kk)
        for (int l = 0; l < 3; ++l)
          A[(3 * i + j) * 9 + 3 * kk + l] = (i == kk && j == l ? m.mu : T(0)) + m.lambda * G[3 * i + j] * G[3 * kk + l] +
                                            c * G[3 * i + l] * G[3 * kk + j];
}

// Element internal force f = V P grad N (12-vector) and, when energy is not null, the element
// energy V W. Zero outputs unless kOk.
template <class T>
EB_HD TetStatus neo_hookean_element_force(const Tet4Reference<T>& ref, const T x[4][3], Lame<T> m, T f[12],
                                          T* energy = nullptr) {
  T F[9];
  tet4_deformation_gradient(x, ref.Dm_inv, F);
  NeoHookeanKinematics<T> k;
  const TetStatus st = neo_hookean_kinematics(F, k);
  if (energy) *energy = T(0);
  if (st != TetStatus::kOk) {
    for (int r = 0; r < 12; ++r) f[r] = T(0);
    return st;
  }
  T P[9];
  neo_hookean_pk1(k, m, P);
  tet4_stress_to_forces(P, ref.Dm_inv, ref.volume, f);
  if (energy) *energy = ref.volume * neo_hookean_energy_density(k, m);
  return st;
}

// K_ai,bj = V dP_iK/dF_jL g_a,K g_b,L from the kinematics of a kOk element.
template <class T>
EB_HD void neo_hookean_tangent_from_kinematics(const NeoHookeanKinematics<T>& k, Lame<T> m, const T Dm_inv[9],
                                               T volume, T K[144]) {
  T A[81], G[4][3];
  neo_hookean_dpdf(k, m, A);
  tet4_shape_gradients(Dm_inv, G);
  // AG[a][i][(j,L)] = sum_K A_iK,jL g_a,K, then K_ai,bj = V sum_L AG[a][i][(j,L)] g_b,L.
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < 3; ++i) {
      T AG[9];
      for (int jl = 0; jl < 9; ++jl)
        AG[jl] = A[(3 * i) * 9 + jl] * G[a][0] + A[(3 * i + 1) * 9 + jl] * G[a][1] + A[(3 * i + 2) * 9 + jl] * G[a][2];
      for (int b = 0; b < 4; ++b)
        for (int j = 0; j < 3; ++j)
          K[(3 * a + i) * 12 + 3 * b + j] =
              volume * (AG[3 * j] * G[b][0] + AG[3 * j + 1] * G[b][1] + AG[3 * j + 2] * G[b][2]);
    }
}

// The element routine of the Newton iteration (Cecka's elem(e), one thread per element on the
// GPU): force f (12) and tangent K (144) from one F, and det F in *det_f (for the validity
// counts). Every assembly strategy, host or device, calls this one function. Zero f and K unless
// kOk.
template <class T>
EB_HD TetStatus neo_hookean_element_force_tangent(const Tet4Reference<T>& ref, const T x[4][3], Lame<T> m, T f[12],
                                                  T K[144], T* det_f) {
  T F[9];
  tet4_deformation_gradient(x, ref.Dm_inv, F);
  NeoHookeanKinematics<T> k;
  const TetStatus st = neo_hookean_kinematics(F, k);
  *det_f = k.J;
  if (st != TetStatus::kOk) {
    for (int r = 0; r < 12; ++r) f[r] = T(0);
    for (int r = 0; r < 144; ++r) K[r] = T(0);
    return st;
  }
  T P[9];
  neo_hookean_pk1(k, m, P);
  tet4_stress_to_forces(P, ref.Dm_inv, ref.volume, f);
  neo_hookean_tangent_from_kinematics(k, m, ref.Dm_inv, ref.volume, K);
  return st;
}

// Element tangent stiffness K = df/dx alone (12 x 12, symmetric: dP/dF has the major symmetry of
// a hyperelastic law). Zero unless kOk.
template <class T>
EB_HD TetStatus neo_hookean_element_tangent(const Tet4Reference<T>& ref, const T x[4][3], Lame<T> m, T K[144]) {
  T f[12], det_f;
  return neo_hookean_element_force_tangent(ref, x, m, f, K, &det_f);
}

}  // namespace eb::tet
