#pragma once
// Element mathematics of Dick, Georgii & Westermann 2011 ("hexmg"): the single trilinear
// hexahedron stiffness matrix (Eq. 2), the element's average deformation gradient, its rotation
// by polar decomposition (Sec. 4.2.1) and the multigrid transfer weights (Sec. 3.3.2).
//
// Corner numbering is the lattice one used everywhere in hexmg: corner c of a cell at lattice
// position L sits at vertex L + bits(c), bits(c) = (c & 1, (c >> 1) & 1, (c >> 2) & 1). The
// conversion to VTK order is kVtkFromLattice. Stencil offsets o in {-1,0,1}^3 are numbered
// (o0 + 1) + 3 (o1 + 1) + 9 (o2 + 1): offset 13 is the vertex itself.
#include <array>
#include <cmath>

#include "assembly/hd.h"

namespace eb::hexmg {

constexpr int kStencil = 27;     // 3^3 neighbour blocks per vertex equation (Eq. 9)
constexpr int kCentre = 13;      // stencil index of offset (0,0,0)
constexpr int kBlock = 9;        // 3x3 coefficients per block, row-major
constexpr int kCoeffs = kStencil * kBlock;  // 243 scalars per vertex equation

EB_HD constexpr int corner_bit(int c, int d) { return (c >> d) & 1; }
EB_HD constexpr int stencil_index(int o0, int o1, int o2) { return (o0 + 1) + 3 * (o1 + 1) + 9 * (o2 + 1); }
EB_HD constexpr int stencil_offset(int l, int d) { return d == 0 ? l % 3 - 1 : (d == 1 ? (l / 3) % 3 - 1 : l / 9 - 1); }
// Lattice corner index from per-axis bits.
EB_HD constexpr int corner_index(int b0, int b1, int b2) { return b0 + 2 * b1 + 4 * b2; }
// Corner b of the element in which the vertex is corner s, seen from that vertex: offset
// bits(b) - bits(s); returns -1 when the neighbour at stencil offset l is not a corner of it.
EB_HD constexpr int corner_at_offset(int s, int l) {
  const int b0 = corner_bit(s, 0) + stencil_offset(l, 0);
  const int b1 = corner_bit(s, 1) + stencil_offset(l, 1);
  const int b2 = corner_bit(s, 2) + stencil_offset(l, 2);
  return (b0 < 0 || b0 > 1 || b1 < 0 || b1 > 1 || b2 < 0 || b2 > 1) ? -1 : corner_index(b0, b1, b2);
}

// VTK hexahedron order (bottom face counter-clockwise from +z, then top) -> lattice corner.
constexpr std::array<int, 8> kVtkFromLattice = {0, 1, 3, 2, 4, 5, 7, 6};  // vtk i = corner kVtk..[i]

// 1D multigrid weight of an offset in {-1,0,1} (Sec. 3.3.2): w = (2 - |k|) / 2; the 3D weight
// w_k = (2-|k1|)(2-|k2|)(2-|k3|)/8 is the product over the axes.
EB_HD constexpr double weight_1d(int k) { return k == 0 ? 1.0 : ((k == 1 || k == -1) ? 0.5 : 0.0); }

// --- the single element stiffness matrix -------------------------------------------------------

// K^e (Eq. 2) of an axis-aligned cube of edge h for Young's modulus 1 and Poisson ratio nu, with
// 2x2x2 Gauss quadrature (exact: the integrand is at most quadratic per axis). Row/column
// 3 c + d is component d of lattice corner c. Scaling by an element's E gives its matrix.
inline std::array<double, 24 * 24> unit_hex_stiffness(double nu, double h) {
  const double lambda = nu / ((1 + nu) * (1 - 2 * nu));
  const double mu = 1.0 / (2 * (1 + nu));
  std::array<double, 24 * 24> K{};
  const double g = 1.0 / std::sqrt(3.0);
  for (int q = 0; q < 8; ++q) {
    const double xi[3] = {corner_bit(q, 0) ? g : -g, corner_bit(q, 1) ? g : -g, corner_bit(q, 2) ? g : -g};
    double dN[8][3];  // dN_c / dx at the Gauss point: (2/h) * dN/dxi
    for (int c = 0; c < 8; ++c) {
      const double s[3] = {corner_bit(c, 0) ? 1.0 : -1.0, corner_bit(c, 1) ? 1.0 : -1.0, corner_bit(c, 2) ? 1.0 : -1.0};
      for (int d = 0; d < 3; ++d) {
        double v = s[d] / 8.0 * (2.0 / h);
        for (int e = 0; e < 3; ++e)
          if (e != d) v *= 1.0 + s[e] * xi[e];
        dN[c][d] = v;
      }
    }
    const double wdet = (h / 2) * (h / 2) * (h / 2);  // Gauss weights are 1; Jacobian det
    // K_ab[i][j] = int dN_a/dx_k C_ikjl dN_b/dx_l, isotropic C.
    for (int a = 0; a < 8; ++a)
      for (int b = 0; b < 8; ++b)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) {
            double v = lambda * dN[a][i] * dN[b][j] + mu * dN[a][j] * dN[b][i];
            if (i == j) v += mu * (dN[a][0] * dN[b][0] + dN[a][1] * dN[b][1] + dN[a][2] * dN[b][2]);
            K[(3 * a + i) * 24 + 3 * b + j] += v * wdet;
          }
  }
  return K;
}

// --- 3x3 helpers (row-major) --------------------------------------------------------------------

template <class T>
EB_HD T det3(const T* m) {
  return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
}

// Cofactor matrix: cof(M) = det(M) M^{-T}.
template <class T>
EB_HD void cofactor3(const T* m, T* c) {
  c[0] = m[4] * m[8] - m[5] * m[7];
  c[1] = m[5] * m[6] - m[3] * m[8];
  c[2] = m[3] * m[7] - m[4] * m[6];
  c[3] = m[2] * m[7] - m[1] * m[8];
  c[4] = m[0] * m[8] - m[2] * m[6];
  c[5] = m[1] * m[6] - m[0] * m[7];
  c[6] = m[1] * m[5] - m[2] * m[4];
  c[7] = m[2] * m[3] - m[0] * m[5];
  c[8] = m[0] * m[4] - m[1] * m[3];
}

// Solves M x = r by Cramer's rule (the Gauss-Seidel block solve). M is SPD here.
template <class T>
EB_HD void solve3(const T* m, const T* r, T* x) {
  T c[9];
  cofactor3(m, c);
  const T inv = T(1) / (m[0] * c[0] + m[1] * c[1] + m[2] * c[2]);
  // M^{-1} = cof(M)^T / det
  x[0] = (c[0] * r[0] + c[3] * r[1] + c[6] * r[2]) * inv;
  x[1] = (c[1] * r[0] + c[4] * r[1] + c[7] * r[2]) * inv;
  x[2] = (c[2] * r[0] + c[5] * r[1] + c[8] * r[2]) * inv;
}

// --- kinematics -----------------------------------------------------------------------------------

// Average deformation gradient F = I + grad u of a cube of edge h from its corner displacements
// (lattice order). For trilinear shape functions the volume average of grad N_c equals its
// value at the centre: bits-sign(c) / (4 h) per axis.
template <class T>
EB_HD void average_deformation_gradient(const T (*u)[3], T h, T* F) {
  for (int i = 0; i < 9; ++i) F[i] = (i % 4 == 0) ? T(1) : T(0);
  const T s = T(1) / (T(4) * h);
  for (int c = 0; c < 8; ++c)
    for (int j = 0; j < 3; ++j) {
      const T g = corner_bit(c, j) ? s : -s;
      for (int i = 0; i < 3; ++i) F[3 * i + j] += u[c][i] * g;
    }
}

enum RotationStatus : int { kRotationOk = 0, kRotationKeptPrevious = 1, kRotationNonFinite = 2 };

// Volume ratio det F below which an element counts as (nearly) inverted. The polar factor of
// such an F is a reflection (det < 0) or undefined (det = 0), so the element keeps the rotation
// of the previous step instead; the co-rotated linear forces then push it back out of inversion.
constexpr double kInvertedVolumeRatio = 0.05;

// Rotation of the element (Sec. 4.2.1): polar decomposition F = R S by Higham's scaled Newton
// iteration X <- (gamma X + X^{-T} / gamma) / 2 [33], 5 iterations as in the paper (with the
// Frobenius-norm scaling they converge for stretches up to ~1e4). R_prev is used for inverted or
// degenerate elements (see kInvertedVolumeRatio); a non-finite F is reported, R left unchanged.
template <class T>
EB_HD int polar_rotation(const T* F, const T* R_prev, T* R) {
  const T J = det3(F);
  bool finite = true;
  for (int i = 0; i < 9; ++i) finite = finite && (F[i] == F[i]) && (F[i] - F[i] == T(0));
  if (!finite || !(J == J)) {
    for (int i = 0; i < 9; ++i) R[i] = R_prev[i];
    return kRotationNonFinite;
  }
  if (J <= T(kInvertedVolumeRatio)) {
    for (int i = 0; i < 9; ++i) R[i] = R_prev[i];
    return kRotationKeptPrevious;
  }
  T X[9], C[9];
  for (int i = 0; i < 9; ++i) X[i] = F[i];
  T d = J;
  for (int it = 0; it < 5; ++it) {
    cofactor3(X, C);  // X^{-T} = C / det X
    T nx = 0, nc = 0;
    for (int i = 0; i < 9; ++i) {
      nx += X[i] * X[i];
      nc += C[i] * C[i];
    }
    // gamma = sqrt(|X^{-1}|_F / |X|_F) = (|C|_F / (|det| |X|_F))^{1/2}
    const T inv_d = T(1) / d;
    const T gamma = std::sqrt(std::sqrt(nc / nx) * (inv_d < 0 ? -inv_d : inv_d));
    const T a = T(0.5) * gamma, b = T(0.5) * inv_d / gamma;
    for (int i = 0; i < 9; ++i) X[i] = a * X[i] + b * C[i];
    d = det3(X);
  }
  for (int i = 0; i < 9; ++i) R[i] = X[i];
  return kRotationOk;
}

// Rotation angle of R (for output): acos((tr R - 1) / 2), clamped.
template <class T>
EB_HD T rotation_angle(const T* R) {
  T c = (R[0] + R[4] + R[8] - T(1)) / T(2);
  c = c > T(1) ? T(1) : (c < T(-1) ? T(-1) : c);
  return std::acos(c);
}

}  // namespace eb::hexmg
