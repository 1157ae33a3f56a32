#pragma once
// 3 x 3 linear algebra for the tetrahedral element library (assembly/tet/): row-major T[9]
// matrices, T[3] vectors, EB_HD and templated on the scalar, since Eigen cannot run in device
// code.
#include <cfloat>
#include <cmath>

#include "assembly/hd.h"

namespace eb::tet {

// Machine epsilon as a plain constant (std::numeric_limits is not callable in device code
// without --expt-relaxed-constexpr).
template <class T>
EB_HD constexpr T machine_epsilon();
template <>
EB_HD constexpr float machine_epsilon<float>() { return FLT_EPSILON; }
template <>
EB_HD constexpr double machine_epsilon<double>() { return DBL_EPSILON; }

// Finite (not NaN, not +-inf): x - x is 0 exactly for finite x and NaN otherwise. Written this
// way so that it holds under fast-math flags on both compilers.
template <class T>
EB_HD bool is_finite(T x) {
  return x - x == T(0);
}
template <class T>
EB_HD bool all_finite(const T* a, int n) {
  bool ok = true;
  for (int i = 0; i < n; ++i) ok = ok && is_finite(a[i]);
  return ok;
}

template <class T>
EB_HD T abs_value(T x) {
  return x < T(0) ? -x : x;
}

template <class T>
EB_HD T dot3(const T* a, const T* b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
template <class T>
EB_HD void cross3(const T* a, const T* b, T* c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

template <class T>
EB_HD void set_identity3(T* A) {
  for (int i = 0; i < 9; ++i) A[i] = (i % 4 == 0) ? T(1) : T(0);
}

template <class T>
EB_HD T det3(const T* A) {
  return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
         A[2] * (A[3] * A[7] - A[4] * A[6]);
}

// C = A B, C = A^T B, C = A B^T (C must not alias A or B).
template <class T>
EB_HD void mul3(const T* A, const T* B, T* C) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
template <class T>
EB_HD void mul3_tn(const T* A, const T* B, T* C) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) C[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
}
template <class T>
EB_HD void mul3_nt(const T* A, const T* B, T* C) {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      C[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
}
// y = A x and y = A^T x (y must not alias x).
template <class T>
EB_HD void mul3_vec(const T* A, const T* x, T* y) {
  for (int i = 0; i < 3; ++i) y[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
}
template <class T>
EB_HD void mul3t_vec(const T* A, const T* x, T* y) {
  for (int i = 0; i < 3; ++i) y[i] = A[i] * x[0] + A[3 + i] * x[1] + A[6 + i] * x[2];
}

// The inverse transpose from the cofactors, A^{-T} = cof(A) / det(A). The caller has checked
// that det is safely away from zero.
template <class T>
EB_HD void inverse_transpose3(const T* A, T det, T* AinvT) {
  const T s = T(1) / det;
  AinvT[0] = (A[4] * A[8] - A[5] * A[7]) * s;
  AinvT[1] = (A[5] * A[6] - A[3] * A[8]) * s;
  AinvT[2] = (A[3] * A[7] - A[4] * A[6]) * s;
  AinvT[3] = (A[2] * A[7] - A[1] * A[8]) * s;
  AinvT[4] = (A[0] * A[8] - A[2] * A[6]) * s;
  AinvT[5] = (A[1] * A[6] - A[0] * A[7]) * s;
  AinvT[6] = (A[1] * A[5] - A[2] * A[4]) * s;
  AinvT[7] = (A[2] * A[3] - A[0] * A[5]) * s;
  AinvT[8] = (A[0] * A[4] - A[1] * A[3]) * s;
}

}  // namespace eb::tet
