#pragma once
// A matrix-free operator on the host or the device: the product is the caller's function (a
// loop, or kernels enqueued on the given stream), the constrained (Dirichlet) rows are masked,
// and the diagonal is an array the operator owns and the caller rewrites whenever its operator
// changes (each time step), for the Jacobi preconditioner (CgSolver::refresh_preconditioner
// re-reads it, capturable on the device).
//
// Masking: a fixed row i gets y_i = x_i and diagonal 1. The product function must treat the
// entries of x at fixed rows as 0 (read only free columns); the operator is then
// P A P + (I - P), P the projection onto the free rows, symmetric positive definite where A is on
// the free rows. With a right-hand side that is 0 at the fixed rows and a start of 0 there, every
// CG iterate stays 0 at the fixed rows (SOFA's FixedConstraint projection).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "solvers/linalg/linear_operator.h"

namespace eb::linalg {

template <class T>
class FunctionOperator : public LinearOperator<T> {
 public:
  // y = A x of the unconstrained operator, x and y where the operator lives; on the device the
  // function only enqueues work on `stream` (no synchronization: capturable).
  using ApplyFn = std::function<void(const T* x, T* y, StreamHandle stream)>;
  // The n diagonal entries of the unconstrained operator, where location() says (host or device
  // memory), for the caller to write; fixed rows are overridden by 1 when read.
  virtual T* diagonal_data() = 0;
};

// `fixed_rows`: n entries, nonzero where the row is constrained. Location::Device in a build
// without CUDA throws RuntimeFailure.
template <class T>
std::unique_ptr<FunctionOperator<T>> make_function_operator(Location where, Index n,
                                                            typename FunctionOperator<T>::ApplyFn apply,
                                                            const std::vector<uint8_t>& fixed_rows, std::string name);

namespace detail {
// function_operator_cuda.cu in CUDA builds, linalg_cuda_none.cpp otherwise (throws).
template <class T>
std::unique_ptr<FunctionOperator<T>> make_device_function_operator(Index n, typename FunctionOperator<T>::ApplyFn apply,
                                                                   const std::vector<uint8_t>& fixed_rows,
                                                                   std::string name);
}  // namespace detail

#define EB_LINALG_DEVICE_FUNCTION_OPERATOR_INSTANTIATIONS(T)                                             \
  template std::unique_ptr<FunctionOperator<T>> make_device_function_operator(                           \
      Index, typename FunctionOperator<T>::ApplyFn, const std::vector<uint8_t>&, std::string);

}  // namespace eb::linalg
