#pragma once
// One thread block's share of the split sliced BCSR product on the device, as device functions
// (the product kernels of spmv_cuda.cu launch one block per share), and the programmatic-launch
// calls that the CG kernels (cg_kernels.cuh) share with them.
#include "solvers/common/pdl.cuh"
#include "solvers/linalg/bcsr_slices.h"
#include "solvers/linalg/grid_reduce.cuh"
#include "solvers/linalg/spmv_rows.h"

namespace eb::linalg {

// Programmatic dependent launch (solvers/common/pdl.cuh). The kernels here call
// pdl_launch_dependents() only after pdl_wait(), so that no kernel runs beside one two launches
// before it.
using cuda::pdl_launch_dependents;
using cuda::pdl_wait;

// x . y over one lane's block row (0 for an empty lane), for the products that fuse the dot.
template <class T>
__device__ double bcsr_lane_dot(const Index* __restrict__ perm, Index s, int lane, const T* __restrict__ x, T y0,
                                T y1, T y2) {
  const Index br = perm[Offset(s) * 32 + lane];
  if (br < 0) return 0.0;
  const Offset r = 3 * Offset(br);
  return double(x[r]) * double(y0) + double(x[r + 1]) * double(y1) + double(x[r + 2]) * double(y2);
}

// The split product: W warps per slice, kBcsrSplitWarps / W slices per block of 32 * kBcsrSplitWarps
// threads (bcsr_slices.h). Warp w of a slice takes steps w, w + W, ...; warp 0 then adds the others'
// partial sums from shared memory in warp order, as the CPU reference (sliced_bcsr_lane with
// `warps` = W) does.
template <class T>
using BcsrSplitScratch = T[kBcsrSplitWarps][3][32];

// Share `b` (the block index of the split kernel) of y = A x; returns this thread's term of x . y
// (Dot; 0 otherwise). Every thread of the block calls it. `part` is the block's shared scratch: a caller running
// several shares in one block synchronizes the block between them.
template <class T, int W, bool Dot>
__device__ double bcsr_split_share(unsigned b, Index slices, const Offset* __restrict__ slice_ptr,
                                   const Index* __restrict__ perm, const Index* __restrict__ col,
                                   const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y,
                                   BcsrSplitScratch<T>& part) {
  static_assert(W > 1 && kBcsrSplitWarps % W == 0, "W must divide the block's warps");
  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31u);
  const int w = warp % W;
  const Index s = Index(b) * (kBcsrSplitWarps / W) + Index(warp / W);
  T y0 = T(0), y1 = T(0), y2 = T(0);
  if (s < slices) sliced_bcsr_steps<T, 32>(slice_ptr, col, val, x, s, lane, w, W, y0, y1, y2);
  if (w > 0) {
    part[warp][0][lane] = y0;
    part[warp][1][lane] = y1;
    part[warp][2][lane] = y2;
  }
  __syncthreads();
  if (w != 0 || s >= slices) return 0.0;
  for (int j = 1; j < W; ++j) {
    y0 += part[warp + j][0][lane];
    y1 += part[warp + j][1][lane];
    y2 += part[warp + j][2][lane];
  }
  sliced_bcsr_store<T, 32>(perm, s, lane, y0, y1, y2, y);
  if constexpr (Dot)
    return bcsr_lane_dot(perm, s, lane, x, y0, y1, y2);
  else
    return 0.0;
}

// Asks L1 for the first kPrefetchSteps steps (values and column indices) of this thread's lane in
// share `b`: a caller that must wait before the product (pdl_wait: x not yet complete) has them
// arrive meanwhile, since the matrix does not depend on x.
template <class T, int W>
__device__ void bcsr_split_share_prefetch(unsigned b, Index slices, const Offset* __restrict__ slice_ptr,
                                          const Index* __restrict__ col, const T* __restrict__ val) {
  constexpr int kPrefetchSteps = 2;
  const int warp = int(threadIdx.x >> 5), lane = int(threadIdx.x & 31u);
  const Index s = Index(b) * (kBcsrSplitWarps / W) + Index(warp / W);
  if (s >= slices) return;
  const Offset end = slice_ptr[s + 1];
  Offset k = slice_ptr[s] + warp % W;
  for (int step = 0; step < kPrefetchSteps && k < end; ++step, k += W) {
    asm volatile("prefetch.global.L1 [%0];" ::"l"(col + k * 32 + lane));
    for (int c = 0; c < 9; ++c) asm volatile("prefetch.global.L1 [%0];" ::"l"(val + (k * 9 + c) * 32 + lane));
  }
}

// Blocks of the split product for a matrix of `slices` slices.
template <int W>
constexpr unsigned bcsr_split_shares(Index slices) {
  constexpr Index per_block = kBcsrSplitWarps / W;
  return unsigned((slices + per_block - 1) / per_block);
}

}  // namespace eb::linalg
