// CUDA SpMV per format. The per-row arithmetic is spmv_rows.h's, shared with the OpenMP oracle;
// what differs is the mapping of rows to threads:
//   COO   one entry per thread; each warp sums its chunk of 32 products by row with a segmented
//         suffix sum (rows are sorted, so equal neighbours are one segment). A row inside the chunk
//         is added to y by its warp; the chunk's first and last segments, which a row may share
//         with neighbouring chunks, go to a carry array, and a second kernel adds each such row's
//         pieces in chunk order (one thread per row start): no atomics, so two products give the
//         same bits (deterministic, like every other format).
//   CSR   threads_per_row threads per row (CSR-vector with a sub-warp), shuffle reduction.
//   ELL   one thread per row over the column-major slots (coalesced).
//   BCSR  one warp per slice of 32 block rows, one block row per lane (bcsr_slices.h): every
//         load of a block component or column index is 32 consecutive values. Small matrices
//         split each slice's steps among W warps of a block, which add their sums in warp order.
//   HYB   ELL kernel, then the COO kernel adds the rest. D-formats: the diagonal initializes y
//         (in the ELL/CSR kernel, or a y = d .* x pass before COO).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "solvers/linalg/bcsr_device.cuh"
#include "solvers/linalg/device_formats.cuh"
#include "solvers/linalg/grid_reduce.cuh"
#include "solvers/linalg/spmv_rows.h"

namespace eb::linalg {

namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void __launch_bounds__(kThreads) k_init_rows(Index n, const T* __restrict__ diag, const T* __restrict__ x,
                                                        T* __restrict__ y) {
  const Offset i = Offset(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = diag ? diag[i] * x[i] : T(0);
}

template <class T>
__global__ void __launch_bounds__(kThreads) k_coo_accumulate(Offset nnz, const Index* __restrict__ row,
                                                             const Index* __restrict__ col, const T* __restrict__ val,
                                                             const T* __restrict__ x, T* __restrict__ y,
                                                             Index* __restrict__ carry_row, T* __restrict__ carry_val) {
  const unsigned lane = threadIdx.x & 31u;
  const Offset stride = Offset(gridDim.x) * blockDim.x;
  // Whole warps step together (the loop bound is warp-uniform), so that every lane joins the shuffles.
  for (Offset base = Offset(blockIdx.x) * blockDim.x + (threadIdx.x & ~31u); base < nnz; base += stride) {
    const Offset k = base + lane;
    const bool valid = k < nnz;
    const Index r = valid ? row[k] : Index(-1);
    T v = valid ? val[k] * x[col[k]] : T(0);
    // Suffix sums within runs of equal rows: after the loop, lane l holds the sum of its run from l on.
    for (int off = 1; off < 32; off <<= 1) {
      const T vo = __shfl_down_sync(0xffffffffu, v, off);
      const Index ro = __shfl_down_sync(0xffffffffu, r, off);
      if (lane + off < 32 && ro == r) v += vo;
    }
    const Index rp = __shfl_up_sync(0xffffffffu, r, 1);
    const bool head = valid && (lane == 0 || rp != r);
    // The lane where the chunk's last segment starts (the highest head lane).
    const unsigned heads = __ballot_sync(0xffffffffu, head);
    const unsigned last_head = 31u - unsigned(__clz(heads));
    const Offset chunk = base >> 5;
    if (head) {
      if (lane == 0) {
        carry_row[2 * chunk] = r;
        carry_val[2 * chunk] = v;
      } else if (lane == last_head) {
        carry_row[2 * chunk + 1] = r;
        carry_val[2 * chunk + 1] = v;
      } else {
        y[r] += v;  // the whole row lies in this chunk: no other thread touches y[r]
      }
    }
    if (lane == 0 && last_head == 0) carry_row[2 * chunk + 1] = -1;  // one segment only
  }
}

// One thread per chunk: adds, in chunk order, the pieces of the rows that start in this chunk's
// first segment (when no earlier chunk holds the same row) or in its last segment.
template <class T>
__global__ void __launch_bounds__(kThreads) k_coo_carry(Offset chunks, const Index* __restrict__ row,
                                                        const Index* __restrict__ carry_row,
                                                        const T* __restrict__ carry_val, T* __restrict__ y) {
  const Offset c = Offset(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= chunks) return;
  auto gather = [&](Index r, T sum, Offset next) {
    // Following chunks whose first segment continues row r; stop after one with a second segment.
    for (Offset n = next; n < chunks && carry_row[2 * n] == r; ++n) {
      sum += carry_val[2 * n];
      if (carry_row[2 * n + 1] >= 0) break;
    }
    y[r] += sum;
  };
  const Index first = carry_row[2 * c];
  const Index last = carry_row[2 * c + 1];
  const bool starts_here = c == 0 || row[32 * c - 1] != first;
  if (starts_here) {
    if (last >= 0)
      y[first] += carry_val[2 * c];
    else
      gather(first, carry_val[2 * c], c + 1);
  }
  if (last >= 0) gather(last, carry_val[2 * c + 1], c + 1);
}

template <class T, int G>
__global__ void __launch_bounds__(kThreads) k_csr(Index rows, const Offset* __restrict__ row_ptr,
                                                  const Index* __restrict__ col, const T* __restrict__ val,
                                                  const T* __restrict__ diag, const T* __restrict__ x,
                                                  T* __restrict__ y) {
  const Offset t = Offset(blockIdx.x) * blockDim.x + threadIdx.x;
  const Index i = Index(t / G);
  const int lane = int(t % G);
  // Rows beyond the end still join the shuffles (G divides the block, so a group is all in or all out).
  T sum = i < rows ? csr_row_partial(row_ptr, col, val, x, i, lane, G) : T(0);
  for (int off = G / 2; off > 0; off >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, off, G);
  if (i < rows && lane == 0) y[i] = (diag ? diag[i] * x[i] : T(0)) + sum;
}

template <class T>
__global__ void __launch_bounds__(kThreads) k_ell(Index rows, Index width, const Index* __restrict__ col,
                                                  const T* __restrict__ val, const T* __restrict__ diag,
                                                  const T* __restrict__ x, T* __restrict__ y) {
  const Index i = Index(Offset(blockIdx.x) * blockDim.x + threadIdx.x);
  if (i < rows) y[i] = ell_row(col, val, rows, width, x, i, diag ? diag[i] * x[i] : T(0));
}

template <class T, bool Dot>
__global__ void __launch_bounds__(32 * kBcsrWarps) k_bcsr_sliced(Index slices, const Offset* __restrict__ slice_ptr,
                                                                 const Index* __restrict__ perm,
                                                                 const Index* __restrict__ col,
                                                                 const T* __restrict__ val, const T* __restrict__ x,
                                                                 T* __restrict__ y, DotTarget dot) {
  const Index s = Index(blockIdx.x) * kBcsrWarps + Index(threadIdx.x >> 5);
  const int lane = int(threadIdx.x & 31u);
  T y0 = T(0), y1 = T(0), y2 = T(0);
  if (s < slices) {
    sliced_bcsr_steps<T, 32>(slice_ptr, col, val, x, s, lane, 0, 1, y0, y1, y2);
    sliced_bcsr_store<T, 32>(perm, s, lane, y0, y1, y2, y);
  }
  if constexpr (Dot) {
    Sums<1> mine = {{s < slices ? bcsr_lane_dot(perm, s, lane, x, y0, y1, y2) : 0.0}};
    Sums<1> total;
    if (grid_sum<1, 32 * kBcsrWarps>(mine, dot.partials, dot.ticket, total)) *dot.result = total.v[0];
  }
}

// The split product (bcsr_device.cuh): one block per share.
template <class T, int W, bool Dot>
__global__ void __launch_bounds__(32 * kBcsrSplitWarps) k_bcsr_sliced_split(Index slices,
                                                                        const Offset* __restrict__ slice_ptr,
                                                                        const Index* __restrict__ perm,
                                                                        const Index* __restrict__ col,
                                                                        const T* __restrict__ val,
                                                                        const T* __restrict__ x, T* __restrict__ y,
                                                                        DotTarget dot) {
  __shared__ BcsrSplitScratch<T> part;
  if constexpr (Dot) {  // the single-reduction CG's product (DotTarget::programmatic)
    bcsr_split_share_prefetch<T, W>(blockIdx.x, slices, slice_ptr, col, val);  // read-only: before the wait
    pdl_wait();
  }
  const double mine = bcsr_split_share<T, W, Dot>(blockIdx.x, slices, slice_ptr, perm, col, val, x, y, part);
  if constexpr (Dot) {
    // The next kernel may start once this block's products are done, not earlier: its blocks would
    // then take the SMs' room from this kernel's.
    pdl_launch_dependents();
    Sums<1> total;
    if (grid_sum<1, 32 * kBcsrSplitWarps>(Sums<1>{{mine}}, dot.partials, dot.ticket, total)) *dot.result = total.v[0];
  }
}

template <class T, int W, bool Dot>
void launch_bcsr_split(const DeviceBcsr<T>& a, const T* x, T* y, const DotTarget& dot, cudaStream_t st) {
  cuda::launch_kernel(Dot && dot.programmatic, k_bcsr_sliced_split<T, W, Dot>, dim3(bcsr_split_shares<W>(a.slices)),
                      dim3(32 * kBcsrSplitWarps), 0, st, a.slices, static_cast<const Offset*>(a.slice_ptr.data()),
                      static_cast<const Index*>(a.perm.data()), static_cast<const Index*>(a.col.data()),
                      static_cast<const T*>(a.val.data()), x, y, dot);
}

// Thread blocks of the BCSR product: the partial sums its fused dot needs.
template <class T>
unsigned bcsr_blocks(const DeviceBcsr<T>& a) {
  return unsigned(sliced_bcsr_product_blocks(a.slices, a.warps_per_slice));
}

template <class T, bool Dot>
void launch_bcsr(const DeviceBcsr<T>& a, const T* x, T* y, const DotTarget& dot, cudaStream_t st) {
  switch (a.warps_per_slice) {
    case 2: return launch_bcsr_split<T, 2, Dot>(a, x, y, dot, st);
    case 4: return launch_bcsr_split<T, 4, Dot>(a, x, y, dot, st);
    case 8: return launch_bcsr_split<T, 8, Dot>(a, x, y, dot, st);
    default: break;
  }
  k_bcsr_sliced<T, Dot><<<bcsr_blocks(a), 32 * kBcsrWarps, 0, st>>>(a.slices, a.slice_ptr.data(), a.perm.data(),
                                                                    a.col.data(), a.val.data(), x, y, dot);
  EB_CUDA_CHECK_LAUNCH();
}

int device_multiprocessors() {
  int dev = 0, sms = 0;
  EB_CUDA_CHECK(cudaGetDevice(&dev));
  EB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

template <class T>
void launch_coo_accumulate(const DeviceCoo<T>& a, const T* x, T* y, cudaStream_t st) {
  if (a.nnz == 0) return;
  // Enough warps to fill the device a few times over; each walks the entries with a grid stride.
  const unsigned blocks = std::min<unsigned>(cuda::blocks_for(a.nnz, kThreads), 65535u);
  const Offset chunks = (a.nnz + 31) / 32;
  Index* carry_row = const_cast<Index*>(a.carry_row.data());  // scratch of the product, not the matrix
  T* carry_val = const_cast<T*>(a.carry_val.data());
  k_coo_accumulate<T><<<blocks, kThreads, 0, st>>>(a.nnz, a.row.data(), a.col.data(), a.val.data(), x, y, carry_row,
                                                   carry_val);
  EB_CUDA_CHECK_LAUNCH();
  k_coo_carry<T><<<cuda::blocks_for(chunks, kThreads), kThreads, 0, st>>>(chunks, a.row.data(), carry_row, carry_val, y);
  EB_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_init_rows(Index n, const T* diag, const T* x, T* y, cudaStream_t st) {
  if (n == 0) return;
  k_init_rows<T><<<cuda::blocks_for(n, kThreads), kThreads, 0, st>>>(n, diag, x, y);
  EB_CUDA_CHECK_LAUNCH();
}

template <class T, int G>
void launch_csr_g(const DeviceCsr<T>& a, const T* diag, const T* x, T* y, cudaStream_t st) {
  k_csr<T, G><<<cuda::blocks_for(Offset(a.rows) * G, kThreads), kThreads, 0, st>>>(a.rows, a.row_ptr.data(), a.col.data(),
                                                                      a.val.data(), diag, x, y);
  EB_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_csr(const DeviceCsr<T>& a, const T* diag, const T* x, T* y, cudaStream_t st) {
  if (a.rows == 0) return;
  switch (a.threads_per_row) {
    case 1: return launch_csr_g<T, 1>(a, diag, x, y, st);
    case 2: return launch_csr_g<T, 2>(a, diag, x, y, st);
    case 4: return launch_csr_g<T, 4>(a, diag, x, y, st);
    case 8: return launch_csr_g<T, 8>(a, diag, x, y, st);
    case 16: return launch_csr_g<T, 16>(a, diag, x, y, st);
    default: return launch_csr_g<T, 32>(a, diag, x, y, st);
  }
}

template <class T>
void launch_ell(const DeviceEll<T>& a, const T* diag, const T* x, T* y, cudaStream_t st) {
  if (a.rows == 0) return;
  k_ell<T><<<cuda::blocks_for(a.rows, kThreads), kThreads, 0, st>>>(a.rows, a.width, a.col.data(), a.val.data(), diag, x, y);
  EB_CUDA_CHECK_LAUNCH();
}

template <class V>
void upload_to(cuda::DeviceBuffer<V>& dst, const std::vector<V>& src) {
  if (!src.empty()) dst.upload(src);
}

}  // namespace

int csr_threads_per_row(double mean_row_length) {
  int g = 1;
  while (g < 32 && 2.0 * g <= mean_row_length / 2.0) g *= 2;
  return g;
}

template <class T>
DeviceCoo<T> upload(const CooMatrix<T>& m) {
  DeviceCoo<T> d;
  d.rows = m.rows;
  d.cols = m.cols;
  d.nnz = Offset(m.nnz());
  upload_to(d.row, m.row);
  upload_to(d.col, m.col);
  upload_to(d.val, m.val);
  const std::size_t chunks = (m.nnz() + 31) / 32;
  d.carry_row.resize(2 * chunks, "COO carry rows");
  d.carry_val.resize(2 * chunks, "COO carry values");
  return d;
}

template <class T>
DeviceCsr<T> upload(const CsrMatrix<T>& m) {
  DeviceCsr<T> d;
  d.rows = m.rows;
  d.cols = m.cols;
  d.nnz = Offset(m.nnz());
  d.threads_per_row = csr_threads_per_row(m.rows ? double(m.nnz()) / m.rows : 1.0);
  upload_to(d.row_ptr, m.row_ptr);
  upload_to(d.col, m.col);
  upload_to(d.val, m.val);
  return d;
}

template <class T>
DeviceBcsr<T> upload(const SlicedBcsr<T>& m) {
  DeviceBcsr<T> d;
  d.block_rows = m.block_rows;
  d.block_cols = m.block_cols;
  d.slices = m.slices();
  d.warps_per_slice = m.warps_per_slice > 0 ? m.warps_per_slice
                                            : choose_warps_per_slice(m.slices(), m.steps(), device_multiprocessors());
  if (d.warps_per_slice != 1 && d.warps_per_slice != 2 && d.warps_per_slice != 4 && d.warps_per_slice != 8)
    throw std::invalid_argument("sliced BCSR: warps_per_slice must be 1, 2, 4 or 8, not " +
                                std::to_string(d.warps_per_slice));
  upload_to(d.perm, m.perm);
  upload_to(d.slice_ptr, m.slice_ptr);
  upload_to(d.col, m.col);
  upload_to(d.val, m.val);
  return d;
}

template <class T>
DeviceBcsr<T> upload(const BcsrMatrix<T>& m) {
  return upload(make_sliced_bcsr(m));
}

template <class T>
DeviceEll<T> upload(const EllMatrix<T>& m) {
  DeviceEll<T> d;
  d.rows = m.rows;
  d.cols = m.cols;
  d.width = m.width;
  upload_to(d.col, m.col);
  upload_to(d.val, m.val);
  return d;
}

template <class T>
DeviceHyb<T> upload(const HybMatrix<T>& m) {
  return DeviceHyb<T>{upload(m.ell), upload(m.coo)};
}

namespace {
template <class D, class M>
D upload_diagonal_first(const DiagonalFirst<M>& m) {
  D d;
  upload_to(d.diag, m.diag);
  d.off = upload(m.off);
  return d;
}
}  // namespace

template <class T>
DeviceDcoo<T> upload(const DcooMatrix<T>& m) {
  return upload_diagonal_first<DeviceDcoo<T>>(m);
}
template <class T>
DeviceDcsr<T> upload(const DcsrMatrix<T>& m) {
  return upload_diagonal_first<DeviceDcsr<T>>(m);
}
template <class T>
DeviceDhyb<T> upload(const DhybMatrix<T>& m) {
  return upload_diagonal_first<DeviceDhyb<T>>(m);
}

template <class T>
void spmv(const DeviceCoo<T>& a, const T* x, T* y, cudaStream_t st) {
  if (a.rows > 0) EB_CUDA_CHECK(cudaMemsetAsync(y, 0, size_t(a.rows) * sizeof(T), st));
  launch_coo_accumulate(a, x, y, st);
}

template <class T>
void spmv(const DeviceCsr<T>& a, const T* x, T* y, cudaStream_t st) {
  launch_csr<T>(a, nullptr, x, y, st);
}

template <class T>
void spmv(const DeviceBcsr<T>& a, const T* x, T* y, cudaStream_t st) {
  if (a.slices == 0) return;
  launch_bcsr<T, false>(a, x, y, DotTarget{}, st);
}

template <class T>
std::size_t spmv_dot_blocks(const DeviceBcsr<T>& a) {
  return bcsr_blocks(a);
}

template <class T>
void spmv_dot(const DeviceBcsr<T>& a, const T* x, T* y, const DotTarget& t, cudaStream_t st) {
  if (a.slices == 0) {  // an empty matrix: x . y = 0, without a product kernel
    // Without a ticket the caller sums the fused_dot_blocks() = 1 partial.
    EB_CUDA_CHECK(cudaMemsetAsync(t.ticket ? t.result : t.partials, 0, sizeof(double), st));
    return;
  }
  launch_bcsr<T, true>(a, x, y, t, st);
}

template <class T>
void spmv(const DeviceEll<T>& a, const T* x, T* y, cudaStream_t st) {
  launch_ell<T>(a, nullptr, x, y, st);
}

template <class T>
void spmv(const DeviceHyb<T>& a, const T* x, T* y, cudaStream_t st) {
  launch_ell<T>(a.ell, nullptr, x, y, st);
  launch_coo_accumulate(a.coo, x, y, st);
}

template <class T>
void spmv(const DeviceDcoo<T>& a, const T* x, T* y, cudaStream_t st) {
  launch_init_rows(a.off.rows, a.diag.data(), x, y, st);
  launch_coo_accumulate(a.off, x, y, st);
}

template <class T>
void spmv(const DeviceDcsr<T>& a, const T* x, T* y, cudaStream_t st) {
  launch_csr(a.off, a.diag.data(), x, y, st);
}

template <class T>
void spmv(const DeviceDhyb<T>& a, const T* x, T* y, cudaStream_t st) {
  launch_ell(a.off.ell, a.diag.data(), x, y, st);
  launch_coo_accumulate(a.off.coo, x, y, st);
}

template <class T>
__global__ void __launch_bounds__(kThreads) k_gather_values(ValueSegments<T> v, const int64_t* __restrict__ pos, Index n,
                                                            T* __restrict__ d) {
  const Offset i = Offset(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) d[i] = pos[i] >= 0 ? v.at(pos[i]) : T(0);
}

template <class T>
void gather_values(ValueSegments<T> v, const int64_t* pos, Index n, T* d, cudaStream_t st) {
  if (n == 0) return;
  k_gather_values<T><<<unsigned((n + kThreads - 1) / kThreads), kThreads, 0, st>>>(v, pos, n, d);
  EB_CUDA_CHECK(cudaGetLastError());
}

#define EB_LINALG_INSTANTIATE(T, H, D)                                   \
  template D<T> upload(const H<T>&);                                     \
  template void spmv(const D<T>&, const T*, T*, cudaStream_t);
#define EB_LINALG_INSTANTIATE_ALL(T)                                     \
  EB_LINALG_INSTANTIATE(T, CooMatrix, DeviceCoo)                         \
  EB_LINALG_INSTANTIATE(T, CsrMatrix, DeviceCsr)                         \
  EB_LINALG_INSTANTIATE(T, BcsrMatrix, DeviceBcsr)                       \
  EB_LINALG_INSTANTIATE(T, EllMatrix, DeviceEll)                         \
  EB_LINALG_INSTANTIATE(T, HybMatrix, DeviceHyb)                         \
  EB_LINALG_INSTANTIATE(T, DcooMatrix, DeviceDcoo)                       \
  EB_LINALG_INSTANTIATE(T, DcsrMatrix, DeviceDcsr)                       \
  EB_LINALG_INSTANTIATE(T, DhybMatrix, DeviceDhyb)                       \
  template DeviceBcsr<T> upload(const SlicedBcsr<T>&);                   \
  template void gather_values(ValueSegments<T>, const int64_t*, Index, T*, cudaStream_t); \
  template std::size_t spmv_dot_blocks(const DeviceBcsr<T>&);            \
  template void spmv_dot(const DeviceBcsr<T>&, const T*, T*, const DotTarget&, cudaStream_t);
EB_LINALG_INSTANTIATE_ALL(float)
EB_LINALG_INSTANTIATE_ALL(double)
#undef EB_LINALG_INSTANTIATE_ALL
#undef EB_LINALG_INSTANTIATE

}  // namespace eb::linalg
