#include <algorithm>
#include <atomic>
#include <cstdio>
#include <string>
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

namespace {
template <class T>
double triad_gbps(int device) {
  EB_CUDA_CHECK(cudaSetDevice(device));
  const size_t n = (size_t(256) << 20) / sizeof(T);
  cuda::DeviceBuffer<T> a(n, "STREAM triad a"), b(n, "STREAM triad b"), c(n, "STREAM triad c");
  // Its own blocking stream: ordered with DeviceBuffer's legacy-stream memsets, and timed by
  // events on the stream that runs the kernel.
  cudaStream_t stream = nullptr;
  EB_CUDA_CHECK(cudaStreamCreate(&stream));
  cudaEvent_t ev[2] = {nullptr, nullptr};
  std::vector<float> ms;
  try {
    b.fill_zero();
    c.fill_zero();
    for (auto& e : ev) EB_CUDA_CHECK(cudaEventCreate(&e));
    int sms = 0;
    EB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    for (int r = 0; r < 12; ++r) {
      EB_CUDA_CHECK(cudaEventRecord(ev[0], stream));
      cuda::stream_triad_kernel<T><<<unsigned(sms) * 8, 256, 0, stream>>>(a.data(), b.data(), c.data(), T(3), n);
      EB_CUDA_CHECK_LAUNCH();
      EB_CUDA_CHECK(cudaEventRecord(ev[1], stream));
      EB_CUDA_CHECK(cudaEventSynchronize(ev[1]));
      float t = 0;
      EB_CUDA_CHECK(cudaEventElapsedTime(&t, ev[0], ev[1]));
      if (r >= 2) ms.push_back(t);  // two warm-up passes
    }
  } catch (...) {
    for (auto e : ev)
      if (e) cudaEventDestroy(e);
    cudaStreamDestroy(stream);
    throw;
  }
  for (auto e : ev) cudaEventDestroy(e);
  cudaStreamDestroy(stream);
  std::sort(ms.begin(), ms.end());
  const double median = 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
  return 3.0 * double(n * sizeof(T)) / (median * 1e-3) / 1e9;
}
}  // namespace

double cuda_stream_triad_gbps(int device, int element_bytes) {
  const GpuInfo g = cuda_device_info(device);
  if (!g.usable) throw RuntimeFailure("STREAM triad on a GPU: " + g.reason);
  if (element_bytes == 4) return triad_gbps<float>(device);
  if (element_bytes == 8) return triad_gbps<double>(device);
  throw std::invalid_argument("cuda_stream_triad_gbps: element_bytes must be 4 or 8");
}

namespace {
std::string gigabytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g GB", bytes / 1e9);
  return buf;
}
}  // namespace

void require_device_memory(double bytes, const std::string& what, int device, std::size_t limit_bytes) {
  const GpuInfo g = cuda_device_info(device);
  if (!g.usable) throw RuntimeFailure(what + ": " + g.reason);
  // Free memory of that device (its context is made here if it was not yet), the current device
  // of the caller left as it was.
  int current = 0;
  EB_CUDA_CHECK(cudaGetDevice(&current));
  EB_CUDA_CHECK(cudaSetDevice(device));
  std::size_t free_b = 0, total_b = 0;
  const cudaError_t err = cudaMemGetInfo(&free_b, &total_b);
  cudaSetDevice(current);
  if (err != cudaSuccess) cuda::throw_cuda_error(err, "cudaMemGetInfo", __FILE__, __LINE__);
  const bool user_limit = limit_bytes != 0 && limit_bytes < free_b;
  const double limit = double(user_limit ? limit_bytes : free_b);
  if (bytes <= limit) return;
  const std::string device_name = "device " + std::to_string(device) + " (" + g.name + ")";
  std::string msg = what + " needs an estimated " + gigabytes(bytes) + " of GPU memory; the limit is " +
                    gigabytes(limit);
  if (user_limit)
    msg += " (--gpu-memory-limit; " + device_name + " has " + gigabytes(double(free_b)) + " free)";
  else
    msg += " (free on " + device_name + ", of " + gigabytes(double(total_b)) + ")";
  msg += "; use a smaller mesh or fp32";
  if (user_limit) msg += ", or raise --gpu-memory-limit";
  throw RuntimeFailure(msg);
}

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

cudaGraphExec_t capture_graph(cudaStream_t stream, const std::function<void()>& enqueue,
                              const cudaAccessPolicyWindow* window) {
  EB_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  cudaGraph_t graph = nullptr;
  try {
    enqueue();
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  EB_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaError_t err = cudaSuccess;
  if (window) {
    size_t count = 0;
    err = cudaGraphGetNodes(graph, nullptr, &count);
    std::vector<cudaGraphNode_t> nodes(count);
    if (err == cudaSuccess && count) err = cudaGraphGetNodes(graph, nodes.data(), &count);
    cudaKernelNodeAttrValue value{};
    value.accessPolicyWindow = *window;
    for (size_t i = 0; i < count && err == cudaSuccess; ++i) {
      cudaGraphNodeType type{};
      err = cudaGraphNodeGetType(nodes[i], &type);
      if (err == cudaSuccess && type == cudaGraphNodeTypeKernel)
        err = cudaGraphKernelNodeSetAttribute(nodes[i], cudaKernelNodeAttributeAccessPolicyWindow, &value);
    }
  }
  cudaGraphExec_t exec = nullptr;
  if (err == cudaSuccess) err = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  EB_CUDA_CHECK(err);
  return exec;
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
