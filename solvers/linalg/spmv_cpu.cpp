// OpenMP SpMV per format: the readable oracle of the CUDA kernels. The row arithmetic is the
// EB_HD code of spmv_rows.h that the kernels call too.
#include "solvers/linalg/spmv_cpu.h"

#include <omp.h>

#include <algorithm>

#include "solvers/linalg/spmv_rows.h"

namespace eb::linalg {

namespace {

// Start of thread t's share of a row-sorted COO: t/nt of the entries, moved forward to the next
// row start so that every row is summed by one thread, in storage order.
template <class T>
Offset coo_chunk_start(const CooMatrix<T>& a, int t, int nt) {
  const Offset nnz = Offset(a.nnz());
  Offset p = nnz * t / nt;
  while (p > 0 && p < nnz && a.row[size_t(p)] == a.row[size_t(p) - 1]) ++p;
  return p;
}

// y[row] += val * x[col] over a row-sorted COO (the COO part of HYB, the off-diagonal of DCOO).
template <class T>
void coo_accumulate(const CooMatrix<T>& a, const T* x, T* y) {
#pragma omp parallel if (a.rows >= kParallelMin)
  {
    const int nt = omp_get_num_threads(), t = omp_get_thread_num();
    const Offset end = coo_chunk_start(a, t + 1, nt);
    for (Offset k = coo_chunk_start(a, t, nt); k < end; ++k) y[a.row[size_t(k)]] += a.val[size_t(k)] * x[a.col[size_t(k)]];
  }
}

// y = diag .* x, or 0 without a diagonal.
template <class T>
void init_rows(Index n, const T* diag, const T* x, T* y) {
#pragma omp parallel for schedule(static) if (n >= kParallelMin)
  for (Index i = 0; i < n; ++i) y[i] = diag ? diag[i] * x[i] : T(0);
}

template <class T>
void csr_rows(const CsrMatrix<T>& a, const T* diag, const T* x, T* y) {
#pragma omp parallel for schedule(static) if (a.rows >= kParallelMin)
  for (Index i = 0; i < a.rows; ++i)
    y[i] = (diag ? diag[i] * x[i] : T(0)) + csr_row_partial(a.row_ptr.data(), a.col.data(), a.val.data(), x, i, 0, 1);
}

template <class T>
void ell_rows(const EllMatrix<T>& a, const T* diag, const T* x, T* y) {
#pragma omp parallel for schedule(static) if (a.rows >= kParallelMin)
  for (Index i = 0; i < a.rows; ++i)
    y[i] = ell_row(a.col.data(), a.val.data(), a.rows, a.width, x, i, diag ? diag[i] * x[i] : T(0));
}

// The diagonal entries found in a COO (for HYB: on top of what the ELL part gave).
template <class T>
void coo_diagonal(const CooMatrix<T>& a, T* d) {
  for (size_t k = 0; k < a.nnz(); ++k)
    if (a.row[k] == a.col[k]) d[a.row[k]] = a.val[k];
}

}  // namespace

template <class T>
void spmv(const CooMatrix<T>& a, const T* x, T* y) {
  init_rows<T>(a.rows, nullptr, x, y);
  coo_accumulate(a, x, y);
}

template <class T>
void spmv(const CsrMatrix<T>& a, const T* x, T* y) {
  csr_rows<T>(a, nullptr, x, y);
}

template <class T>
void spmv(const BcsrMatrix<T>& a, const T* x, T* y) {
#pragma omp parallel for schedule(static) if (3 * Offset(a.block_rows) >= kParallelMin)
  for (Index br = 0; br < a.block_rows; ++br) bcsr_block_row(a.row_ptr.data(), a.col.data(), a.val.data(), x, br, y);
}

template <class T>
void spmv(const EllMatrix<T>& a, const T* x, T* y) {
  ell_rows<T>(a, nullptr, x, y);
}

template <class T>
void spmv(const HybMatrix<T>& a, const T* x, T* y) {
  ell_rows<T>(a.ell, nullptr, x, y);
  coo_accumulate(a.coo, x, y);
}

template <class T>
void spmv(const DcooMatrix<T>& a, const T* x, T* y) {
  init_rows(a.off.rows, a.diag.data(), x, y);
  coo_accumulate(a.off, x, y);
}

template <class T>
void spmv(const DcsrMatrix<T>& a, const T* x, T* y) {
  csr_rows(a.off, a.diag.data(), x, y);
}

template <class T>
void spmv(const DhybMatrix<T>& a, const T* x, T* y) {
  ell_rows(a.off.ell, a.diag.data(), x, y);
  coo_accumulate(a.off.coo, x, y);
}

template <class T>
void spmv(const SlicedBcsr<T>& a, const T* x, T* y) {
  constexpr int C = SlicedBcsr<T>::kSliceRows;
  const int warps = std::max(1, a.warps_per_slice);
#pragma omp parallel for schedule(static) if (3 * Offset(a.block_rows) >= kParallelMin)
  for (Index s = 0; s < a.slices(); ++s)
    for (int lane = 0; lane < C; ++lane)
      sliced_bcsr_lane<T, C>(a.slice_ptr.data(), a.perm.data(), a.col.data(), a.val.data(), x, s, lane, warps, y);
}

template <class T>
void spmv(const AnyMatrix<T>& a, const T* x, T* y) {
  std::visit([&](const auto& m) { spmv(m, x, y); }, a);
}

template <class T>
void diagonal(const CooMatrix<T>& a, T* d) {
  std::fill(d, d + a.rows, T(0));
  coo_diagonal(a, d);
}

template <class T>
void diagonal(const CsrMatrix<T>& a, T* d) {
#pragma omp parallel for schedule(static) if (a.rows >= kParallelMin)
  for (Index i = 0; i < a.rows; ++i) {
    d[i] = T(0);
    for (Offset k = a.row_ptr[size_t(i)]; k < a.row_ptr[size_t(i) + 1]; ++k)
      if (a.col[size_t(k)] == i) d[i] = a.val[size_t(k)];
  }
}

template <class T>
void diagonal(const BcsrMatrix<T>& a, T* d) {
#pragma omp parallel for schedule(static) if (3 * Offset(a.block_rows) >= kParallelMin)
  for (Index br = 0; br < a.block_rows; ++br) {
    d[3 * br] = d[3 * br + 1] = d[3 * br + 2] = T(0);
    for (Offset b = a.row_ptr[size_t(br)]; b < a.row_ptr[size_t(br) + 1]; ++b)
      if (a.col[size_t(b)] == br)
        for (int c = 0; c < 3; ++c) d[3 * br + c] = a.val[9 * size_t(b) + size_t(4 * c)];
  }
}

template <class T>
void diagonal(const EllMatrix<T>& a, T* d) {
#pragma omp parallel for schedule(static) if (a.rows >= kParallelMin)
  for (Index i = 0; i < a.rows; ++i) {
    d[i] = T(0);
    for (Index k = 0; k < a.width; ++k) {
      const size_t slot = size_t(k) * size_t(a.rows) + size_t(i);
      if (a.col[slot] == i) d[i] = a.val[slot];
    }
  }
}

template <class T>
void diagonal(const HybMatrix<T>& a, T* d) {
  diagonal(a.ell, d);
  coo_diagonal(a.coo, d);
}

template <class T>
void diagonal(const AnyMatrix<T>& a, T* d) {
  std::visit([&](const auto& m) { diagonal(m, d); }, a);
}

#define EB_LINALG_INSTANTIATE(T, M)                        \
  template void spmv(const M<T>&, const T*, T*);           \
  template void diagonal(const M<T>&, T*);
#define EB_LINALG_INSTANTIATE_ALL(T)                       \
  EB_LINALG_INSTANTIATE(T, CooMatrix)                      \
  EB_LINALG_INSTANTIATE(T, CsrMatrix)                      \
  EB_LINALG_INSTANTIATE(T, BcsrMatrix)                     \
  EB_LINALG_INSTANTIATE(T, EllMatrix)                      \
  EB_LINALG_INSTANTIATE(T, HybMatrix)                      \
  EB_LINALG_INSTANTIATE(T, AnyMatrix)                      \
  template void spmv(const DcooMatrix<T>&, const T*, T*);  \
  template void spmv(const DcsrMatrix<T>&, const T*, T*);  \
  template void spmv(const DhybMatrix<T>&, const T*, T*);  \
  template void spmv(const SlicedBcsr<T>&, const T*, T*);
EB_LINALG_INSTANTIATE_ALL(float)
EB_LINALG_INSTANTIATE_ALL(double)
#undef EB_LINALG_INSTANTIATE_ALL
#undef EB_LINALG_INSTANTIATE

}  // namespace eb::linalg
