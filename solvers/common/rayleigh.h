#pragma once
// Implicit (backward) Euler with Rayleigh damping C = alpha M + beta K, solved for the velocity
// change dv as SOFA's EulerImplicitSolver does (Campo 2015 Eq. 4.5 is the same step written for
// v(t+h)):
//   [(1 + h alpha) M + h (h + beta) K] dv = h [f_ext - f_int(x) - (h + beta) K v - alpha M v],
//   v += dv,  x += h v,
// with K the stiffness at the step's start (for co-rotation: R K R^T with the step's rotations,
// plus any penalty stiffness). The coefficients are shared so every method that integrates this
// way uses one formula.
#include "assembly/hd.h"

namespace eb {

template <class T>
struct RayleighEuler {
  T mass;       // 1 + h alpha: M's factor in the matrix
  T stiffness;  // h (h + beta): K's factor in the matrix
  T rhs_v;      // h + beta: K v's factor inside the bracket of the right-hand side
  T rhs_mass;   // alpha: M v's factor inside the bracket
  T h;          // the bracket's factor
};

template <class T>
EB_HD RayleighEuler<T> rayleigh_euler(double h, double alpha, double beta) {
  return RayleighEuler<T>{T(1 + h * alpha), T(h * (h + beta)), T(h + beta), T(alpha), T(h)};
}

// Static equilibrium iterations solve K du = f_ext - f_int with the same operator: matrix
// factors 0 and 1, no velocity terms.
template <class T>
EB_HD RayleighEuler<T> static_coefficients() {
  return RayleighEuler<T>{T(0), T(1), T(0), T(0), T(1)};
}

}  // namespace eb
