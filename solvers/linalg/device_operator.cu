// Device operators from the assembled description, and host-vector conveniences for them.
#include "meshes/errors.h"
#include "solvers/common/cuda_info.h"
#include "solvers/linalg/device_formats.cuh"

namespace eb::linalg::detail {

template <class T>
std::unique_ptr<LinearOperator<T>> make_device_matrix_operator(const AssembledMatrix<T>& a, Format f) {
  if (cuda_device_count() == 0)
    throw RuntimeFailure("device " + to_string(f) + " operator: " + cuda_device_info(0).reason);
  return std::visit(
      [&](const auto& m) -> std::unique_ptr<LinearOperator<T>> { return make_device_operator(m, to_string(f) + " (device)"); },
      make_format(a, f));
}

template <class T>
std::unique_ptr<LinearOperator<T>> make_device_sliced_operator(const SlicedBcsr<T>& s) {
  if (cuda_device_count() == 0) throw RuntimeFailure("device sliced BCSR operator: " + cuda_device_info(0).reason);
  DeviceBcsr<T> d = upload(s);
  const std::string name = "sliced bcsr (device, " + std::to_string(d.warps_per_slice) + " warps per slice)";
  return std::make_unique<DeviceMatrixOperator<DeviceBcsr<T>>>(std::move(d), sliced_diagonal_positions(s), name);
}

template <class T>
std::vector<T> device_apply_from_host(const LinearOperator<T>& A, const std::vector<T>& x, bool diagonal_only) {
  cuda::DeviceBuffer<T> dx, dy(size_t(A.rows()), "operator result");
  if (diagonal_only) {
    A.diagonal(dy.data(), nullptr);
  } else {
    dx.upload(x);
    A.apply(dx.data(), dy.data(), nullptr);
  }
  EB_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  return dy.to_host();
}

EB_LINALG_DEVICE_OPERATOR_INSTANTIATIONS(float)
EB_LINALG_DEVICE_OPERATOR_INSTANTIATIONS(double)

}  // namespace eb::linalg::detail
