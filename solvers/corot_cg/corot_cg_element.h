#pragma once
// corot-cg's per-element and per-node functions (Campo 2015 Ch. 4; SOFA's TetrahedronFEMForceField
// "large"), EB_HD so that the OpenMP loops and the CUDA kernels run the very same code.
//
// Layouts (both backends): per-element arrays entry-major (entry k of element e at k * E + e:
// coalesced on the device), nodal vectors node-major (3 n + i, the CG's vectors). On the GPU the
// element stiffness is never stored: K_ab is rebuilt from the shape gradients and the volume
// (tet4_stiffness_block), so the CG's product reads 9 (R) + 9 (Dm^-1) + 1 (volume) values per
// element (node_stiffness_times: bandwidth is what the GPU lacks, not FLOPs). The CPU stores the
// rotated blocks R K_ab R^T once per step (element_rotated_blocks, 90 values per element) and its
// product reads them (node_blocks_times): one core lacks FLOPs, and rebuilding the blocks for each
// of an element's 4 nodes in every product was 4 x the work of an element loop. Both are the same
// sum_e R_e K_e R_e^T p_e to rounding. Rest geometry enters as the element's edges Dm (X_a - X_0,
// from fp64), never as differences of absolute coordinates: in fp32 a coordinate of 19 carries
// an error of 1e-6, 4e-6 of a 0.25 edge, where the edges themselves are exact to 6e-8. K
// annihilates translations, so every formula may use positions relative to node 0.
//
// K v is applied without a global matrix and without atomics: each node gathers the rows of its
// incident elements (node_ptr / node_incidence: entries 4 e + a, a the node's local index), so
// the sum order is fixed (deterministic). The gathers take (lane, lanes): lane l of `lanes`
// workers sums the node's incidences l, l + lanes, ...; the CPU runs one lane, the GPU a warp per
// node (32 lanes, then a fixed shuffle tree), so a node of many elements is not one thread's
// serial walk.
#include <cstdint>

#include "assembly/ground_plane.h"
#include "assembly/tet/corotation.h"
#include "solvers/common/load_curve.h"
#include "solvers/common/rayleigh.h"

namespace eb::corot_cg {

enum class Rotation : int { EdgeFrame = 0, Polar = 1 };

template <class T>
struct ElementArrays {
  int64_t E = 0;
  const int32_t* conn = nullptr;  // 4 per element, element-major (4 e + a)
  const T* Dm_inv = nullptr;      // 9 entry-major
  const T* Dm = nullptr;          // 9 entry-major: row-major [X1-X0, X2-X0, X3-X0] as columns
  const T* volume = nullptr;      // 1
  const T* R = nullptr;           // 9 entry-major, the step's rotations
  tet::Lame<T> lame{};
};

template <class T>
EB_HD T elem(const T* a, int64_t E, int64_t e, int k) {
  return a[int64_t(k) * E + e];
}

// Rest edges of element e as positions relative to its node 0 (Xe[0] = 0).
template <class T>
EB_HD void rest_relative(const T* Dm, int64_t E, int64_t e, T Xe[4][3]) {
  for (int i = 0; i < 3; ++i) {
    Xe[0][i] = T(0);
    for (int a = 1; a < 4; ++a) Xe[a][i] = elem(Dm, E, e, 3 * i + (a - 1));
  }
}

// Rest and current positions of element e's nodes relative to rest node 0: Xe as above,
// xe = Xe + u_a - u_0.
template <class T>
EB_HD void gather_positions(const ElementArrays<T>& m, int64_t e, const T* u, T Xe[4][3], T xe[4][3]) {
  rest_relative(m.Dm, m.E, e, Xe);
  const int64_t n0 = m.conn[4 * e];
  for (int a = 0; a < 4; ++a) {
    const int64_t n = m.conn[4 * e + a];
    for (int i = 0; i < 3; ++i) xe[a][i] = Xe[a][i] + (u[3 * n + i] - u[3 * n0 + i]);
  }
}

// The rotation of element e (R, 9 row-major) and det F. Edge frame: R = E(x) E(X)^T (SOFA's
// "large": the frame of edges 01, 02; Campo Sec. 4.1.3), polar: R of F = U V^T
// (assembly/tet/corotation.h). Returns false where no rotation can be made (degenerate edge
// frame or non-finite state: R = I), which the validity counts report.
template <class T>
EB_HD bool element_rotation(Rotation method, const T Xe[4][3], const T xe[4][3], const T Dm_inv[9], T R[9], T& det_f) {
  T F[9];
  tet::tet4_deformation_gradient(xe, Dm_inv, F);
  det_f = tet::det3(F);
  if (method == Rotation::Polar) return tet::polar_rotation(F, R) != tet::TetStatus::kNonFinite;
  T E0[9];
  if (tet::edge_frame(Xe, E0) != tet::TetStatus::kOk) {
    tet::set_identity3(R);
    return false;
  }
  return tet::edge_frame_rotation(xe, E0, R) == tet::TetStatus::kOk;
}

// Loads element e's rotation and shape gradients.
template <class T>
EB_HD void load_element(const ElementArrays<T>& m, int64_t e, T R[9], T G[4][3], T& vol) {
  T Dm_inv[9];
  for (int k = 0; k < 9; ++k) {
    R[k] = elem(m.R, m.E, e, k);
    Dm_inv[k] = elem(m.Dm_inv, m.E, e, k);
  }
  vol = elem(m.volume, m.E, e, 0);
  tet::tet4_shape_gradients(Dm_inv, G);
}

// y += R sum_b K_ab w_b: row block a of R K w for w given in the element's unrotated frame.
template <class T>
EB_HD void add_rotated_row(const T R[9], const T G[4][3], T vol, tet::Lame<T> lame, int a, const T w[4][3], T y[3]) {
  T z[3] = {T(0), T(0), T(0)};
  for (int b = 0; b < 4; ++b) {
    T blk[9];
    tet::tet4_stiffness_block(G, vol, lame, a, b, blk);
    for (int i = 0; i < 3; ++i) z[i] += blk[3 * i] * w[b][0] + blk[3 * i + 1] * w[b][1] + blk[3 * i + 2] * w[b][2];
  }
  T r[3];
  tet::mul3_vec(R, z, r);
  for (int i = 0; i < 3; ++i) y[i] += r[i];
}

// The CPU's stored R K R^T: an element's 4 x 4 blocks are symmetric (B_ba = B_ab^T), so the 10
// blocks a <= b are kept, block (a, b) at 9 * block_slot(a, b), element-major (element e's 90
// values contiguous at 90 e: the node gather reads one element's row at a time, a cache line
// apart, where the entry-major layout would touch 36 lines).
constexpr int kRotatedBlockValues = 90;
EB_HD int block_slot(int a, int b) { return 4 * a - a * (a - 1) / 2 + (b - a); }  // a <= b

// Element e's 10 blocks B_ab = R K_ab R^T (a <= b) into B[90], from its step's rotation m.R.
// K_ab is bilinear in the shape gradients (tet4_stiffness_block), so R K_ab(G) R^T = K_ab(R G):
// the blocks of the rotated gradients, ~50 FLOPs each where R K_ab R^T by products takes ~140.
template <class T>
EB_HD void element_rotated_blocks(const ElementArrays<T>& m, int64_t e, T B[kRotatedBlockValues]) {
  T R[9], G[4][3], vol, g[4][3];
  load_element(m, e, R, G, vol);
  for (int a = 0; a < 4; ++a) tet::mul3_vec(R, G[a], g[a]);
  for (int a = 0; a < 4; ++a)
    for (int b = a; b < 4; ++b) tet::tet4_stiffness_block(g, vol, m.lame, a, b, B + 9 * block_slot(a, b));
}

// Node n's row of K p from the stored blocks (CPU): y = sum over its incidences (e, a), in the
// incidence order, of sum_b B_ab p_b, b = 0..3. p must already be 0 at the constrained components
// (the caller masks it once per product, not once per incidence). The sum order is fixed by the
// incidence list alone, so the result does not depend on the thread count and repeats bit for bit.
template <class T>
EB_HD void node_blocks_times(const int32_t* conn, const T* blocks, const int32_t* node_ptr, const int32_t* incidence,
                             int64_t n, const T* p_masked, T y[3]) {
  y[0] = y[1] = y[2] = T(0);
  for (int32_t k = node_ptr[n]; k < node_ptr[n + 1]; ++k) {
    const int64_t e = incidence[k] >> 2;
    const int a = incidence[k] & 3;
    const T* Be = blocks + kRotatedBlockValues * e;
    const int32_t* ce = conn + 4 * e;
    // Row block a: B_ba^T left of the diagonal, B_ab from it on (two loops: no branch on b < a).
    for (int b = 0; b < a; ++b) {
      const T* B = Be + 9 * block_slot(b, a);
      const T* pb = p_masked + 3 * int64_t(ce[b]);
      for (int i = 0; i < 3; ++i) y[i] += B[i] * pb[0] + B[3 + i] * pb[1] + B[6 + i] * pb[2];
    }
    for (int b = a; b < 4; ++b) {
      const T* B = Be + 9 * block_slot(a, b);
      const T* pb = p_masked + 3 * int64_t(ce[b]);
      for (int i = 0; i < 3; ++i) y[i] += B[3 * i] * pb[0] + B[3 * i + 1] * pb[1] + B[3 * i + 2] * pb[2];
    }
  }
}

// Node n's row of the co-rotational product K p = sum_e R_e K_e R_e^T p_e; p is read only at free
// components (bit d of constrained[node] set: component d counts as 0, as FunctionOperator
// requires).
template <class T>
EB_HD void node_stiffness_times(const ElementArrays<T>& m, const int32_t* node_ptr, const int32_t* incidence,
                                const uint8_t* constrained, int64_t n, const T* p, T y[3], int lane = 0, int lanes = 1) {
  y[0] = y[1] = y[2] = T(0);
  for (int32_t k = node_ptr[n] + lane; k < node_ptr[n + 1]; k += lanes) {
    const int64_t e = incidence[k] >> 2;
    const int a = incidence[k] & 3;
    T R[9], G[4][3], vol;
    load_element(m, e, R, G, vol);
    T w[4][3];
    for (int b = 0; b < 4; ++b) {
      const int64_t nb = m.conn[4 * e + b];
      T pb[3];
      for (int i = 0; i < 3; ++i) pb[i] = (constrained[nb] >> i) & 1 ? T(0) : p[3 * nb + i];
      tet::mul3t_vec(R, pb, w[b]);
    }
    add_rotated_row(R, G, vol, m.lame, a, w, y);
  }
}

// Element e's R^T x - X relative to node 0 with x = X + u + c v, per node b: R^T (u + c v) +
// (R^T X - X), the second part from the exact rest edges.
template <class T>
EB_HD void element_unrotated_state(const ElementArrays<T>& m, int64_t e, const T R[9], const T* u, const T* v, T c,
                                   T w[4][3]) {
  T Xe[4][3];
  rest_relative(m.Dm, m.E, e, Xe);
  for (int b = 0; b < 4; ++b) {
    const int64_t nb = m.conn[4 * e + b];
    T q[3];
    for (int i = 0; i < 3; ++i) q[i] = u[3 * nb + i] + c * v[3 * nb + i];
    T rq[3], rX[3];
    tet::mul3t_vec(R, q, rq);
    tet::mul3t_vec(R, Xe[b], rX);
    for (int i = 0; i < 3; ++i) w[b][i] = rq[i] + (rX[i] - Xe[b][i]);
  }
}

// Node n's row of the internal force plus c K v (c = h + beta folds Rayleigh's stiffness damping
// into the same pass): sum_e R_e K_e (R_e^T (x_e + c v_e) - X_e); and the diagonal of the
// node's block of sum_e R_e K_e R_e^T (the Jacobi preconditioner's share).
template <class T>
EB_HD void node_force(const ElementArrays<T>& m, const int32_t* node_ptr, const int32_t* incidence, int64_t n,
                      const T* u, const T* v, T c, T f[3], T diag[3], int lane = 0, int lanes = 1) {
  f[0] = f[1] = f[2] = T(0);
  diag[0] = diag[1] = diag[2] = T(0);
  for (int32_t k = node_ptr[n] + lane; k < node_ptr[n + 1]; k += lanes) {
    const int64_t e = incidence[k] >> 2;
    const int a = incidence[k] & 3;
    T R[9], G[4][3], vol;
    load_element(m, e, R, G, vol);
    T w[4][3];
    element_unrotated_state(m, e, R, u, v, c, w);
    add_rotated_row(R, G, vol, m.lame, a, w, f);
    T blk[9], t1[9], t2[9];
    tet::tet4_stiffness_block(G, vol, m.lame, a, a, blk);
    tet::mul3(R, blk, t1);
    tet::mul3_nt(t1, R, t2);
    for (int i = 0; i < 3; ++i) diag[i] += t2[4 * i];
  }
}

// Element e's 4 rows of the internal force plus c K v, f_a = R sum_b K_ab w_b (the terms
// node_force sums, computed once per element instead of once per incident node: the CPU's forces
// stage). Each row is node_force's term bit for bit, so the CPU's forces differ from the kernel's
// by the order of the sum only. (The stress form V sigma(grad w) grad N_a would take ~100 FLOPs
// instead of ~900, but its other rounding moves fp32 trajectories further from the kernels'.)
template <class T>
EB_HD void element_force_rows(const ElementArrays<T>& m, int64_t e, const T* u, const T* v, T c, T f[4][3]) {
  T R[9], G[4][3], vol;
  load_element(m, e, R, G, vol);
  T w[4][3];
  element_unrotated_state(m, e, R, u, v, c, w);
  for (int a = 0; a < 4; ++a) {
    f[a][0] = f[a][1] = f[a][2] = T(0);
    add_rotated_row(R, G, vol, m.lame, a, w, f[a]);
  }
}

// Node n's internal force plus c K v and its diagonal block's diagonal, gathered (incidence
// order, as node_force) from the element rows of element_force_rows (12 per element,
// element-major) and the stored blocks.
template <class T>
EB_HD void node_gather_force(const T* force_rows, const T* blocks, const int32_t* node_ptr, const int32_t* incidence,
                             int64_t n, T f[3], T diag[3]) {
  f[0] = f[1] = f[2] = T(0);
  diag[0] = diag[1] = diag[2] = T(0);
  for (int32_t k = node_ptr[n]; k < node_ptr[n + 1]; ++k) {
    const int64_t e = incidence[k] >> 2;
    const int a = incidence[k] & 3;
    const T* B = blocks + kRotatedBlockValues * e + 9 * block_slot(a, a);
    for (int i = 0; i < 3; ++i) {
      f[i] += force_rows[12 * e + 3 * a + i];
      diag[i] += B[4 * i];
    }
  }
}

// What the right-hand side of a step adds per node besides the elements: the external loads.
template <class T>
struct NodeLoads {
  const T* mass = nullptr;   // per node (lumped)
  T gravity[3] = {T(0), T(0), T(0)};
  T gravity_scale = T(1);    // static load factor (1 in time steps)
  const int32_t* load_ptr = nullptr;  // per node: its entries in load_curve / load_force (N + 1)
  const int* load_curve = nullptr;
  const double* load_force = nullptr;  // 3 per entry, full load
  const double* curve_factor = nullptr;  // per curve: factor x scale of the current step
  bool ground = false;
  ground::Plane<T> plane{};
};

// One node of a step's right-hand side b = h [f_ext - (f_int + c K v) - alpha M v] (rayleigh.h)
// and of the operator's diagonal (1 + h alpha) m + h (h + beta) (K_nn + ground); `contact`
// receives the ground contact flag, `impulse` (may be null) is this node's extra force; b is 0 at
// the constrained components (bit d of `constrained`).
template <class T>
EB_HD void node_rhs(const RayleighEuler<T>& k, const NodeLoads<T>& L, int64_t n, const T* X, const T* u, const T* v,
                    const T f_int_cv[3], const T diag_k[3], const T* impulse, uint8_t constrained, T b[3], T d[3],
                    uint8_t& contact) {
  const T mn = L.mass[n];
  T fe[3];
  for (int i = 0; i < 3; ++i) fe[i] = mn * L.gravity[i] * L.gravity_scale;
  if (L.load_ptr)
    for (int32_t j = L.load_ptr[n]; j < L.load_ptr[n + 1]; ++j)
      for (int i = 0; i < 3; ++i) fe[i] += T(L.load_force[3 * j + i] * L.curve_factor[L.load_curve[j]]);
  if (impulse)
    for (int i = 0; i < 3; ++i) fe[i] += impulse[i];
  T kd[3] = {diag_k[0], diag_k[1], diag_k[2]};
  T kv[3] = {T(0), T(0), T(0)};
  bool in_contact = false;
  if (L.ground) {
    const T x[3] = {X[3 * n] + u[3 * n], X[3 * n + 1] + u[3 * n + 1], X[3 * n + 2] + u[3 * n + 2]};
    in_contact = ground::plane_add_force(L.plane, x, fe);
    const T vn[3] = {v[3 * n], v[3 * n + 1], v[3 * n + 2]};
    ground::plane_add_dforce(L.plane, in_contact, vn, kv);
    ground::plane_add_diagonal(L.plane, in_contact, kd);
  }
  contact = in_contact ? 1 : 0;
  for (int i = 0; i < 3; ++i) {
    b[i] = (constrained >> i) & 1 ? T(0) : k.h * (fe[i] - f_int_cv[i] - k.rhs_v * kv[i] - k.rhs_mass * mn * v[3 * n + i]);
    d[i] = k.mass * mn + k.stiffness * kd[i];
  }
}

// One node of the operator's product A p = (1 + h alpha) M p + h (h + beta) (K p + ground p).
template <class T>
EB_HD void node_operator(const RayleighEuler<T>& k, const T* mass, bool ground_on, const ground::Plane<T>& plane,
                         const uint8_t* contact, int64_t n, const T* p, const T kp[3], T y[3]) {
  T g[3] = {T(0), T(0), T(0)};
  if (ground_on) {
    const T pn[3] = {p[3 * n], p[3 * n + 1], p[3 * n + 2]};
    ground::plane_add_dforce(plane, contact[n] != 0, pn, g);
  }
  for (int i = 0; i < 3; ++i) y[i] = k.mass * mass[n] * p[3 * n + i] + k.stiffness * (kp[i] + g[i]);
}

// End of a time step for one node: v += dv, u += h v (dv is 0 at fixed rows).
template <class T>
EB_HD void node_integrate(int64_t n, T h, const T* dv, T* u, T* v) {
  for (int i = 0; i < 3; ++i) {
    const T vi = v[3 * n + i] + dv[3 * n + i];
    v[3 * n + i] = vi;
    u[3 * n + i] += h * vi;
  }
}

// Campo Eq. 4.6, the displacement mapping: a render vertex's position from its element's nodes
// (barycentric weights, extrapolating for vertices slightly outside).
template <class T>
EB_HD void map_vertex(int64_t s, const int32_t* nodes4, const T* weights4, const T* X, const T* u, T y[3]) {
  y[0] = y[1] = y[2] = T(0);
  for (int a = 0; a < 4; ++a) {
    const int64_t n = nodes4[4 * s + a];
    const T w = weights4[4 * s + a];
    for (int i = 0; i < 3; ++i) y[i] += w * (X[3 * n + i] + u[3 * n + i]);
  }
}

}  // namespace eb::corot_cg
