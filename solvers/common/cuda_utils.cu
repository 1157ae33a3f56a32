#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <vector>
#include <sstream>

#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"

namespace eb {
namespace {
std::atomic<std::size_t> g_tracked{0};
std::atomic<std::size_t> g_peak{0};
}  // namespace

bool cuda_compiled() { return true; }

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" state so later calls report cleanly
    return 0;
  }
  return n;
}

GpuInfo cuda_device_info(int device) {
  GpuInfo g;
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    g.reason = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
    return g;
  }
  if (device < 0 || device >= n) {
    g.reason = "CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(n) + " found)";
    return g;
  }
  cudaDeviceProp p{};
  if ((err = cudaGetDeviceProperties(&p, device)) != cudaSuccess) {
    g.reason = cudaGetErrorString(err);
    return g;
  }
  g.usable = true;
  g.name = p.name;
  g.compute_major = p.major;
  g.compute_minor = p.minor;
  g.total_memory = p.totalGlobalMem;
  g.multiprocessors = p.multiProcessorCount;
  g.l2_bytes = std::size_t(p.l2CacheSize);
  cudaDriverGetVersion(&g.driver_version);
  cudaRuntimeGetVersion(&g.runtime_version);
  return g;
}

std::size_t cuda_tracked_bytes() { return g_tracked.load(); }
std::size_t cuda_peak_tracked_bytes() { return g_peak.load(); }
void cuda_reset_peak_tracked_bytes() { g_peak.store(g_tracked.load()); }

namespace cuda {

void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line) {
  std::ostringstream msg;
  msg << "CUDA error " << cudaGetErrorName(err) << " (" << cudaGetErrorString(err) << ") in " << what << " at "
      << file << ":" << line;
  throw RuntimeFailure(msg.str());
}

void* device_alloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    std::ostringstream msg;
    msg << "out of GPU memory: allocating " << bytes / (1024.0 * 1024.0) << " MiB for " << what << " failed ("
        << free_b / (1024.0 * 1024.0) << " MiB free of " << total_b / (1024.0 * 1024.0)
        << " MiB); use a smaller mesh or fp32";
    throw RuntimeFailure(msg.str());
  }
  if (err != cudaSuccess) throw_cuda_error(err, "cudaMalloc", __FILE__, __LINE__);
  const std::size_t now = g_tracked += bytes;
  std::size_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
  return p;
}

void device_free(void* p, std::size_t bytes) noexcept {
  cudaFree(p);
  g_tracked -= bytes;
}

EventTimer::~EventTimer() {
  for (auto& p : pending_) {
    cudaEventDestroy(p.start);
    cudaEventDestroy(p.stop);
  }
  for (auto e : pool_) cudaEventDestroy(e);
}

cudaEvent_t EventTimer::take() {
  if (!pool_.empty()) {
    cudaEvent_t e = pool_.back();
    pool_.pop_back();
    return e;
  }
  cudaEvent_t e;
  EB_CUDA_CHECK(cudaEventCreate(&e));
  return e;
}

void EventTimer::begin(const char* phase, cudaStream_t stream) {
  if (open_) throw std::logic_error("EventTimer::begin while a phase is open");
  Pending p{phase, take(), take()};
  EB_CUDA_CHECK(cudaEventRecord(p.start, stream));
  pending_.push_back(p);
  open_ = true;
}

void EventTimer::end(cudaStream_t stream) {
  if (!open_) throw std::logic_error("EventTimer::end without begin");
  EB_CUDA_CHECK(cudaEventRecord(pending_.back().stop, stream));
  open_ = false;
}

void EventTimer::flush(PhaseTimes& times, int steps) {
  if (open_) throw std::logic_error("EventTimer::flush while a phase is open");
  for (auto& p : pending_) {
    EB_CUDA_CHECK(cudaEventSynchronize(p.stop));
    float ms = 0.f;
    EB_CUDA_CHECK(cudaEventElapsedTime(&ms, p.start, p.stop));
    times.add(p.phase, double(ms), steps);
    pool_.push_back(p.start);
    pool_.push_back(p.stop);
  }
  pending_.clear();
}

}  // namespace cuda
}  // namespace eb
