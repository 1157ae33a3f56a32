// Built only when the CUDA backends are not compiled in.
#include "solvers/common/cuda_info.h"

#include "meshes/errors.h"

namespace eb {
bool cuda_compiled() { return false; }
int cuda_device_count() { return 0; }
GpuInfo cuda_device_info(int) {
  GpuInfo g;
  g.reason = "this build has no CUDA backends (configured without nvcc)";
  return g;
}
std::size_t cuda_tracked_bytes() { return 0; }
std::size_t cuda_peak_tracked_bytes() { return 0; }
void cuda_reset_peak_tracked_bytes() {}
void require_device_memory(double, const std::string& what, int device, std::size_t) {
  throw RuntimeFailure(what + ": " + cuda_device_info(device).reason);
}
double cuda_stream_triad_gbps(int, int) { throw RuntimeFailure("STREAM triad on a GPU: " + cuda_device_info(0).reason); }
}  // namespace eb
