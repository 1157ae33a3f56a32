// CUDA backend of hexmg (Dick et al. 2011, Sec. 4): structure-of-arrays layout with every colour
// subset padded to a multiple of 32 and ordered lexicographically (Sec. 4.3), one thread per
// element for rotations, one thread per vertex for assembly, 9 threads per vertex for the
// coarse-grid assembly, 13 warps per 32 vertices with a shared-memory reduction for
// Gauss-Seidel, gather-only transfer operators, the coarsest-level CG inside one thread block,
// and the whole time step captured in a CUDA graph. The formulas are the EB_HD functions of
// assembly/hexmg/hexmg_kernels.h that the OpenMP backend runs.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "assembly/hexmg/hex_element.h"
#include "assembly/hexmg/hexmg_kernels.h"
#include "meshes/errors.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
#include "solvers/common/pdl.cuh"
#include "solvers/hexmg/hexmg_simulation.h"

namespace eb::hexmg {
namespace {

using cuda::DeviceBuffer;

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

constexpr int kBlock1 = 128;   // threads per block of the one-thread-per-item kernels
constexpr int kGsWarps = 13;   // Gauss-Seidel: 13 warps x 32 lanes per 32 vertices (2 blocks each)

// Programmatic dependent launch (sm_90; PERF_NOTES.md, change 4). Launched with the
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

// The previous form of k_gauss_seidel (dependent loads), kept for a same-run A/B timing through
// EB_HEXMG_GS=dependent-loads.
template <class T>
__global__ void __launch_bounds__(kGsWarps * 32) k_gauss_seidel_dep(LevelView<T> L, int begin) {
  pdl_enter();
  __shared__ T part[kGsWarps][3][32];
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t x = begin + int64_t(blockIdx.x) * 32 + lane;
  const bool valid = L.nbr(x, kCentre) >= 0;
  const int k0 = 2 * w, k1 = 2 * w + 1;
  const int lb = k0 < kCentre ? k0 : k0 + 1, le = (k1 < kCentre ? k1 : k1 + 1) + 1;
  T s[3] = {0, 0, 0};
  if (valid) offdiag_partial(x, lb, le, L, L.u, s);
  for (int d = 0; d < 3; ++d) part[w][d][lane] = s[d];
  __syncthreads();
  if (w == 0 && valid) {
    T sum[3] = {0, 0, 0};
#pragma unroll
    for (int i = 0; i < kGsWarps; ++i)
      for (int d = 0; d < 3; ++d) sum[d] += part[i][d][lane];
    gauss_seidel_finish(x, L, sum);
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

// Block-wide sum (double) visible to every thread.
__device__ double block_sum(double v, double* scratch) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x % 32, w = threadIdx.x / 32, nw = (blockDim.x + 31) / 32;
  __syncthreads();
  if (lane == 0) scratch[w] = v;
  __syncthreads();
  double t = 0;
  for (int i = 0; i < nw; ++i) t += scratch[i];
  return t;
}

// Jacobi-preconditioned conjugate gradients on the coarsest level inside one thread block
// (Sec. 4.2.7; the preconditioner as in the CPU backend's coarse_cg, which says why).
template <class T>
__global__ void k_coarse_cg(LevelView<T> L, Strided<T> r, Strided<T> p, Strided<T> q, T rel_tol, int max_it, Flags* flags) {
  pdl_enter();
  __shared__ double scratch[32];
  const int64_t n = L.n;
  double rr_local = 0, rz_local = 0;
  for (int64_t x = threadIdx.x; x < n; x += blockDim.x) {
    stencil_apply_vertex(x, L, L.u, q);
    const bool pad = L.nbr(x, kCentre) < 0;
    for (int d = 0; d < 3; ++d) {
      const T rv = pad ? T(0) : L.b(x, d) - q(x, d);
      const T zv = rv * jacobi_inverse(x, d, L);
      r(x, d) = rv;
      p(x, d) = zv;
      rr_local += double(rv) * rv;
      rz_local += double(rv) * zv;
    }
  }
  double rr = block_sum(rr_local, scratch);
  double rz = block_sum(rz_local, scratch);
  const double stop = double(rel_tol) * double(rel_tol) * rr;
  int it = 0;
  while (it < max_it && rr > stop && rz > 0) {
    __syncthreads();  // p complete
    double pq_local = 0;
    for (int64_t x = threadIdx.x; x < n; x += blockDim.x) {
      stencil_apply_vertex(x, L, p, q);
      for (int d = 0; d < 3; ++d) pq_local += double(p(x, d)) * q(x, d);
    }
    const double pq = block_sum(pq_local, scratch);
    if (!(pq > 0)) break;
    const T a = T(rz / pq);
    double rn_local = 0, zn_local = 0;
    for (int64_t x = threadIdx.x; x < n; x += blockDim.x)
      for (int d = 0; d < 3; ++d) {
        L.u(x, d) += a * p(x, d);
        r(x, d) -= a * q(x, d);
        rn_local += double(r(x, d)) * r(x, d);
        zn_local += double(r(x, d)) * (r(x, d) * jacobi_inverse(x, d, L));
      }
    const double rr_new = block_sum(rn_local, scratch);
    const double rz_new = block_sum(zn_local, scratch);
    const T beta = T(rz_new / rz);
    __syncthreads();  // every thread has read p for q before p changes
    for (int64_t x = threadIdx.x; x < n; x += blockDim.x)
      for (int d = 0; d < 3; ++d) p(x, d) = r(x, d) * jacobi_inverse(x, d, L) + beta * p(x, d);
    rr = rr_new;
    rz = rz_new;
    ++it;
  }
  if (threadIdx.x == 0) {
    flags->coarse_iterations += it;
    flags->coarse_solves += 1;
  }
}

// Coarsest-level layout of the shared-memory CG below: thread t owns vertex perm[t] (vertices
// sorted by their number of off-diagonal neighbours, so that the warps' slot counts are tight and
// the padding slots form whole idle warps); warp w's off-diagonal blocks sit in slots
// [warp_base[w], warp_base[w+1]), slot k of lane j holding the k-th present neighbour (ascending
// stencil offset, the CPU's summation order) of that lane's vertex, or none (src -1).
// When all slots do not fit in shared memory (fp64 at 33K and 269K bunny: ~20 neighbours each), the
// first `cap` slots of every warp go to shared memory and the rest to a global scratch copy in
// the same lane-consecutive layout (coalesced re-reads from L1/L2).
struct CoarseEll {
  const int32_t* perm = nullptr;       // n: vertex of thread t
  const int32_t* warp_base = nullptr;  // 3 (warps + 1): all slots, shared slots, global slots
  const int32_t* src_l = nullptr;      // 32 per slot (all-slots layout): stencil offset l, -1 if none
  void* g_A = nullptr;                 // global slots * 32 * 9 coefficients (type T)
  int32_t* g_y = nullptr;              // global slots * 32 neighbour vertices
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

// The coarsest Jacobi-PCG of k_coarse_cg (same iteration, same stopping rule, same per-vertex
// summation order), rebuilt because that kernel spent ~17 us per iteration (H100) re-reading the
// coarse matrix through L2 from one SM with 6 block reductions and global-memory vectors.
// Here: blockDim.x == n (one vertex per thread, n <= 768 padded slots for < 512 vertices); the
// vertex's r, u, centre block and Jacobi inverse live in registers; p is in shared memory; the
// off-diagonal blocks are copied once per solve into shared memory in the warp-slot layout of
// CoarseEll (lane-consecutive, so the reads are free of bank conflicts); two fused (double2)
// reductions and three barriers per iteration instead of six reductions.
template <class T>
__global__ void __launch_bounds__(kCoarseSmemMaxThreads) k_coarse_cg_smem(LevelView<T> L, CoarseEll E, T rel_tol, int max_it, Flags* flags,
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
  T* gA = static_cast<T*>(E.g_A);
  const int x = E.perm[t];
  const int base = E.warp_base[w], width = E.warp_base[w + 1] - base;
  const int sbase = E.warp_base[E.warps + 1 + w], gbase = E.warp_base[2 * (E.warps + 1) + w];
  const int wsh = min(width, E.cap);  // this warp's slots in shared memory
  const bool pad = L.nbr(x, kCentre) < 0;
  // Copy this vertex's present off-diagonal blocks (independent loads, all in flight together).
  // Each thread later reads only its own lane's entries of the global overflow: no cross-thread
  // dependency there.
  for (int k = 0; k < width; ++k) {
    const int l = E.src_l[(base + k) * 32 + lane];
    const bool sh = k < wsh;
    const size_t sl = sh ? size_t(sbase + k) : size_t(gbase + k - wsh);
    const int32_t y = l >= 0 ? L.nbr(x, l) : -1;
    if (sh)
      sy[sl * 32 + lane] = int16_t(y);
    else
      E.g_y[sl * 32 + lane] = y;
    if (l >= 0) {
      T* dst = (sh ? sA : gA) + sl * 288 + lane;
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
    dinv[d] = pad ? T(0) : T(1) / D[4 * d];  // jacobi_inverse
    u[d] = L.u(x, d);
    b[d] = L.b(x, d);
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
      const int y = E.g_y[sl * 32 + lane];
      if (y < 0) continue;
      const T v0 = sp[y], v1 = sp[n + y], v2 = sp[2 * n + y];
      const T* a = gA + sl * 288 + lane;
      s0 += a[0] * v0 + a[32] * v1 + a[64] * v2;
      s1 += a[96] * v0 + a[128] * v1 + a[160] * v2;
      s2 += a[192] * v0 + a[224] * v1 + a[256] * v2;
    }
    const T v0 = sp[x], v1 = sp[n + x], v2 = sp[2 * n + x];
    q[0] = pad ? T(0) : s0 + D[0] * v0 + D[1] * v1 + D[2] * v2;
    q[1] = pad ? T(0) : s1 + D[3] * v0 + D[4] * v1 + D[5] * v2;
    q[2] = pad ? T(0) : s2 + D[6] * v0 + D[7] * v1 + D[8] * v2;
  };
  T q[3], p[3];
  apply(q);
  double rr_l = 0, rz_l = 0;
#pragma unroll
  for (int d = 0; d < 3; ++d) {
    r[d] = pad ? T(0) : b[d] - q[d];
    p[d] = r[d] * dinv[d];
    rr_l += double(r[d]) * r[d];
    rz_l += double(r[d]) * p[d];
  }
  __syncthreads();  // every thread has read u from sp
#pragma unroll
  for (int d = 0; d < 3; ++d) sp[d * n + x] = p[d];
  const double2 s = block_sum2<T>(rr_l, rz_l, red[1]);  // its barrier also completes p
  double rr = s.x, rz = s.y;
  const double stop = double(rel_tol) * double(rel_tol) * rr;
  int it = 0;
  while (it < max_it && rr > stop && rz > 0) {
    apply(q);
    double pq_l = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d) pq_l += double(p[d]) * q[d];
    const double pq = block_sum2<T>(pq_l, 0.0, red[0]).x;
    if (!(pq > 0)) break;
    const T a = T(rz / pq);
    double rn_l = 0, zn_l = 0;
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      u[d] += a * p[d];
      r[d] -= a * q[d];
      rn_l += double(r[d]) * r[d];
      zn_l += double(r[d]) * (r[d] * dinv[d]);
    }
    const double2 s2 = block_sum2<T>(rn_l, zn_l, red[1]);  // also: every thread is done reading sp
    const T beta = T(s2.y / rz);
#pragma unroll
    for (int d = 0; d < 3; ++d) {
      p[d] = r[d] * dinv[d] + beta * p[d];
      sp[d * n + x] = p[d];
    }
    rr = s2.x;
    rz = s2.y;
    ++it;
    __syncthreads();  // p complete
  }
#pragma unroll
  for (int d = 0; d < 3; ++d) L.u(x, d) = u[d];
  if (t == 0) {
    flags->coarse_iterations += it;
    flags->coarse_solves += 1;
  }
}

// Host-side transposition to structure-of-arrays with stride n (padding rows filled with fill).
template <class Out, class In, size_t C>
std::vector<Out> soa(const std::vector<std::array<In, C>>& a, size_t n, Out fill) {
  std::vector<Out> out(C * n, fill);
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t c = 0; c < C; ++c) out[c * n + i] = Out(a[i][c]);
  return out;
}
template <class Out>
std::vector<Out> soa_flat(const std::vector<double>& a, size_t comps, size_t n) {
  std::vector<Out> out(comps * n, Out(0));
  for (size_t i = 0; i < n; ++i)
    for (size_t c = 0; c < comps; ++c) out[c * n + i] = Out(a[i * comps + c]);
  return out;
}

unsigned blocks_for(int64_t n, int per_block) { return unsigned((n + per_block - 1) / per_block); }

// Warp-slot layout of the coarsest matrix for k_coarse_cg_smem, planned on the host for a device
// whose blocks may opt in to `optin` bytes of shared memory (scalars of `scalar` bytes). `use`
// false: the old kernel stays (more than 1024 slots, blocks that do not fit in shared memory,
// or EB_HEXMG_COARSE_CG=global) and nothing is uploaded. The constructor uploads perm, bases and
// src and sizes the global overflow from global_slots; the estimate counts the same.
struct CoarseEllPlan {
  bool use = false;
  std::vector<int32_t> perm, bases, src;
  int shared_slots = 0, global_slots = 0, cap = 0, warps = 0;
  size_t smem_bytes = 0;
};

CoarseEllPlan plan_coarse_ell(const Level& C, int optin, size_t scalar) {
  CoarseEllPlan plan;
  // EB_HEXMG_COARSE_CG=global keeps the old kernel (same-run A/B timing of the two).
  if (const char* e = std::getenv("EB_HEXMG_COARSE_CG"); e && std::string(e) == "global") return plan;
  const int n = C.n_padded;
  if (n > kCoarseSmemMaxThreads || n % 32 != 0) return plan;
  std::vector<int> count(n, 0);
  for (int x = 0; x < n; ++x)
    if (C.nbr[x][kCentre] >= 0)
      for (int l = 0; l < kStencil; ++l) count[x] += (l != kCentre && C.nbr[x][l] >= 0);
  std::vector<int32_t> perm(n);
  for (int x = 0; x < n; ++x) perm[x] = x;
  std::stable_sort(perm.begin(), perm.end(), [&](int a, int b) { return count[a] > count[b]; });
  const int nw = n / 32;
  std::vector<int32_t> base(nw + 1, 0);
  for (int w = 0; w < nw; ++w) {
    int width = 0;
    for (int j = 0; j < 32; ++j) width = std::max(width, count[perm[w * 32 + j]]);
    base[w + 1] = base[w] + width;
  }
  const int slots = base[nw];
  std::vector<int32_t> src(size_t(std::max(slots, 1)) * 32, -1);
  // Largest per-warp cap of shared-memory slots that fits; the rest goes to global scratch.
  const size_t avail = size_t(optin) - 2 * 32 * sizeof(double2) - 3 * size_t(n) * scalar;
  const size_t per_slot = 32 * (9 * scalar + sizeof(int16_t));
  int cap = 0;
  for (int w = 0; w < nw; ++w) cap = std::max(cap, base[w + 1] - base[w]);
  // Test-only: EB_HEXMG_COARSE_SMEM_SLOTS=k keeps at most k warp-slots per warp in shared memory
  // so that the global-overflow path (otherwise reached only by fp64 at 33K and 269K bunny) is
  // exercised at small sizes (tests/hexmg/test_coarse_overflow.cpp).
  if (const char* e = std::getenv("EB_HEXMG_COARSE_SMEM_SLOTS"); e && *e) cap = std::min(cap, std::max(0, std::atoi(e)));
  std::vector<int32_t> bases(3 * size_t(nw + 1), 0);
  for (;; --cap) {
    for (int w = 0; w < nw; ++w) {
      const int width = base[w + 1] - base[w];
      bases[w + 1] = base[w + 1];
      bases[nw + 1 + w + 1] = bases[nw + 1 + w] + std::min(width, cap);
      bases[2 * (nw + 1) + w + 1] = bases[2 * (nw + 1) + w] + std::max(0, width - cap);
    }
    if (size_t(bases[2 * nw + 1]) * per_slot <= avail || cap == 0) break;
  }
  const int shared_slots = bases[2 * nw + 1], global_slots = bases[3 * nw + 2];
  for (int w = 0; w < nw; ++w)
    for (int j = 0; j < 32; ++j) {
      const int x = perm[w * 32 + j];
      if (C.nbr[x][kCentre] < 0) continue;
      int k = 0;
      for (int l = 0; l < kStencil; ++l)
        if (l != kCentre && C.nbr[x][l] >= 0) src[size_t(base[w] + k++) * 32 + j] = l;
    }
  const size_t bytes = size_t(shared_slots) * per_slot + 3 * size_t(n) * scalar;
  if (bytes > avail + 3 * size_t(n) * scalar) return plan;  // not even p fits: old kernel
  plan.use = true;
  plan.perm = std::move(perm);
  plan.bases = std::move(bases);
  plan.src = std::move(src);
  plan.shared_slots = shared_slots;
  plan.global_slots = global_slots;
  plan.cap = cap;
  plan.warps = nw;
  plan.smem_bytes = bytes;
  return plan;
}

int shared_memory_optin(int device) {
  int optin = 0;
  EB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  return optin;
}

template <class T>
class HexmgCuda final : public HexmgSimulation {
 public:
  HexmgCuda(Model model, Precision p, int device) : HexmgSimulation(std::move(model), Backend::Cuda, p) {
    EB_CUDA_CHECK(cudaSetDevice(device));
    // A blocking stream: DeviceBuffer's fill_zero/upload/to_host run on the legacy default
    // stream (restart_solve, set_state, last_step_residuals call them between kernels), and a
    // non-blocking stream would not wait for them (a pageable cudaMemcpy to the device may even
    // return before its DMA has landed). With this flag unset, every such operation is ordered
    // with the kernels here.
    EB_CUDA_CHECK(cudaStreamCreate(&stream_));
    const auto Kd = unit_hex_stiffness(m_.poisson, m_.h);
    if (std::is_same<T, float>::value) {
      float Kf[576];
      for (int i = 0; i < 576; ++i) Kf[i] = float(Kd[i]);
      EB_CUDA_CHECK(cudaMemcpyToSymbol(c_K_f, Kf, sizeof(Kf)));
    } else {
      EB_CUDA_CHECK(cudaMemcpyToSymbol(c_K_d, Kd.data(), sizeof(double) * 576));
    }
    const int nl = m_.n_levels();
    dev_.resize(nl);
    views_.resize(nl);
    for (int l = 0; l < nl; ++l) {
      const Level& L = m_.levels[l];
      const size_t n = size_t(L.n_padded);
      auto& d = dev_[l];
      d.A.resize(n * kCoeffs, "hexmg A");
      d.A.fill_zero();
      d.b.resize(n * 3, "hexmg b");
      d.u.resize(n * 3, "hexmg u");
      d.r.resize(n * 3, "hexmg r");
      d.b.fill_zero();
      d.u.fill_zero();
      d.r.fill_zero();
      d.nbr.upload(soa<int32_t>(L.nbr, n, -1));
      if (!L.child.empty()) d.child.upload(soa<int32_t>(L.child, n, -1));
      if (!L.parent.empty()) d.parent.upload(soa<int32_t>(L.parent, n, -1));
      d.dead.upload(L.dead);
      {
        std::vector<int32_t> ord;
        ord.reserve(size_t(L.n_real));
        for (int32_t x = 0; x < L.n_padded; ++x)
          if (L.coord[x][0] >= 0) ord.push_back(x);
        std::sort(ord.begin(), ord.end(), [&](int32_t a, int32_t b) {
          const auto &ca = L.coord[a], &cb = L.coord[b];
          return std::make_tuple(ca[2], ca[1], ca[0]) < std::make_tuple(cb[2], cb[1], cb[0]);
        });
        d.n_real = int32_t(ord.size());
        d.order.upload(ord);
      }
      LevelView<T>& v = views_[l];
      v.n = L.n_padded;
      v.A = {d.A.data(), 1, int64_t(n)};
      v.b = {d.b.data(), 1, int64_t(n)};
      v.u = {d.u.data(), 1, int64_t(n)};
      v.r = {d.r.data(), 1, int64_t(n)};
      v.nbr = {d.nbr.data(), 1, int64_t(n)};
      if (!L.child.empty()) v.child = {d.child.data(), 1, int64_t(n)};
      if (!L.parent.empty()) v.parent = {d.parent.data(), 1, int64_t(n)};
      v.dead = d.dead.data();
    }
    const size_t n0 = size_t(m_.levels[0].n_padded), ne = size_t(m_.n_elems());
    ev_.upload(soa<int32_t>(m_.ev, ne, -1));
    ve_.upload(soa<int32_t>(m_.ve, n0, -1));
    youngs_.upload(std::vector<T>(m_.youngs.begin(), m_.youngs.end()));
    {
      std::vector<T> R(9 * ne, T(0));
      for (size_t e = 0; e < ne; ++e) R[0 * ne + e] = R[4 * ne + e] = R[8 * ne + e] = T(1);
      R_.upload(R);
    }
    mass_.upload(std::vector<T>(m_.mass.begin(), m_.mass.end()));
    u0_.resize(3 * n0, "hexmg u_old");
    v0_.resize(3 * n0, "hexmg v_old");
    a0_.resize(3 * n0, "hexmg a_old");
    u0_.fill_zero();
    v0_.fill_zero();
    a0_.fill_zero();
    const size_t fc = 3 * size_t(m_.ncurves + 1), pc = 3 * size_t(std::max(1, m_.ncurves));
    force_.upload(soa_flat<T>(m_.force, fc, n0));
    presc_.upload(soa_flat<T>(m_.presc, pc, n0));
    cmask_.upload(m_.cmask);
    factors_.resize(size_t(kBatch) * std::max(1, m_.ncurves), "hexmg load factors");
    factors_.fill_zero();
    dstep_.resize(1, "hexmg step counter");
    dstep_.fill_zero();
    flags_.resize(1, "hexmg flags");
    reset_flags();
    volume_flags_.resize(1, "hexmg volume check");
    const size_t nc = 3 * size_t(m_.levels.back().n_padded);
    cg_r_.resize(nc, "hexmg coarse r");
    cg_p_.resize(nc, "hexmg coarse p");
    cg_q_.resize(nc, "hexmg coarse q");
    fv_.n_elems = int32_t(ne);
    fv_.h = T(m_.h);
    fv_.dt = T(m_.dt);
    fv_.alpha = T(m_.alpha);
    fv_.ev = {ev_.data(), 1, int64_t(ne)};
    fv_.ve = {ve_.data(), 1, int64_t(n0)};
    fv_.youngs = youngs_.data();
    fv_.R = {R_.data(), 1, int64_t(ne)};
    fv_.mass = mass_.data();
    fv_.u0 = {u0_.data(), 1, int64_t(n0)};
    fv_.v0 = {v0_.data(), 1, int64_t(n0)};
    fv_.a0 = {a0_.data(), 1, int64_t(n0)};
    fv_.force = {force_.data(), 1, int64_t(n0)};
    fv_.presc = {presc_.data(), 1, int64_t(n0)};
    fv_.cmask = cmask_.data();
    fv_.ncurves = m_.ncurves;
    fv_.factor = factors_.data();
    const int64_t nco = m_.levels.back().n_padded;
    cg_threads_ = int(std::min<int64_t>(1024, (nco + 31) / 32 * 32));
    setup_coarse_ell(device);
    EB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  ~HexmgCuda() override {
    if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  // What the constructor allocates for `m` on a device of `optin` bytes of opt-in shared memory
  // per block (every buffer device_bytes() counts), from the model's sizes alone: the estimate
  // checked before the first allocation (estimate_device_bytes).
  static std::size_t planned_bytes(const Model& m, int optin) {
    const size_t w = sizeof(T), i32 = sizeof(int32_t);
    size_t b = 0;
    for (const Level& L : m.levels) {  // LevelDev: A, b, u, r, nbr, child, parent, dead, order
      const size_t n = size_t(L.n_padded);
      b += n * kCoeffs * w + 3 * (3 * n * w);
      b += n * kStencil * i32;
      if (!L.child.empty()) b += n * L.child[0].size() * i32;
      if (!L.parent.empty()) b += n * L.parent[0].size() * i32;
      b += L.dead.size();
      for (int32_t x = 0; x < L.n_padded; ++x) b += L.coord[x][0] >= 0 ? i32 : 0;
    }
    const size_t n0 = size_t(m.levels[0].n_padded), ne = size_t(m.n_elems());
    const size_t nc = 3 * size_t(m.levels.back().n_padded);
    const size_t fc = 3 * size_t(m.ncurves + 1), pc = 3 * size_t(std::max(1, m.ncurves));
    b += 8 * ne * i32 + 8 * n0 * i32;                                 // ev, ve
    b += (m.youngs.size() + 9 * ne + m.mass.size() + 3 * 3 * n0) * w;  // youngs, R, mass, u0, v0, a0
    b += (fc + pc) * n0 * w + m.cmask.size();                         // force, presc, cmask
    b += size_t(kBatch) * std::max(1, m.ncurves) * w;                 // factors
    b += sizeof(int) + sizeof(Flags) + sizeof(ElementFlags);          // dstep, flags, volume flags
    b += 3 * nc * w;                                                  // coarse CG r, p, q
    const CoarseEllPlan p = plan_coarse_ell(m.levels.back(), optin, sizeof(T));
    if (p.use)
      b += (p.perm.size() + p.bases.size() + p.src.size()) * i32 +
           size_t(std::max(p.global_slots, 1)) * 32 * (9 * w + i32);
    return b;
  }

  void advance(int steps) override {
    if (m_.solver.jacobi_pcg) throw InputError("hexmg cuda: solver.variant jacobi-pcg runs on the cpu backend only");
    const bool graph = !m_.solver.profile && !m_.solver.tolerance_mode;
    int done = 0;
    // A batch runs to its end once launched; a non-finite state found after it stops the rest.
    while (done < steps && !diverged()) {
      const int chunk = std::min(kBatch, steps - done);
      upload_factors(step_ + 1, chunk);
      if (graph) {
        if (!graph_exec_) capture_graph();
        timer_.begin("step", stream_);
        for (int i = 0; i < chunk; ++i) EB_CUDA_CHECK(cudaGraphLaunch(graph_exec_, stream_));
        timer_.end(stream_);
        EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
        timer_.flush(timings_, chunk);
        step_ += chunk;
        cycles_sum_ += int64_t(chunk) * m_.solver.cycles;
        solves_ += chunk;
        last_iterations_ = m_.solver.cycles;
        last_converged_ = true;
        have_trace_residuals_ = false;
      } else {
        for (int i = 0; i < chunk; ++i) {
          // one step, launched directly, phases timed with events
          prepare(true);
          solve_direct();
          timer_.begin("update", stream_);
          launch_update();
          timer_.end(stream_);
          // A kernel group runs several times per step (every level, every cycle): sum its
          // occurrences so that each phase gets one sample per step.
          PhaseTimes occurrences;
          timer_.flush(occurrences, 1);
          for (const PhaseStats& p : occurrences.stats(0)) timings_.add(p.name, p.total_ms, 1);
          ++step_;
        }
        EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
      }
      check_flags();
      done += chunk;
    }
    step_open_ = false;
  }

  // --- stepwise access ---
  void begin_step() override {
    upload_factors(step_ + 1, 1);
    prepare(false);
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    check_flags();
    have_trace_residuals_ = false;
    step_open_ = true;
  }
  void vcycle() override {
    vcycle_level(0);
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  double system_residual() override { return std::sqrt(residual_norm2(0)); }
  void restart_solve() override { dev_[0].u.fill_zero(); }
  void end_step() override {
    launch_update();
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    ++step_;
    step_open_ = false;
  }
  void set_state(const std::vector<double>& slot_u, const std::vector<double>& slot_v) override {
    const size_t n0 = size_t(m_.levels[0].n_padded);
    u0_.upload(soa_flat<T>(slot_u, 3, n0));
    v0_.upload(slot_v.empty() ? std::vector<T>(3 * n0, T(0)) : soa_flat<T>(slot_v, 3, n0));
    a0_.fill_zero();
    dev_[0].u.fill_zero();
    step_open_ = false;
  }

  std::vector<double> rotations() override { return aos_of(R_, 9, size_t(m_.n_elems())); }
  std::vector<double> slot_displacement() override {
    std::vector<double> u = aos_of(u0_, 3, size_t(m_.levels[0].n_padded));
    if (step_open_) {
      const std::vector<double> du = aos_of(dev_[0].u, 3, size_t(m_.levels[0].n_padded));
      for (size_t i = 0; i < u.size(); ++i) u[i] += du[i];
    }
    return u;
  }
  void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) override {
    slots_to_nodes(slot_displacement(), aos_of(v0_, 3, size_t(m_.levels[0].n_padded)), u, v);
  }
  double mean_coarse_iterations() const override {
    Flags f;
    EB_CUDA_CHECK(cudaMemcpy(&f, flags_.data(), sizeof(Flags), cudaMemcpyDeviceToHost));
    const double its = double(f.coarse_iterations + coarse_iter_done_), solves = double(f.coarse_solves + coarse_solves_done_);
    return solves > 0 ? its / solves : m_.solver.coarse_max_iterations / 4.0;
  }
  // This simulation's own buffers (cuda_tracked_bytes() counts every simulation of the process).
  std::size_t device_bytes() const override {
    size_t b = ev_.bytes() + ve_.bytes() + youngs_.bytes() + R_.bytes() + mass_.bytes() + u0_.bytes() + v0_.bytes() +
               a0_.bytes() + force_.bytes() + presc_.bytes() + factors_.bytes() + cmask_.bytes() + dstep_.bytes() +
               flags_.bytes() + volume_flags_.bytes() + cg_r_.bytes() + cg_p_.bytes() + cg_q_.bytes() + ell_perm_.bytes() +
               ell_base_.bytes() + ell_src_.bytes() + ell_gA_.bytes() + ell_gy_.bytes();
    for (const LevelDev& d : dev_)
      b += d.A.bytes() + d.b.bytes() + d.u.bytes() + d.r.bytes() + d.nbr.bytes() + d.child.bytes() + d.parent.bytes() +
           d.order.bytes() + d.dead.bytes();
    return b;
  }

  void export_system(std::vector<Triplet>& A, std::vector<double>& b, std::vector<double>& u) override {
    const size_t n = size_t(m_.levels[0].n_padded);
    const std::vector<T> Ah = dev_[0].A.to_host();
    b = aos_of(dev_[0].b, 3, n);
    u = aos_of(dev_[0].u, 3, n);
    level0_triplets(Ah.data(), 1, int64_t(n), A);
  }

 protected:
  void last_step_residuals(double& initial, double& final_) override {
    auto& u = dev_[0].u;
    const std::vector<T> keep = u.to_host();
    u.fill_zero();
    initial = std::sqrt(residual_norm2(0));
    u.upload(keep);
    final_ = std::sqrt(residual_norm2(0));
  }
  void add_details(nlohmann::json& j) const override {
    const GpuInfo g = cuda_device_info();
    j["device"] = g.name;
    j["layout"] = "structure of arrays, colour subsets padded to 32, lexicographic order";
    j["cuda_graph"] = !m_.solver.profile && !m_.solver.tolerance_mode;
    j["gauss_seidel_design"] = m_.solver.gs_thread_per_vertex
                                   ? "one thread per vertex (27 blocks unrolled)"
                                   : "13 warps per 32 vertices, 2 stencil blocks per thread, shared-memory reduction";
    j["programmatic_dependent_launch"] = pdl_;
    j["kernels_per_step"] = kernels_per_step();
    j["gather_kernels_order"] = lattice_order_ ? "lattice" : "colour subsets";
    j["coarse_cg_global_warp_slots"] = cg_smem_ ? cg_global_slots_ : -1;
    j["coarse_cg_threads"] = cg_smem_ ? int(views_.back().n) : cg_threads_;
    j["coarse_cg_kernel"] = cg_smem_ ? "one block, one vertex per thread, blocks in shared memory (" +
                                           std::to_string(cg_smem_bytes_) + " B; " +
                                           std::to_string(cg_global_slots_) + " warp-slots of blocks in global memory)"
                                     : "one block, blocks read from global memory";
  }


  std::vector<double> read_array(PhaseArray a, int level) override {
    const Layout l = layout_of(a, level);
    return aos_of(*l.buf, l.comps, l.n);
  }
  void write_array(PhaseArray a, int level, const std::vector<double>& values) override {
    const Layout l = layout_of(a, level);
    l.buf->upload(soa_flat<T>(values, l.comps, l.n));
  }

  // Each phase launched as the step launches it (same kernels, same pre-wait rule), after the
  // next step's load factors; synchronized and its flags accounted as after a step.
  void run_phase_impl(const Phase& p) override {
    upload_factors(step_ + 1, 1);
    switch (p.kind) {
      case PhaseKind::Rotations:
        if (!m_.solver.linear) launch_rotations();
        break;
      case PhaseKind::FineAssembly: launch_assembly(); break;
      case PhaseKind::Galerkin: launch_galerkin(p.level); break;
      case PhaseKind::SmoothColour: launch_gs_colour(p.level, p.colour); break;
      case PhaseKind::SmoothSweep: gs_sweep(p.level); break;
      case PhaseKind::Residual: launch_residual(p.level, nullptr); break;
      case PhaseKind::Restrict: launch_restrict(p.level + 1); break;
      case PhaseKind::Interpolate: launch_interpolate(p.level + 1); break;
      case PhaseKind::CoarseSolve: launch_coarse_cg(); break;
      case PhaseKind::Update: launch_update(); break;
    }
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    check_flags();
  }

  VolumeCheck check_volumes() override {
    upload_element_flags(volume_flags_.data());
    launch(k_volumes<T>, blocks_for(m_.n_elems(), kBlock1), kBlock1, 0, fv_, volume_flags_.data());
    ElementFlags f;
    EB_CUDA_CHECK(cudaMemcpyAsync(&f, volume_flags_.data(), sizeof(f), cudaMemcpyDeviceToHost, stream_));
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return volume_check_of(f);
  }
 private:
  static constexpr int kBatch = 4096;  // steps per graph-launch batch (load factors uploaded per batch)

  struct LevelDev {
    DeviceBuffer<T> A, b, u, r;
    DeviceBuffer<int32_t> nbr, child, parent;
    DeviceBuffer<int32_t> order;  // real vertices in lattice order (z, y, x fastest)
    DeviceBuffer<uint8_t> dead;
    int32_t n_real = 0;
  };

  // An array of the phase interface: its buffer, components per item and item stride.
  struct Layout {
    DeviceBuffer<T>* buf;
    size_t comps, n;
  };
  Layout layout_of(PhaseArray a, int level) {
    const size_t n = size_t(m_.levels[level].n_padded), n0 = size_t(m_.levels[0].n_padded);
    switch (a) {
      case PhaseArray::A: return {&dev_[level].A, kCoeffs, n};
      case PhaseArray::b: return {&dev_[level].b, 3, n};
      case PhaseArray::u: return {&dev_[level].u, 3, n};
      case PhaseArray::r: return {&dev_[level].r, 3, n};
      case PhaseArray::u0: return {&u0_, 3, n0};
      case PhaseArray::v0: return {&v0_, 3, n0};
      case PhaseArray::a0: return {&a0_, 3, n0};
      case PhaseArray::R: return {&R_, 9, size_t(m_.n_elems())};
    }
    throw std::logic_error("hexmg cuda: unknown array");
  }

  // What the kernel launched last on stream_ writes, as far as the pre-wait loads of the next
  // kernel care (rule 2 at pdl_wait): the level whose matrix it writes (-1: none), and whether
  // it is a coarsest CG (whose overflow scratch the next coarsest CG writes before its wait).
  // Copies and memsets in between are not counted: that only forbids pre-loads that would be safe.
  struct LastLaunch {
    int matrix_level = -1;
    bool coarse_cg = false;
  };
  LastLaunch last_;
  bool may_preload(int level, bool writes_cg_scratch) const {
    return last_.matrix_level != level && !(writes_cg_scratch && last_.coarse_cg);
  }

  // Lattice-order launch of the kernels that gather from the children on the finer level
  // (coarse-grid assembly, restriction): the children of consecutive coarse vertices are then
  // consecutive in the fine level's colour subsets (full sectors) and neighbouring warps share
  // them in L1/L2, where in colour order a fine vertex is read by up to 8 coarse vertices of 8
  // different colours, far apart in the launch (H100, ncu: level-1 coarse assembly 830 -> 319 us,
  // DRAM 2.18 -> 0.62 GB; PERF_NOTES.md change 4). EB_HEXMG_ORDER=colour: the paper's order.
  // Kernel launches of one fixed-cycle step (the graph's nodes), for profilers' launch counts.
  int kernels_per_step() const {
    const int nl = m_.n_levels();
    int per_cycle = 1;  // coarsest CG
    for (int l = 0; l + 1 < nl; ++l) {
      int colours = 0;
      for (int c = 0; c < 8; ++c) colours += m_.levels[l].colour_begin[c + 1] > m_.levels[l].colour_begin[c];
      per_cycle += colours * (m_.solver.pre_smooth + m_.solver.post_smooth) + 3;
    }
    return (m_.solver.linear ? 0 : 1) + 1 + (nl - 1) + m_.solver.cycles * per_cycle + 1;
  }
  const int32_t* order_of(int l) const { return lattice_order_ ? dev_[l].order.data() : nullptr; }
  int32_t count_of(int l) const { return lattice_order_ ? dev_[l].n_real : views_[l].n; }

  // Every kernel of a step goes through here: with PDL the launch carries the programmatic
  // stream serialization attribute (see pdl_wait in the kernels).
  template <class... KArgs, class... Args>
  void launch(void (*kernel)(KArgs...), unsigned grid, unsigned block, size_t smem, Args&&... args) {
    cuda::launch_kernel(pdl_, kernel, dim3(grid), dim3(block), smem, stream_, std::forward<Args>(args)...);
    last_ = LastLaunch{};  // the launchers that write a matrix or run the coarsest CG say so after this
  }

  template <class U>
  static std::vector<double> aos_of(const DeviceBuffer<U>& buf, size_t comps, size_t n) {
    const std::vector<U> h = buf.to_host();
    std::vector<double> out(comps * n);
    for (size_t i = 0; i < n; ++i)
      for (size_t c = 0; c < comps; ++c) out[i * comps + c] = double(h[c * n + i]);
    return out;
  }

  static ElementFlags empty_element_flags() {
    ElementFlags e{};
    e.first_kept = e.first_bad = ~0ull;
    e.min_det = det_key(INFINITY);
    return e;
  }
  void reset_flags() {
    Flags f{};
    f.elem = empty_element_flags();
    EB_CUDA_CHECK(cudaMemcpy(flags_.data(), &f, sizeof(Flags), cudaMemcpyHostToDevice));
  }
  void upload_element_flags(ElementFlags* dst) {
    const ElementFlags e = empty_element_flags();
    EB_CUDA_CHECK(cudaMemcpyAsync(dst, &e, sizeof(e), cudaMemcpyHostToDevice, stream_));
  }
  static VolumeCheck volume_check_of(const ElementFlags& f) {
    VolumeCheck c;
    c.inverted = int64_t(f.kept);
    if (f.first_kept != ~0ull) c.first_inverted = int64_t(f.first_kept & 0xffffffffull);
    if (f.first_bad != ~0ull) c.first_nonfinite = int64_t(f.first_bad & 0xffffffffull);
    c.min_det = det_of_key(f.min_det);  // +infinity when no finite det F was met
    return c;
  }

  // Load factors of steps first..first+count-1 (at their end times), and the batch's step index 0.
  void upload_factors(int64_t first, int count) {
    const int nc = std::max(1, m_.ncurves);
    std::vector<T> f(size_t(count) * nc, T(0));
    for (int i = 0; i < count; ++i) {
      const auto fac = m_.factors((first + i) * m_.dt);
      for (int c = 0; c < m_.ncurves; ++c) f[size_t(i) * nc + c] = T(fac[c]);
    }
    EB_CUDA_CHECK(cudaMemcpyAsync(factors_.data(), f.data(), f.size() * sizeof(T), cudaMemcpyHostToDevice, stream_));
    EB_CUDA_CHECK(cudaMemsetAsync(dstep_.data(), 0, sizeof(int), stream_));
    batch_first_step_ = first;
  }

  // Accounts the flags of the steps (or phase) since the last call and resets them. The
  // rotations of the batch's step i see the state of step batch_first_step_ + i - 1.
  void check_flags() {
    Flags f;
    EB_CUDA_CHECK(cudaMemcpy(&f, flags_.data(), sizeof(Flags), cudaMemcpyDeviceToHost));
    reset_flags();
    coarse_iter_done_ += f.coarse_iterations;
    coarse_solves_done_ += f.coarse_solves;
    // The first kept rotation and the first non-finite F may come from different steps.
    VolumeCheck c = volume_check_of(f.elem), bad;
    bad.first_nonfinite = c.first_nonfinite;
    c.first_nonfinite = -1;
    record_volumes(c, batch_first_step_ - 1 + int64_t(f.elem.first_kept >> 32));
    if (bad.first_nonfinite >= 0) record_volumes(bad, batch_first_step_ - 1 + int64_t(f.elem.first_bad >> 32));
  }

  void phase_begin(bool timed, const char* name) {
    if (timed) timer_.begin(name, stream_);
  }
  void phase_end(bool timed) {
    if (timed) timer_.end(stream_);
  }

  // Rotations, simulation-level assembly and the coarse-grid equations of the next step.
  void prepare(bool timed) {
    if (!m_.solver.linear) {
      phase_begin(timed, "rotations");
      launch_rotations();
      phase_end(timed);
    }
    phase_begin(timed, "assembly");
    launch_assembly();
    phase_end(timed);
    phase_begin(timed, "coarse_assembly");
    for (int l = 1; l < m_.n_levels(); ++l) launch_galerkin(l);
    phase_end(timed);
  }

  // One launcher per kernel (the step, the graph and run_phase all go through them).
  void launch_rotations() {
    launch(k_rotations<T>, blocks_for(m_.n_elems(), kBlock1), kBlock1, 0, fv_, dstep_.data(), flags_.data());
  }
  void launch_assembly() {
    // Colour order here: in lattice order each warp's stores of A split into two half-warp runs
    // that straddle sectors, and the partly written sectors cost DRAM traffic (H100, ncu:
    // 436 -> 624 us, 435 -> 629 MB per step; PERF_NOTES.md change 4).
    launch(k_assembly<T>, blocks_for(views_[0].n, kBlock1), kBlock1, 0, fv_, views_[0], factors_.data(), dstep_.data());
    last_.matrix_level = 0;
  }
  void launch_galerkin(int l) {
    launch(k_galerkin<T>, blocks_for(count_of(l), 32), 288, 0, views_[l - 1], views_[l], order_of(l), count_of(l));
    last_.matrix_level = l;
  }
  void launch_update() {
    launch(k_update<T>, blocks_for(views_[0].n, kBlock1), kBlock1, 0, fv_, views_[0], dstep_.data());
  }
  void launch_gs_colour(int l, int c) {
    const auto& cb = m_.levels[l].colour_begin;
    const int count = cb[c + 1] - cb[c];
    if (count == 0) return;
    if (m_.solver.gs_thread_per_vertex)
      launch(k_gauss_seidel_1t<T>, blocks_for(count, kBlock1), kBlock1, 0, views_[l], cb[c], count);
    else if (gs_dependent_loads_)
      launch(k_gauss_seidel_dep<T>, unsigned(count / 32), kGsWarps * 32, 0, views_[l], cb[c]);
    else
      launch(k_gauss_seidel<T>, unsigned(count / 32), kGsWarps * 32, 0, views_[l], cb[c], may_preload(l, false));
  }
  void gs_sweep(int l) {
    for (int c = 0; c < 8; ++c) launch_gs_colour(l, c);
  }
  void launch_residual(int l, double* norm2) {
    launch(k_residual<T>, blocks_for(views_[l].n, kBlock1), kBlock1, 0, views_[l], norm2);
  }
  // b and u of coarse level lc from the residual of lc - 1; u of lc - 1 corrected from lc.
  void launch_restrict(int lc) {
    launch(k_restrict<T>, blocks_for(count_of(lc), kBlock1), kBlock1, 0, views_[lc - 1], views_[lc], order_of(lc), count_of(lc));
  }
  void launch_interpolate(int lc) {
    launch(k_interpolate<T>, blocks_for(views_[lc - 1].n, kBlock1), kBlock1, 0, views_[lc - 1], views_[lc]);
  }
  void launch_coarse_cg() {
    const int l = m_.n_levels() - 1;
    const int64_t n = views_[l].n;
    if (cg_smem_) {
      launch(k_coarse_cg_smem<T>, 1, unsigned(n), cg_smem_bytes_, views_[l], ell_, T(m_.solver.coarse_tolerance),
             m_.solver.coarse_max_iterations, flags_.data(), may_preload(l, true));
    } else {
      Strided<T> r{cg_r_.data(), 1, n}, p{cg_p_.data(), 1, n}, q{cg_q_.data(), 1, n};
      launch(k_coarse_cg<T>, 1, unsigned(cg_threads_), 0, views_[l], r, p, q, T(m_.solver.coarse_tolerance),
             m_.solver.coarse_max_iterations, flags_.data());
    }
    last_.coarse_cg = true;
  }

  // Warp-slot layout of the coarsest matrix for k_coarse_cg_smem; the old kernel stays the
  // fallback when a level has more than 1024 slots or its blocks do not fit in shared memory.
  void setup_coarse_ell(int device) {
    CoarseEllPlan p = plan_coarse_ell(m_.levels.back(), shared_memory_optin(device), sizeof(T));
    if (!p.use) return;
    EB_CUDA_CHECK(cudaFuncSetAttribute(k_coarse_cg_smem<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(p.smem_bytes)));
    ell_perm_.upload(p.perm);
    ell_base_.upload(p.bases);
    ell_src_.upload(p.src);
    ell_gA_.resize(size_t(std::max(p.global_slots, 1)) * 32 * 9, "hexmg coarse overflow blocks");
    ell_gy_.resize(size_t(std::max(p.global_slots, 1)) * 32, "hexmg coarse overflow neighbours");
    ell_ = CoarseEll{ell_perm_.data(), ell_base_.data(), ell_src_.data(), ell_gA_.data(), ell_gy_.data(), p.shared_slots, p.cap, p.warps};
    cg_global_slots_ = p.global_slots;
    cg_smem_bytes_ = p.smem_bytes;
    cg_smem_ = true;
  }

  void vcycle_level(int l, bool timed = false) {
    const int last = m_.n_levels() - 1;
    if (l == last) {
      phase_begin(timed, "coarse_cg");
      launch_coarse_cg();
      phase_end(timed);
      return;
    }
    phase_begin(timed, "gauss_seidel");
    for (int i = 0; i < m_.solver.pre_smooth; ++i) gs_sweep(l);
    phase_end(timed);
    phase_begin(timed, "residual");
    launch_residual(l, nullptr);
    phase_end(timed);
    phase_begin(timed, "restriction");
    launch_restrict(l + 1);
    phase_end(timed);
    vcycle_level(l + 1, timed);
    phase_begin(timed, "interpolation");
    launch_interpolate(l + 1);
    phase_end(timed);
    phase_begin(timed, "gauss_seidel");
    for (int i = 0; i < m_.solver.post_smooth; ++i) gs_sweep(l);
    phase_end(timed);
  }

  double residual_norm2(int l) {
    Flags* f = flags_.data();
    EB_CUDA_CHECK(cudaMemsetAsync(&f->norm2, 0, sizeof(double), stream_));
    launch_residual(l, &f->norm2);
    double n2 = 0;
    EB_CUDA_CHECK(cudaMemcpyAsync(&n2, &f->norm2, sizeof(double), cudaMemcpyDeviceToHost, stream_));
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return n2;
  }

  // Un-captured solve: fixed cycles (profile mode) or V-cycles to the tolerance.
  void solve_direct() {
    const SolverChoice& s = m_.solver;
    if (!s.tolerance_mode) {
      for (int c = 0; c < s.cycles; ++c) vcycle_level(0, s.profile);
      cycles_sum_ += s.cycles;
      ++solves_;
      last_iterations_ = s.cycles;
      last_converged_ = true;
      have_trace_residuals_ = false;
      return;
    }
    const double r0 = system_residual();
    double r = r0;
    int it = 0;
    while (it < s.max_iterations && r > s.tolerance * r0 && r0 > 0) {
      vcycle_level(0, s.profile);
      r = system_residual();
      ++it;
    }
    cycles_sum_ += it;
    ++solves_;
    last_iterations_ = it;
    have_trace_residuals_ = true;
    trace_initial_ = r0;
    trace_final_ = r;
    record_solve(std::isfinite(r) && r <= s.tolerance * r0);
  }

  void capture_graph() {
    cudaGraph_t graph = nullptr;
    EB_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    prepare(false);
    for (int c = 0; c < m_.solver.cycles; ++c) vcycle_level(0);
    launch_update();
    EB_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    EB_CUDA_CHECK(cudaGraphInstantiate(&graph_exec_, graph, 0));
    EB_CUDA_CHECK(cudaGraphDestroy(graph));
  }

  cudaStream_t stream_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
  cuda::EventTimer timer_;
  std::vector<LevelDev> dev_;
  std::vector<LevelView<T>> views_;
  DeviceBuffer<int32_t> ev_, ve_;
  DeviceBuffer<T> youngs_, R_, mass_, u0_, v0_, a0_, force_, presc_, factors_;
  DeviceBuffer<uint8_t> cmask_;
  DeviceBuffer<int> dstep_;  // step index within the current batch (device side)
  DeviceBuffer<Flags> flags_;
  DeviceBuffer<ElementFlags> volume_flags_;  // check_volumes()
  DeviceBuffer<T> cg_r_, cg_p_, cg_q_;
  DeviceBuffer<int32_t> ell_perm_, ell_base_, ell_src_;
  DeviceBuffer<T> ell_gA_;
  DeviceBuffer<int32_t> ell_gy_;
  CoarseEll ell_;
  int cg_global_slots_ = 0;
  size_t cg_smem_bytes_ = 0;
  bool cg_smem_ = false;  // k_coarse_cg_smem (else k_coarse_cg)
  // EB_HEXMG_GS=dependent-loads: the previous Gauss-Seidel kernel (same-run A/B timing).
  bool gs_dependent_loads_ = [] {
    const char* e = std::getenv("EB_HEXMG_GS");
    return e && std::string(e) == "dependent-loads";
  }();
  // EB_HEXMG_PDL=0: plain stream-ordered launches; EB_HEXMG_ORDER=colour: every kernel in
  // colour-subset order (both for same-run A/B timing, PERF_NOTES.md change 4).
  bool pdl_ = [] {
    const char* e = std::getenv("EB_HEXMG_PDL");
    return !(e && std::string(e) == "0");
  }();
  bool lattice_order_ = [] {
    const char* e = std::getenv("EB_HEXMG_ORDER");
    return !(e && std::string(e) == "colour");
  }();
  FineView<T> fv_;
  int cg_threads_ = 32;
  int64_t batch_first_step_ = 1;
  unsigned long long coarse_iter_done_ = 0, coarse_solves_done_ = 0;
  bool step_open_ = false;
};

}  // namespace

std::size_t estimate_device_bytes(const Model& m, Precision p, int device) {
  const int optin = shared_memory_optin(device);
  return p == Precision::Fp32 ? HexmgCuda<float>::planned_bytes(m, optin) : HexmgCuda<double>::planned_bytes(m, optin);
}

std::unique_ptr<HexmgSimulation> make_hexmg_cuda_impl(const Scenario& sc, const RunOptions& o) {
  Model m = build_model(sc, o);
  if (m.solver.jacobi_pcg) throw InputError("hexmg cuda: solver.variant jacobi-pcg runs on the cpu backend only (Fig. 11 is timed on one core)");
  const GpuInfo g = cuda_device_info(o.device);
  if (!g.usable) throw RuntimeFailure("hexmg cuda: " + g.reason);
  require_device_memory(double(estimate_device_bytes(m, o.precision, o.device)),
                        "hexmg cuda " + to_string(o.precision) + " on " + std::to_string(m.n_elems()) + " hexahedra (" +
                            std::to_string(m.n_levels()) + " multigrid levels)",
                        o.device, o.gpu_memory_limit);
  if (o.precision == Precision::Fp32) return std::make_unique<HexmgCuda<float>>(std::move(m), o.precision, o.device);
  return std::make_unique<HexmgCuda<double>>(std::move(m), o.precision, o.device);
}

std::unique_ptr<Simulation> make_hexmg_cuda(const Scenario& sc, const RunOptions& o) { return make_hexmg_cuda_impl(sc, o); }

}  // namespace eb::hexmg
