#pragma once
// CUDA mirrors of the host formats (device arrays uploaded from the host containers of
// sparse_formats.h), the SpMV of each enqueued on a stream, and the operator that wraps a mirror.
// Host code only (declarations and DeviceBuffer): plain C++ sources of a CUDA build may include
// it; the kernels are in spmv_cuda.cu.
//
// Layouts on the device: COO, CSR, ELL (column-major), HYB and the D-formats are the host arrays
// unchanged; BCSR is uploaded in the sliced, coalesced layout of bcsr_slices.h.
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "solvers/common/cuda_utils.cuh"
#include "solvers/linalg/bcsr_slices.h"
#include "solvers/linalg/element_value_map.h"
#include "solvers/linalg/linear_operator.h"

namespace eb::linalg {

inline cudaStream_t cuda_stream(StreamHandle s) { return static_cast<cudaStream_t>(s); }

template <class T>
struct DeviceCoo {
  using value_type = T;
  Index rows = 0, cols = 0;
  Offset nnz = 0;
  cuda::DeviceBuffer<Index> row, col;
  cuda::DeviceBuffer<T> val;
  // Scratch of the deterministic product (spmv_cuda.cu): per chunk of 32 entries, its first and
  // last segment's row and partial sum (row -1: the chunk has one segment).
  cuda::DeviceBuffer<Index> carry_row;
  cuda::DeviceBuffer<T> carry_val;
};

template <class T>
struct DeviceCsr {
  using value_type = T;
  Index rows = 0, cols = 0;
  Offset nnz = 0;
  int threads_per_row = 1;  // power of two <= 32, from the mean row length (csr_threads_per_row)
  cuda::DeviceBuffer<Offset> row_ptr;
  cuda::DeviceBuffer<Index> col;
  cuda::DeviceBuffer<T> val;
};

template <class T>
struct DeviceBcsr {
  using value_type = T;
  Index block_rows = 0, block_cols = 0, slices = 0;
  int warps_per_slice = 1;  // SlicedBcsr::warps_per_slice, resolved for this device
  cuda::DeviceBuffer<Index> perm;
  cuda::DeviceBuffer<Offset> slice_ptr;
  cuda::DeviceBuffer<Index> col;
  cuda::DeviceBuffer<T> val;
};

template <class T>
struct DeviceEll {
  using value_type = T;
  Index rows = 0, cols = 0, width = 0;
  cuda::DeviceBuffer<Index> col;
  cuda::DeviceBuffer<T> val;
};

template <class T>
struct DeviceHyb {
  using value_type = T;
  DeviceEll<T> ell;
  DeviceCoo<T> coo;
};

// The diagonal-first formats: the diagonal, then the off-diagonal part's mirror D.
template <class D>
struct DeviceDiagonalFirst {
  using value_type = typename D::value_type;
  cuda::DeviceBuffer<value_type> diag;
  D off;
};
template <class T>
using DeviceDcoo = DeviceDiagonalFirst<DeviceCoo<T>>;
template <class T>
using DeviceDcsr = DeviceDiagonalFirst<DeviceCsr<T>>;
template <class T>
using DeviceDhyb = DeviceDiagonalFirst<DeviceHyb<T>>;

// Threads per CSR row: the power of two nearest below half the mean row length, 1 .. 32.
int csr_threads_per_row(double mean_row_length);

template <class T> DeviceCoo<T> upload(const CooMatrix<T>& m);
template <class T> DeviceCsr<T> upload(const CsrMatrix<T>& m);
template <class T> DeviceBcsr<T> upload(const SlicedBcsr<T>& m);
template <class T> DeviceBcsr<T> upload(const BcsrMatrix<T>& m);  // make_sliced_bcsr's default window
template <class T> DeviceEll<T> upload(const EllMatrix<T>& m);
template <class T> DeviceHyb<T> upload(const HybMatrix<T>& m);
template <class T> DeviceDcoo<T> upload(const DcooMatrix<T>& m);
template <class T> DeviceDcsr<T> upload(const DcsrMatrix<T>& m);
template <class T> DeviceDhyb<T> upload(const DhybMatrix<T>& m);

// y = A x on the stream (x, y device arrays; asynchronous, capturable).
template <class T> void spmv(const DeviceCoo<T>& a, const T* x, T* y, cudaStream_t stream);
template <class T> void spmv(const DeviceCsr<T>& a, const T* x, T* y, cudaStream_t stream);
template <class T> void spmv(const DeviceBcsr<T>& a, const T* x, T* y, cudaStream_t stream);
// The BCSR product with x . y fused (LinearOperator::apply_dot): y equals spmv's bit for bit; the
// dot is summed per thread block of the product kernel, then by its last block.
template <class T> std::size_t spmv_dot_blocks(const DeviceBcsr<T>& a);
template <class T> void spmv_dot(const DeviceBcsr<T>& a, const T* x, T* y, const DotTarget& t, cudaStream_t stream);
template <class T> void spmv(const DeviceEll<T>& a, const T* x, T* y, cudaStream_t stream);
template <class T> void spmv(const DeviceHyb<T>& a, const T* x, T* y, cudaStream_t stream);
template <class T> void spmv(const DeviceDcoo<T>& a, const T* x, T* y, cudaStream_t stream);
template <class T> void spmv(const DeviceDcsr<T>& a, const T* x, T* y, cudaStream_t stream);
template <class T> void spmv(const DeviceDhyb<T>& a, const T* x, T* y, cudaStream_t stream);

template <class T> Index rows_of(const DeviceCoo<T>& m) { return m.rows; }
template <class T> Index rows_of(const DeviceCsr<T>& m) { return m.rows; }
template <class T> Index rows_of(const DeviceBcsr<T>& m) { return 3 * m.block_rows; }
template <class T> Index rows_of(const DeviceEll<T>& m) { return m.rows; }
template <class T> Index rows_of(const DeviceHyb<T>& m) { return m.ell.rows; }
template <class D> Index rows_of(const DeviceDiagonalFirst<D>& m) { return rows_of(m.off); }

// d[i] = v.at(pos[i]) (0 where pos[i] < 0), enqueued on the stream: the diagonal of a matrix read
// from its current values.
template <class T>
void gather_values(ValueSegments<T> v, const int64_t* pos, Index n, T* d, cudaStream_t stream);

// The value arrays of a device mirror (value_segments.h order; BCSR: none, it is addressed per block).
template <class T>
void append_segments(DeviceCoo<T>& m, ValueSegments<T>& s) { s.push(m.val.data(), m.nnz); }
template <class T>
void append_segments(DeviceCsr<T>& m, ValueSegments<T>& s) { s.push(m.val.data(), m.nnz); }
template <class T>
void append_segments(DeviceEll<T>& m, ValueSegments<T>& s) { s.push(m.val.data(), int64_t(m.width) * m.rows); }
template <class T>
void append_segments(DeviceHyb<T>& m, ValueSegments<T>& s) {
  append_segments(m.ell, s);
  append_segments(m.coo, s);
}
template <class D>
void append_segments(DeviceDiagonalFirst<D>& m, ValueSegments<typename D::value_type>& s) {
  s.push(m.diag.data(), rows_of(m.off));
  append_segments(m.off, s);
}
template <class T>
void append_segments(DeviceBcsr<T>&, ValueSegments<T>&) {}

template <class D>
struct IsDiagonalFirst : std::false_type {};
template <class D>
struct IsDiagonalFirst<DeviceDiagonalFirst<D>> : std::true_type {};

// A device mirror as an operator. Its diagonal is read from the mirror's current values (the
// diagonal array of a D-format; elsewhere a gather through diag_positions, the flat positions of
// the diagonal entries in the layout on the device), so an assembly that refills the values in
// place (values()) needs no other call for the Jacobi preconditioner to see them.
template <class D>
class DeviceMatrixOperator final : public LinearOperator<typename D::value_type> {
 public:
  using T = typename D::value_type;
  DeviceMatrixOperator(D m, const std::vector<int64_t>& diag_positions, std::string name)
      : matrix_(std::move(m)), name_(std::move(name)) {
    if constexpr (!IsDiagonalFirst<D>::value) diag_pos_.upload(diag_positions);
  }
  Index rows() const override { return rows_of(matrix_); }
  Location location() const override { return Location::Device; }
  void apply(const T* x, T* y, StreamHandle stream) const override { spmv(matrix_, x, y, cuda_stream(stream)); }
  void diagonal(T* d, StreamHandle stream) const override {
    if constexpr (IsDiagonalFirst<D>::value) {
      EB_CUDA_CHECK(cudaMemcpyAsync(d, matrix_.diag.data(), matrix_.diag.bytes(), cudaMemcpyDeviceToDevice,
                                    cuda_stream(stream)));
    } else {
      ValueSegments<T> v;
      append_segments(const_cast<D&>(matrix_), v);  // read only: the gather does not write values
      if constexpr (std::is_same_v<D, DeviceBcsr<T>>) v.push(const_cast<T*>(matrix_.val.data()), int64_t(matrix_.val.size()));
      gather_values(v, diag_pos_.data(), rows(), d, cuda_stream(stream));
    }
  }
  std::string name() const override { return name_; }
  std::size_t fused_dot_blocks() const override {
    if constexpr (std::is_same_v<D, DeviceBcsr<T>>)
      return spmv_dot_blocks(matrix_);
    else
      return 0;
  }
  void apply_dot(const T* x, T* y, const DotTarget& t, StreamHandle stream) const override {
    if constexpr (std::is_same_v<D, DeviceBcsr<T>>)
      spmv_dot(matrix_, x, y, t, cuda_stream(stream));
    else
      LinearOperator<T>::apply_dot(x, y, t, stream);
  }
  typename LinearOperator<T>::Storage hot_storage() const override {
    if constexpr (std::is_same_v<D, DeviceBcsr<T>> || std::is_same_v<D, DeviceCsr<T>> || std::is_same_v<D, DeviceEll<T>>)
      return {matrix_.val.data(), matrix_.val.bytes()};
    else
      return {};
  }
  ValueSegments<T> values() override {
    ValueSegments<T> v;
    append_segments(matrix_, v);
    return v;
  }
  const D& matrix() const { return matrix_; }

 private:
  D matrix_;
  cuda::DeviceBuffer<int64_t> diag_pos_;
  std::string name_;
};

// Flat positions of the diagonal entries of the sliced BCSR layout (val, step k, component c, lane
// l at k * 288 + c * 32 + l); -1 where a block row has no diagonal block.
template <class T>
std::vector<int64_t> sliced_diagonal_positions(const SlicedBcsr<T>& s) {
  std::vector<int64_t> pos(3 * size_t(s.block_rows), -1);
  for (Index sl = 0; sl < s.slices(); ++sl)
    for (int l = 0; l < 32; ++l) {
      const Index br = s.perm[size_t(sl) * 32 + size_t(l)];
      if (br < 0) continue;
      for (Offset k = s.slice_ptr[size_t(sl)]; k < s.slice_ptr[size_t(sl) + 1]; ++k)
        if (s.col[size_t(k) * 32 + size_t(l)] == br)
          for (int i = 0; i < 3; ++i) pos[3 * size_t(br) + size_t(i)] = k * 288 + (4 * i) * 32 + l;
    }
  return pos;
}

// The device operator of a host format (BCSR: in the default sliced layout).
template <class M>
auto make_device_operator(const M& host, std::string name) {
  using T = typename M::value_type;
  if constexpr (std::is_same_v<M, BcsrMatrix<T>>) {
    const SlicedBcsr<T> s = make_sliced_bcsr(host);
    auto dev = upload(s);
    return std::make_unique<DeviceMatrixOperator<decltype(dev)>>(std::move(dev), sliced_diagonal_positions(s),
                                                                 std::move(name));
  } else {
    auto dev = upload(host);
    return std::make_unique<DeviceMatrixOperator<decltype(dev)>>(std::move(dev),
                                                                 diagonal_positions(AnyMatrix<T>(host)), std::move(name));
  }
}

}  // namespace eb::linalg
