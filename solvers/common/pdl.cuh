#pragma once
// Programmatic dependent launch (sm_90), shared by the CUDA backends (hexmg's step kernels, the
// linalg CG's single-reduction kernels and fused BCSR product). A kernel launched with the
// programmatic-stream-serialization attribute may start before the kernel it follows on the stream
// has finished: pdl_wait() blocks until that kernel has completed and its writes are visible (at
// once for a kernel launched normally), and pdl_launch_dependents() lets the kernel after this one
// start early in turn (without it, at this kernel's end). CUDA sources only.
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "solvers/common/cuda_utils.cuh"

namespace eb::cuda {

__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// kernel<<<grid, block, smem, stream>>>(args...), as a programmatic dependent of the kernel before
// it on the stream where `programmatic` (capturable: a CUDA graph keeps the programmatic edge).
template <class... KArgs, class... Args>
void launch_kernel(bool programmatic, void (*kernel)(KArgs...), dim3 grid, dim3 block, std::size_t smem,
                   cudaStream_t stream, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = programmatic ? 1 : 0;
  EB_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

}  // namespace eb::cuda
