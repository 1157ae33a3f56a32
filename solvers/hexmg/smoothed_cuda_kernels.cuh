#pragma once
// CUDA kernels of hexmg's smoothed hierarchy (smoothed_hierarchy.h): one thread per row on the
// row functions of smoothed_kernels.h, which the OpenMP backend loops over, and the coarsest
// level's Jacobi-PCG in one thread block (the iteration of solvers/linalg/cg_algorithm.h that the
// CPU runs through CgSolver: start q = A x, r = b - q, p = M r; then q = A p, alpha = rho / p.q,
// x += alpha p, r -= alpha q, stop at |r| <= tol |b|, p = M r + beta p). Its dots are summed per
// thread in row order and then over a fixed tree, in double: deterministic.
#include "solvers/hexmg/smoothed_kernels.h"
#include "solvers/linalg/cg_algorithm.h"

namespace eb::hexmg {

template <class T>
__global__ void k_sm_spgemm(BlockRows<const T> A, BlockRows<const T> B, BlockRows<T> C, bool upper) {
  const int32_t i = int32_t(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < C.rows) spgemm_row(i, A, B, C, upper ? i : 0);
}

template <class T>
__global__ void k_sm_mirror(const int32_t* mirror, BlockRows<T> C) {
  const int32_t i = int32_t(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < C.rows) mirror_row(i, mirror, C);
}

// A warp per row for the smoothed levels, whose coarse rows hold 100-700 blocks (smoothed
// prolongation widens the stencil level by level) while a colour holds a few rows: with one thread
// per row a launch lasted as long as its longest row's few hundred loads in sequence (PERF_NOTES). The lanes take every 32nd block and their sums are added over a
// fixed butterfly, so a row's result does not depend on timing (it differs from the one-thread
// sum only by rounding). Every lane ends with the sums; lane 0 writes.
constexpr int kSmWarp = 32;

template <class T>
__device__ int64_t sm_warp_offdiag(int32_t i, const BlockRows<const T>& A, const Strided<const T>& x, T* s) {
  int64_t q = offdiag_row(i, A, x, s, int(threadIdx.x % kSmWarp), kSmWarp);
  for (int o = kSmWarp / 2; o > 0; o /= 2) {
    for (int d = 0; d < 3; ++d) s[d] += __shfl_xor_sync(0xffffffffu, s[d], o);
    const long long other = __shfl_xor_sync(0xffffffffu, static_cast<long long>(q), o);
    q = q > other ? q : other;
  }
  return q;
}

// Rows order[0 .. count) (one colour) of level A, a warp per row (blockDim a multiple of 32).
template <class T>
__global__ void k_sm_gs_warp(BlockRows<const T> A, const uint8_t* dead, const int32_t* order, int32_t count,
                             Strided<const T> b, Strided<T> u) {
  const int64_t w = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kSmWarp;
  if (w >= count) return;  // the whole warp: w is the warp's
  const int32_t i = order[w];
  T s[3];
  const int64_t q = sm_warp_offdiag(i, A, Strided<const T>{u.p, u.vs, u.cs}, s);
  if (threadIdx.x % kSmWarp == 0) block_gs_finish(i, q, s, A, dead, b, u);
}

template <class T>
__global__ void k_sm_residual_warp(BlockRows<const T> A, Strided<const T> b, Strided<const T> u, Strided<T> r) {
  const int64_t w = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kSmWarp;
  if (w >= A.rows) return;
  const int32_t i = int32_t(w);
  T s[3];
  const int64_t q = sm_warp_offdiag(i, A, u, s);
  if (threadIdx.x % kSmWarp == 0) block_residual_finish(i, q, s, A, b, u, r);
}

// y = M x (zero_u: and u = 0 on y's level, the restriction) or y += M x (the prolongation).
template <class T>
__global__ void k_sm_gather(BlockRows<const T> M, Strided<const T> x, Strided<T> y, bool accumulate, Strided<T> zero_u) {
  const int32_t i = int32_t(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= M.rows) return;
  block_gather_row(i, M, x, y, accumulate);
  if (zero_u.p)
    for (int d = 0; d < 3; ++d) zero_u(i, d) = T(0);
}

// out = A v on the simulation level (outer PCG's product); padding rows 0 (v is 0 there).
template <class T>
__global__ void k_sm_stencil_apply(LevelView<T> L, Strided<T> v, Strided<T> out) {
  const int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x < L.n) stencil_apply_vertex(x, L, v, out);
}

constexpr int kSmReduceThreads = 256;

// Per-block partial sums of a . c over n entries, summed per thread in index order (grid-stride)
// and over a fixed tree; the host adds the blocks' sums in block order (sm_dot).
template <class T>
__global__ void k_sm_dot(const T* a, const T* c, int64_t n, double* partial) {
  __shared__ double s[kSmReduceThreads];
  double acc = 0;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    acc += double(a[i]) * double(c[i]);
  s[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kSmReduceThreads / 2; w > 0; w /= 2) {
    if (int(threadIdx.x) < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

// y = a x + y (axpy) or, with xpay, y = x + a y.
template <class T>
__global__ void k_sm_axpy(T a, const T* x, T* y, int64_t n, bool xpay) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = xpay ? x[i] + a * y[i] : y[i] + a * x[i];
}

constexpr int kSmCoarseThreads = 1024;

// Block-wide sum of one double per thread, fixed tree; every thread gets the total.
__device__ inline double sm_block_sum(double v, double* s) {
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = kSmCoarseThreads / 2; w > 0; w /= 2) {
    if (int(threadIdx.x) < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  const double t = s[0];
  __syncthreads();
  return t;
}

// Jacobi-PCG on the coarsest level, one block: b, x (in/out) and scratch r, p, q of 3 rows each,
// AoS. *iterations += iterations done, ++*solves.
template <class T>
__global__ void __launch_bounds__(kSmCoarseThreads)
    k_sm_coarse_cg(BlockRows<const T> A, const uint8_t* dead, const T* b, T* x, T* r, T* p, T* q, double rel_tol,
                   int max_it, unsigned long long* iterations, unsigned long long* solves) {
  __shared__ double s[kSmCoarseThreads];
  const int n = A.rows;
  const Strided<const T> xc{x, 3, 1}, pc{p, 3, 1};
  const Strided<T> qs{q, 3, 1};
  for (int i = threadIdx.x; i < n; i += blockDim.x) block_apply_row(i, A, dead, xc, qs);
  __syncthreads();
  double rho = 0, rr = 0, bb = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    for (int d = 0; d < 3; ++d) {
      const int64_t k = 3 * int64_t(i) + d;
      const T m = linalg::jacobi_inverse_entry(block_diagonal_entry(i, d, A, dead));
      const T rk = b[k] - q[k];
      r[k] = rk;
      p[k] = m * rk;
      rho += double(rk) * double(m * rk);
      rr += double(rk) * double(rk);
      bb += double(b[k]) * double(b[k]);
    }
  rho = sm_block_sum(rho, s);
  rr = sm_block_sum(rr, s);
  bb = sm_block_sum(bb, s);
  const double stop = rel_tol * rel_tol * bb;
  int it = 0;
  while (it < max_it && rr > stop && rho > 0) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) block_apply_row(i, A, dead, pc, qs);
    __syncthreads();
    double pq = 0;
    for (int64_t k = threadIdx.x; k < 3 * int64_t(n); k += blockDim.x) pq += double(p[k]) * double(q[k]);
    pq = sm_block_sum(pq, s);
    if (!(pq > 0)) break;
    const T alpha = T(rho / pq);
    double rho_new = 0;
    rr = 0;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
      for (int d = 0; d < 3; ++d) {
        const int64_t k = 3 * int64_t(i) + d;
        x[k] += alpha * p[k];
        const T rk = r[k] - alpha * q[k];
        r[k] = rk;
        const T m = linalg::jacobi_inverse_entry(block_diagonal_entry(i, d, A, dead));
        rho_new += double(rk) * double(m * rk);
        rr += double(rk) * double(rk);
      }
    rho_new = sm_block_sum(rho_new, s);
    rr = sm_block_sum(rr, s);
    ++it;
    if (!(rr > stop)) break;
    const T beta = T(rho_new / rho);
    rho = rho_new;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
      for (int d = 0; d < 3; ++d) {
        const int64_t k = 3 * int64_t(i) + d;
        const T m = linalg::jacobi_inverse_entry(block_diagonal_entry(i, d, A, dead));
        p[k] = m * r[k] + beta * p[k];
      }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    *iterations += (unsigned long long)it;
    *solves += 1ull;
  }
}

}  // namespace eb::hexmg
