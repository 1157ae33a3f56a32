#pragma once
// The CG / Jacobi-PCG iteration, described once for both engines (cg_cpu.cpp, cg_cuda.cu): the
// order of its steps (cg_start_steps, cg_iteration_steps), the scalar logic (cg_start,
// cg_set_alpha, cg_finish_update: EB_HD, run by the host engine and by the last thread block of
// each device reduction), and the per-entry vector updates (EB_HD, called by the OpenMP loops and
// by the kernels).
//
// Iteration (M = diag(A)^-1 for Jacobi, identity for plain CG; z = M r is never stored, it is
// recomputed from r wherever needed, which saves writing and re-reading a vector):
//   start:  q = A x;  r = b - q;  p = M r;  rho = r.Mr;  rr = r.r;  bb = b.b
//   each iteration:
//     1. q = A p                                  (the operator)
//     2. pq = p.q;  alpha = rho / pq              (one reduction pass over p, q)
//     3. x += alpha p;  r -= alpha q;             (one fused pass: reads x p r q [M], writes x r,
//        rho' = r.Mr;  rr = r.r                    and reduces both dots)
//        stop if ||r|| <= tol ||b||, or at the iteration limit; beta = rho' / rho; rho = rho'
//     4. p = M r + beta p                         (one pass)
// Single reduction (CgOptions::single_reduction; Chronopoulos & Gear 1989, the variant behind
// PETSc's KSPCG single-reduction option): the same iterates in exact arithmetic, with s = A p
// carried by a recurrence so that both dots of an iteration come after the one product:
//   start:  q = A x;  r = b - q;  u = M r;  rho = r.u;  rr = r.r;  bb = b.b;  w = A u;  delta = u.w
//   each iteration (cg_sr_coefficients: first beta = 0, alpha = rho / delta; then
//                   beta = rho / rho_prev, alpha = rho / (delta - beta rho / alpha_prev)):
//     1. p = u + beta p;  s = w + beta s;  x += alpha p;  r -= alpha s;  u = M r;   (one pass:
//        rho' = r.u;  rr = r.r;  stop tests as above                             reads p s w x r [M],
//                                                                                writes p s x r [u])
//     2. w = A u;  delta = u.w                 (the operator; fused into its kernel where it can)
// so the device runs two kernels per iteration instead of four, and 11 vector passes (13 with the
// product's) instead of 15: u is recomputed from r where read, as z is above. Its price: s drifts
// from A p by rounding, so the recurrence residual can stall earlier than standard CG's at tight
// tolerances (tests state how close the two stay).
// Dot products accumulate in double in both precisions (fp32 sums over 10^7 entries would lose
// about three digits), and alpha/beta are rounded to T where they scale vectors.
//
// Device (cg_cuda.cu, its kernels in cg_kernels.cuh): the scalars live in device memory in a
// CgScalars; the reduction kernels write per-block partial sums, and the last block to finish (an
// atomic ticket) adds them in a fixed order (deterministic: two runs give identical bits, graph or
// not) and runs cg_set_alpha or cg_finish_update itself, so no scalar travels to the host during
// the iteration (the single reduction may instead have the next kernel add them: CgOptions::
// sr_reduction). Steps 2-4 start by reading the status and return at once when the solve has
// stopped; step 1 is the operator's (format-agnostic) and still runs. The host enqueues
// `check_every` iterations (one CUDA graph launch), then reads the scalars once (a 64-byte copy to
// pinned memory and a stream synchronization). So a solve costs ceil(iterations / k) host round
// trips instead of one or two per iteration, and at most k - 1 wasted operator products after the
// stop; k = 8 keeps the waste under ~10% of a 100-iteration solve while making the round trips
// small against k iterations of a large matrix. A fixed-count solve (tolerance 0) can set
// k = max_iterations and read them once, at the end.
#include <cmath>

#include "assembly/hd.h"
#include "solvers/linalg/cg.h"
#include "solvers/linalg/sparse_formats.h"

namespace eb::linalg {

struct CgScalars {
  double rho = 0;      // r . M r of the current residual
  double alpha = 0, beta = 0;
  double rr = 0;       // r . r
  double stop_rr = 0;  // converged when rr <= stop_rr (= tol^2 b.b)
  double rhs_norm = 0; // ||b||
  int iteration = 0;   // completed iterations
  int max_iterations = 0;
  int status = 0;      // CgStatus
  double delta = 0;    // single reduction: u . A u, written by the product that fuses it
};

namespace cg_detail {
// CgStatus as the int stored in CgScalars (device code compares plain ints).
constexpr int kRunning = int(CgStatus::Running), kConverged = int(CgStatus::Converged),
              kIterationLimit = int(CgStatus::IterationLimit), kBreakdown = int(CgStatus::Breakdown),
              kNonFinite = int(CgStatus::NonFinite),
              kStopped = int(CgStatus::Stopped);  // host engine only (CgOptions::on_iteration)
EB_HD bool finite(double v) {
#if defined(__CUDA_ARCH__)
  return isfinite(v);
#else
  return std::isfinite(v);
#endif
}
}  // namespace cg_detail

// After the start pass: history[0] = ||r_0||.
EB_HD void cg_start(CgScalars& s, double rz, double rr, double bb, double tolerance, int max_iterations,
                    double* history) {
  using namespace cg_detail;
  s.rho = rz;
  s.rr = rr;
  s.alpha = s.beta = 0;
  s.stop_rr = tolerance * tolerance * bb;
  s.rhs_norm = sqrt(bb);
  s.iteration = 0;
  s.max_iterations = max_iterations;
  history[0] = sqrt(rr);
  if (!finite(rr) || !finite(rz) || !finite(bb))
    s.status = kNonFinite;
  else if (rr <= s.stop_rr)
    s.status = kConverged;  // includes b = 0 with x = 0, and an exact initial guess
  else if (max_iterations <= 0)
    s.status = kIterationLimit;
  else if (!(rz > 0))
    s.status = kBreakdown;  // r . M r <= 0 with r != 0: M is not positive definite
  else
    s.status = kRunning;
}

// Step 2: alpha = rho / p.Ap; a non-positive or non-finite p.Ap means A is not SPD (or overflow).
EB_HD void cg_set_alpha(CgScalars& s, double pq) {
  using namespace cg_detail;
  if (!finite(pq))
    s.status = kNonFinite;
  else if (!(pq > 0))
    s.status = kBreakdown;
  else
    s.alpha = s.rho / pq;
}

// Step 3's scalars: history[iteration] = ||r|| (history null: not recorded, for the device's
// blocks that compute the same scalars as the one that records them), the stopping tests, beta.
EB_HD void cg_finish_update(CgScalars& s, double rz, double rr, double* history) {
  using namespace cg_detail;
  s.iteration += 1;
  s.rr = rr;
  if (history) history[s.iteration] = sqrt(rr);
  if (!finite(rr) || !finite(rz)) {
    s.status = kNonFinite;
  } else if (rr <= s.stop_rr) {
    s.status = kConverged;
  } else if (s.iteration >= s.max_iterations) {
    s.status = kIterationLimit;
  } else if (!(rz > 0)) {
    s.status = kBreakdown;
  } else {
    s.beta = rz / s.rho;
    s.rho = rz;
  }
}

template <class T>
EB_HD T cg_precondition(const T* dinv, Offset i, T r) {
  return dinv ? dinv[i] * r : r;
}

// One entry of the refreshed Jacobi preconditioner (CgSolver::refresh_preconditioner): 1 / d, or
// NaN where d is not positive and finite, so that the solve reports NonFinite instead of
// iterating with a preconditioner that is not positive definite.
template <class T>
EB_HD T jacobi_inverse_entry(T d) {
  return d > T(0) && cg_detail::finite(double(d)) ? T(1) / d : T(NAN);
}

// Start pass, entry i (q = A x already computed).
template <class T>
EB_HD void cg_start_entry(Offset i, const T* b, const T* q, const T* dinv, T* r, T* p, double& rz, double& rr,
                          double& bb) {
  const T ri = b[i] - q[i];
  const T zi = cg_precondition(dinv, i, ri);
  r[i] = ri;
  p[i] = zi;
  rz += double(ri) * double(zi);
  rr += double(ri) * double(ri);
  bb += double(b[i]) * double(b[i]);
}

// Step 3, entry i.
template <class T>
EB_HD void cg_update_entry(Offset i, T alpha, const T* p, const T* q, const T* dinv, T* x, T* r, double& rz,
                           double& rr) {
  x[i] += alpha * p[i];
  const T ri = r[i] - alpha * q[i];
  r[i] = ri;
  const T zi = cg_precondition(dinv, i, ri);
  rz += double(ri) * double(zi);
  rr += double(ri) * double(ri);
}

// Step 4, entry i.
template <class T>
EB_HD void cg_direction_entry(Offset i, T beta, const T* r, const T* dinv, T* p) {
  p[i] = cg_precondition(dinv, i, r[i]) + beta * p[i];
}

// ---- single reduction ----

// alpha and beta of the coming iteration from rho, delta and the previous iteration's scalars;
// returns the status the iteration must stop with (kRunning: go on). delta - beta rho / alpha_prev
// is p.Ap of the coming direction: not positive (or not finite) means A is not SPD (or overflow).
EB_HD int cg_sr_coefficients(const CgScalars& s, double& alpha, double& beta) {
  using namespace cg_detail;
  beta = s.iteration == 0 ? 0.0 : s.beta;
  const double pap = s.iteration == 0 ? s.delta : s.delta - beta * s.rho / s.alpha;
  if (!finite(pap)) return kNonFinite;
  if (!(pap > 0)) return kBreakdown;
  alpha = s.rho / pap;
  return kRunning;
}

// Step 1's scalars: as cg_finish_update, and alpha kept for the next iteration's coefficients.
EB_HD void cg_sr_finish_update(CgScalars& s, double alpha, double rz, double rr, double* history) {
  s.alpha = alpha;
  cg_finish_update(s, rz, rr, history);
}

// Step 1, entry i. `first`: the first iteration, where p and s are taken as 0 (they are not yet
// set: 0 * garbage could be NaN). u may alias r (no preconditioner): it is written only with dinv.
template <class T>
EB_HD void cg_sr_update_entry(Offset i, bool first, T alpha, T beta, const T* w, const T* dinv, T* p, T* s, T* x,
                              T* r, T* u, double& rz, double& rr) {
  const T ui = cg_precondition(dinv, i, r[i]);
  const T pi = first ? ui : ui + beta * p[i];
  const T si = first ? w[i] : w[i] + beta * s[i];
  p[i] = pi;
  s[i] = si;
  x[i] += alpha * pi;
  const T ri = r[i] - alpha * si;
  r[i] = ri;
  const T zi = cg_precondition(dinv, i, ri);
  if (dinv) u[i] = zi;
  rz += double(ri) * double(zi);
  rr += double(ri) * double(ri);
}

// The result of a finished solve from its scalars and residual history (host memory).
inline CgResult cg_result(const CgScalars& s, const double* history) {
  CgResult res;
  res.status = CgStatus(s.status);
  res.iterations = s.iteration;
  res.rhs_norm = s.rhs_norm;
  res.residuals.assign(history, history + s.iteration + 1);
  return res;
}

// The step order, for an engine E with apply_to_x() (q = A x), start(), apply_to_p() (q = A p),
// reduce_alpha(), update_solution(), update_direction(); each step of E is a no-op once the
// status is no longer Running (the device engine enqueues steps without knowing the status).
template <class E>
void cg_start_steps(E& e) {
  e.apply_to_x();
  e.start();
}
template <class E>
void cg_iteration_steps(E& e) {
  e.apply_to_p();
  e.reduce_alpha();
  e.update_solution();
  e.update_direction();
}
// Single reduction: E also has apply_dot_u() (w = A u, delta = u.w) and sr_update(); start()
// writes u where the standard iteration's start writes p.
template <class E>
void cg_sr_start_steps(E& e) {
  e.apply_to_x();
  e.start();
  e.apply_dot_u();
}
template <class E>
void cg_sr_iteration_steps(E& e) {
  e.sr_update();
  e.apply_dot_u();
}

}  // namespace eb::linalg
