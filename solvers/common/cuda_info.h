#pragma once
// CUDA device discovery that plain C++ code can include. In a build without CUDA every query
// reports "no device" with the reason, so callers need no #ifdefs.
#include <cstddef>
#include <string>

namespace eb {

struct GpuInfo {
  bool usable = false;
  std::string reason;  // why not usable
  std::string name;
  int compute_major = 0, compute_minor = 0;
  std::size_t total_memory = 0;
  int multiprocessors = 0;
  std::size_t l2_bytes = 0;
  int driver_version = 0;   // e.g. 13000
  int runtime_version = 0;
};

bool cuda_compiled();
int cuda_device_count();  // 0 when no device, no driver, or no CUDA build
GpuInfo cuda_device_info(int device = 0);
// Bytes currently / at most held in DeviceBuffer allocations in this process. The peak is
// process-wide until reset: the runner resets it when a run starts, so that each run reports
// its own peak rather than the largest of every run before it.
std::size_t cuda_tracked_bytes();
std::size_t cuda_peak_tracked_bytes();
void cuda_reset_peak_tracked_bytes();  // peak := bytes held now

// Refusing work that cannot fit in GPU memory before allocating it (issue 12; the host's
// counterpart is mesh::require_host_memory). Throws RuntimeFailure (exit 1) naming `what`, the
// estimate (`bytes`: what the backend is about to allocate) and the limit in GB when `bytes`
// exceed the free memory of `device` (cudaMemGetInfo) or `limit_bytes` (a user limit,
// RunOptions::gpu_memory_limit; 0: none), with a hint (a smaller mesh, fp32, the limit).
// Without a usable device (or in a build without CUDA) it throws RuntimeFailure saying why.
void require_device_memory(double bytes, const std::string& what, int device, std::size_t limit_bytes);

// STREAM triad a = b + s c on `device` in fp32 (element_bytes 4) or fp64 (8): GB/s as the median
// of 10 event-timed passes over three 256 MiB arrays (well beyond any L2), bytes = 3 x array
// (STREAM's convention). Experiment drivers measure it once per session as the device's ceiling.
// Throws RuntimeFailure without a usable device.
double cuda_stream_triad_gbps(int device, int element_bytes);

}  // namespace eb
