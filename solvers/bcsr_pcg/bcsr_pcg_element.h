#pragma once
// The per-element work of one bcsr-pcg step (Verschoor & Jalba 2012, Algorithm 1 lines 5-14),
// written once for the OpenMP loops and the CUDA kernels:
//   rotation  F = I + grad u, R_e = polar factor of F (Sec. 3.3, 5.1), det F for validity;
//   matrix    the local system of Eq. 6 for the velocity,
//               K^t_e = c_m M_e + c_c C_e + c_k R K_e R^T      (line 14)
//               F^t_e = c_v M_e v - c_f (R K_e (R^T x - X) - F_e)  (line 13; R K_e R^T x - f_e0 with
//                                                                   f_e0 = R K_e X, Sec. 3.3)
//             with M_e = rho N1 V, C_e = c N1 V, N1 = int Phi^T Phi (tet4_consistent_mass) and
//             F_e = N1 (body force) = V / 4 x body force per node. A time step uses c_m = 1,
//             c_c = dt, c_k = dt^2, c_v = 1, c_f = dt (unknown: v_{i+1}); a static iteration
//             c_m = c_c = c_v = 0, c_k = c_f = 1 (unknown: the displacement increment).
// K_e = V B^T D B is recomputed from Dm^{-1} (10 values per element) instead of being read as
// 144 precomputed values (the paper's line 3): the same matrix for 14x fewer bytes.
// x and X enter only as differences to node 0 (K_e annihilates translations), so that fp32 does
// not lose the displacement against the magnitude of the coordinates.
#include <cstdint>

#include "assembly/tet/corotation.h"
#include "assembly/tet/tet4.h"
#include "solvers/tet_model/corotational_tangent.h"

namespace eb::bcsr_pcg {

template <class T>
struct ElementCoefficients {
  T matrix_mass;     // c_m rho + c_c c: multiplies N1 V in the matrix
  T rhs_mass;        // c_v rho: multiplies N1 V v in the right-hand side
  T stiffness;       // c_k
  T rhs_force;       // c_f
  T body[3];         // body force per volume (rho g x load factor), N/m^3
  // 1: the matrix's stiffness part is the consistent tangent (tet_model/corotational_tangent.h:
  // the rotation's derivative added to R K_e R^T), for the static Newton iterations; 0: the
  // paper's R K_e R^T (a time step).
  T twist = T(0);
};

// The coefficients in a backend's precision (they are formed in fp64 by the simulation).
template <class T>
ElementCoefficients<T> cast_coefficients(const ElementCoefficients<double>& k) {
  ElementCoefficients<T> c{T(k.matrix_mass), T(k.rhs_mass), T(k.stiffness), T(k.rhs_force), {}, T(k.twist)};
  for (int d = 0; d < 3; ++d) c.body[d] = T(k.body[d]);
  return c;
}

// Rotation phase of one element. u: displacements of its nodes. Returns the polar status
// (kInverted for det F <= 0: R is still a proper rotation, see corotation.h; kNonFinite: R = I).
template <class T>
EB_HD tet::TetStatus element_rotation(const T Dm_inv[9], const T u[4][3], T R[9], T& det_f) {
  T F[9];
  tet::tet4_field_gradient(u, Dm_inv, F);
  F[0] += T(1);
  F[4] += T(1);
  F[8] += T(1);
  det_f = tet::det3(F);
  return tet::polar_rotation(F, R);
}

// Matrix phase of one element: hands the 144 entries of K^t_e out per 3x3 block, put_block(a, bn,
// vals) with vals[3 i + j] the entry (3 a + i, 3 bn + j), once per (a, bn) in the same order on
// every thread (a warp's sink may synchronize its lanes, as the CUDA kernel's does to store whole
// blocks of 32 elements coalesced), and writes the 12 entries of F^t_e to b[r * bstride]
// (r = 3 a + i; b null: not written, for the kernel's tail threads that only join the warp's
// stores). Dm: the reference edge vectors X_a - X_0 (a = 1..3) as columns, row-major.
template <class T, class Sink>
EB_HD void element_system(const T R[9], const T Dm[9], const T Dm_inv[9], T volume, tet::Lame<T> lame,
                          const ElementCoefficients<T>& k, const T u[4][3], const T v[4][3], Sink&& put_block, T* b,
                          int64_t bstride) {
  T G[4][3];
  tet::tet4_shape_gradients(Dm_inv, G);
  // w_b = R^T (x_b - x_0) - (X_b - X_0): the element's deformation in its unrotated frame.
  T w[4][3];
  for (int i = 0; i < 3; ++i) w[0][i] = T(0);
  for (int bn = 1; bn < 4; ++bn) {
    T xr[3];
    for (int i = 0; i < 3; ++i) xr[i] = Dm[3 * i + bn - 1] + (u[bn][i] - u[0][i]);
    tet::mul3t_vec(R, xr, w[bn]);
    for (int i = 0; i < 3; ++i) w[bn][i] -= Dm[3 * i + bn - 1];
  }
  // The consistent tangent's twist matrix (twist = 1 only): F from the same edges as w.
  T Q[9];
  const bool twist = k.twist != T(0);
  if (twist) {
    T F[9];
    tet::tet4_field_gradient(u, Dm_inv, F);
    F[0] += T(1);
    F[4] += T(1);
    F[8] += T(1);
    if (!tet::corotational_twist_matrix(R, F, lame, Q))
      for (int q = 0; q < 9; ++q) Q[q] = T(0);
  }
  const T m_off = volume / T(20);  // N1 V: V / 10 on the diagonal, V / 20 off it
  for (int a = 0; a < 4; ++a) {
    T z[3] = {T(0), T(0), T(0)};  // (K_e w)_a, unrotated
    T mv[3] = {T(0), T(0), T(0)};  // (N1 V v)_a
    for (int bn = 0; bn < 4; ++bn) {
      T blk[9], tmp[9], rot[9];
      tet::tet4_stiffness_block(G, volume, lame, a, bn, blk);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) z[i] += blk[3 * i + j] * w[bn][j];
      if (twist) tet::add_twist_block(G[a], G[bn], Q, volume, blk);  // matrix only, not the force
      tet::mul3(R, blk, tmp);
      tet::mul3_nt(tmp, R, rot);
      const T n1 = a == bn ? T(2) * m_off : m_off;
      T vals[9];
      for (int i = 0; i < 3; ++i) {
        mv[i] += n1 * v[bn][i];
        for (int j = 0; j < 3; ++j) {
          T val = k.stiffness * rot[3 * i + j];
          if (i == j) val += k.matrix_mass * n1;
          vals[3 * i + j] = val;
        }
      }
      put_block(a, bn, static_cast<const T*>(vals));
    }
    T f[3];
    tet::mul3_vec(R, z, f);
    if (b)
      for (int i = 0; i < 3; ++i)
        b[int64_t(3 * a + i) * bstride] = k.rhs_mass * mv[i] - k.rhs_force * (f[i] - k.body[i] * volume / T(4));
  }
}

}  // namespace eb::bcsr_pcg
