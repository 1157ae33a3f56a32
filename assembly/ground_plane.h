#pragma once
// A rigid ground plane by penalty forces (SOFA's PlaneForceField, Campo 2015's Plane_AddForce /
// Plane_AddDForce kernels), for any method with nodal positions: a node below the plane
// n . x = h (n unit) is pushed along n with stiffness k times its depth. The contact set is
// decided where the force is computed (the state at the start of a step) and kept for the
// differential, as SOFA does, so the force's Jacobian within a step is the constant k n n^T on
// the nodes in contact: an implicit solve sees a symmetric positive semi-definite addition to
// its stiffness.
//
// Sign convention of assembly/tet (internal forces, f = dE/dx): the plane's energy is
// E = k/2 min(0, n . x - h)^2, its internal force k min(0, n . x - h) n (the node is pushed with
// minus that), its stiffness k n n^T where in contact.
#include "assembly/hd.h"

namespace eb::ground {

template <class T>
struct Plane {
  T normal[3];  // unit
  T height;     // n . x = height on the plane
  T stiffness;  // k (N/m)
};

// The external (pushing) force on a node at x, added to f[3]; returns whether the node is in
// contact (n . x < h), which the differential then uses.
template <class T>
EB_HD bool plane_add_force(const Plane<T>& p, const T x[3], T f[3]) {
  const T depth = p.normal[0] * x[0] + p.normal[1] * x[1] + p.normal[2] * x[2] - p.height;
  if (!(depth < T(0))) return false;
  for (int i = 0; i < 3; ++i) f[i] -= p.stiffness * depth * p.normal[i];
  return true;
}

// The differential of the internal force for a change dx of a node in contact: adds
// k (n . dx) n to df[3] (the plane's stiffness times dx); nothing for a node not in contact.
template <class T>
EB_HD void plane_add_dforce(const Plane<T>& p, bool in_contact, const T dx[3], T df[3]) {
  if (!in_contact) return;
  const T s = p.stiffness * (p.normal[0] * dx[0] + p.normal[1] * dx[1] + p.normal[2] * dx[2]);
  for (int i = 0; i < 3; ++i) df[i] += s * p.normal[i];
}

// Diagonal of k n n^T (the Jacobi preconditioner's share of a node in contact).
template <class T>
EB_HD void plane_add_diagonal(const Plane<T>& p, bool in_contact, T d[3]) {
  if (!in_contact) return;
  for (int i = 0; i < 3; ++i) d[i] += p.stiffness * p.normal[i] * p.normal[i];
}

}  // namespace eb::ground
