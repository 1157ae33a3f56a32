#pragma once
// The linear 4-node tetrahedron (tet4) shared by the tetrahedral methods (bcsr-pcg: Verschoor &
// Jalba 2012; corot-cg: Campo 2015; nr-neohookean: Cecka, Lew & Darve 2011). EB_HD functions,
// templated on the scalar (float, double), on fixed-size arrays, so that the OpenMP loop and the
// CUDA kernel call the very same code.
//
// Conventions (the whole folder):
//   - positions x[4][3] (node a, component i); a 12-vector v[3 a + i]; a 12 x 12 matrix
//     K[(3 a + i) * 12 + 3 b + j]; a 3 x 3 matrix row-major T[9];
//   - node order as in meshes/ (VTK): positive orientation when (x1-x0).((x2-x0)x(x3-x0)) > 0;
//   - Dm = [X1-X0, X2-X0, X3-X0] (reference edge vectors as columns), Dm^{-1} precomputed once
//     (Cecka's supplemental data S(e), with node 0 as the base instead of node 4);
//   - grad N_a (a = 1..3) is row a-1 of Dm^{-1}, grad N_0 = -(sum of the others): the gradients
//     are constant over the element, so every volume integral is V times the integrand;
//   - forces are internal forces, f = dE/dx (the element pushes its nodes with -f), as in the
//     papers' K u and Cecka's f = int P grad phi; stiffness = df/dx.
//
// Files: mat3.h (3 x 3 algebra), this file (geometry, mass, linear
// stiffness), corotation.h (rotation extraction, R K R^T, co-rotational force),
// neo_hookean.h (Cecka's compressible neo-Hookean energy, stress, tangent).
#include "assembly/tet/mat3.h"

namespace eb::tet {

// Outcome of a tetrahedral element function. Every function fills all its outputs whatever the
// status (zeros, or identity for rotations, where it cannot compute them): no division by zero,
// no NaN produced from finite input.
enum class TetStatus : int {
  kOk = 0,
  // Reference geometry: negative orientation (outputs are valid: the formulas use |V|).
  // Deformation (polar rotation, neo-Hookean): det F <= 0.
  kInverted = 1,
  kDegenerate = 2,  // zero-volume reference element, or an edge frame without two edges
  kNonFinite = 3,   // NaN or infinity in the input
};

// A reference element counts as degenerate when |V| <= ratio * (longest edge)^3 (a regular
// tetrahedron has V = 0.118 L^3). fp64: the mesh layer's kDegenerateRelVolume (1e-10,
// meshes/geometry.h), so every mesh the readers accept passes. fp32: 1e-5, about 30 times the
// rounding error of a volume computed in fp32 from coordinates within a few edge lengths of the
// origin. Solvers compute the reference geometry in fp64 and convert it (cast_reference), so
// the fp32 threshold only applies to callers that compute it in fp32.
template <class T>
EB_HD constexpr T degenerate_volume_ratio();
template <>
EB_HD constexpr float degenerate_volume_ratio<float>() { return 1e-5f; }
template <>
EB_HD constexpr double degenerate_volume_ratio<double>() { return 1e-10; }

template <class T>
struct Tet4Reference {
  T Dm_inv[9];  // inverse of the reference edge matrix Dm (row-major)
  T volume;     // |V|, the integration weight
};

template <class U, class T>
EB_HD Tet4Reference<U> cast_reference(const Tet4Reference<T>& r) {
  Tet4Reference<U> o;
  for (int k = 0; k < 9; ++k) o.Dm_inv[k] = U(r.Dm_inv[k]);
  o.volume = U(r.volume);
  return o;
}

template <class T>
EB_HD T tet4_signed_volume(const T x[4][3]) {
  T e1[3], e2[3], e3[3], c[3];
  for (int i = 0; i < 3; ++i) {
    e1[i] = x[1][i] - x[0][i];
    e2[i] = x[2][i] - x[0][i];
    e3[i] = x[3][i] - x[0][i];
  }
  cross3(e2, e3, c);
  return dot3(e1, c) / T(6);
}

// Reference geometry of one element (precomputed once): Dm^{-1} and |V|. Rows of Dm^{-1} are
// (e2 x e3, e3 x e1, e1 x e2) / det Dm with e_a = X_a - X_0, det Dm = 6 V. Degenerate or
// non-finite: Dm^{-1} = 0, volume = 0.
template <class T>
EB_HD TetStatus tet4_reference(const T X[4][3], Tet4Reference<T>& ref) {
  T e[3][3];
  for (int a = 0; a < 3; ++a)
    for (int i = 0; i < 3; ++i) e[a][i] = X[a + 1][i] - X[0][i];
  T rows[3][3];
  cross3(e[1], e[2], rows[0]);
  cross3(e[2], e[0], rows[1]);
  cross3(e[0], e[1], rows[2]);
  const T det = dot3(e[0], rows[0]);  // 6 V
  // Longest of the six edges: e1, e2, e3 and their pairwise differences.
  T longest2 = T(0);
  for (int a = 0; a < 3; ++a) {
    const T l2 = dot3(e[a], e[a]);
    longest2 = l2 > longest2 ? l2 : longest2;
    const int b = (a + 1) % 3;
    const T d[3] = {e[b][0] - e[a][0], e[b][1] - e[a][1], e[b][2] - e[a][2]};
    const T m2 = dot3(d, d);
    longest2 = m2 > longest2 ? m2 : longest2;
  }
  for (int k = 0; k < 9; ++k) ref.Dm_inv[k] = T(0);
  ref.volume = T(0);
  const bool finite = is_finite(det) && is_finite(longest2);
  if (!finite) return TetStatus::kNonFinite;
  const T volume = abs_value(det) / T(6);
  if (!(volume > degenerate_volume_ratio<T>() * longest2 * std::sqrt(longest2))) return TetStatus::kDegenerate;
  const T s = T(1) / det;
  for (int a = 0; a < 3; ++a)
    for (int j = 0; j < 3; ++j) ref.Dm_inv[3 * a + j] = rows[a][j] * s;
  ref.volume = volume;
  return det > T(0) ? TetStatus::kOk : TetStatus::kInverted;
}

// grad_X N_a for the four nodes (constant over the element).
template <class T>
EB_HD void tet4_shape_gradients(const T Dm_inv[9], T G[4][3]) {
  for (int j = 0; j < 3; ++j) {
    G[1][j] = Dm_inv[j];
    G[2][j] = Dm_inv[3 + j];
    G[3][j] = Dm_inv[6 + j];
    G[0][j] = -(G[1][j] + G[2][j] + G[3][j]);
  }
}

// Gradient of a nodal field v (row-major 3 x 3): sum_a v_a (grad N_a)^T = [v1-v0, v2-v0, v3-v0]
// Dm^{-1}. From positions it is F = Ds Dm^{-1}; from displacements, F - I (more accurate in fp32
// for small displacements: no cancellation of x - X).
template <class T>
EB_HD void tet4_field_gradient(const T v[4][3], const T Dm_inv[9], T H[9]) {
  T Ds[9];
  for (int i = 0; i < 3; ++i)
    for (int a = 0; a < 3; ++a) Ds[3 * i + a] = v[a + 1][i] - v[0][i];
  mul3(Ds, Dm_inv, H);
}
template <class T>
EB_HD void tet4_deformation_gradient(const T x[4][3], const T Dm_inv[9], T F[9]) {
  tet4_field_gradient(x, Dm_inv, F);
}

// f_a = V P grad N_a for a constant (first Piola-Kirchhoff) stress P: the internal nodal forces
// of every stress-based model here.
template <class T>
EB_HD void tet4_stress_to_forces(const T P[9], const T Dm_inv[9], T volume, T f[12]) {
  T G[4][3];
  tet4_shape_gradients(Dm_inv, G);
  for (int a = 0; a < 4; ++a) {
    T y[3];
    mul3_vec(P, G[a], y);
    for (int i = 0; i < 3; ++i) f[3 * a + i] = volume * y[i];
  }
}

// --- mass -----------------------------------------------------------------------------------

// Lumped mass per node (each of its three directions): rho V / 4, the row sum of the consistent
// matrix and what vertex (Lobatto) quadrature gives (Cecka Sec. 16.4.1).
template <class T>
EB_HD T tet4_lumped_mass(T rho, T volume) {
  return rho * volume / T(4);
}

// Consistent mass rho int N_a N_b dV = rho V (1 + delta_ab) / 20, as a 4 x 4 matrix per
// direction: the 12 x 12 element matrix is M4 (x) I3, M[(3a+i)(3b+j)] = M4[4a+b] delta_ij.
// Verschoor's N1 = int Phi^T Phi is this with rho = 1; the damping matrix C_e = c N1 is this
// with rho = c.
template <class T>
EB_HD void tet4_consistent_mass(T rho, T volume, T M4[16]) {
  const T off = rho * volume / T(20);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) M4[4 * a + b] = a == b ? T(2) * off : off;
}

// --- isotropic linear elasticity ------------------------------------------------------------

template <class T>
struct Lame {
  T lambda, mu;
};

// From Young's modulus and Poisson's ratio; the caller has checked -1 < nu < 1/2 and E > 0.
template <class T>
EB_HD Lame<T> lame_from_young_poisson(T E, T nu) {
  return Lame<T>{E * nu / ((T(1) + nu) * (T(1) - T(2) * nu)), E / (T(2) * (T(1) + nu))};
}

// K_e = V B^T D B (Verschoor Eq. 9, Campo Eq. 4.2) written per node pair:
//   K_ab,ij = V (lambda g_a,i g_b,j + mu g_a,j g_b,i + mu (g_a . g_b) delta_ij),  g = grad N.
// Symmetric, positive semi-definite, null space = the six rigid motions.
// One 3 x 3 block K_ab (row-major) of that matrix, for kernels that never hold all 144 entries.
template <class T>
EB_HD void tet4_stiffness_block(const T G[4][3], T volume, Lame<T> mat, int a, int b, T blk[9]) {
  const T gg = mat.mu * dot3(G[a], G[b]);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      blk[3 * i + j] = volume * (mat.lambda * G[a][i] * G[b][j] + mat.mu * G[a][j] * G[b][i] + (i == j ? gg : T(0)));
}

template <class T>
EB_HD void tet4_linear_stiffness(const Tet4Reference<T>& ref, Lame<T> mat, T K[144]) {
  T G[4][3];
  tet4_shape_gradients(ref.Dm_inv, G);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      T blk[9];
      tet4_stiffness_block(G, ref.volume, mat, a, b, blk);
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) K[(3 * a + i) * 12 + 3 * b + j] = blk[3 * i + j];
    }
}

// y = K v for a 12 x 12 element matrix (y must not alias v).
template <class T>
EB_HD void mul12_vec(const T K[144], const T v[12], T y[12]) {
  for (int r = 0; r < 12; ++r) {
    T acc = T(0);
    for (int c = 0; c < 12; ++c) acc += K[12 * r + c] * v[c];
    y[r] = acc;
  }
}

}  // namespace eb::tet
