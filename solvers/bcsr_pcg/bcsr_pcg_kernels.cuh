#pragma once
// The arithmetic of bcsr-pcg on CUDA: the kernels of the phases of bcsr_pcg_simulation.h, launched
// by bcsr_pcg_cuda.cu (the driver: buffers, launch order, graphs) and included there alone. Element
// arrays are entry-major (value k of element e at k * E + e: one thread per element reads and
// writes them coalesced) except the local matrices, which are block-major (element_gather.h: a
// 3x3 block's 9 values contiguous, so that the gather's loads of a contribution touch 2-3
// sectors, not 9; k_matrix stores them through shared memory, still coalesced) and the local
// right-hand sides, which are element-major as on the CPU (a node's contribution, 3 values, in
// one sector for the node-wise gather). The global matrix is the sliced BCSR layout of
// solvers/linalg (Verschoor & Jalba's Fig. 2c), updated in place by the gather of Fig. 2d.
#include <cuda_runtime.h>

#include <cub/block/block_reduce.cuh>

#include <cstdint>

#include "solvers/bcsr_pcg/bcsr_pcg_element.h"
#include "solvers/common/device_checks.cuh"
#include "solvers/common/load_curve.h"
#include "solvers/linalg/element_gather.h"
#include "solvers/linalg/bcsr_slices.h"

namespace eb::bcsr_pcg::kernels {

using linalg::Offset;
constexpr int kElementThreads = 128;
constexpr int kVectorThreads = 256;
constexpr int kSliceEntries = 9 * linalg::SlicedBcsr<double>::kSliceRows;  // 288 values per step
constexpr int kWarpBlockEntries = 9 * 32;  // one 3x3 block of a warp's 32 elements (k_matrix)

struct MinKey {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a < b ? a : b; }
};

struct StepState {
  long long step;  // steps completed on the device (the state's index)
};

template <class T>
__device__ void load_nodes(const int32_t* conn, int64_t E, int64_t e, const T* f, T out[4][3]) {
  for (int a = 0; a < 4; ++a) {
    const int64_t n = conn[a * E + e];
    for (int i = 0; i < 3; ++i) out[a][i] = f[3 * n + i];
  }
}

template <class T>
__global__ void __launch_bounds__(kElementThreads)
    k_rotation(int64_t E, const int32_t* conn, const T* Dm_inv, const T* u, T* R, cuda::DeviceElementChecks* checks,
               const StepState* state) {
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned inverted = 0;
  unsigned long long first_inv = cuda::kNoKey, first_nf = cuda::kNoKey, det = cuda::kNoKey;
  // The state's own step number (fix, see BcsrPcgSimulation::advance: it was state->step + 1).
  const unsigned long long s = static_cast<unsigned long long>(state->step);
  if (e < E) {
    T dinv[9], uu[4][3], r[9], det_f;
    for (int k = 0; k < 9; ++k) dinv[k] = Dm_inv[k * E + e];
    load_nodes(conn, E, e, u, uu);
    const tet::TetStatus st = element_rotation(dinv, uu, r, det_f);
    for (int k = 0; k < 9; ++k) R[k * E + e] = r[k];
    if (st == tet::TetStatus::kNonFinite || !isfinite(double(det_f))) {
      first_nf = cuda::check_key(s, e);
    } else {
      det = cuda::det_key(double(det_f));
      if (det_f <= T(0)) {
        inverted = 1;
        first_inv = cuda::check_key(s, e);
      }
    }
  }
  using ReduceU = cub::BlockReduce<unsigned, kElementThreads>;
  using ReduceL = cub::BlockReduce<unsigned long long, kElementThreads>;
  __shared__ typename ReduceU::TempStorage tu;
  __shared__ typename ReduceL::TempStorage tl;
  const unsigned n_inv = ReduceU(tu).Sum(inverted);
  const unsigned long long b_inv = ReduceL(tl).Reduce(first_inv, MinKey());
  __syncthreads();
  const unsigned long long b_nf = ReduceL(tl).Reduce(first_nf, MinKey());
  __syncthreads();
  const unsigned long long b_det = ReduceL(tl).Reduce(det, MinKey());
  if (threadIdx.x == 0) cuda::add_checks(checks, s, n_inv, b_inv, b_nf, b_det);
}

template <class T>
struct MatrixParams {
  int64_t E;
  const int32_t* conn;
  const T *R, *Dm, *Dm_inv, *vol, *u, *v;
  tet::Lame<T> lame;
  ElementCoefficients<T> k;
  T *A, *b;
};

// One thread per element, but each 3x3 block of the local matrices leaves a warp together: the
// 32 elements' 9 values go through shared memory (row stride 9, odd: no bank conflicts) and out as
// 9 coalesced stores of the warp's 288 contiguous block-major values. So every thread of a warp
// must reach each put_block: a thread past E computes element E - 1 and writes nothing.
template <class T>
__global__ void __launch_bounds__(kElementThreads) k_matrix(MatrixParams<T> p) {
  __shared__ T stage[kElementThreads / 32][kWarpBlockEntries];
  const int64_t E = p.E;
  const int64_t mine = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int lane = int(threadIdx.x % 32);
  const int64_t e0 = mine - lane;  // the warp's first element
  const int64_t e = mine < E ? mine : E - 1;
  const int64_t stored = 9 * (E - e0 < 32 ? E - e0 : int64_t(32));  // values per block; <= 0 past E
  T* const warp_stage = stage[threadIdx.x / 32];
  auto put_block = [&](int a, int bn, const T* vals) {
    for (int c = 0; c < 9; ++c) warp_stage[9 * lane + c] = vals[c];
    __syncwarp();
    T* const out = p.A + linalg::block_major_offset(E, e0, 4 * a + bn, 0);
    for (int k = 0; k < 9; ++k)
      if (const int q = 32 * k + lane; q < stored) out[q] = warp_stage[q];
    __syncwarp();
  };
  T r[9], dm[9], dinv[9], uu[4][3], vv[4][3];
  for (int k = 0; k < 9; ++k) {
    r[k] = p.R[k * E + e];
    dm[k] = p.Dm[k * E + e];
    dinv[k] = p.Dm_inv[k * E + e];
  }
  load_nodes(p.conn, E, e, p.u, uu);
  load_nodes(p.conn, E, e, p.v, vv);
  // The element's 12 right-hand-side entries stay together (element-major, as on the CPU), so the
  // node-wise gather reads a contribution's 3 values from one sector instead of 3.
  element_system(r, dm, dinv, p.vol[e], p.lame, p.k, uu, vv, put_block, mine < E ? p.b + 12 * e : nullptr, 1);
}

// The gather of Fig. 2d, one index per block contribution (element_gather.h): one thread block per
// step of the sliced layout, one thread per value of the step. Thread t serves lane t / 9 and
// component t % 9, so a warp's loads of a sub-step are 4-5 lanes' contributions, 9 contiguous
// block-major values each (2 sectors in fp32, 3 in fp64), instead of one value of 32 contributions
// (a sector each); those lanes' indices and masks are broadcasts. The value stays at c * 32 + l of the step
// (the sliced layout's order, which the SpMV reads); the block's stores fill whole sectors in L2.
struct ComponentOffsets {
  int32_t v[9];
};

template <class T>
__global__ void __launch_bounds__(kSliceEntries)
    k_gather(const Offset* sub_ptr, const int32_t* block, const uint16_t* keep, ComponentOffsets off, const T* local,
             T* val) {
  const int64_t step = blockIdx.x;
  const int lane = threadIdx.x / 9, c = threadIdx.x % 9;
  val[step * kSliceEntries + c * 32 + lane] =
      linalg::sliced_gather_value(sub_ptr, block, keep, off.v, local, step, c, lane);
}

// The scatter comparison: one thread per element block adds its 9 values (atomics).
template <class T>
__global__ void __launch_bounds__(kElementThreads)
    k_scatter(int64_t E, const Offset* position, const uint16_t* keep, const T* local, T* val) {
  const int64_t id = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (id >= 16 * E) return;
  const int64_t e = id / 16;
  const int ab = int(id % 16);
  const Offset pos = position[id];  // step * 32 + lane
  const Offset base = (pos / 32) * kSliceEntries + pos % 32;
  const uint16_t kp = keep[id];
  const T* const blk = local + linalg::block_major_offset(E, e, ab, 0);
  for (int c = 0; c < 9; ++c)
    if (kp >> c & 1) atomicAdd(&val[base + c * 32], blk[c]);
}

template <class T>
__global__ void __launch_bounds__(kVectorThreads)
    k_gather_rhs(int64_t N, const Offset* node_ptr, const int64_t* node_slot, const uint8_t* constrained,
                 const T* local_rhs, T* rhs) {
  const int64_t n = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (n >= N) return;
  T acc[3] = {T(0), T(0), T(0)};
  // node_slot = 4 e + a: the element-major local_rhs holds node a of element e at 3 (4 e + a).
  for (Offset k = node_ptr[n]; k < node_ptr[n + 1]; ++k) {
    const int64_t slot = node_slot[k];
    for (int i = 0; i < 3; ++i) acc[i] += local_rhs[3 * slot + i];
  }
  const uint8_t c = constrained[n];
  for (int i = 0; i < 3; ++i) rhs[3 * n + i] = (c >> i & 1) ? T(0) : acc[i];
}

// Point and surface loads, one thread per loaded node (its entries in order: no atomics).
template <class T>
__global__ void k_loads(int nodes, const int32_t* load_node, const int* load_ptr, const int* load_curve,
                        const double* load_force, const uint8_t* constrained, const double* factors, T* rhs) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= nodes) return;
  const int64_t n = load_node[k];
  for (int j = load_ptr[k]; j < load_ptr[k + 1]; ++j)
    for (int d = 0; d < 3; ++d)
      if (!(constrained[n] >> d & 1)) rhs[3 * n + d] += T(factors[load_curve[j]] * load_force[3 * j + d]);
}

// Graph mode: factor of every curve at the state's time, times dt (the c_f of the loads).
__global__ void k_curve_factors(int curves, const CurveParams* c, const StepState* state, double dt,
                                double* factors) {
  const int k = threadIdx.x;
  if (k < curves) factors[k] = dt * curve_factor(c[k], double(state->step) * dt);
}

template <class T>
__global__ void __launch_bounds__(kVectorThreads) k_diagonal(int64_t n, const Offset* pos, const T* val, T* d) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) d[i] = val[pos[i]];
}

template <class T>
__global__ void __launch_bounds__(kVectorThreads)
    k_integrate(int64_t n, const T* sol, T* u, T* v, T dt, bool dynamic, StepState* state) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    const T s = sol[i];
    if (dynamic) {
      v[i] = s;
      u[i] += dt * s;
    } else {
      u[i] += s;
    }
  }
  if (dynamic && i == 0) state->step += 1;
}

}  // namespace eb::bcsr_pcg::kernels
