// Device ceilings measured in the same session as the method benchmarks, so kernels can be
// reported as a fraction of them: STREAM triad (fp32, fp64), a large device-to-device copy,
// back-to-back launch cost of an empty kernel, and the per-kernel cost inside a CUDA graph.
// Times come from CUDA events (manual time), bandwidth counts bytes read plus bytes written.
#include <benchmark/benchmark.h>

#include <vector>

#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"

namespace {

__global__ void fill(float* x, size_t n, float v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    x[i] = v + float(i % 7);
}

__global__ void empty_kernel() {}

bool have_device(benchmark::State& state) {
  if (eb::cuda_device_count() == 0) {
    state.SkipWithError("no CUDA device");
    return false;
  }
  return true;
}

int grid_for(size_t n) {
  const auto info = eb::cuda_device_info(0);
  return int(std::min<size_t>(info.multiprocessors * 8, (n + 255) / 256));
}

template <class T>
void BM_StreamTriad(benchmark::State& state) {
  if (!have_device(state)) return;
  const size_t n = size_t(state.range(0));
  eb::cuda::DeviceBuffer<T> a(n, "triad a"), b(n, "triad b"), c(n, "triad c");
  fill<<<1024, 256>>>(reinterpret_cast<float*>(b.data()), n * sizeof(T) / sizeof(float), 1.0f);
  fill<<<1024, 256>>>(reinterpret_cast<float*>(c.data()), n * sizeof(T) / sizeof(float), 2.0f);
  cudaEvent_t start, stop;
  EB_CUDA_CHECK(cudaEventCreate(&start));
  EB_CUDA_CHECK(cudaEventCreate(&stop));
  const int grid = grid_for(n);
  eb::cuda::stream_triad_kernel<<<grid, 256>>>(a.data(), b.data(), c.data(), T(3), n);  // warm-up
  for (auto _ : state) {
    EB_CUDA_CHECK(cudaEventRecord(start));
    eb::cuda::stream_triad_kernel<<<grid, 256>>>(a.data(), b.data(), c.data(), T(3), n);
    EB_CUDA_CHECK(cudaEventRecord(stop));
    EB_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    EB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(ms / 1000.0);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(3 * n * sizeof(T)));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}
BENCHMARK(BM_StreamTriad<float>)->Arg(1 << 27)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StreamTriad<double>)->Arg(1 << 26)->UseManualTime()->Unit(benchmark::kMillisecond);

void BM_DeviceCopy(benchmark::State& state) {
  if (!have_device(state)) return;
  const size_t bytes = size_t(state.range(0));
  eb::cuda::DeviceBuffer<char> a(bytes, "copy src"), b(bytes, "copy dst");
  fill<<<1024, 256>>>(reinterpret_cast<float*>(a.data()), bytes / 4, 1.0f);
  cudaEvent_t start, stop;
  EB_CUDA_CHECK(cudaEventCreate(&start));
  EB_CUDA_CHECK(cudaEventCreate(&stop));
  EB_CUDA_CHECK(cudaMemcpy(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice));
  for (auto _ : state) {
    EB_CUDA_CHECK(cudaEventRecord(start));
    EB_CUDA_CHECK(cudaMemcpyAsync(b.data(), a.data(), bytes, cudaMemcpyDeviceToDevice));
    EB_CUDA_CHECK(cudaEventRecord(stop));
    EB_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    EB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(ms / 1000.0);
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(2 * bytes));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}
BENCHMARK(BM_DeviceCopy)->Arg(1 << 30)->UseManualTime()->Unit(benchmark::kMillisecond);

// 1000 back-to-back empty launches timed by events: the per-launch cost of a stream.
void BM_LaunchBackToBack(benchmark::State& state) {
  if (!have_device(state)) return;
  const int launches = 1000;
  cudaEvent_t start, stop;
  EB_CUDA_CHECK(cudaEventCreate(&start));
  EB_CUDA_CHECK(cudaEventCreate(&stop));
  empty_kernel<<<1, 32>>>();
  EB_CUDA_CHECK(cudaDeviceSynchronize());
  for (auto _ : state) {
    EB_CUDA_CHECK(cudaEventRecord(start));
    for (int i = 0; i < launches; ++i) empty_kernel<<<1, 32>>>();
    EB_CUDA_CHECK(cudaEventRecord(stop));
    EB_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    EB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(ms / 1000.0);
  }
  state.counters["us_per_launch"] =
      benchmark::Counter(double(launches) * 1e-6, benchmark::Counter::kIsIterationInvariantRate |
                                                      benchmark::Counter::kInvert);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}
BENCHMARK(BM_LaunchBackToBack)->UseManualTime()->Unit(benchmark::kMicrosecond);

// The same 1000 launches captured once into a CUDA graph and replayed.
void BM_LaunchInGraph(benchmark::State& state) {
  if (!have_device(state)) return;
  const int launches = 1000;
  cudaStream_t stream;
  EB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  EB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < launches; ++i) empty_kernel<<<1, 32, 0, stream>>>();
  EB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  EB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  EB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  EB_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaEvent_t start, stop;
  EB_CUDA_CHECK(cudaEventCreate(&start));
  EB_CUDA_CHECK(cudaEventCreate(&stop));
  for (auto _ : state) {
    EB_CUDA_CHECK(cudaEventRecord(start, stream));
    EB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    EB_CUDA_CHECK(cudaEventRecord(stop, stream));
    EB_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    EB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(ms / 1000.0);
  }
  state.counters["us_per_kernel"] =
      benchmark::Counter(double(launches) * 1e-6, benchmark::Counter::kIsIterationInvariantRate |
                                                      benchmark::Counter::kInvert);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}
BENCHMARK(BM_LaunchInGraph)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
