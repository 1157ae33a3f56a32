#pragma once
// Element checks accumulated on the device over a batch of steps (a whole CUDA graph of them),
// read back by validity(): the device twin of ValidityCounts::add. Keys are step << 32 | element,
// so that atomicMin keeps the earliest step and, within it, the lowest element; det F is kept as
// an order-preserving 64-bit key, so that atomicMin also gives the smallest det F.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "solvers/common/simulation.h"

namespace eb::cuda {

struct DeviceElementChecks {
  unsigned long long inverted = 0;            // element-steps at or below the threshold
  unsigned long long first_inverted = ~0ull;  // min key of an inverted element (~0: none)
  unsigned long long first_nonfinite = ~0ull;
  unsigned long long nonfinite_steps = 0;
  unsigned long long last_nonfinite_step = 0;  // step + 1 of the last step counted there
  unsigned long long min_det_key = ~0ull;     // det_key of the smallest finite det F (~0: none)
};

constexpr unsigned long long kNoKey = ~0ull;

__host__ __device__ inline unsigned long long check_key(unsigned long long step, int64_t element) {
  return step << 32 | static_cast<unsigned long long>(element);
}

// Orders doubles as unsigned integers (negative values reversed below the positive ones).
__host__ __device__ inline unsigned long long det_key(double x) {
#if defined(__CUDA_ARCH__)
  const long long b = __double_as_longlong(x);
#else
  long long b;
  std::memcpy(&b, &x, sizeof b);
#endif
  return b >= 0 ? static_cast<unsigned long long>(b) ^ 0x8000000000000000ull : ~static_cast<unsigned long long>(b);
}
inline double det_from_key(unsigned long long k) {
  const unsigned long long b = (k & 0x8000000000000000ull) ? k ^ 0x8000000000000000ull : ~k;
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

#if defined(__CUDACC__)
// One thread per block (or warp) adds what its elements found in the state of `step`: `inverted`
// elements, the smallest keys of an inverted and of a non-finite element, and the smallest det
// key (kNoKey where there is none).
__device__ inline void add_checks(DeviceElementChecks* c, unsigned long long step, unsigned long long inverted,
                                  unsigned long long first_inverted, unsigned long long first_nonfinite,
                                  unsigned long long min_det) {
  if (inverted) {
    atomicAdd(&c->inverted, inverted);
    atomicMin(&c->first_inverted, first_inverted);
  }
  if (first_nonfinite != kNoKey) {
    atomicMin(&c->first_nonfinite, first_nonfinite);
    // One count per step, however many blocks saw it.
    if (atomicMax(&c->last_nonfinite_step, step + 1) < step + 1) atomicAdd(&c->nonfinite_steps, 1ull);
  }
  if (min_det != kNoKey) atomicMin(&c->min_det_key, min_det);
}
#endif

// The device's counts written into `v` (replacing its element-check fields: the device counts
// every step since its checks were last reset).
inline void copy_checks(const DeviceElementChecks& c, ValidityCounts& v) {
  v.inverted_element_steps = int64_t(c.inverted);
  if (c.first_inverted != kNoKey) {
    v.first_inverted_step = int64_t(c.first_inverted >> 32);
    v.first_inverted_element = int64_t(c.first_inverted & 0xffffffffull);
  }
  if (c.min_det_key != kNoKey) v.min_det_f = det_from_key(c.min_det_key);
  v.nonfinite_steps = int64_t(c.nonfinite_steps);
  if (c.first_nonfinite != kNoKey) {
    v.first_nonfinite_step = int64_t(c.first_nonfinite >> 32);
    v.first_nonfinite_element = int64_t(c.first_nonfinite & 0xffffffffull);
  }
}

}  // namespace eb::cuda
