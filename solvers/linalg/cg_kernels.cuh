#pragma once
// The CUDA CG engine's kernels: the arithmetic of cg_algorithm.h's steps, one kernel per step, for
// the standard iteration and the single reduction with its two ways of finishing a reduction. The
// engine that launches them, in the order cg_algorithm.h gives, is cg_cuda.cu. Included by
// cg_cuda.cu only (the kernels are instantiated there).
#include "solvers/linalg/bcsr_device.cuh"
#include "solvers/linalg/cg_algorithm.h"
#include "solvers/linalg/grid_reduce.cuh"

namespace eb::linalg::detail {
// Internal to the one translation unit that includes this header.
namespace {

// Threads per block of every CG kernel (cg_plan.cpp sizes the grids with it).
constexpr int kCgThreads = 256;

template <int N>
__device__ bool cg_grid_sum(const Sums<N>& mine, double* partials, unsigned* ticket, Sums<N>& total) {
  return grid_sum<N, kCgThreads>(mine, partials, ticket, total);
}

__device__ bool stopped(const CgScalars* s) { return s->status != cg_detail::kRunning; }

#define EB_GRID_LOOP(i, n) \
  for (Offset i = Offset(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += Offset(gridDim.x) * blockDim.x)

// ---- the standard iteration; each reduction finished by its kernel's last block ----

template <class T>
__global__ void __launch_bounds__(kCgThreads) k_start(Offset n, const T* b, const T* q, const T* dinv, T* r, T* p,
                                                      CgScalars* s, double* partials, unsigned* ticket,
                                                      double tolerance, int max_iterations, double* history) {
  Sums<3> m = {{0, 0, 0}};
  EB_GRID_LOOP(i, n) cg_start_entry(i, b, q, dinv, r, p, m.v[0], m.v[1], m.v[2]);
  Sums<3> t;
  if (cg_grid_sum(m, partials, ticket, t)) cg_start(*s, t.v[0], t.v[1], t.v[2], tolerance, max_iterations, history);
}

template <class T>
__global__ void __launch_bounds__(kCgThreads) k_alpha(Offset n, const T* p, const T* q, CgScalars* s,
                                                      double* partials, unsigned* ticket) {
  if (stopped(s)) return;
  Sums<1> m = {{0}};
  EB_GRID_LOOP(i, n) m.v[0] += double(p[i]) * double(q[i]);
  Sums<1> t;
  if (cg_grid_sum(m, partials, ticket, t)) cg_set_alpha(*s, t.v[0]);
}

template <class T>
__global__ void __launch_bounds__(kCgThreads) k_update(Offset n, const T* p, const T* q, const T* dinv, T* x, T* r,
                                                       CgScalars* s, double* partials, unsigned* ticket,
                                                       double* history) {
  if (stopped(s)) return;
  const T alpha = T(s->alpha);
  Sums<2> m = {{0, 0}};
  EB_GRID_LOOP(i, n) cg_update_entry(i, alpha, p, q, dinv, x, r, m.v[0], m.v[1]);
  Sums<2> t;
  if (cg_grid_sum(m, partials, ticket, t)) cg_finish_update(*s, t.v[0], t.v[1], history);
}

template <class T>
__global__ void __launch_bounds__(kCgThreads) k_direction(Offset n, const T* r, const T* dinv, T* p,
                                                          const CgScalars* s) {
  if (stopped(s)) return;
  const T beta = T(s->beta);
  EB_GRID_LOOP(i, n) cg_direction_entry(i, beta, r, dinv, p);
}

template <class T>
__global__ void __launch_bounds__(kCgThreads) k_jacobi_inverse(Offset n, const T* d, T* dinv) {
  EB_GRID_LOOP(i, n) dinv[i] = jacobi_inverse_entry(d[i]);
}

// ---- single reduction, reductions finished by the last block ----

// delta = u . w where the operator cannot fuse it into the product.
template <class T>
__global__ void __launch_bounds__(kCgThreads) k_dot(Offset n, const T* u, const T* w, CgScalars* s,
                                                    double* partials, unsigned* ticket) {
  Sums<1> m = {{0}};
  EB_GRID_LOOP(i, n) m.v[0] += double(u[i]) * double(w[i]);
  Sums<1> t;
  if (cg_grid_sum(m, partials, ticket, t)) s->delta = t.v[0];
}

// Step 1. Every block computes alpha and beta from the scalars itself (the same bits in each); the
// last block, which takes its ticket after every other block has read the scalars, is the one that
// overwrites them. A breakdown found there stops the solve without a reduction: block 0 records it,
// every block returns.
template <class T>
__global__ void __launch_bounds__(kCgThreads) k_sr_update(Offset n, const T* w, const T* dinv, T* p, T* sv, T* x,
                                                          T* r, T* u, CgScalars* s, double* partials, unsigned* ticket,
                                                          double* history) {
  if (stopped(s)) return;
  double alpha_d = 0, beta_d = 0;
  if (const int st = cg_sr_coefficients(*s, alpha_d, beta_d); st != cg_detail::kRunning) {
    if (blockIdx.x == 0 && threadIdx.x == 0) s->status = st;
    return;
  }
  const bool first = s->iteration == 0;
  const T alpha = T(alpha_d), beta = T(beta_d);
  Sums<2> m = {{0, 0}};
  EB_GRID_LOOP(i, n) cg_sr_update_entry(i, first, alpha, beta, w, dinv, p, sv, x, r, u, m.v[0], m.v[1]);
  Sums<2> t;
  if (cg_grid_sum(m, partials, ticket, t)) cg_sr_finish_update(*s, alpha_d, t.v[0], t.v[1], history);
}

// ---- single reduction, reductions summed by the next kernel ----
// A last-block reduction is a serial tail (the block sums, a fence, the ticket, the last block's
// second read of the partials), two per iteration, which at small sizes costs as much as the
// passes. Here no kernel finishes its own reduction: the update pass and the product only write
// per-block partial sums, and the next update's blocks each add them (sum_partials, the same order
// in every block, so all blocks hold the same bits) before they use the totals. So the scalars are
// read and written by the same kernel: they alternate between two slots (in: the state the
// previous update left; out: written by block 0), as do the update's partial sums. A state whose
// alpha is not 0 still owes the finish of its iteration (cg_finish_update with the update's
// partial sums); the start leaves alpha = 0, and every update leaves its alpha > 0 (pap > 0 and
// rho > 0 while running).

// The pending finish of `st`, if any: the previous update's rz and rr from its partial sums.
__device__ void sr_apply_pending(CgScalars& st, const double* update_partials, unsigned update_blocks,
                                        double* history) {
  if (st.status != cg_detail::kRunning || st.alpha == 0) return;
  const Sums<2> t = sum_partials<2, kCgThreads>(update_partials, update_blocks);
  cg_finish_update(st, t.v[0], t.v[1], blockIdx.x == 0 && threadIdx.x == 0 ? history : nullptr);
}

// Step 1. Launched as a programmatic dependent of the product or normally (CgPlan::
// programmatic_launch; the same bits): it lets the next kernel start once its pass is done.
template <class T>
__global__ void __launch_bounds__(kCgThreads)
    k_sr_update_next(Offset n, const T* w, const T* dinv, T* p, T* sv, T* x, T* r, T* u, const CgScalars* state_in,
                     CgScalars* state_out, const double* update_partials_in, double* update_partials_out,
                     unsigned update_blocks, const double* product_partials, unsigned product_blocks,
                     double* history) {
  // The state and p, s, x, r are the previous update's (complete before the product that precedes
  // this kernel passed its own pdl_wait()), so they are read while the product may still drain.
  CgScalars st = *state_in;
  const bool was_running = st.status == cg_detail::kRunning;
  // This thread's first entries are loaded into L1 while the partial sums are read (from L2) and
  // reduced: the pass needs the scalars, its loads do not.
  const Offset first_i = Offset(blockIdx.x) * blockDim.x + threadIdx.x;
  auto prefetch = [first_i](const T* a) {
    if (a) asm volatile("prefetch.global.L1 [%0];" ::"l"(a + first_i));
  };
  if (was_running && first_i < n) prefetch(dinv), prefetch(p), prefetch(sv), prefetch(x), prefetch(r);
  pdl_wait();  // the product's w and partial sums (at once when launched normally)
  if (was_running && first_i < n) prefetch(w);
  double alpha_d = 0, beta_d = 0;
  if (was_running) {
    // Every block sums the same partials: the same totals, so the same branches in all blocks.
    // The update's (rz, rr) are read even where no finish is owed (after a start), and not used
    // then; the engine zeroes them at allocation so that the first solve reads defined values.
    const Sums<3> t = sum_partials<2, 1, kCgThreads>(update_partials_in, update_blocks, product_partials,
                                                     product_blocks);
    if (st.alpha != 0) cg_finish_update(st, t.v[0], t.v[1], blockIdx.x == 0 && threadIdx.x == 0 ? history : nullptr);
    if (st.status == cg_detail::kRunning) {
      st.delta = t.v[2];
      if (const int code = cg_sr_coefficients(st, alpha_d, beta_d); code != cg_detail::kRunning) st.status = code;
    }
  }
  const bool running = st.status == cg_detail::kRunning;
  if (running) st.alpha = alpha_d;  // this iteration's finish is now owed (alpha > 0)
  if (blockIdx.x == 0 && threadIdx.x == 0) *state_out = st;  // stopped states are carried to the next slot
  if (!running || !was_running) return;
  const bool first = st.iteration == 0;
  const T alpha = T(alpha_d), beta = T(beta_d);
  Sums<2> m = {{0, 0}};
  EB_GRID_LOOP(i, n) cg_sr_update_entry(i, first, alpha, beta, w, dinv, p, sv, x, r, u, m.v[0], m.v[1]);
  pdl_launch_dependents();
  Sums<2> unused;
  cg_grid_sum(m, update_partials_out, nullptr, unused);
}

// delta's partial sums for the next update, where the operator cannot fuse the dot into the product.
template <class T>
__global__ void __launch_bounds__(kCgThreads) k_dot_partials(Offset n, const T* u, const T* w, double* partials) {
  Sums<1> m = {{0}};
  EB_GRID_LOOP(i, n) m.v[0] += double(u[i]) * double(w[i]);
  Sums<1> unused;
  cg_grid_sum(m, partials, nullptr, unused);
}

// The state the host reads (and last_result's history): the latest slot with its pending finish
// applied, one block. The slot itself keeps owing the finish, which the next update then applies
// to the same bits.
__global__ void __launch_bounds__(kCgThreads) k_sr_publish(const CgScalars* state, const double* update_partials,
                                                           unsigned update_blocks, CgScalars* host_state,
                                                           double* history) {
  CgScalars st = *state;
  sr_apply_pending(st, update_partials, update_blocks, history);
  if (threadIdx.x == 0) *host_state = st;
}

#undef EB_GRID_LOOP

}  // namespace
}  // namespace eb::linalg::detail
