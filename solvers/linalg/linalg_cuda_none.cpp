// The device entry points of linalg in a build without CUDA: each says so (RuntimeFailure), so
// that callers need no #ifdefs.
#include "meshes/errors.h"
#include "solvers/linalg/cg.h"
#include "solvers/linalg/function_operator.h"

namespace eb::linalg {
namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw RuntimeFailure(std::string(what) + ": this build has no CUDA backend (configured with ELASTOBENCH_CUDA=OFF or without nvcc)");
}
}  // namespace

CgDeviceProperties cg_device_properties() { no_cuda("device CG"); }

namespace detail {

template <class T>
std::unique_ptr<LinearOperator<T>> make_device_matrix_operator(const AssembledMatrix<T>&, Format f) {
  no_cuda(("device " + to_string(f) + " operator").c_str());
}
template <class T>
std::vector<T> device_apply_from_host(const LinearOperator<T>&, const std::vector<T>&, bool) {
  no_cuda("device operator");
}
template <class T>
std::unique_ptr<LinearOperator<T>> make_device_sliced_operator(const SlicedBcsr<T>&) {
  no_cuda("device sliced BCSR operator");
}
template <class T>
std::unique_ptr<typename CgSolver<T>::Engine> make_device_cg_engine(const LinearOperator<T>&, const CgOptions&,
                                                                    const CgPlan&) {
  no_cuda("device CG");
}
template <class T>
CgResult device_cg_solve_from_host(const LinearOperator<T>&, const std::vector<T>&, std::vector<T>&, const CgOptions&) {
  no_cuda("device CG");
}

template <class T>
std::unique_ptr<FunctionOperator<T>> make_device_function_operator(Index, typename FunctionOperator<T>::ApplyFn,
                                                                   const std::vector<uint8_t>&, std::string) {
  no_cuda("device function operator");
}

EB_LINALG_DEVICE_FUNCTION_OPERATOR_INSTANTIATIONS(float)
EB_LINALG_DEVICE_FUNCTION_OPERATOR_INSTANTIATIONS(double)
EB_LINALG_DEVICE_OPERATOR_INSTANTIATIONS(float)
EB_LINALG_DEVICE_OPERATOR_INSTANTIATIONS(double)
EB_LINALG_DEVICE_CG_INSTANTIATIONS(float)
EB_LINALG_DEVICE_CG_INSTANTIATIONS(double)

}  // namespace detail
}  // namespace eb::linalg
