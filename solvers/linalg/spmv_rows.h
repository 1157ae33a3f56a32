#pragma once
// The per-row arithmetic of each SpMV, written once for the OpenMP loops (spmv_cpu.cpp) and the
// CUDA kernels (spmv_cuda.cu): EB_HD functions, __host__ __device__ under nvcc.
#include "assembly/hd.h"
#include "solvers/linalg/sparse_formats.h"

namespace eb::linalg {

// Sum of the CSR row i's entries lane, lane + stride, ... (the CPU calls it with lane 0, stride 1;
// the CUDA kernel with `stride` threads per row, then adds the partial sums).
template <class T>
EB_HD T csr_row_partial(const Offset* __restrict__ row_ptr, const Index* __restrict__ col, const T* __restrict__ val,
                        const T* __restrict__ x, Index i, int lane, int stride) {
  T sum = T(0);
  for (Offset k = row_ptr[i] + lane; k < row_ptr[i + 1]; k += stride) sum += val[k] * x[col[k]];
  return sum;
}

// Padding slots (col -1) hold the value 0: their values are read unconditionally, so that the
// value loads do not wait for the column index, and only the x gather is skipped (x = 0 there, so
// a non-finite x elsewhere cannot leak in through 0 * inf).
template <class T>
EB_HD T gather_or_zero(const T* __restrict__ x, Offset c) {
  return c >= 0 ? x[c] : T(0);
}

// ELL row i (column-major, -1 padding) added to `init`.
template <class T>
EB_HD T ell_row(const Index* __restrict__ col, const T* __restrict__ val, Index rows, Index width,
                const T* __restrict__ x, Index i, T init) {
  T sum = init;
  for (Index k = 0; k < width; ++k) {
    const Offset slot = Offset(k) * rows + i;
    sum += val[slot] * gather_or_zero(x, Offset(col[slot]));
  }
  return sum;
}

// y[0..2] += B x[0..2] for a 3x3 block whose component c (row-major) sits at v[c * stride].
template <class T>
EB_HD void block_multiply_add(const T* __restrict__ v, int stride, T x0, T x1, T x2, T& y0, T& y1, T& y2) {
  y0 += v[0 * stride] * x0 + v[1 * stride] * x1 + v[2 * stride] * x2;
  y1 += v[3 * stride] * x0 + v[4 * stride] * x1 + v[5 * stride] * x2;
  y2 += v[6 * stride] * x0 + v[7 * stride] * x1 + v[8 * stride] * x2;
}

// BCSR block row br: y[3br .. 3br+2].
template <class T>
EB_HD void bcsr_block_row(const Offset* __restrict__ row_ptr, const Index* __restrict__ col, const T* __restrict__ val,
                          const T* __restrict__ x, Index br, T* __restrict__ y) {
  T y0 = T(0), y1 = T(0), y2 = T(0);
  for (Offset b = row_ptr[br]; b < row_ptr[br + 1]; ++b) {
    const Offset c = 3 * Offset(col[b]);
    block_multiply_add(val + 9 * b, 1, x[c], x[c + 1], x[c + 2], y0, y1, y2);
  }
  y[3 * Offset(br)] = y0;
  y[3 * Offset(br) + 1] = y1;
  y[3 * Offset(br) + 2] = y2;
}

// Steps first, first + stride, ... of lane `lane` of slice `s` of the sliced BCSR layout
// (bcsr_slices.h), added to y0..y2. A whole block row is first 0, stride 1; a slice split among W
// warps (SlicedBcsr::warps_per_slice) gives warp w the steps w, w + W, ...
template <class T, int C>
EB_HD void sliced_bcsr_steps(const Offset* __restrict__ slice_ptr, const Index* __restrict__ col,
                             const T* __restrict__ val, const T* __restrict__ x, Index s, int lane, int first,
                             int stride, T& y0, T& y1, T& y2) {
  const Offset end = slice_ptr[s + 1];
  for (Offset k = slice_ptr[s] + first; k < end; k += stride) {
    const Index c = col[k * C + lane];
    const bool real = c >= 0;  // padding: a zero block, and x taken as 0 (gather_or_zero's reason)
    const Offset xc = 3 * Offset(real ? c : 0);
    const T x0 = real ? x[xc] : T(0), x1 = real ? x[xc + 1] : T(0), x2 = real ? x[xc + 2] : T(0);
    block_multiply_add(val + k * 9 * C + lane, C, x0, x1, x2, y0, y1, y2);
  }
}

// Writes lane `lane` of slice `s` to y at its block row (perm; -1 = an empty lane of the last slice).
template <class T, int C>
EB_HD void sliced_bcsr_store(const Index* __restrict__ perm, Index s, int lane, T y0, T y1, T y2,
                             T* __restrict__ y) {
  const Index br = perm[Offset(s) * C + lane];
  if (br >= 0) {
    y[3 * Offset(br)] = y0;
    y[3 * Offset(br) + 1] = y1;
    y[3 * Offset(br) + 2] = y2;
  }
}

// Lane `lane` of slice `s`, its steps split into `warps` interleaved parts whose partial sums are
// added in part order (0 + 1 + ... + warps-1): the order the CUDA kernel adds its warps' sums in,
// so that a split product is deterministic and this is its readable reference.
template <class T, int C>
EB_HD void sliced_bcsr_lane(const Offset* __restrict__ slice_ptr, const Index* __restrict__ perm,
                            const Index* __restrict__ col, const T* __restrict__ val, const T* __restrict__ x,
                            Index s, int lane, int warps, T* __restrict__ y) {
  T y0 = T(0), y1 = T(0), y2 = T(0);
  sliced_bcsr_steps<T, C>(slice_ptr, col, val, x, s, lane, 0, warps, y0, y1, y2);
  for (int w = 1; w < warps; ++w) {
    T p0 = T(0), p1 = T(0), p2 = T(0);
    sliced_bcsr_steps<T, C>(slice_ptr, col, val, x, s, lane, w, warps, p0, p1, p2);
    y0 += p0;
    y1 += p1;
    y2 += p2;
  }
  sliced_bcsr_store<T, C>(perm, s, lane, y0, y1, y2, y);
}

}  // namespace eb::linalg
