#pragma once
// CUDA helpers for the method backends: checked calls, owned device buffers with memory
// accounting and a clear out-of-memory error, and event-based phase timing.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "meshes/errors.h"
#include "solvers/common/timers.h"

namespace eb::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* what, const char* file, int line);

#define EB_CUDA_CHECK(call)                                                 \
  do {                                                                      \
    cudaError_t eb_err_ = (call);                                           \
    if (eb_err_ != cudaSuccess) ::eb::cuda::throw_cuda_error(eb_err_, #call, __FILE__, __LINE__); \
  } while (0)
// After a kernel launch: launch-configuration errors surface here, execution errors at the
// next synchronizing call.
#define EB_CUDA_CHECK_LAUNCH() EB_CUDA_CHECK(cudaGetLastError())

// Blocks of `per_block` threads that cover `n` work items (a grid's size; 0 for no work).
inline unsigned blocks_for(int64_t n, int per_block) { return unsigned((n + per_block - 1) / per_block); }

void* device_alloc(std::size_t bytes, const char* what);
void device_free(void* p, std::size_t bytes) noexcept;

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t n, const char* what) { resize(n, what); }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void resize(std::size_t n, const char* what) {
    reset();
    if (n == 0) return;
    ptr_ = static_cast<T*>(device_alloc(n * sizeof(T), what));
    n_ = n;
  }
  void reset() noexcept {
    if (ptr_) device_free(ptr_, n_ * sizeof(T));
    ptr_ = nullptr;
    n_ = 0;
  }
  void upload(const T* host, std::size_t n) {
    if (n > n_) throw std::logic_error("DeviceBuffer::upload past the end");
    EB_CUDA_CHECK(cudaMemcpy(ptr_, host, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  void upload(const std::vector<T>& host) {
    if (host.size() != n_) resize(host.size(), "upload");
    upload(host.data(), host.size());
  }
  void download(T* host, std::size_t n) const {
    if (n > n_) throw std::logic_error("DeviceBuffer::download past the end");
    EB_CUDA_CHECK(cudaMemcpy(host, ptr_, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
  std::vector<T> to_host() const {
    std::vector<T> h(n_);
    download(h.data(), n_);
    return h;
  }
  void fill_zero() {
    if (n_) EB_CUDA_CHECK(cudaMemset(ptr_, 0, n_ * sizeof(T)));
  }
  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t n_ = 0;
};

#if defined(__CUDACC__)  // host-only sources include this header for DeviceBuffer
// STREAM triad a = b + s c (grid-stride), the bandwidth ceiling kernels are set against
// (cuda_stream_triad_gbps, bench_ceilings).
template <class T>
__global__ void stream_triad_kernel(T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c, T s,
                                    std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    a[i] = b[i] + s * c[i];
}
#endif

// Captures what `enqueue` puts on `stream` (thread-local capture mode) and instantiates it. The
// capture is ended on every path, so a throwing `enqueue` leaves the stream usable. `window`, when
// given, becomes every captured kernel's access policy window (set on the nodes explicitly, not
// left to whatever a capture copies from the stream's attributes).
cudaGraphExec_t capture_graph(cudaStream_t stream, const std::function<void()>& enqueue,
                              const cudaAccessPolicyWindow* window = nullptr);

// Records event pairs around named phases on a stream; flush() waits for them and adds the
// elapsed times to a PhaseTimes. Events are reused across flushes.
class EventTimer {
 public:
  EventTimer() = default;
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  void begin(const char* phase, cudaStream_t stream);
  void end(cudaStream_t stream);
  // Synchronizes on the recorded events; each recorded phase counts for `steps` steps.
  void flush(PhaseTimes& times, int steps);

 private:
  struct Pending {
    const char* phase;
    cudaEvent_t start, stop;
  };
  cudaEvent_t take();
  std::vector<Pending> pending_;
  std::vector<cudaEvent_t> pool_;
  bool open_ = false;
};

}  // namespace eb::cuda
