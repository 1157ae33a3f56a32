// The device FunctionOperator: the caller's kernels for the product, then one small kernel over
// the fixed rows only (a compact index list: a scene's fixed rows are few).
#include <algorithm>

#include "solvers/common/cuda_utils.cuh"
#include "solvers/linalg/device_formats.cuh"
#include "solvers/linalg/function_operator.h"

namespace eb::linalg {
namespace {

constexpr int kMaskThreads = 256;

template <class T>
__global__ void k_copy_fixed_rows(Index count, const Index* __restrict__ rows, const T* __restrict__ x, T* __restrict__ y) {
  const Index k = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count) y[rows[k]] = x[rows[k]];
}

template <class T>
__global__ void k_set_fixed_rows(Index count, const Index* __restrict__ rows, T value, T* __restrict__ d) {
  const Index k = Index(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k < count) d[rows[k]] = value;
}

template <class T>
class DeviceFunctionOperator final : public FunctionOperator<T> {
 public:
  DeviceFunctionOperator(Index n, typename FunctionOperator<T>::ApplyFn apply, const std::vector<uint8_t>& fixed,
                         std::string name)
      : n_(n), apply_(std::move(apply)), name_(std::move(name)) {
    std::vector<Index> rows;
    for (Index i = 0; i < n; ++i)
      if (fixed[size_t(i)]) rows.push_back(i);
    fixed_count_ = Index(rows.size());
    if (!rows.empty()) fixed_.upload(rows);
    diag_.resize(size_t(std::max<Index>(n, 1)), "function operator diagonal");
    std::vector<T> ones(size_t(std::max<Index>(n, 1)), T(1));
    diag_.upload(ones.data(), ones.size());
  }
  Index rows() const override { return n_; }
  Location location() const override { return Location::Device; }
  void apply(const T* x, T* y, StreamHandle s) const override {
    apply_(x, y, s);
    mask(x, y, cuda_stream(s));
  }
  void diagonal(T* d, StreamHandle s) const override {
    const cudaStream_t st = cuda_stream(s);
    EB_CUDA_CHECK(cudaMemcpyAsync(d, diag_.data(), size_t(n_) * sizeof(T), cudaMemcpyDeviceToDevice, st));
    if (fixed_count_ > 0) {
      k_set_fixed_rows<T><<<cuda::blocks_for(fixed_count_, kMaskThreads), kMaskThreads, 0, st>>>(
          fixed_count_, fixed_.data(), T(1), d);
      EB_CUDA_CHECK_LAUNCH();
    }
  }
  std::string name() const override { return name_; }
  T* diagonal_data() override { return diag_.data(); }

 private:
  void mask(const T* x, T* y, cudaStream_t st) const {
    if (fixed_count_ == 0) return;
    k_copy_fixed_rows<T><<<cuda::blocks_for(fixed_count_, kMaskThreads), kMaskThreads, 0, st>>>(fixed_count_, fixed_.data(),
                                                                                               x, y);
    EB_CUDA_CHECK_LAUNCH();
  }
  Index n_;
  typename FunctionOperator<T>::ApplyFn apply_;
  std::string name_;
  Index fixed_count_ = 0;
  cuda::DeviceBuffer<Index> fixed_;
  cuda::DeviceBuffer<T> diag_;
};

}  // namespace

namespace detail {
template <class T>
std::unique_ptr<FunctionOperator<T>> make_device_function_operator(Index n, typename FunctionOperator<T>::ApplyFn apply,
                                                                   const std::vector<uint8_t>& fixed_rows,
                                                                   std::string name) {
  return std::make_unique<DeviceFunctionOperator<T>>(n, std::move(apply), fixed_rows, std::move(name));
}
EB_LINALG_DEVICE_FUNCTION_OPERATOR_INSTANTIATIONS(float)
EB_LINALG_DEVICE_FUNCTION_OPERATOR_INSTANTIATIONS(double)
}  // namespace detail

}  // namespace eb::linalg
