#pragma once
// y = A x and the diagonal of A for every format on the host (OpenMP over rows; each row is
// summed by one thread in storage order, so the result does not depend on the thread count).
#include <algorithm>

#include "solvers/linalg/bcsr_slices.h"
#include "solvers/linalg/sparse_formats.h"

namespace eb::linalg {

// Loops over fewer rows (SpMV, every format) or vector entries (CG) than this run on one thread: below it a parallel
// region costs more than it saves, and on an oversubscribed machine OpenMP's barriers can cost
// milliseconds each (a 9K-DOF CG took 50x longer on 2 threads than on 1 under a load of 8).
inline constexpr Offset kParallelMin = Offset(1) << 15;

template <class T> void spmv(const CooMatrix<T>& a, const T* x, T* y);
template <class T> void spmv(const CsrMatrix<T>& a, const T* x, T* y);
template <class T> void spmv(const BcsrMatrix<T>& a, const T* x, T* y);
template <class T> void spmv(const EllMatrix<T>& a, const T* x, T* y);
template <class T> void spmv(const HybMatrix<T>& a, const T* x, T* y);
template <class T> void spmv(const DcooMatrix<T>& a, const T* x, T* y);
template <class T> void spmv(const DcsrMatrix<T>& a, const T* x, T* y);
template <class T> void spmv(const DhybMatrix<T>& a, const T* x, T* y);
template <class T> void spmv(const SlicedBcsr<T>& a, const T* x, T* y);  // reference of the GPU layout
template <class T> void spmv(const AnyMatrix<T>& a, const T* x, T* y);

// d[i] = A(i, i) (0 where the pattern has no diagonal entry).
template <class T> void diagonal(const CooMatrix<T>& a, T* d);
template <class T> void diagonal(const CsrMatrix<T>& a, T* d);
template <class T> void diagonal(const BcsrMatrix<T>& a, T* d);
template <class T> void diagonal(const EllMatrix<T>& a, T* d);
template <class T> void diagonal(const HybMatrix<T>& a, T* d);
template <class M> void diagonal(const DiagonalFirst<M>& a, typename M::value_type* d) {
  std::copy(a.diag.begin(), a.diag.end(), d);
}
template <class T> void diagonal(const AnyMatrix<T>& a, T* d);

}  // namespace eb::linalg
