#pragma once
// The operator interface the Krylov solvers are written against: y = A x, the diagonal, the size,
// and where the vectors live. Every sparse format implements it on the host (HostMatrixOperator)
// and, in CUDA builds, on the device (make_matrix_operator(..., Location::Device); the device
// types are in device_formats.cuh); matrix-free operators implement it directly (on the host:
// HostFunctionOperator).
//
// Device operators run asynchronously on a stream passed as an opaque StreamHandle (a
// cudaStream_t; device_formats.cuh converts), so that this header needs no CUDA: their apply()
// only enqueues kernels and asynchronous copies on that stream (no synchronization, no
// allocation), which is what makes a solver iteration capturable in a CUDA graph.
#include <functional>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "solvers/linalg/format_segments.h"
#include "solvers/linalg/spmv_cpu.h"
#include "solvers/linalg/value_segments.h"

namespace eb::linalg {

enum class Location { Host, Device };
std::string to_string(Location where);

using StreamHandle = void*;  // cudaStream_t for device operators; host operators ignore it

// Where a product with a fused dot product leaves x . y (device memory): `partials` holds
// fused_dot_blocks() doubles, `ticket` is 0 on entry and left 0, `result` receives the sum.
// A null ticket leaves only the per-block partial sums, for a later kernel to add in block order
// (grid_reduce.cuh sum_partials; the single-reduction CG at small sizes).
// `programmatic`: the product may be launched as a programmatic dependent of the kernel before it
// on the stream (CUDA programmatic dependent launch: its blocks start while that kernel drains and
// wait for it before reading x); it then lets the next kernel do the same once its blocks have done
// their products. A hint: operators that cannot simply launch normally.
struct DotTarget {
  double* partials = nullptr;
  unsigned* ticket = nullptr;
  double* result = nullptr;
  bool programmatic = false;
};

template <class T>
class LinearOperator {
 public:
  using value_type = T;
  virtual ~LinearOperator() = default;
  virtual Index rows() const = 0;  // square: rows() x rows()
  virtual Location location() const = 0;
  // y = A x for non-overlapping x, y where location() says. Host operators are done on return.
  virtual void apply(const T* x, T* y, StreamHandle stream = nullptr) const = 0;
  // d = diag(A), same conventions.
  virtual void diagonal(T* d, StreamHandle stream = nullptr) const = 0;
  virtual std::string name() const = 0;
  // Device operators may fuse x . y into the product, which saves the single-reduction CG a
  // kernel and a pass over two vectors per iteration (cg_algorithm.h). 0: not supported;
  // otherwise the number of partial sums apply_dot needs.
  virtual std::size_t fused_dot_blocks() const { return 0; }
  // y = A x and *t.result = x . y, summed in double in a fixed order (two runs give identical
  // bits). Only where fused_dot_blocks() > 0.
  virtual void apply_dot(const T* x, T* y, const DotTarget& t, StreamHandle stream = nullptr) const {
    (void)x, (void)y, (void)t, (void)stream;
    throw std::logic_error("operator '" + name() + "' has no fused product and dot");
  }
  // Device operators: the one array that dominates a product's reads (a matrix's values), for a
  // solver that asks the L2 cache to keep it between products (CgOptions::l2_resident_operator).
  // {nullptr, 0}: none to offer.
  struct Storage {
    const void* data = nullptr;
    std::size_t bytes = 0;
  };
  virtual Storage hot_storage() const { return {}; }
  // A matrix operator's value arrays where location() says (value_segments.h), for an assembly
  // that refills them in place (the pattern is fixed): apply() and diagonal() then read the new
  // values, with no other call. Empty: the operator's values cannot be written this way.
  virtual ValueSegments<T> values() { return {}; }
};

// A host format as an operator; it owns the matrix.
template <class M>
class HostMatrixOperator final : public LinearOperator<typename M::value_type> {
 public:
  using T = typename M::value_type;
  HostMatrixOperator(M m, std::string name) : matrix_(std::move(m)), name_(std::move(name)) {}
  Index rows() const override { return rows_of(matrix_); }
  Location location() const override { return Location::Host; }
  void apply(const T* x, T* y, StreamHandle) const override { spmv(matrix_, x, y); }
  void diagonal(T* d, StreamHandle) const override { linalg::diagonal(matrix_, d); }
  std::string name() const override { return name_; }
  ValueSegments<T> values() override { return host_value_segments(matrix_); }
  const M& matrix() const { return matrix_; }

 private:
  M matrix_;
  std::string name_;
};

// A matrix-free operator on the host: the product as a function, the diagonal given.
template <class T>
class HostFunctionOperator final : public LinearOperator<T> {
 public:
  using ApplyFn = std::function<void(const T* x, T* y)>;
  HostFunctionOperator(Index n, ApplyFn apply, std::vector<T> diag, std::string name);
  Index rows() const override { return rows_; }
  Location location() const override { return Location::Host; }
  void apply(const T* x, T* y, StreamHandle) const override { apply_(x, y); }
  void diagonal(T* d, StreamHandle) const override;
  std::string name() const override { return name_; }

 private:
  Index rows_;
  ApplyFn apply_;
  std::vector<T> diag_;
  std::string name_;
};

// The matrix `a` in format f as an operator on the host or the device. Throws RuntimeFailure for
// Location::Device in a build without CUDA or without a usable device, InputError where the
// format does not take the matrix (see sparse_formats.h).
template <class T>
std::unique_ptr<LinearOperator<T>> make_matrix_operator(const AssembledMatrix<T>& a, Format f, Location where);

// The GPU's sliced BCSR layout as an operator, its warps_per_slice kept (0 = the device chooses):
// on the host the layout's CPU reference, on the device the kernel. For tests and benchmarks of
// the layout's variants; make_matrix_operator(.., Format::Bcsr, ..) takes the defaults.
template <class T>
std::unique_ptr<LinearOperator<T>> make_sliced_bcsr_operator(const SlicedBcsr<T>& s, Location where);

// y = A x and diag(A) with host vectors whatever A's location (a device operator gets copies and
// is synchronized): for tests and tools, not for solver loops.
template <class T>
std::vector<T> apply_from_host(const LinearOperator<T>& A, const std::vector<T>& x);
template <class T>
std::vector<T> diagonal_from_host(const LinearOperator<T>& A);

namespace detail {
// Defined in device_operator.cu (CUDA builds) or linalg_cuda_none.cpp.
template <class T>
std::unique_ptr<LinearOperator<T>> make_device_matrix_operator(const AssembledMatrix<T>& a, Format f);
template <class T>
std::vector<T> device_apply_from_host(const LinearOperator<T>& A, const std::vector<T>& x, bool diagonal_only);
template <class T>
std::unique_ptr<LinearOperator<T>> make_device_sliced_operator(const SlicedBcsr<T>& s);
}  // namespace detail

// The explicit instantiations of those entry points, for both of their definitions.
#define EB_LINALG_DEVICE_OPERATOR_INSTANTIATIONS(T)                                                          \
  template std::unique_ptr<LinearOperator<T>> make_device_matrix_operator(const AssembledMatrix<T>&, Format); \
  template std::vector<T> device_apply_from_host(const LinearOperator<T>&, const std::vector<T>&, bool);  \
  template std::unique_ptr<LinearOperator<T>> make_device_sliced_operator(const SlicedBcsr<T>&);

}  // namespace eb::linalg
