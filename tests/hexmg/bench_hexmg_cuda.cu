// STREAM triad a = b + s c on the device (fp32 and fp64, 3 x 256 MiB), for bench_hexmg: the
// reference bandwidth the hexmg step's effective GB/s is compared with in the same run.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"

namespace {

template <class T>
__global__ void triad(T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c, T s, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    a[i] = b[i] + s * c[i];
}

template <class T>
__global__ void fill(T* p, T v, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = v + T(i % 7);
}

template <class T>
void BM_Triad(benchmark::State& state) {
  if (eb::cuda_device_count() == 0) {
    state.SkipWithError("no usable CUDA device");
    return;
  }
  const size_t n = (size_t(256) << 20) / sizeof(T);
  eb::cuda::DeviceBuffer<T> a(n, "triad a"), b(n, "triad b"), c(n, "triad c");
  int sms = 0;
  EB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const unsigned grid = unsigned(sms * 8);
  fill<T><<<grid, 256>>>(b.data(), T(1), n);
  fill<T><<<grid, 256>>>(c.data(), T(2), n);
  EB_CUDA_CHECK_LAUNCH();
  cudaEvent_t e0, e1;
  EB_CUDA_CHECK(cudaEventCreate(&e0));
  EB_CUDA_CHECK(cudaEventCreate(&e1));
  for (auto _ : state) {
    EB_CUDA_CHECK(cudaEventRecord(e0));
    for (int i = 0; i < 10; ++i) triad<T><<<grid, 256>>>(a.data(), b.data(), c.data(), T(3), n);
    EB_CUDA_CHECK(cudaEventRecord(e1));
    EB_CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    EB_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    state.SetIterationTime(ms / 1000.0);
  }
  EB_CUDA_CHECK_LAUNCH();
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  state.counters["GB_per_s"] =
      benchmark::Counter(double(state.iterations()) * 10 * 3 * n * sizeof(T) / 1e9, benchmark::Counter::kIsRate);
}

BENCHMARK_TEMPLATE(BM_Triad, float)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Triad, double)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace
