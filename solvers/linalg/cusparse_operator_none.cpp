// make_cusparse_csr_operator in a build without CUDA: says so (RuntimeFailure).
#include "meshes/errors.h"
#include "solvers/linalg/cusparse_operator.h"

namespace eb::linalg {

template <class T>
std::unique_ptr<LinearOperator<T>> make_cusparse_csr_operator(const CsrMatrix<T>&) {
  throw RuntimeFailure("cuSPARSE CSR operator: this build has no CUDA backend (configured with ELASTOBENCH_CUDA=OFF or without nvcc)");
}

template std::unique_ptr<LinearOperator<float>> make_cusparse_csr_operator(const CsrMatrix<float>&);
template std::unique_ptr<LinearOperator<double>> make_cusparse_csr_operator(const CsrMatrix<double>&);

}  // namespace eb::linalg
