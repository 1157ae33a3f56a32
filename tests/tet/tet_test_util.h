#pragma once
// Seeded random elements, rotations and deformations for the tet4 tests (host and CUDA).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "assembly/tet/corotation.h"
#include "assembly/tet/neo_hookean.h"
#include "assembly/tet/tet4.h"

namespace eb::tet::test {

using Scalars = ::testing::Types<float, double>;

// Tolerance for results that are exact up to rounding, relative to the quantity's scale:
// a few hundred ulps of the precision.
template <class T>
double rounding_tol();
template <>
inline double rounding_tol<float>() {
  return 2e-5;
}
template <>
inline double rounding_tol<double>() {
  return 1e-12;
}

template <class T>
const char* scalar_name() {
  return sizeof(T) == 4 ? "float" : "double";
}

inline double max_abs(const double* a, int n) {
  double m = 0;
  for (int i = 0; i < n; ++i) m = std::max(m, std::abs(a[i]));
  return m;
}
template <class T>
double max_abs_diff(const T* a, const double* b, int n) {
  double m = 0;
  for (int i = 0; i < n; ++i) m = std::max(m, std::abs(double(a[i]) - b[i]));
  return m;
}

// Rotation by `angle` about the unit vector `axis` (Rodrigues).
inline void axis_angle(const double axis[3], double angle, double R[9]) {
  const double c = std::cos(angle), s = std::sin(angle), t = 1 - c;
  const double x = axis[0], y = axis[1], z = axis[2];
  const double m[9] = {t * x * x + c,     t * x * y - s * z, t * x * z + s * y, t * x * y + s * z, t * y * y + c,
                       t * y * z - s * x, t * x * z - s * y, t * y * z + s * x, t * z * z + c};
  std::copy(m, m + 9, R);
}

// Uniformly random direction, angle uniform in [0, max_angle].
inline void random_rotation(std::mt19937_64& rng, double R[9], double max_angle = M_PI) {
  std::normal_distribution<double> n(0, 1);
  double a[3] = {n(rng), n(rng), n(rng)};
  const double l = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  for (double& v : a) v /= l;
  axis_angle(a, std::uniform_real_distribution<double>(0, max_angle)(rng), R);
}

// A positively oriented, reasonably shaped element: a regular tetrahedron of edge ~`size`
// with every vertex moved up to 25% of the edge, randomly rotated, near `centre`. Its volume
// ratio |V| / L_max^3 stays above 0.02 (the regular one: 0.118).
inline void random_element(std::mt19937_64& rng, double X[4][3], double size = 1.0, const double* centre = nullptr) {
  static const double reg[4][3] = {{1, 1, 1}, {-1, 1, -1}, {1, -1, -1}, {-1, -1, 1}};  // edge 2 sqrt(2), V > 0
  std::uniform_real_distribution<double> u(-1, 1);
  for (;;) {
    double R[9];
    random_rotation(rng, R);
    const double s = size / (2 * std::sqrt(2.0));
    for (int a = 0; a < 4; ++a) {
      double p[3];
      for (int i = 0; i < 3; ++i) p[i] = reg[a][i] + 0.25 * 2 * std::sqrt(2.0) * u(rng) / std::sqrt(3.0);
      for (int i = 0; i < 3; ++i)
        X[a][i] = s * (R[3 * i] * p[0] + R[3 * i + 1] * p[1] + R[3 * i + 2] * p[2]) + (centre ? centre[i] : 0.0);
    }
    double lmax2 = 0;
    for (int a = 0; a < 4; ++a)
      for (int b = a + 1; b < 4; ++b) {
        double d2 = 0;
        for (int i = 0; i < 3; ++i) d2 += (X[a][i] - X[b][i]) * (X[a][i] - X[b][i]);
        lmax2 = std::max(lmax2, d2);
      }
    const double v = tet4_signed_volume(X);
    if (v > 0.02 * lmax2 * std::sqrt(lmax2)) return;
  }
}

// Deformation gradient Q (I + H), H with entries uniform in [-strain, strain].
inline void random_deformation(std::mt19937_64& rng, double strain, double F[9], double max_angle = M_PI) {
  double Q[9], A[9];
  random_rotation(rng, Q, max_angle);
  std::uniform_real_distribution<double> u(-strain, strain);
  for (int k = 0; k < 9; ++k) A[k] = (k % 4 == 0 ? 1.0 : 0.0) + u(rng);
  mul3(Q, A, F);
}

// x_a = F X_a + t.
inline void map_affine(const double F[9], const double t[3], const double X[4][3], double x[4][3]) {
  for (int a = 0; a < 4; ++a) {
    mul3_vec(F, X[a], x[a]);
    for (int i = 0; i < 3; ++i) x[a][i] += t[i];
  }
}

template <class T>
void cast4(const double in[4][3], T out[4][3]);

// An element in precision T: rest positions X, current positions x (X when none are given),
// and the reference geometry computed in T from X, with its status.
template <class T>
struct Element {
  T X[4][3], x[4][3];
  Tet4Reference<T> ref;
  TetStatus status;
  explicit Element(const double Xd[4][3], const double xd[4][3] = nullptr) {
    cast4(Xd, X);
    cast4(xd ? xd : Xd, x);
    status = tet4_reference(X, ref);
  }
};

// The element's rotation by polar decomposition of its F, or (edge) by SOFA's edge frame.
template <class T>
TetStatus element_rotation(bool edge, const Element<T>& el, T R[9]) {
  if (edge) {
    T E0[9];
    edge_frame(el.X, E0);
    return edge_frame_rotation(el.x, E0, R);
  }
  T F[9];
  tet4_deformation_gradient(el.x, el.ref.Dm_inv, F);
  return polar_rotation(F, R);
}

template <class T>
void cast4(const double in[4][3], T out[4][3]) {
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < 3; ++i) out[a][i] = T(in[a][i]);
}
template <class T>
void cast_n(const double* in, T* out, int n) {
  for (int k = 0; k < n; ++k) out[k] = T(in[k]);
}
template <class T>
void widen(const T* in, double* out, int n) {
  for (int k = 0; k < n; ++k) out[k] = double(in[k]);
}

}  // namespace eb::tet::test
