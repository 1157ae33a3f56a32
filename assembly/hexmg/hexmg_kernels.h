#pragma once
// The per-element and per-vertex steps of one hexmg time step (Dick et al. 2011, Secs. 3.3 and
// 4.2), written once and called from both the OpenMP loops (solvers/hexmg/hexmg_cpu.cpp) and the
// CUDA kernels (solvers/hexmg/hexmg_cuda.cu). Data are reached through strided views, so the
// same code reads the CPU's array-of-structures layout (vs = components, cs = 1) and the GPU's
// structure-of-arrays layout of Sec. 4.3 (vs = 1, cs = padded count).
//
// Unknowns. The paper solves Eq. 8 for the total displacement u. Here level 0 solves the same
// system for the increment du = u - u_old (initial guess du = 0, i.e. u_old as the paper's
// initial guess), with the right-hand side b - A u_old formed element by element in co-rotated
// local coordinates. Mathematically identical; numerically it removes the cancellation of
// |A| |u| against the load (in fp32 that floor was ~1e-2 of a cantilever's gravity load per
// vertex). FineView::u0 holds the total displacement, LevelView<0>::u the increment.
//
// Dirichlet conditions. A constrained component d of vertex x gets the row e_d^T u = g (the
// paper's dummy equation I u = 0, with g the prescribed value) and its column is moved to the
// right-hand sides of the neighbours, so that the system stays symmetric (the coarsest-level CG
// needs that). The Galerkin products skip constrained rows, i.e. they use the prolongation with
// the constrained components zeroed; coarse components that are reached only by constrained fine
// components ("dead") get the identity row as well. Interpolation never touches dead components.
#include <cstdint>
#include <utility>

#include "assembly/hd.h"
#include "assembly/hexmg/hex_element.h"

namespace eb::hexmg {

// Component c of item i at p[i * vs + c * cs].
template <class T>
struct Strided {
  T* p = nullptr;
  int64_t vs = 0, cs = 0;
  EB_HD T& operator()(int64_t i, int c) const { return p[i * vs + int64_t(c) * cs]; }
};

// One multigrid level's vertex equations and vectors. n counts padded vertices; a padding slot
// has nbr(x, kCentre) = -1 (real vertices: nbr(x, kCentre) = x).
template <class T>
struct LevelView {
  int32_t n = 0;
  Strided<T> A;             // 243: block l (stencil offset), row-major 3x3
  Strided<T> b, u, r;       // 3 each: right-hand side, solution (or correction), residual
  Strided<const int32_t> nbr;     // 27: neighbour vertex at each stencil offset, -1 if none
  Strided<const int32_t> child;   // 27: finer-level vertex 2x + k (coarse levels), -1 if none
  Strided<const int32_t> parent;  // 8: coarser-level vertices interpolated from (not on the coarsest)
  const uint8_t* dead = nullptr;  // bit d: component d has no equation (constrained / unreachable)
};

// Finest-level data for rotations, assembly and time integration.
template <class T>
struct FineView {
  int32_t n_elems = 0;
  T h = 1;                    // element edge
  T dt = 1, alpha = 0;        // time step, mass-proportional damping C = alpha M
  Strided<const int32_t> ev;  // 8: element vertices (lattice corner order)
  Strided<const int32_t> ve;  // 8: incident elements, slot s = the vertex's corner index in it
  const T* youngs = nullptr;  // per element
  Strided<T> R;               // 9: element rotations (row-major)
  const T* mass = nullptr;    // lumped vertex mass
  Strided<T> u0, v0, a0;      // 3: displacement, velocity, acceleration (state of the last step)
  Strided<const T> force;     // 3 (ncurves + 1): constant part (gravity) then one per load curve
  Strided<const T> presc;     // 3 ncurves: prescribed displacement at full load, per curve
  const uint8_t* cmask = nullptr;  // constrained components (bit d)
  int ncurves = 0;
  const T* factor = nullptr;  // ncurves load factors of this step (at t + dt)
};

// Accessor of the unit stiffness matrix (E = 1): host array or CUDA constant memory.
template <class T>
struct HostStiffness {
  const T* k;
  EB_HD T operator()(int i, int j) const { return k[i * 24 + j]; }
};

// --- rotations (Sec. 4.2.1), one call per element ------------------------------------------------

template <class T>
EB_HD int element_rotation(int64_t e, const FineView<T>& f) {
  T u[8][3];
  for (int c = 0; c < 8; ++c) {
    const int32_t v = f.ev(e, c);
    for (int d = 0; d < 3; ++d) u[c][d] = f.u0(v, d);
  }
  T F[9], Rp[9], R[9];
  average_deformation_gradient(u, f.h, F);
  for (int i = 0; i < 9; ++i) Rp[i] = f.R(e, i);
  const int status = polar_rotation(F, Rp, R);
  for (int i = 0; i < 9; ++i) f.R(e, i) = R[i];
  return status;
}

// Prescribed displacement of vertex x, component d, at this step.
template <class T>
EB_HD T prescribed_value(const FineView<T>& f, int64_t x, int d) {
  T g = 0;
  for (int c = 0; c < f.ncurves; ++c) g += f.factor[c] * f.presc(x, 3 * c + d);
  return g;
}

// --- assembly of the simulation-level equation of one vertex (Eqs. 4, 8, 9; Sec. 4.2.2) ---------
// Each of the 27 blocks is summed in registers over the elements that contain both the vertex
// and the neighbour and written once (no read-modify-write in global memory). The right-hand
// side is that of the increment (see the top of this file); the increment starts at 0.
// Dirichlet rows/columns are applied. Returns false for a padding slot.
template <class T, class KMat>
EB_HD bool assemble_vertex(int64_t x, const FineView<T>& f, const LevelView<T>& L0, const KMat& K) {
  if (L0.nbr(x, kCentre) < 0) return false;
  const T m = f.mass[x];
  const T c_mass = T(4) / (f.dt * f.dt) + T(2) * f.alpha / f.dt;
  // Eq. 8 minus A u_old: f + M (4/dt v + a) + C v - sum_e R K (R^T x_b - p_b).
  T rhs[3], ux[3];
  for (int d = 0; d < 3; ++d) {
    const T vo = f.v0(x, d), ao = f.a0(x, d);
    ux[d] = f.u0(x, d);
    L0.u(x, d) = T(0);
    T fx = f.force(x, d);
    for (int c = 0; c < f.ncurves; ++c) fx += f.factor[c] * f.force(x, 3 * (c + 1) + d);
    rhs[d] = fx + m * (T(4) / f.dt * vo + ao + f.alpha * vo);
  }
  // Elastic forces, element-local: x_b relative to this vertex's position and p_b = h bits(b)
  // (K annihilates translations, so both shifts are exact), keeping every term at the scale of
  // the element's rotation and strain.
  for (int s = 0; s < 8; ++s) {
    const int32_t e = f.ve(x, s);
    if (e < 0) continue;
    T R[9];
    for (int i = 0; i < 9; ++i) R[i] = f.R(e, i);
    const T E = f.youngs[e];
    T t[3] = {0, 0, 0};
    for (int b = 0; b < 8; ++b) {
      const int32_t vb = f.ev(e, b);
      T w[3];  // p_b + u_b - u_x
      for (int i = 0; i < 3; ++i) w[i] = (corner_bit(b, i) ? f.h : T(0)) + (f.u0(vb, i) - ux[i]);
      T q[3];  // R^T w - p_b
      for (int i = 0; i < 3; ++i) q[i] = R[i] * w[0] + R[3 + i] * w[1] + R[6 + i] * w[2] - (corner_bit(b, i) ? f.h : T(0));
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) t[i] += K(3 * s + i, 3 * b + j) * q[j];
    }
    for (int i = 0; i < 3; ++i) rhs[i] -= E * (R[3 * i] * t[0] + R[3 * i + 1] * t[1] + R[3 * i + 2] * t[2]);
  }
  const uint8_t cm = f.cmask[x];
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int l = 0; l < kStencil; ++l) {
    T blk[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
#if defined(__CUDACC__)
#pragma unroll
#endif
    for (int s = 0; s < 8; ++s) {
      const int b = corner_at_offset(s, l);
      if (b < 0) continue;
      const int32_t e = f.ve(x, s);
      if (e < 0) continue;
      T R[9];
      for (int i = 0; i < 9; ++i) R[i] = f.R(e, i);
      const T E = f.youngs[e];
      // M = K_sb R^T, then blk += E R M.
      T M[9];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          M[3 * i + j] = K(3 * s + i, 3 * b) * R[3 * j] + K(3 * s + i, 3 * b + 1) * R[3 * j + 1] +
                         K(3 * s + i, 3 * b + 2) * R[3 * j + 2];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          blk[3 * i + j] += E * (R[3 * i] * M[j] + R[3 * i + 1] * M[3 + j] + R[3 * i + 2] * M[6 + j]);
    }
    if (l == kCentre) {
      blk[0] += m * c_mass;
      blk[4] += m * c_mass;
      blk[8] += m * c_mass;
    }
    // Dirichlet columns: a constrained neighbour's known increment moves to the right-hand side.
    const int32_t y = L0.nbr(x, l);
    if (y >= 0) {
      const uint8_t ym = f.cmask[y];
      if (ym) {
        for (int d = 0; d < 3; ++d) {
          if (!(ym & (1u << d))) continue;
          const T g = prescribed_value(f, y, d) - f.u0(y, d);
          for (int i = 0; i < 3; ++i) {
            rhs[i] -= blk[3 * i + d] * g;
            blk[3 * i + d] = 0;
          }
        }
      }
    }
    // Dirichlet rows: e_d^T du = g - u_old.
    if (cm) {
      for (int d = 0; d < 3; ++d) {
        if (!(cm & (1u << d))) continue;
        for (int j = 0; j < 3; ++j) blk[3 * d + j] = (l == kCentre && j == d) ? T(1) : T(0);
      }
    }
    for (int i = 0; i < 9; ++i) L0.A(x, l * kBlock + i) = blk[i];
  }
  for (int d = 0; d < 3; ++d) L0.b(x, d) = (cm & (1u << d)) ? prescribed_value(f, x, d) - ux[d] : rhs[d];
  return true;
}

// --- Galerkin coarse equations (Eqs. 10-11; Sec. 4.2.3) --------------------------------------------
// Components [c0, c0 + NC) of all 27 blocks of coarse vertex xc, from the fine equations of its
// children 2x + k. The two steps are fused: fine coefficient A^{2x+k}_l contributes to the 5^3
// stencil entry i = k + l with weight w_k (Eq. 10) and that entry to the coarse block j with
// |i - 2j| <= 1 with weight w_{i-2j} (Eq. 11). Child k, block j and the admissible l are template
// parameters, so every weight and register index is a compile-time constant: each child's 27
// coefficients are loaded once (27 independent loads in flight) and scattered from registers.
// The GPU calls it with NC = 1 (the paper's 9 threads per vertex, each owning one scalar
// component in 27 registers); the CPU with NC = 9 (contiguous components). Fine rows without an
// equation (dead) are skipped, i.e. the prolongation is zero there.
namespace galerkin_detail {

EB_HD constexpr int lo(int j, int k) { return 2 * j - k - 1 < -1 ? -1 : 2 * j - k - 1; }
EB_HD constexpr int hi(int j, int k) { return 2 * j - k + 1 > 1 ? 1 : 2 * j - k + 1; }

// acc_j += sum over admissible l of w_k w_{k+l-2j} a_l, for child K and coarse block J.
template <int K, int J, int NC, class T>
EB_HD void scatter_block(T (&acc)[kStencil][NC], const T (&a)[kStencil][NC]) {
  constexpr int k0 = K % 3 - 1, k1 = (K / 3) % 3 - 1, k2 = K / 9 - 1;
  constexpr int j0 = J % 3 - 1, j1 = (J / 3) % 3 - 1, j2 = J / 9 - 1;
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int l2 = lo(j2, k2); l2 <= hi(j2, k2); ++l2)
#if defined(__CUDACC__)
#pragma unroll
#endif
    for (int l1 = lo(j1, k1); l1 <= hi(j1, k1); ++l1)
#if defined(__CUDACC__)
#pragma unroll
#endif
      for (int l0 = lo(j0, k0); l0 <= hi(j0, k0); ++l0) {
        const T w = T(weight_1d(k0) * weight_1d(k1) * weight_1d(k2) * weight_1d(k0 + l0 - 2 * j0) *
                      weight_1d(k1 + l1 - 2 * j1) * weight_1d(k2 + l2 - 2 * j2));
        const int l = stencil_index(l0, l1, l2);
        for (int c = 0; c < NC; ++c) acc[J][c] += w * a[l][c];
      }
}

template <int K, int NC, class T, int... J>
EB_HD void scatter_child(T (&acc)[kStencil][NC], const T (&a)[kStencil][NC], std::integer_sequence<int, J...>) {
  (scatter_block<K, J, NC>(acc, a), ...);
}

template <int K, int NC, class T>
EB_HD void add_child(int64_t xc, int c0, const LevelView<T>& fine, const LevelView<T>& coarse, T (&acc)[kStencil][NC]) {
  const int32_t z = coarse.child(xc, K);
  if (z < 0) return;
  const uint8_t zdead = fine.dead[z];
  T keep[NC];
  bool any = false;
  for (int c = 0; c < NC; ++c) {
    keep[c] = (zdead & (1u << ((c0 + c) / 3))) ? T(0) : T(1);
    any = any || keep[c] != T(0);
  }
  if (!any) return;
  T a[kStencil][NC];
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int l = 0; l < kStencil; ++l)
    for (int c = 0; c < NC; ++c) a[l][c] = keep[c] * fine.A(z, l * kBlock + c0 + c);
  scatter_child<K, NC>(acc, a, std::make_integer_sequence<int, kStencil>{});
}

template <int NC, class T, int... K>
EB_HD void add_children(int64_t xc, int c0, const LevelView<T>& fine, const LevelView<T>& coarse, T (&acc)[kStencil][NC],
                        std::integer_sequence<int, K...>) {
  (add_child<K, NC>(xc, c0, fine, coarse, acc), ...);
}

}  // namespace galerkin_detail

template <int NC, class T>
EB_HD void galerkin_components(int64_t xc, int c0, const LevelView<T>& fine, const LevelView<T>& coarse) {
  T acc[kStencil][NC];
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int j = 0; j < kStencil; ++j)
    for (int c = 0; c < NC; ++c) acc[j][c] = 0;
  galerkin_detail::add_children<NC>(xc, c0, fine, coarse, acc, std::make_integer_sequence<int, kStencil>{});
  const uint8_t cdead = coarse.dead[xc];
  for (int c = 0; c < NC; ++c) {
    const int cc = c0 + c;
    if (cc % 4 == 0 && (cdead & (1u << (cc / 3)))) acc[kCentre][c] += T(1);
  }
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int j = 0; j < kStencil; ++j)
    for (int c = 0; c < NC; ++c) coarse.A(xc, j * kBlock + c0 + c) = acc[j][c];
}

// --- Gauss-Seidel, residual, stencil product (Eqs. 9, 12; Secs. 4.2.4-4.2.5) -------------------------

// sum over stencil entries l in [l_begin, l_end), l != centre, of A_l u_{x+l}.
template <class T>
EB_HD void offdiag_partial(int64_t x, int l_begin, int l_end, const LevelView<T>& L, const Strided<T>& u, T* s) {
  s[0] = s[1] = s[2] = 0;
  // Unrolled on the GPU when the bounds are constants (residual, CG): the 27 neighbour loads are
  // then independent and in flight together instead of one latency after another.
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int l = l_begin; l < l_end; ++l) {
    if (l == kCentre) continue;
    const int32_t y = L.nbr(x, l);
    if (y < 0) continue;
    const T u0 = u(y, 0), u1 = u(y, 1), u2 = u(y, 2);
    s[0] += L.A(x, l * kBlock + 0) * u0 + L.A(x, l * kBlock + 1) * u1 + L.A(x, l * kBlock + 2) * u2;
    s[1] += L.A(x, l * kBlock + 3) * u0 + L.A(x, l * kBlock + 4) * u1 + L.A(x, l * kBlock + 5) * u2;
    s[2] += L.A(x, l * kBlock + 6) * u0 + L.A(x, l * kBlock + 7) * u1 + L.A(x, l * kBlock + 8) * u2;
  }
}

// u_x = A_0^{-1} (b_x - sum_{l != 0} A_l u_{x+l}) given that sum.
template <class T>
EB_HD void gauss_seidel_finish(int64_t x, const LevelView<T>& L, const T* offdiag) {
  T D[9], r[3], ux[3];
  for (int i = 0; i < 9; ++i) D[i] = L.A(x, kCentre * kBlock + i);
  for (int d = 0; d < 3; ++d) r[d] = L.b(x, d) - offdiag[d];
  solve3(D, r, ux);
  for (int d = 0; d < 3; ++d) L.u(x, d) = ux[d];
}

template <class T>
EB_HD void gauss_seidel_vertex(int64_t x, const LevelView<T>& L) {
  if (L.nbr(x, kCentre) < 0) return;
  T s[3];
  offdiag_partial(x, 0, kStencil, L, L.u, s);
  gauss_seidel_finish(x, L, s);
}

// out_x = (A v)_x
template <class T>
EB_HD void stencil_apply_vertex(int64_t x, const LevelView<T>& L, const Strided<T>& v, const Strided<T>& out) {
  if (L.nbr(x, kCentre) < 0) {
    for (int d = 0; d < 3; ++d) out(x, d) = 0;
    return;
  }
  T s[3];
  offdiag_partial(x, 0, kStencil, L, v, s);
  const T v0 = v(x, 0), v1 = v(x, 1), v2 = v(x, 2);
  const int o = kCentre * kBlock;
  out(x, 0) = s[0] + L.A(x, o + 0) * v0 + L.A(x, o + 1) * v1 + L.A(x, o + 2) * v2;
  out(x, 1) = s[1] + L.A(x, o + 3) * v0 + L.A(x, o + 4) * v1 + L.A(x, o + 5) * v2;
  out(x, 2) = s[2] + L.A(x, o + 6) * v0 + L.A(x, o + 7) * v1 + L.A(x, o + 8) * v2;
}

// 1 / diagonal entry of component d (0 for padding): the Jacobi preconditioner of the CGs.
template <class T>
EB_HD T jacobi_inverse(int64_t x, int d, const LevelView<T>& L) {
  if (L.nbr(x, kCentre) < 0) return T(0);
  return T(1) / L.A(x, kCentre * kBlock + 4 * d);
}

// r_x = b_x - (A u)_x (Eq. 12); returns |r_x|^2 (0 for padding).
template <class T>
EB_HD T residual_vertex(int64_t x, const LevelView<T>& L) {
  if (L.nbr(x, kCentre) < 0) {
    for (int d = 0; d < 3; ++d) L.r(x, d) = 0;
    return 0;
  }
  T s[3];
  offdiag_partial(x, 0, kStencil, L, L.u, s);
  T n2 = 0;
  const T u0 = L.u(x, 0), u1 = L.u(x, 1), u2 = L.u(x, 2);
  const int o = kCentre * kBlock;
  for (int d = 0; d < 3; ++d) {
    const T r = L.b(x, d) - s[d] - (L.A(x, o + 3 * d) * u0 + L.A(x, o + 3 * d + 1) * u1 + L.A(x, o + 3 * d + 2) * u2);
    L.r(x, d) = r;
    n2 += r * r;
  }
  return n2;
}

// --- transfer operators (Eqs. 13, 15; Sec. 4.2.6), both gathers -----------------------------------

// b^{2h}_x = sum_k w_k r^h_{2x+k}; u^{2h}_x = 0.
template <class T>
EB_HD void restrict_vertex(int64_t xc, const LevelView<T>& fine, const LevelView<T>& coarse) {
  T s[3] = {0, 0, 0};
  if (coarse.nbr(xc, kCentre) >= 0) {
    for (int k = 0; k < kStencil; ++k) {
      const int32_t z = coarse.child(xc, k);
      if (z < 0) continue;
      const T w = T(weight_1d(stencil_offset(k, 0)) * weight_1d(stencil_offset(k, 1)) * weight_1d(stencil_offset(k, 2)));
      for (int d = 0; d < 3; ++d) s[d] += w * fine.r(z, d);
    }
  }
  for (int d = 0; d < 3; ++d) {
    coarse.b(xc, d) = s[d];
    coarse.u(xc, d) = 0;
  }
}

// u^h_x += sum over the (1, 2, 4 or 8) coarse vertices x interpolates from, each with weight
// 1/count (trilinear: every coarse vertex exists, see hexmg_model.cpp); dead components kept.
template <class T>
EB_HD void interpolate_correct_vertex(int64_t x, const LevelView<T>& fine, const LevelView<T>& coarse) {
  if (fine.nbr(x, kCentre) < 0) return;
  T s[3] = {0, 0, 0};
  int count = 0;
  for (int p = 0; p < 8; ++p) {
    const int32_t y = fine.parent(x, p);
    if (y < 0) continue;
    ++count;
    for (int d = 0; d < 3; ++d) s[d] += coarse.u(y, d);
  }
  const T w = T(1) / T(count);
  const uint8_t dead = fine.dead[x];
  for (int d = 0; d < 3; ++d)
    if (!(dead & (1u << d))) fine.u(x, d) += w * s[d];
}

// --- Newmark update (Eqs. 5-6) --------------------------------------------------------------------
// du = u - u_old is the level-0 solution; the increment is kept (for the residual statistics).
template <class T>
EB_HD void newmark_update_vertex(int64_t x, const FineView<T>& f, const LevelView<T>& L0) {
  if (L0.nbr(x, kCentre) < 0) return;
  const T dt = f.dt;
  for (int d = 0; d < 3; ++d) {
    const T du = L0.u(x, d);
    const T vo = f.v0(x, d);
    f.u0(x, d) += du;
    f.v0(x, d) = T(2) / dt * du - vo;
    f.a0(x, d) = T(4) / (dt * dt) * (du - vo * dt) - f.a0(x, d);
  }
}

}  // namespace eb::hexmg
