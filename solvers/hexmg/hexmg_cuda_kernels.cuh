#pragma once
// The kernels of hexmg's CUDA backend (Dick et al. 2011, Sec. 4): the arithmetic, one kernel per
// step of the time step; the host driver (HexmgCuda in hexmg_cuda.cu: buffers, launch
// configuration, launch order, CUDA graphs) launches them. One thread per element for the
// rotations, one thread per vertex for the assembly, 9 threads per vertex for the coarse-grid
// assembly, 13 warps per 32 vertices with a shared-memory reduction for Gauss-Seidel,
// gather-only transfer operators and the coarsest-level CG inside one thread block. The formulas
// are the EB_HD functions of assembly/hexmg/hexmg_kernels.h that the OpenMP backend runs; the
// coarsest CG's iteration is that of solvers/linalg/cg_algorithm.h.
// Included by hexmg_cuda.cu alone: it defines the __constant__ element stiffness.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "assembly/hexmg/hex_element.h"
#include "assembly/hexmg/hexmg_kernels.h"
#include "solvers/common/pdl.cuh"
#include "solvers/hexmg/hexmg_simulation.h"
#include "solvers/linalg/cg_algorithm.h"

namespace eb::hexmg::device {

__constant__ float c_K_f[24 * 24];
__constant__ double c_K_d[24 * 24];

template <class T>
struct ConstK;
template <>
struct ConstK<float> {
  __device__ __forceinline__ float operator()(int i, int j) const { return c_K_f[i * 24 + j]; }
};
template <>
struct ConstK<double> {
  __device__ __forceinline__ double operator()(int i, int j) const { return c_K_d[i * 24 + j]; }
};

constexpr int kThreadsPerBlock = 128;   // threads per block of the one-thread-per-item kernels
constexpr int kGsWarps = 13;   // Gauss-Seidel: 13 warps x 32 lanes per 32 vertices (2 blocks each)

// Programmatic dependent launch (sm_90; hexmg.programmatic_dependent_launch). Launched with the
// programmatic-serialization attribute, a kernel's blocks may be scheduled while its predecessor
// in the stream still runs, once every block of the predecessor has called pdl_launch_dependents
// (or exited). pdl_wait returns when the predecessor has completed and its writes are visible.
//
// The rule every kernel here keeps:
//  1. pdl_wait comes before pdl_launch_dependents (pdl_enter), and no block returns before it.
//     So a kernel is scheduled only after its predecessor has passed its own wait: when a kernel
//     starts, every kernel before its immediate predecessor has completed.
//  2. Before pdl_wait, a kernel reads only data that its immediate predecessor does not write,
//     and writes no global memory that the predecessor reads or writes. Which kernel that is
//     depends on the launch sequence (one level: assembly -> coarsest CG -> coarsest CG ->
//     update; several: Galerkin -> Gauss-Seidel, restriction -> coarsest CG; tolerance mode and
//     run_phase put other kernels or copies in between), so the host decides per launch
//     (HexmgCuda::may_preload, from what the kernel launched last writes) and passes `preload`;
//     a kernel without it does nothing before pdl_enter.
// The Gauss-Seidel kernels load their neighbour indices and matrix blocks before the wait, the
// coarsest CG copies its matrix to shared memory and to its global overflow scratch there. The
// coarsest CG used to do so unconditionally, which raced with the assembly on a one-level
// hierarchy (issue 9: 8 runs, 8 different results). Without the attribute both are no-ops.
using cuda::pdl_launch_dependents;  // solvers/common/pdl.cuh
using cuda::pdl_wait;
__device__ __forceinline__ void pdl_enter() {
  pdl_wait();
  pdl_launch_dependents();
}

// Item i of a launch over a level's vertices: the vertex itself (colour-subset order) or
// order[i] (lattice order), -1 past the end.
__device__ __forceinline__ int64_t vertex_of(int64_t i, const int32_t* order, int64_t count) {
  if (i >= count) return -1;
  return order ? int64_t(order[i]) : i;
}

// Results of a pass over the elements' det F (the rotations of the steps of a batch, or the
// check of one state for validity()): element-steps at or below kInvertedVolumeRatio; the first
// of them and the first non-finite F as (batch step << 32 | element), so that atomicMin keeps the
// earliest step and within it the smallest element (~0: none); the smallest finite det F as
// det_key (order-preserving integer image of a double).
struct ElementFlags {
  unsigned long long kept;
  unsigned long long first_kept;
  unsigned long long first_bad;
  long long min_det;
};

// Device-side status of a batch of steps.
struct Flags {
  ElementFlags elem;
  unsigned long long coarse_iterations;
  unsigned long long coarse_solves;
  double norm2;  // residual norm accumulator
};

__host__ __device__ inline long long det_key(double d) {
#if defined(__CUDA_ARCH__)
  const long long i = __double_as_longlong(d);
#else
  long long i;
  std::memcpy(&i, &d, sizeof(i));
#endif
  // Negative doubles order reversed as integers: flip their magnitude bits (an involution).
  return i >= 0 ? i : i ^ 0x7fffffffffffffffLL;
}
inline double det_of_key(long long k) {
  const long long i = k >= 0 ? k : k ^ 0x7fffffffffffffffLL;
  double d;
  std::memcpy(&d, &i, sizeof(d));
  return d;
}

// One element's det F into the flags; every thread of the block calls it (block-wide minimum).
template <class T>
__device__ void record_element(ElementFlags* fl, bool valid, int64_t e, int status, T det, unsigned batch_step) {
  const unsigned long long key = (static_cast<unsigned long long>(batch_step) << 32) | static_cast<unsigned>(e);
  if (valid && status == kRotationKeptPrevious) {
    atomicAdd(&fl->kept, 1ull);
    atomicMin(&fl->first_kept, key);
  } else if (valid && status == kRotationNonFinite) {
    atomicMin(&fl->first_bad, key);
  }
  __shared__ double warp_min[32];
  double d = valid && isfinite(double(det)) ? double(det) : INFINITY;
  for (int o = 16; o > 0; o >>= 1) d = fmin(d, __shfl_xor_sync(0xffffffffu, d, o));
  if (threadIdx.x % 32 == 0) warp_min[threadIdx.x / 32] = d;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < int(blockDim.x + 31) / 32; ++w) d = fmin(d, warp_min[w]);
    const long long k = det_key(d);
    // One address for the whole grid: most blocks find a smaller value there (read from L2,
    // where the atomics are) and skip the atomic.
    if (k < __ldcg(&fl->min_det)) atomicMin(&fl->min_det, k);
  }
}

template <class T>
__global__ void k_rotations(FineView<T> f, const int* step, Flags* flags) {
  pdl_enter();
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool valid = e < f.n_elems;
  int st = kRotationOk;
  T det = T(1);
  if (valid) {
    det = element_volume_ratio(e, f);
    st = element_rotation(e, f);
  }
  record_element(&flags->elem, valid, e, st, det, unsigned(*step));
}

// det F of the current state alone (HexmgSimulation::validity(): the latest state).
template <class T>
__global__ void k_volumes(FineView<T> f, ElementFlags* out) {
  pdl_enter();
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const bool valid = e < f.n_elems;
  const T det = valid ? element_volume_ratio(e, f) : T(1);
  record_element(out, valid, e, volume_status(det), det, 0u);
}

template <class T>
__global__ void k_assembly(FineView<T> f, LevelView<T> L0, const T* factors, const int* step) {
  pdl_enter();
  const int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >= L0.n) return;
  f.factor = factors + int64_t(*step) * (f.ncurves > 0 ? f.ncurves : 1);
  assemble_vertex(x, f, L0, ConstK<T>());
}

// 9 threads per coarse vertex: 9 warps per 32 vertices, warp w owns component w (Sec. 4.2.3).
template <class T>
__global__ void __launch_bounds__(288) k_galerkin(LevelView<T> F, LevelView<T> C, const int32_t* order, int32_t count) {
  pdl_enter();
  const int c = threadIdx.x / 32;
  const int64_t x = vertex_of(int64_t(blockIdx.x) * 32 + (threadIdx.x % 32), order, count);
  if (x < 0 || C.nbr(x, kCentre) < 0) return;
  galerkin_components<1>(x, c, F, C);
}

// Gauss-Seidel on one colour subset [begin, begin + count): 13 warps per 32 vertices, warp w
// sums the off-diagonal stencil entries 2w and 2w+1, warp 0 reduces and solves (Sec. 4.2.4).
// Loads are issued independently of one another wherever the data allow: the two neighbour
// indices, both 3x3 blocks (stored for every offset and padding slot, so loading them before the
// neighbour test is safe) and warp 0's centre block and right-hand side all go out together, and
// only the neighbours' u waits for the indices. The former loop (offdiag_partial with runtime
// bounds) made nbr -> A,u -> nbr -> A,u -> barrier -> centre,b a chain of ~5 memory latencies per
// launch; the coarse levels' launches are latency bound (PERF_NOTES.md). Same sums in the same
// order as offdiag_partial / gauss_seidel_finish.
template <class T>
__global__ void __launch_bounds__(kGsWarps * 32) k_gauss_seidel(LevelView<T> L, int begin, bool preload) {
  if (!preload) pdl_enter();
  __shared__ T part[kGsWarps][3][32];
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t x = begin + int64_t(blockIdx.x) * 32 + lane;
  // off-diagonal entries k = 2w, 2w+1 of 26 map to stencil offsets skipping the centre
  const int k0 = 2 * w, k1 = 2 * w + 1;
  const int l0 = k0 < kCentre ? k0 : k0 + 1, l1 = k1 < kCentre ? k1 : k1 + 1;
  const bool valid = L.nbr(x, kCentre) >= 0;
  const int32_t y0 = L.nbr(x, l0), y1 = L.nbr(x, l1);
  T a0[9], a1[9];
#pragma unroll
  for (int i = 0; i < 9; ++i) {
    a0[i] = L.A(x, l0 * kBlock + i);
    a1[i] = L.A(x, l1 * kBlock + i);
  }
  T D[9], bx[3];
  if (w == 0) {
#pragma unroll
    for (int i = 0; i < 9; ++i) D[i] = L.A(x, kCentre * kBlock + i);
  }
  // With `preload`, the preceding kernel does not write the indices and matrix blocks above (see
  // pdl_wait); b (restriction) and u (the previous colour) it may write.
  if (preload) pdl_enter();
  if (w == 0) {
#pragma unroll
    for (int d = 0; d < 3; ++d) bx[d] = L.b(x, d);
  }
  T s[3] = {0, 0, 0};
  if (valid && y0 >= 0) {
    const T u0 = L.u(y0, 0), u1 = L.u(y0, 1), u2 = L.u(y0, 2);
    s[0] += a0[0] * u0 + a0[1] * u1 + a0[2] * u2;
    s[1] += a0[3] * u0 + a0[4] * u1 + a0[5] * u2;
    s[2] += a0[6] * u0 + a0[7] * u1 + a0[8] * u2;
  }
  if (valid && y1 >= 0) {
    const T u0 = L.u(y1, 0), u1 = L.u(y1, 1), u2 = L.u(y1, 2);
    s[0] += a1[0] * u0 + a1[1] * u1 + a1[2] * u2;
    s[1] += a1[3] * u0 + a1[4] * u1 + a1[5] * u2;
    s[2] += a1[6] * u0 + a1[7] * u1 + a1[8] * u2;
  }
  for (int d = 0; d < 3; ++d) part[w][d][lane] = s[d];
  __syncthreads();
  if (w == 0 && valid) {
    T sum[3] = {0, 0, 0};
#pragma unroll
    for (int i = 0; i < kGsWarps; ++i)
      for (int d = 0; d < 3; ++d) sum[d] += part[i][d][lane];
    T r[3], ux[3];
    for (int d = 0; d < 3; ++d) r[d] = bx[d] - sum[d];
    solve3(D, r, ux);
    for (int d = 0; d < 3; ++d) L.u(x, d) = ux[d];
  }
}

// Gauss-Seidel, one thread per vertex of the colour subset (the measured alternative, "gs1").
template <class T>
__global__ void k_gauss_seidel_1t(LevelView<T> L, int begin, int count) {
  pdl_enter();
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) gauss_seidel_vertex(begin + i, L);
}

template <class T>
__device__ void block_add_norm(double v, double* out) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  __shared__ double warp_sums[32];
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32;
  if (lane == 0) warp_sums[w] = v;
  __syncthreads();
  if (w == 0) {
    v = lane < int((blockDim.x + 31) / 32) ? warp_sums[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (lane == 0) atomicAdd(out, v);
  }
}

template <class T>
__global__ void k_residual(LevelView<T> L, double* norm2) {
  pdl_enter();
  const int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  double n2 = 0;
  if (x < L.n) n2 = double(residual_vertex(x, L));
  if (norm2) block_add_norm<T>(n2, norm2);
}

template <class T>
__global__ void k_restrict(LevelView<T> F, LevelView<T> C, const int32_t* order, int32_t count) {
  pdl_enter();
  const int64_t x = vertex_of(int64_t(blockIdx.x) * blockDim.x + threadIdx.x, order, count);
  if (x >= 0) restrict_vertex(x, F, C);
}

template <class T>
__global__ void k_interpolate(LevelView<T> F, LevelView<T> C) {
  pdl_enter();
  const int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x < F.n) interpolate_correct_vertex(x, F, C);
}

template <class T>
__global__ void k_update(FineView<T> f, LevelView<T> L0, int* step) {
  pdl_enter();
  const int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x == 0) *step += 1;  // every kernel of this step that reads it has completed
  if (x < L0.n) newmark_update_vertex(x, f, L0);
}

// Coarsest-level layout of the shared-memory CG below: thread t owns vertex perm[t] (vertices
// sorted by their number of off-diagonal neighbours, so that the warps' slot counts are tight and
// the padding slots form whole idle warps); warp w's off-diagonal blocks sit in slots
// [warp_base[w], warp_base[w+1]), slot k of lane j holding the k-th present neighbour (ascending
// stencil offset, the CPU's summation order) of that lane's vertex, or none (src -1).
// When all slots do not fit in shared memory (fp64 at 33K and 269K bunny: ~20 neighbours each), the
// first `cap` slots of every warp go to shared memory and the rest to a global scratch copy in
// the same lane-consecutive layout (coalesced re-reads from L1/L2).
struct CoarseLayout {
  const int32_t* perm = nullptr;       // n: vertex of thread t
  const int32_t* warp_base = nullptr;  // 3 (warps + 1): all slots, shared slots, global slots
  const int32_t* slot_offset = nullptr;      // 32 per slot (all-slots layout): stencil offset l, -1 if none
  void* overflow_A = nullptr;                 // global slots * 32 * 9 coefficients (type T)
  int32_t* overflow_nbr = nullptr;              // global slots * 32 neighbour vertices
  int32_t shared_slots = 0, cap = 0, warps = 0;
};

// < 512 vertices plus at most 31 padding slots per colour: <= 736 slots; 768 threads leave 85
// registers per thread (1024 would cap them at 64 and spill the per-vertex state).
constexpr int kCoarseSmemMaxThreads = 768;

template <class T>
__device__ __forceinline__ double2 block_sum2(double a, double b, double2* buf) {
  for (int o = 16; o > 0; o >>= 1) {
    a += __shfl_down_sync(0xffffffffu, a, o);
    b += __shfl_down_sync(0xffffffffu, b, o);
  }
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32, nw = blockDim.x / 32;
  if (lane == 0) buf[w] = make_double2(a, b);
  __syncthreads();
  // Second stage in every warp (nw <= 24 partials, one per lane) instead of a serial loop over
  // them: every warp runs the same shuffle tree on the same data, so all threads get the same sums.
  double2 t = lane < nw ? buf[lane] : make_double2(0, 0);
  for (int o = 16; o > 0; o >>= 1) {
    t.x += __shfl_down_sync(0xffffffffu, t.x, o);
    t.y += __shfl_down_sync(0xffffffffu, t.y, o);
  }
  t.x = __shfl_sync(0xffffffffu, t.x, 0);
  t.y = __shfl_sync(0xffffffffu, t.y, 0);
  return t;
}

// The coarsest level's Jacobi-PCG (Sec. 4.2.7) in one thread block: the iteration of
// solvers/linalg/cg_algorithm.h, whose scalar steps (cg_start, cg_set_alpha, cg_finish_update)
// and per-entry updates (cg_start_entry, cg_update_entry, cg_direction_entry) every thread runs
// on its own vertex, with the block's sums in place of the host engine's; the CPU backend solves
// the same level with linalg::CgSolver on those steps (hexmg_cpu.cpp, coarse_cg). One block,
// because the coarsest level is small (< 512 vertices) and the solve is a chain of ~100 short
// iterations whose cost is latency: blockDim.x == n (one vertex per thread, n <= 768 padded
// slots); the vertex's r, u, centre block and Jacobi inverse live in registers; p is in shared
// memory; the off-diagonal blocks are copied once per solve into shared memory in the warp-slot
// layout of CoarseLayout (lane-consecutive, so the reads are free of bank conflicts); two fused
// (double2) reductions and three barriers per iteration.
// The solve is for the correction from the current u: it stops at |r_k| <= tol |r_0|, |r_0| in
// the place of CgSolver's |b|. The two coincide where the CPU backend solves in place (u = 0 and
// b = 0 on padding; hexmg_cpu.cpp, solve_level says when), and otherwise the CPU solves for the
// correction with the same rule.
template <class T>
__global__ void __launch_bounds__(kCoarseSmemMaxThreads) k_coarse_cg(LevelView<T> L, CoarseLayout E, T rel_tol, int max_it, Flags* flags,
                                                               bool preload) {
  if (!preload) pdl_enter();
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ double2 red[2][32];
  const int n = L.n;
  const int t = threadIdx.x, lane = t % 32, w = t / 32;
  T* sA = reinterpret_cast<T*>(smem_raw);        // slots * 32 * 9
  T* sp = sA + size_t(E.shared_slots) * 32 * 9;  // 3 * n, vertex-indexed
  // Neighbour vertices as int16 (n <= 768): 2 bytes less per entry lets the 269K fp32 matrix fit.
  int16_t* sy = reinterpret_cast<int16_t*>(sp + 3 * size_t(n));  // shared slots * 32
  T* overflow_A = static_cast<T*>(E.overflow_A);
  const int x = E.perm[t];
  const int base = E.warp_base[w], width = E.warp_base[w + 1] - base;
  const int sbase = E.warp_base[E.warps + 1 + w], gbase = E.warp_base[2 * (E.warps + 1) + w];
  const int wsh = min(width, E.cap);  // this warp's slots in shared memory
  const bool pad = L.nbr(x, kCentre) < 0;
  // Copy this vertex's present off-diagonal blocks (independent loads, all in flight together).
  // Each thread later reads only its own lane's entries of the global overflow: no cross-thread
  // dependency there.
  for (int k = 0; k < width; ++k) {
    const int l = E.slot_offset[(base + k) * 32 + lane];
    const bool sh = k < wsh;
    const size_t sl = sh ? size_t(sbase + k) : size_t(gbase + k - wsh);
    const int32_t y = l >= 0 ? L.nbr(x, l) : -1;
    if (sh)
      sy[sl * 32 + lane] = int16_t(y);
    else
      E.overflow_nbr[sl * 32 + lane] = y;
    if (l >= 0) {
      T* dst = (sh ? sA : overflow_A) + sl * 288 + lane;
#pragma unroll
      for (int i = 0; i < 9; ++i) dst[i * 32] = L.A(x, l * kBlock + i);
    }
  }
  T D[9], dinv[3], u[3], r[3], b[3];
#pragma unroll
  for (int i = 0; i < 9; ++i) D[i] = pad ? T(0) : L.A(x, kCentre * kBlock + i);
  // With `preload`, the preceding kernel (the restriction on a hierarchy of several levels) does
  // not write the matrix copied above, nor touch the overflow scratch; b and u it writes. On one
  // level the predecessor is the assembly or the previous coarsest CG: no preload then.
  if (preload) pdl_enter();
#pragma unroll
  for (int d = 0; d < 3; ++d) {
    // CgSolver's Jacobi preconditioner; a padding slot has the diagonal 1 there
    // (hexmg_cpu.cpp, LevelOperator::diagonal) and no equation here (r = 0).
    dinv[d] = linalg::jacobi_inverse_entry(pad ? T(1) : D[4 * d]);
    u[d] = L.u(x, d);
    b[d] = pad ? T(0) : L.b(x, d);
    sp[d * n + x] = u[d];
  }
  __syncthreads();  // sA, sy and u (in sp) complete
  // (A v)_x exactly as stencil_apply_vertex: off-diagonal sum in stencil order, then the centre.
  auto apply = [&](T* q) {
    T s0 = 0, s1 = 0, s2 = 0;
#pragma unroll 4
    for (int k = 0; k < wsh; ++k) {
      const int y = sy[(sbase + k) * 32 + lane];
      if (y < 0) continue;
      const T v0 = sp[y], v1 = sp[n + y], v2 = sp[2 * n + y];
      const T* a = sA + size_t(sbase + k) * 288 + lane;
      s0 += a[0] * v0 + a[32] * v1 + a[64] * v2;
      s1 += a[96] * v0 + a[128] * v1 + a[160] * v2;
      s2 += a[192] * v0 + a[224] * v1 + a[256] * v2;
    }
#pragma unroll 4
    for (int k = wsh; k < width; ++k) {  // same stencil order: these are the later offsets
      const size_t sl = size_t(gbase + k - wsh);
      const int y = E.overflow_nbr[sl * 32 + lane];
      if (y < 0) continue;
      const T v0 = sp[y], v1 = sp[n + y], v2 = sp[2 * n + y];
      const T* a = overflow_A + sl * 288 + lane;
      s0 += a[0] * v0 + a[32] * v1 + a[64] * v2;
      s1 += a[96] * v0 + a[128] * v1 + a[160] * v2;
      s2 += a[192] * v0 + a[224] * v1 + a[256] * v2;
    }
    const T v0 = sp[x], v1 = sp[n + x], v2 = sp[2 * n + x];
    q[0] = pad ? T(0) : s0 + D[0] * v0 + D[1] * v1 + D[2] * v2;
    q[1] = pad ? T(0) : s1 + D[3] * v0 + D[4] * v1 + D[5] * v2;
    q[2] = pad ? T(0) : s2 + D[6] * v0 + D[7] * v1 + D[8] * v2;
  };
  using linalg::cg_detail::kRunning;
  T q[3], p[3];
  apply(q);
  double rz_l = 0, rr_l = 0, bb_l = 0;
#pragma unroll
  for (int d = 0; d < 3; ++d) linalg::cg_start_entry<T>(d, b, q, dinv, r, p, rz_l, rr_l, bb_l);
  __syncthreads();  // every thread has read u from sp
#pragma unroll
  for (int d = 0; d < 3; ++d) sp[d * n + x] = p[d];
  // Every thread gets the same sums (block_sum2), so every thread takes the same branches below.
  const double2 s = block_sum2<T>(rr_l, rz_l, red[1]);  // its barrier also completes p
  linalg::CgScalars cg;
  double r0_norm;  // cg_start's residual history (not kept)
  linalg::cg_start(cg, s.y, s.x, /*bb=*/s.x, double(rel_tol), max_it, &r0_norm);
  while (cg.status == kRunning) {
    apply(q);
    double pq_l = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d) pq_l += double(p[d]) * q[d];
    linalg::cg_set_alpha(cg, block_sum2<T>(pq_l, 0.0, red[0]).x);
    if (cg.status != kRunning) break;
    rz_l = rr_l = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d) linalg::cg_update_entry<T>(d, T(cg.alpha), p, q, dinv, u, r, rz_l, rr_l);
    const double2 s2 = block_sum2<T>(rr_l, rz_l, red[1]);  // also: every thread is done reading sp
    linalg::cg_finish_update(cg, s2.y, s2.x, nullptr);
    if (cg.status != kRunning) break;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      linalg::cg_direction_entry<T>(d, T(cg.beta), r, dinv, p);
      sp[d * n + x] = p[d];
    }
    __syncthreads();  // p complete
  }
#pragma unroll
  for (int d = 0; d < 3; ++d) L.u(x, d) = u[d];
  if (t == 0) {
    flags->coarse_iterations += cg.iteration;
    flags->coarse_solves += 1;
  }
}

}  // namespace eb::hexmg::device
