#pragma once
// The arithmetic of TLED on CUDA (Strbac 2015 Sec. 2.3), launched by tled_cuda.cu (the driver:
// buffers, launch order, the CUDA graph of 50 steps) and included there alone:
//   1. element kernel (one element per thread, steps 5-8): forces of nodes 0..3 stored per
//      element slot (gather) or added to nodal forces atomically (atomic variant);
//   2. node kernel (one node per thread, steps 9-10): sums the node's element slots and applies
//      the central difference (Eq. 3) with the fixed components zeroed;
//   3. boundary kernel: external forces and prescribed displacements at t_{n+1} (Eqs. 13-14)
//      from a device-side step counter, so steps can be replayed from a CUDA graph.
// The regime (precision x texture fetch x damage x assembly) is a set of template parameters: no
// run-time branch on it inside the kernels.
#include <cuda_runtime.h>

#include <cstdint>

#include "assembly/tled/hex8_tled.h"
#include "solvers/common/device_checks.cuh"
#include "solvers/common/load_curve.h"
#include "solvers/tled/tled_setup.h"

namespace eb::tled::kernels {

constexpr int kElementBlock = 128;
constexpr int kNodeBlock = 256;
constexpr int kMaxCurves = 8;

template <class T>
struct ElementArgs {
  int64_t E;
  const int32_t* conn;  // [a * E + e]
  const T* G;           // [k * E + e]
  const T* V;
  T* beta;
  T* fe;     // gather: [(d * 4 + k) * E + e]; hourglass: [(d * 8 + k) * E + e]
  const T* hg;  // hourglass: packed 8 x 8 hourglass matrix, [i * E + e]
  T* fnode;  // atomic: [3 n + d]
  TledMaterial<T> mat;
  cuda::DeviceElementChecks* checks;  // det F checks (min_det_key unused: warp_min_j keeps the minimum)
  // Running minimum of det F per warp of the grid: lane 0 of each warp owns one slot, so the
  // minimum costs five shuffles and one uncontended read-modify-write per warp and step (a
  // single global minimum would serialize every warp of a homogeneous mesh on one address).
  T* warp_min_j;
};

template <class T>
struct NodeArgs {
  int64_t N, E;
  const int32_t* slot_offset;
  const int32_t* slot_index;
  const T* fe;
  T* fnode;
  const T* a;
  const uint8_t* mask;
  T b, c;
  T ag[3];  // a_factor * gravity
};

template <class T>
struct BoundaryArgs {
  int n_forces, n_prescribed;
  const int32_t* force_node;
  const T* force_value;  // 3 per entry
  const int32_t* force_curve;
  const uint8_t* force_free;  // components not constrained
  const int32_t* presc_node;
  const T* presc_value;
  const int32_t* presc_curve;
  const uint8_t* presc_mask;
  const T* a;
  double dt;
  CurveParams curves[kMaxCurves];
};

template <class T, bool Texture>
__device__ __forceinline__ T load_u(const T* u, cudaTextureObject_t tex, int64_t i);

template <>
__device__ __forceinline__ float load_u<float, false>(const float* u, cudaTextureObject_t, int64_t i) {
  return u[i];
}
template <>
__device__ __forceinline__ double load_u<double, false>(const double* u, cudaTextureObject_t, int64_t i) {
  return u[i];
}
template <>
__device__ __forceinline__ float load_u<float, true>(const float*, cudaTextureObject_t tex, int64_t i) {
  return tex1Dfetch<float>(tex, int(i));
}
template <>
__device__ __forceinline__ double load_u<double, true>(const double*, cudaTextureObject_t tex, int64_t i) {
  // No native double textures: fetch the two 32-bit halves (as the paper does with int4).
  const int2 v = tex1Dfetch<int2>(tex, int(i));
  return __hiloint2double(v.y, v.x);
}

template <class T, bool Texture, bool Damage, Assembly Asm>
__global__ void __launch_bounds__(kElementBlock)
    tled_element_kernel(ElementArgs<T> p, const T* u, cudaTextureObject_t u_tex, const long long* step) {
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  // No early return: every lane of the warp takes part in the checks below.
  const bool active = e < p.E;
  T J = T(1);
  if (active) {
    int32_t node[8];
    T ue[8][3];
#pragma unroll
    for (int a = 0; a < 8; ++a) {
      node[a] = p.conn[a * p.E + e];
#pragma unroll
      for (int d = 0; d < 3; ++d) ue[a][d] = load_u<T, Texture>(u, u_tex, 3 * int64_t(node[a]) + d);
    }
    T G[9];
#pragma unroll
    for (int k = 0; k < 9; ++k) G[k] = p.G[k * p.E + e];
    T beta = T(0);
    if constexpr (Damage) beta = p.beta[e];
    T f[4][3];
    J = tled_element_forces<T, Damage>(ue, G, p.V[e], p.mat, &beta, f);
    if constexpr (Damage) p.beta[e] = beta;
    if constexpr (Asm == Assembly::Hourglass) {
      // The matrix entries are read as they are used (each once).
      const T* hg = p.hg + e;
      const int64_t E = p.E;
      T f8[8][3];
      tled_forces_with_hourglass(ue, f, [hg, E](int i) { return hg[i * E]; }, f8);
#pragma unroll
      for (int d = 0; d < 3; ++d)
#pragma unroll
        for (int k = 0; k < 8; ++k) p.fe[(d * 8 + k) * p.E + e] = f8[k][d];
    } else if constexpr (Asm == Assembly::Gather) {
#pragma unroll
      for (int d = 0; d < 3; ++d)
#pragma unroll
        for (int k = 0; k < 4; ++k) p.fe[(d * 4 + k) * p.E + e] = f[k][d];
    } else {
#pragma unroll
      for (int a = 0; a < 8; ++a) {
        const int k = a < 4 ? a : hex_antipode(a);
#pragma unroll
        for (int d = 0; d < 3; ++d) atomicAdd(&p.fnode[3 * int64_t(node[a]) + d], a < 4 ? f[k][d] : -f[k][d]);
      }
    }
  }
  const bool finite = isfinite(J);
  const unsigned inverted = __ballot_sync(0xffffffffu, active && finite && !(J > T(0)));
  const unsigned nonfinite = __ballot_sync(0xffffffffu, active && !finite);
  T m = active && finite ? J : T(INFINITY);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const T other = __shfl_xor_sync(0xffffffffu, m, o);
    m = other < m ? other : m;
  }
  if ((threadIdx.x & 31) == 0) {
    const int64_t warp = e >> 5;
    if (m < p.warp_min_j[warp]) p.warp_min_j[warp] = m;
    if (inverted | nonfinite) {
      const unsigned long long s = static_cast<unsigned long long>(*step);
      cuda::add_checks(p.checks, s, __popc(inverted),
                       inverted ? cuda::check_key(s, e + __ffs(inverted) - 1) : cuda::kNoKey,
                       nonfinite ? cuda::check_key(s, e + __ffs(nonfinite) - 1) : cuda::kNoKey, cuda::kNoKey);
    }
  }
}

// u_prev and u_out alias in the time loop (in-place update); they differ only when profiling.
template <class T, Assembly Asm>
__global__ void __launch_bounds__(kNodeBlock)
    tled_node_kernel(NodeArgs<T> p, const T* u, const T* u_prev, T* u_out) {
  const int64_t n = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (n >= p.N) return;
  T f[3] = {T(0), T(0), T(0)};
  if constexpr (gathers(Asm)) {
    const int32_t end = p.slot_offset[n + 1];
    const int64_t stride = slots_per_element(Asm) * p.E;
    for (int32_t s = p.slot_offset[n]; s < end; ++s) {
      const int32_t code = p.slot_index[s];
      const int64_t slot = code >> 1;
      const T sign = (code & 1) ? T(-1) : T(1);
#pragma unroll
      for (int d = 0; d < 3; ++d) f[d] += sign * p.fe[d * stride + slot];
    }
  } else {
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      f[d] = p.fnode[3 * n + d];
      p.fnode[3 * n + d] = T(0);
    }
  }
  const T an = p.a[n];
  const unsigned m = p.mask[n];
#pragma unroll
  for (int d = 0; d < 3; ++d) {
    const int64_t i = 3 * n + d;
    const T next = an * (-f[d]) + p.ag[d] + p.b * u[i] - p.c * u_prev[i];
    u_out[i] = ((m >> d) & 1u) ? T(0) : next;
  }
}

template <class T>
__global__ void tled_boundary_kernel(BoundaryArgs<T> p, T* u_next, const long long* step_in, long long* step_out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const long long step = *step_in;
  const double t = double(step + 1) * p.dt;
  if (i < p.n_forces) {
    const double fac = curve_factor(p.curves[p.force_curve[i]], t);
    const int32_t n = p.force_node[i];
    const unsigned free = p.force_free[i];
#pragma unroll
    for (int d = 0; d < 3; ++d)
      if ((free >> d) & 1u) atomicAdd(&u_next[3 * int64_t(n) + d], p.a[n] * T(double(p.force_value[3 * i + d]) * fac));
  } else if (i < p.n_forces + p.n_prescribed) {
    const int j = i - p.n_forces;
    const double fac = curve_factor(p.curves[p.presc_curve[j]], t);
    const int32_t n = p.presc_node[j];
    const unsigned m = p.presc_mask[j];
#pragma unroll
    for (int d = 0; d < 3; ++d)
      if ((m >> d) & 1u) u_next[3 * int64_t(n) + d] = T(double(p.presc_value[3 * j + d]) * fac);
  }
  if (i == 0) *step_out = step + 1;  // the other counter: no thread of this step reads it
}

}  // namespace eb::tled::kernels
