#pragma once
// A CSR matrix on the device whose product is cuSPARSE's cusparseSpMV (NVIDIA's library SpMV,
// CUSPARSE_SPMV_CSR_ALG2: deterministic), as a LinearOperator, so that linalg's CG runs with the
// vendor product in place of our kernels (the head-to-head solver comparison, issue 24). The
// matrix is uploaded once; apply() only enqueues the library call on the given stream with the
// workspace sized at construction (no allocation: capturable, as CgSolver's graphs need).
// linalg's CSR SpMV (spmv_cpu.h) is its reference (tests/head_to_head_solvers).
#include <memory>

#include "solvers/linalg/linear_operator.h"
#include "solvers/linalg/sparse_formats.h"

namespace eb::linalg {

// Throws RuntimeFailure in a build without CUDA or without a usable device.
template <class T>
std::unique_ptr<LinearOperator<T>> make_cusparse_csr_operator(const CsrMatrix<T>& a);

}  // namespace eb::linalg
