// The CUDA CG engine: the steps of cg_algorithm.h as kernels on the engine's stream, scalars in
// device memory, deterministic grid reductions whose last block runs the scalar step, and
// `check_every` iterations per CUDA graph launch between host reads of the status.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <cooperative_groups.h>

#include "meshes/errors.h"
#include "solvers/linalg/bcsr_device.cuh"
#include "solvers/linalg/cg_algorithm.h"
#include "solvers/linalg/device_formats.cuh"
#include "solvers/linalg/grid_reduce.cuh"

namespace eb::linalg::detail {

namespace {

constexpr int kThreads = 256;

template <int N>
__device__ bool cg_grid_sum(const Sums<N>& mine, double* partials, unsigned* ticket, Sums<N>& total) {
  return grid_sum<N, kThreads>(mine, partials, ticket, total);
}

__device__ bool stopped(const CgScalars* s) { return s->status != cg_detail::kRunning; }

#define EB_GRID_LOOP(i, n) \
  for (Offset i = Offset(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += Offset(gridDim.x) * blockDim.x)

template <class T>
__global__ void __launch_bounds__(kThreads) k_start(Offset n, const T* b, const T* q, const T* dinv, T* r, T* p,
                                                    CgScalars* s, double* partials, unsigned* ticket,
                                                    double tolerance, int max_iterations, double* history) {
  Sums<3> m = {{0, 0, 0}};
  EB_GRID_LOOP(i, n) cg_start_entry(i, b, q, dinv, r, p, m.v[0], m.v[1], m.v[2]);
  Sums<3> t;
  if (cg_grid_sum(m, partials, ticket, t)) cg_start(*s, t.v[0], t.v[1], t.v[2], tolerance, max_iterations, history);
}

template <class T>
__global__ void __launch_bounds__(kThreads) k_alpha(Offset n, const T* p, const T* q, CgScalars* s,
                                                    double* partials, unsigned* ticket) {
  if (stopped(s)) return;
  Sums<1> m = {{0}};
  EB_GRID_LOOP(i, n) m.v[0] += double(p[i]) * double(q[i]);
  Sums<1> t;
  if (cg_grid_sum(m, partials, ticket, t)) cg_set_alpha(*s, t.v[0]);
}

template <class T>
__global__ void __launch_bounds__(kThreads) k_update(Offset n, const T* p, const T* q, const T* dinv, T* x, T* r,
                                                     CgScalars* s, double* partials, unsigned* ticket,
                                                     double* history) {
  if (stopped(s)) return;
  const T alpha = T(s->alpha);
  Sums<2> m = {{0, 0}};
  EB_GRID_LOOP(i, n) cg_update_entry(i, alpha, p, q, dinv, x, r, m.v[0], m.v[1]);
  Sums<2> t;
  if (cg_grid_sum(m, partials, ticket, t)) cg_finish_update(*s, t.v[0], t.v[1], history);
}

template <class T>
__global__ void __launch_bounds__(kThreads) k_direction(Offset n, const T* r, const T* dinv, T* p, const CgScalars* s) {
  if (stopped(s)) return;
  const T beta = T(s->beta);
  EB_GRID_LOOP(i, n) cg_direction_entry(i, beta, r, dinv, p);
}

// Single reduction: delta = u . w where the operator cannot fuse it into the product.
template <class T>
__global__ void __launch_bounds__(kThreads) k_dot(Offset n, const T* u, const T* w, CgScalars* s, double* partials,
                                                  unsigned* ticket) {
  Sums<1> m = {{0}};
  EB_GRID_LOOP(i, n) m.v[0] += double(u[i]) * double(w[i]);
  Sums<1> t;
  if (cg_grid_sum(m, partials, ticket, t)) s->delta = t.v[0];
}

// Single reduction, step 1. Every block computes alpha and beta from the scalars itself (the same
// bits in each); the last block, which takes its ticket after every other block has read the
// scalars, is the one that overwrites them. A breakdown found there stops the solve without a
// reduction: block 0 records it, every block returns.
template <class T>
__global__ void __launch_bounds__(kThreads) k_sr_update(Offset n, const T* w, const T* dinv, T* p, T* sv, T* x, T* r,
                                                        T* u, CgScalars* s, double* partials, unsigned* ticket,
                                                        double* history) {
  if (stopped(s)) return;
  double alpha_d = 0, beta_d = 0;
  if (const int st = cg_sr_coefficients(*s, alpha_d, beta_d); st != cg_detail::kRunning) {
    if (blockIdx.x == 0 && threadIdx.x == 0) s->status = st;
    return;
  }
  const bool first = s->iteration == 0;
  const T alpha = T(alpha_d), beta = T(beta_d);
  Sums<2> m = {{0, 0}};
  EB_GRID_LOOP(i, n) cg_sr_update_entry(i, first, alpha, beta, w, dinv, p, sv, x, r, u, m.v[0], m.v[1]);
  Sums<2> t;
  if (cg_grid_sum(m, partials, ticket, t)) cg_sr_finish_update(*s, alpha_d, t.v[0], t.v[1], history);
}

// ---- single reduction with the reductions in the next kernel (DeviceCgEngine::next_kernel_) ----
// At ~0.1M unknowns each last-block reduction above costs ~2.5-3 us (the block sums, a fence, the
// ticket, the last block's second read of the partials: a serial tail), two per iteration. Here
// no kernel finishes its own reduction: the update pass and the product only write per-block
// partial sums, and the next update's blocks each add them (sum_partials, the same order in every
// block, so all blocks hold the same bits) before they use the totals. So the scalars are read and
// written by the same kernel: they alternate between two slots (in: the state the previous update
// left; out: written by block 0), as do the update's partial sums. A state whose alpha is not 0
// still owes the finish of its iteration (cg_finish_update with the partials `pu`); the start
// leaves alpha = 0, and every update leaves its alpha > 0 (pap > 0 and rho > 0 while running).

// The pending finish of `st`, if any: the previous update's rz and rr from its partials.
__device__ void sr_apply_pending(CgScalars& st, const double* pu, unsigned nu, double* history) {
  if (st.status != cg_detail::kRunning || st.alpha == 0) return;
  const Sums<2> t = sum_partials<2, kThreads>(pu, nu);
  cg_finish_update(st, t.v[0], t.v[1], blockIdx.x == 0 && threadIdx.x == 0 ? history : nullptr);
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    k_sr_update_next(Offset n, const T* w, const T* dinv, T* p, T* sv, T* x, T* r, T* u, const CgScalars* in,
                     CgScalars* out, const double* pu_in, double* pu_out, unsigned nu, const double* pd, unsigned nd,
                     double* history, bool trigger_late) {
  // The state and p, s, x, r are the previous update's (complete before the product that precedes
  // this kernel passed its own pdl_wait()), so they are read while the product may still drain.
  CgScalars st = *in;
  const bool was_running = st.status == cg_detail::kRunning;
  // This thread's first entries are loaded into L1 while the partial sums are read (from L2) and
  // reduced: the pass needs the scalars, its loads do not.
  const Offset first_i = Offset(blockIdx.x) * blockDim.x + threadIdx.x;
  auto prefetch = [first_i](const T* a) {
    if (a) asm volatile("prefetch.global.L1 [%0];" ::"l"(a + first_i));
  };
  if (was_running && first_i < n) prefetch(dinv), prefetch(p), prefetch(sv), prefetch(x), prefetch(r);
  pdl_wait();  // the product's w and partial sums (at once when launched normally)
  if (was_running && first_i < n) prefetch(w);
  if (!trigger_late) pdl_launch_dependents();
  double alpha_d = 0, beta_d = 0;
  if (was_running) {
    // Every block sums the same partials: the same totals, so the same branches in all blocks.
    // The update's (rz, rr) are read even where no finish is owed (after a start), and not used
    // then; pu_ is zeroed at allocation so that the first solve reads defined values.
    const Sums<3> t = sum_partials<2, 1, kThreads>(pu_in, nu, pd, nd);
    if (st.alpha != 0) cg_finish_update(st, t.v[0], t.v[1], blockIdx.x == 0 && threadIdx.x == 0 ? history : nullptr);
    if (st.status == cg_detail::kRunning) {
      st.delta = t.v[2];
      if (const int code = cg_sr_coefficients(st, alpha_d, beta_d); code != cg_detail::kRunning) st.status = code;
    }
  }
  const bool running = st.status == cg_detail::kRunning;
  if (running) st.alpha = alpha_d;  // this iteration's finish is now owed (alpha > 0)
  if (blockIdx.x == 0 && threadIdx.x == 0) *out = st;  // stopped states are carried to the next slot
  if (!running || !was_running) return;
  const bool first = st.iteration == 0;
  const T alpha = T(alpha_d), beta = T(beta_d);
  Sums<2> m = {{0, 0}};
  EB_GRID_LOOP(i, n) cg_sr_update_entry(i, first, alpha, beta, w, dinv, p, sv, x, r, u, m.v[0], m.v[1]);
  if (trigger_late) pdl_launch_dependents();
  Sums<2> unused;
  cg_grid_sum(m, pu_out, nullptr, unused);
}

// Single reduction without a fused product: delta's partial sums for the next update.
template <class T>
__global__ void __launch_bounds__(kThreads) k_dot_partials(Offset n, const T* u, const T* w, double* partials) {
  Sums<1> m = {{0}};
  EB_GRID_LOOP(i, n) m.v[0] += double(u[i]) * double(w[i]);
  Sums<1> unused;
  cg_grid_sum(m, partials, nullptr, unused);
}

// The state the host reads (and last_result's history): the latest slot with its pending finish
// applied, one block. The slot itself keeps owing the finish, which the next update then applies
// to the same bits.
__global__ void __launch_bounds__(kThreads) k_sr_publish(const CgScalars* in, const double* pu, unsigned nu,
                                                         CgScalars* host_state, double* history) {
  CgScalars st = *in;
  sr_apply_pending(st, pu, nu, history);
  if (threadIdx.x == 0) *host_state = st;
}

// ---- single reduction as one persistent kernel per chunk (DeviceCgEngine::persistent_) ----
// At ~0.1M unknowns the two kernels of a next-kernel iteration still cost ~3 us each of launch,
// ramp and drain against ~9 us of bytes (PERF_NOTES.md). Here a chunk's iterations run inside one
// cooperative launch: the kernel boundaries become grid barriers, two per iteration (u complete
// before the product reads it; w and the product's partials complete before the next update).
// The work is cut exactly as the next-kernel launches cut it: block b of this kernel runs the
// update's blocks b, b + gridDim.x, ... (of nu = DeviceCgEngine::grid_) and the split product's
// shares b, b + gridDim.x, ... (bcsr_device.cuh), each with the same loop and block reduction, and
// every block adds the partial sums as k_sr_update_next's blocks do; so the iterates are those of
// the next-kernel (and last-block) engine, bit for bit. The sliced BCSR product is inside, so this
// serves device BCSR operators split over 2, 4 or 8 warps per slice. Measured (H100, box80 and
// bunny53): slower than the next-kernel graph by 10-20% per iteration, the two barriers costing
// ~1.8 us each at 660 blocks, about what the two kernel boundaries cost; kept as an opt-in mode
// (EB_CG_SR_REDUCTION=persistent) for A/B runs, never chosen by default.

// Resident blocks per SM the persistent kernel is compiled for (48 registers): box80's 559 product
// shares (and 419 update blocks) then run in one wave on 132 SMs (660 blocks); at its natural 64
// registers (4 per SM, 528 blocks) 31 blocks would run two shares each, doubling the product phase.
constexpr int kPersistentBlocksPerSm = 5;

template <class T>
struct BcsrView {
  Index slices;
  const Offset* slice_ptr;
  const Index* perm;
  const Index* col;
  const T* val;
};

// state: the slot the chunk starts from and leaves (owing its last update's finish, as the
// next-kernel slots do); host_state: that state with the finish applied (k_sr_publish's work).
// pu: the update's partial sums, two slots of 2 * nu; a chunk has an even number of iterations and
// starts reading slot 0 (start() resets the parity), so a chunk that runs through ends in slot 0.
template <class T, int W>
__global__ void __launch_bounds__(kThreads, kPersistentBlocksPerSm)
    k_sr_persistent(int iterations, Offset n, BcsrView<T> a, const T* dinv, T* p, T* sv, T* x, T* r, T* u, T* w,
                    CgScalars* state, CgScalars* host_state, double* pu, unsigned nu, double* pd, unsigned nd,
                    double* history) {
  static_assert(kThreads == 32 * kBcsrSplitWarps, "the product's shares are blocks of kThreads threads");
  __shared__ BcsrSplitScratch<T> part;
  // The block's state in shared memory, kept by thread 0 (every block holds the same bits): held in
  // registers by every thread across the passes it cost ~20 registers and spills.
  __shared__ CgScalars st;
  __shared__ double beta_s;
  const cooperative_groups::grid_group grid = cooperative_groups::this_grid();
  if (threadIdx.x == 0) st = *state;
  __syncthreads();
  unsigned par = 0;
  bool synced = false;  // every block has read *state: block 0 may overwrite it
  for (int k = 0; k < iterations && st.status == cg_detail::kRunning; ++k) {
    // The scalars from the partial sums (k_sr_update_next's order: every block gets the same bits).
    const Sums<3> t = sum_partials<2, 1, kThreads>(pu + size_t(par) * 2 * nu, nu, pd, nd);
    if (threadIdx.x == 0) {
      if (st.alpha != 0) cg_finish_update(st, t.v[0], t.v[1], blockIdx.x == 0 ? history : nullptr);
      double alpha_d = 0, beta_d = 0;
      if (st.status == cg_detail::kRunning) {
        st.delta = t.v[2];
        if (const int code = cg_sr_coefficients(st, alpha_d, beta_d); code != cg_detail::kRunning) st.status = code;
      }
      if (st.status == cg_detail::kRunning) st.alpha = alpha_d;
      beta_s = beta_d;
    }
    __syncthreads();
    if (st.status != cg_detail::kRunning) break;
    const bool first = st.iteration == 0;
    const T alpha = T(st.alpha), beta = T(beta_s);
    double* const pu_out = pu + size_t(1 - par) * 2 * nu;
    for (unsigned b = blockIdx.x; b < nu; b += gridDim.x) {
      Sums<2> m = {{0, 0}};
      for (Offset i = Offset(b) * kThreads + threadIdx.x; i < n; i += Offset(nu) * kThreads)
        cg_sr_update_entry(i, first, alpha, beta, w, dinv, p, sv, x, r, u, m.v[0], m.v[1]);
      block_sum_to<2, kThreads>(m, pu_out + 2 * size_t(b));
      __syncthreads();
    }
    par = 1 - par;
    // The product's first matrix steps do not depend on u: into L1 while the barrier completes.
    if (blockIdx.x < nd) bcsr_split_share_prefetch<T, W>(blockIdx.x, a.slices, a.slice_ptr, a.col, a.val);
    grid.sync();  // u is complete
    for (unsigned b = blockIdx.x; b < nd; b += gridDim.x) {
      const double mine = bcsr_split_share<T, W, true>(b, a.slices, a.slice_ptr, a.perm, a.col, a.val, u, w, part);
      block_sum_to<1, kThreads>(Sums<1>{{mine}}, pd + b);
      __syncthreads();
    }
    grid.sync();  // w and every partial sum are complete
    synced = true;
  }
  if (blockIdx.x != 0) return;
  __syncthreads();
  CgScalars pub = st;
  if (synced && threadIdx.x == 0) *state = pub;
  sr_apply_pending(pub, pu + size_t(par) * 2 * nu, nu, history);
  if (threadIdx.x == 0) *host_state = pub;
}

template <class T>
using PersistentKernel = void (*)(int, Offset, BcsrView<T>, const T*, T*, T*, T*, T*, T*, T*, CgScalars*, CgScalars*,
                                  double*, unsigned, double*, unsigned, double*);
template <class T>
PersistentKernel<T> persistent_kernel(int warps_per_slice) {
  switch (warps_per_slice) {
    case 2: return k_sr_persistent<T, 2>;
    case 4: return k_sr_persistent<T, 4>;
    case 8: return k_sr_persistent<T, 8>;
    default: return nullptr;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) k_jacobi_inverse(Offset n, const T* d, T* dinv) {
  EB_GRID_LOOP(i, n) dinv[i] = jacobi_inverse_entry(d[i]);
}
#undef EB_GRID_LOOP

// How a single-reduction solve finishes its reductions. Next kernel: each update block reads every
// partial sum (its own kernel's last ones and the product's: grid + nd doubles, 2 per update
// block), so the reads grow with the square of the block counts: worth it at ~0.1M unknowns
// (box80: 419 update blocks, 559 product blocks, 4.7 MB of L2 reads per iteration against two
// ~2.5-3 us tails), not at ~1M (~40 MB). Persistent: the same sums inside one kernel per chunk,
// where the operator is a split device BCSR (`persistent_ok`); measured 10-20% slower than the
// next-kernel graph at ~0.1M unknowns on the H100 (its grid barriers cost ~1.8 us each: PERF_NOTES.md),
// so it is never chosen unless asked for. EB_CG_SR_REDUCTION=last-block, next-kernel or persistent
// fixes the choice (tests, same-run A/B timing); unset, the partials a solve reads decide.
enum class SrReduction { LastBlock, NextKernel, Persistent };

// Whether the next-kernel single reduction launches its kernels as programmatic dependents, and
// when each lets the next one start: early (once it has waited) or late (once its blocks have done
// their pass). EB_CG_PDL=0, early or late fixes it (A/B runs); unset: late in fp32, off in fp64.
// Measured on the H100 at ~0.1M unknowns (PERF_NOTES.md, marginal iteration): fp32 late 10.0 us
// against 11.4-11.6 off and 10.8-11.2 early; fp64 off 19.4-22.0 us, late 20.2-22.1, early 20.4-23.4
// (early lets the product's blocks wait beside the update's, which in fp64 leaves the product
// fewer SMs' room).
constexpr int kPdlOff = 0, kPdlEarly = 1, kPdlLate = 2;
int programmatic_launch_mode(std::size_t value_bytes) {
  const char* e = std::getenv("EB_CG_PDL");
  if (!e || !*e) return value_bytes == 4 ? kPdlLate : kPdlOff;
  const std::string v(e);
  if (v == "early") return kPdlEarly;
  if (v == "late") return kPdlLate;
  if (v == "0") return kPdlOff;
  throw InputError("EB_CG_PDL='" + v + "': expected 0, early or late (or unset)");
}

SrReduction sr_reduction_mode(unsigned grid, unsigned nd, bool persistent_ok, const std::string& op_name) {
  constexpr double kMaxPartialBytes = 8e6;  // per iteration, summed over the update's blocks
  if (const char* e = std::getenv("EB_CG_SR_REDUCTION"); e && *e) {
    const std::string v(e);
    if (v == "next-kernel") return SrReduction::NextKernel;
    if (v == "last-block") return SrReduction::LastBlock;
    if (v == "persistent") {
      if (!persistent_ok)
        throw InputError("EB_CG_SR_REDUCTION=persistent: operator '" + op_name +
                         "' cannot run inside the persistent kernel (a device BCSR split over 2, 4 or 8 warps per "
                         "slice, on a device with cooperative launch, can)");
      return SrReduction::Persistent;
    }
    throw InputError("EB_CG_SR_REDUCTION='" + v + "': expected last-block, next-kernel or persistent (or unset)");
  }
  return double(grid) * double(2 * grid + nd) * sizeof(double) > kMaxPartialBytes ? SrReduction::LastBlock
                                                                                     : SrReduction::NextKernel;
}

template <class T>
class DeviceCgEngine final : public CgSolver<T>::Engine {
 public:
  DeviceCgEngine(const LinearOperator<T>& A, const CgOptions& o) : A_(A), o_(o), n_(A.rows()) {
    if (o.stream)
      stream_ = cuda_stream(o.stream);
    else
      EB_CUDA_CHECK(cudaStreamCreate(&stream_));
    own_stream_ = !o.stream;
    try {
      allocate();
      keep_operator_in_l2();
    } catch (...) {
      release();
      throw;
    }
  }
  ~DeviceCgEngine() override { release(); }

  CgResult solve(const T* b, T* x) override {
    b_ = b;
    const size_t bytes = size_t(n_) * sizeof(T);
    if (n_ > 0) EB_CUDA_CHECK(cudaMemcpyAsync(x_.data(), x, bytes, cudaMemcpyDeviceToDevice, stream_));
    start_steps();
    publish();
    read_scalars();
    while (host_->status == cg_detail::kRunning) {
      enqueue_chunk();
      read_scalars();
    }
    if (n_ > 0) EB_CUDA_CHECK(cudaMemcpyAsync(x, x_.data(), bytes, cudaMemcpyDeviceToDevice, stream_));
    std::vector<double> history(size_t(host_->iteration) + 1);
    EB_CUDA_CHECK(cudaMemcpyAsync(history.data(), history_.data(), history.size() * sizeof(double),
                                  cudaMemcpyDeviceToHost, stream_));
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return cg_result(*host_, history.data());
  }

  void refresh_preconditioner() override {
    if (!dinv_.size()) return;
    A_.diagonal(diag_.data(), stream_);
    k_jacobi_inverse<T><<<grid_, kThreads, 0, stream_>>>(n_, diag_.data(), dinv_.data());
    EB_CUDA_CHECK_LAUNCH();
  }

  // The whole solve as plain kernel launches (no graph of its own, no host read), so that a caller
  // capturing its stream records it inside its own graph.
  void enqueue(const T* b, T* x) override {
    b_ = b;
    const size_t bytes = size_t(n_) * sizeof(T);
    if (n_ > 0) EB_CUDA_CHECK(cudaMemcpyAsync(x_.data(), x, bytes, cudaMemcpyDeviceToDevice, stream_));
    start_steps();
    for (int k = 0; k < o_.max_iterations; ++k) iteration_steps();
    publish();
    if (n_ > 0) EB_CUDA_CHECK(cudaMemcpyAsync(x, x_.data(), bytes, cudaMemcpyDeviceToDevice, stream_));
  }

  CgResult last_result() override {
    read_scalars();
    std::vector<double> history(size_t(host_->iteration) + 1);
    EB_CUDA_CHECK(cudaMemcpyAsync(history.data(), history_.data(), history.size() * sizeof(double),
                                  cudaMemcpyDeviceToHost, stream_));
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return cg_result(*host_, history.data());
  }

  // ---- the steps (cg_algorithm.h) ----
  void apply_to_x() { A_.apply(x_.data(), q_.data(), stream_); }
  void apply_to_p() { A_.apply(p_.data(), q_.data(), stream_); }
  void start() {
    // The single-reduction start writes u = M r where the standard one writes p = M r.
    T* z = o_.single_reduction ? u() : p_.data();
    parity_ = 0;
    k_start<T><<<grid_, kThreads, 0, stream_>>>(n_, b_, q_.data(), dinv(), r_.data(), z,
                                                next_kernel_ ? sr_state_.data() : scalars_.data(),
                                                partials_.data(), ticket_.data(), o_.tolerance, o_.max_iterations,
                                                history_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void reduce_alpha() {
    k_alpha<T><<<grid_, kThreads, 0, stream_>>>(n_, p_.data(), q_.data(), scalars_.data(), partials_.data(),
                                                ticket_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void update_solution() {
    k_update<T><<<grid_, kThreads, 0, stream_>>>(n_, p_.data(), q_.data(), dinv(), x_.data(), r_.data(),
                                                 scalars_.data(), partials_.data(), ticket_.data(), history_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void update_direction() {
    k_direction<T><<<grid_, kThreads, 0, stream_>>>(n_, r_.data(), dinv(), p_.data(), scalars_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void apply_dot_u() {
    if (next_kernel_) {  // partial sums only: the next update adds them
      if (fused_dot_) {
        A_.apply_dot(u(), w_.data(), DotTarget{pd_.data(), nullptr, nullptr, pdl_ != kPdlOff, pdl_ == kPdlLate},
                     stream_);
        return;
      }
      A_.apply(u(), w_.data(), stream_);
      k_dot_partials<T><<<grid_, kThreads, 0, stream_>>>(n_, u(), w_.data(), pd_.data());
      EB_CUDA_CHECK_LAUNCH();
      return;
    }
    // The member's device address, computed without dereferencing a device pointer on the host.
    double* delta = reinterpret_cast<double*>(reinterpret_cast<char*>(scalars_.data()) + offsetof(CgScalars, delta));
    if (fused_dot_) {
      A_.apply_dot(u(), w_.data(), DotTarget{partials_.data(), ticket_.data(), delta}, stream_);
      return;
    }
    A_.apply(u(), w_.data(), stream_);
    k_dot<T><<<grid_, kThreads, 0, stream_>>>(n_, u(), w_.data(), scalars_.data(), partials_.data(), ticket_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void sr_update() {
    if (next_kernel_) {
      const size_t slot = size_t(grid_) * 2;
      CgScalars* state = sr_state_.data();
      cuda::launch_kernel(
          pdl_ != kPdlOff, k_sr_update_next<T>, dim3(grid_), dim3(kThreads), 0, stream_, Offset(n_),
          static_cast<const T*>(w_.data()), dinv(), p_.data(),
          s_vec_.data(), x_.data(), r_.data(), u(), static_cast<const CgScalars*>(state + parity_),
          state + (1 - parity_), static_cast<const double*>(pu_.data() + parity_ * slot),
          pu_.data() + (1 - parity_) * slot, grid_, static_cast<const double*>(pd_.data()), nd_, history_.data(),
          pdl_ == kPdlLate);
      parity_ = 1 - parity_;
      return;
    }
    k_sr_update<T><<<grid_, kThreads, 0, stream_>>>(n_, w_.data(), dinv(), p_.data(), s_vec_.data(), x_.data(),
                                                    r_.data(), u(), scalars_.data(), partials_.data(), ticket_.data(),
                                                    history_.data());
    EB_CUDA_CHECK_LAUNCH();
  }

 private:
  void allocate() {
    const size_t n = size_t(n_);
    x_.resize(n, "CG x");
    r_.resize(n, "CG r");
    p_.resize(n, "CG p");
    q_.resize(n, "CG q");
    if (o_.preconditioner == Preconditioner::Jacobi && n > 0) {
      diag_.resize(n, "CG diagonal");
      A_.diagonal(diag_.data(), stream_);
      EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
      dinv_.upload(jacobi_inverse(diag_.to_host(), A_.name()));
    }
    int device = 0, sms = 1;
    EB_CUDA_CHECK(cudaGetDevice(&device));
    EB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    // Grid-stride vector kernels: one resident wave (8 blocks of 256 threads fill an SM's 2048
    // threads), never more blocks than 256-entry chunks. Fixed per solver: the reduction order is too.
    // EB_CG_ENTRIES_PER_THREAD=k (A/B runs) gives each thread k entries' worth of blocks instead.
    Offset per_thread = 1;
    if (const char* e = std::getenv("EB_CG_ENTRIES_PER_THREAD"); e && *e) {
      char* end = nullptr;
      const long v = std::strtol(e, &end, 10);
      if (*end != '\0' || v < 1)
        throw InputError(std::string("EB_CG_ENTRIES_PER_THREAD='") + e + "': expected a positive integer");
      per_thread = v;
    }
    grid_ = unsigned(std::clamp<Offset>((Offset(n_) + kThreads * per_thread - 1) / (kThreads * per_thread), 1,
                                        Offset(8) * sms));
    if (o_.single_reduction) {
      s_vec_.resize(n, "CG s");
      w_.resize(n, "CG w");
      if (dinv_.size()) u_.resize(n, "CG u");
      fused_dot_ = A_.fused_dot_blocks() > 0;
      nd_ = fused_dot_ ? unsigned(A_.fused_dot_blocks()) : grid_;
      const bool persistent_ok = prepare_persistent(sms);
      const SrReduction mode = sr_reduction_mode(grid_, nd_, persistent_ok, A_.name());
      next_kernel_ = mode != SrReduction::LastBlock;
      persistent_ = mode == SrReduction::Persistent;
      if (next_kernel_ && !std::getenv("EB_CG_ENTRIES_PER_THREAD")) {
        // Two entries per thread: half as many update blocks, each reading half as many update
        // partial sums (box80: 210 blocks x 979 doubles instead of 419 x 1,397); measured on the
        // H100 at ~0.1M unknowns: 1.1-1.6 us less per iteration (PERF_NOTES.md), 4 and 8 slower.
        grid_ = unsigned(std::clamp<Offset>((Offset(n_) + 2 * kThreads - 1) / (2 * kThreads), 1, Offset(8) * sms));
        if (!fused_dot_) nd_ = grid_;  // k_dot_partials runs on the vector grid
      }
      pdl_ = next_kernel_ && !persistent_ ? programmatic_launch_mode(sizeof(T)) : kPdlOff;
      if (next_kernel_) {
        sr_state_.resize(2, "CG single-reduction states");
        pu_.resize(size_t(grid_) * 2 * 2, "CG update partial sums");
        pu_.fill_zero();  // read (not used) by the first update after a start
        pd_.resize(nd_, "CG product-dot partial sums");
        // Every entry is written by each product before the update reads it: NaN (all bits set)
        // until then, so that a partial sum read but never written shows as a NaN stop, not as a
        // silently wrong delta.
        EB_CUDA_CHECK(cudaMemset(pd_.data(), 0xff, pd_.bytes()));
        chunk_even_ = true;
      }
    }
    partials_.resize(std::max(size_t(grid_) * 3, fused_dot_ ? A_.fused_dot_blocks() : size_t(0)), "CG partial sums");
    ticket_.resize(1, "CG ticket");
    ticket_.fill_zero();
    scalars_.resize(1, "CG scalars");
    history_.resize(size_t(o_.max_iterations) + 1, "CG residual history");
    chunk_ = std::max(1, std::min(o_.check_every, o_.max_iterations));
    // Next-kernel reductions alternate two state slots per iteration: an even chunk ends where it
    // began, so its graph serves every launch (iterations past a stop do nothing).
    if (chunk_even_) chunk_ += chunk_ & 1;
    EB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_), sizeof(CgScalars)));
  }

  // CgOptions::l2_resident_operator (EB_CG_L2_WINDOW=0 or 1 overrides it: same-process A/B timing).
  // The window covers the operator's values; the share marked persisting (the hit ratio) is what a
  // set-aside of half the device's largest one holds, and the rest of the window streams (evicted
  // first), so that values the set-aside cannot hold do not push out the vectors. Measured on the
  // H100 (largest set-aside 32.8 MB; box80 fp64 single reduction, values 36.4 MB, marginal
  // iteration, each setting alone in its process; PERF_NOTES.md): 23.2-24.4 us without the window;
  // set-aside and persisting share 16.4 MB: 16.8-17.0 us; 11.5 MB: 16.9-17.0; 8.2 MB: 17.5-17.6;
  // a 32.8 MB set-aside with 16.4 MB persisting: 17.1-17.5, with 32.8 MB persisting: 21.0-21.3.
  // The set-aside is not free for the rest of the process: while it is raised, every kernel's DRAM
  // streaming slows (triad 2.85 TB/s at the default 9.8 MB, 2.73 at 16.4 MB, 1.37 at 32.8 MB), so
  // it stays at half the largest.
  void keep_operator_in_l2() {
    bool want = o_.l2_resident_operator;
    if (const char* e = std::getenv("EB_CG_L2_WINDOW"); e && *e) {
      const std::string v(e);
      if (v != "0" && v != "1") throw InputError("EB_CG_L2_WINDOW='" + v + "': expected 0 or 1 (or unset)");
      want = v == "1";
    }
    const auto hot = A_.hot_storage();
    if (!want || !hot.data || !hot.bytes) return;
    int device = 0, max_persisting = 0, max_window = 0, l2_bytes = 0;
    EB_CUDA_CHECK(cudaGetDevice(&device));
    EB_CUDA_CHECK(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device));
    EB_CUDA_CHECK(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device));
    EB_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    if (max_persisting <= 0 || max_window <= 0) return;  // a device without persisting L2 lines
    // Values larger than the whole L2 stream through it whatever is marked: there the window only
    // costs (H100, box160 fp64 single reduction, 812K DOFs, 0.28 GB of values: 153 -> 190 us per iteration).
    if (hot.bytes > size_t(l2_bytes)) return;
    const size_t window = std::min(hot.bytes, size_t(max_window));
    const size_t set_aside = std::min(window, size_t(max_persisting) / 2);
    EB_CUDA_CHECK(cudaDeviceGetLimit(&old_set_aside_, cudaLimitPersistingL2CacheSize));
    if (set_aside > old_set_aside_) {
      EB_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, set_aside));
      set_aside_raised_ = true;
    }
    // The driver may round the set-aside: the hit ratio follows what it granted.
    size_t granted = 0;
    EB_CUDA_CHECK(cudaDeviceGetLimit(&granted, cudaLimitPersistingL2CacheSize));
    window_.base_ptr = const_cast<void*>(hot.data);
    window_.num_bytes = window;
    const double persisting = std::min(granted, set_aside);
    window_.hitRatio = float(std::min(1.0, persisting / double(window)));
    window_.hitProp = cudaAccessPropertyPersisting;
    window_.missProp = cudaAccessPropertyStreaming;
    EB_CUDA_CHECK(cudaStreamGetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &old_window_));
    cudaStreamAttrValue value{};
    value.accessPolicyWindow = window_;
    EB_CUDA_CHECK(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &value));
    l2_window_ = true;
  }

  void release() noexcept {
    if (l2_window_ && stream_) cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &old_window_);
    if (l2_window_ || set_aside_raised_) cudaCtxResetPersistingL2Cache();
    if (set_aside_raised_) cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, old_set_aside_);
    l2_window_ = set_aside_raised_ = false;
    if (graph_) cudaGraphExecDestroy(graph_);
    if (host_) cudaFreeHost(host_);
    if (stream_ && own_stream_) cudaStreamDestroy(stream_);
    graph_ = nullptr;
    host_ = nullptr;
    stream_ = nullptr;
  }

  const T* dinv() const { return dinv_.size() ? dinv_.data() : nullptr; }
  // u = M r of the single-reduction iteration; r itself without a preconditioner.
  T* u() { return dinv_.size() ? u_.data() : r_.data(); }

  void start_steps() {
    if (o_.single_reduction)
      cg_sr_start_steps(*this);
    else
      cg_start_steps(*this);
  }
  void iteration_steps() {
    if (o_.single_reduction)
      cg_sr_iteration_steps(*this);
    else
      cg_iteration_steps(*this);
  }

  void read_scalars() {
    EB_CUDA_CHECK(cudaMemcpyAsync(host_, scalars_.data(), sizeof(CgScalars), cudaMemcpyDeviceToHost, stream_));
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // Next-kernel reductions: the state the host reads, from the latest slot (k_sr_publish).
  void publish() {
    if (!next_kernel_) return;
    k_sr_publish<<<1, kThreads, 0, stream_>>>(sr_state_.data() + parity_, pu_.data() + parity_ * size_t(grid_) * 2,
                                              grid_, scalars_.data(), history_.data());
    EB_CUDA_CHECK_LAUNCH();
  }

  void enqueue_chunk() {
    if (persistent_) {
      launch_persistent();
      return;
    }
    if (!o_.use_graph) {
      for (int k = 0; k < chunk_; ++k) iteration_steps();
      publish();
      return;
    }
    if (!graph_) capture();
    EB_CUDA_CHECK(cudaGraphLaunch(graph_, stream_));
  }

  // Whether the persistent kernel can run this operator here: a device BCSR split over 2, 4 or 8
  // warps per slice (whose shares it runs), a device that launches cooperatively, and a kernel
  // that fits at least one block per SM. Records the kernel, the matrix and the grid.
  bool prepare_persistent(int sms) {
    const auto* op = dynamic_cast<const DeviceMatrixOperator<DeviceBcsr<T>>*>(&A_);
    if (!op || !fused_dot_ || n_ == 0) return false;
    const DeviceBcsr<T>& m = op->matrix();
    persistent_kernel_ = persistent_kernel<T>(m.warps_per_slice);
    if (!persistent_kernel_ || m.slices == 0) return false;
    int device = 0, cooperative = 0, per_sm = 0;
    EB_CUDA_CHECK(cudaGetDevice(&device));
    EB_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
    EB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent_kernel_, kThreads, 0));
    if (!cooperative || per_sm < 1) return false;
    // EB_CG_PERSISTENT_BLOCKS_PER_SM caps the resident blocks (timing of the barrier's cost
    // against the latency hiding of more warps); unset, as many as fit.
    if (const char* e = std::getenv("EB_CG_PERSISTENT_BLOCKS_PER_SM"); e && *e) {
      char* end = nullptr;
      const long v = std::strtol(e, &end, 10);
      if (*end != '\0' || v < 1)
        throw InputError(std::string("EB_CG_PERSISTENT_BLOCKS_PER_SM='") + e + "': expected a positive integer");
      per_sm = int(std::min<long>(per_sm, v));
    }
    bcsr_ = BcsrView<T>{m.slices, m.slice_ptr.data(), m.perm.data(), m.col.data(), m.val.data()};
    persistent_grid_ = unsigned(std::min<long long>(static_cast<long long>(per_sm) * sms, std::max(grid_, nd_)));
    return true;
  }

  // One chunk as one cooperative launch (no graph: it is one kernel).
  void launch_persistent() {
    int iterations = chunk_;
    Offset n = n_;
    const T* dinv_p = dinv();
    T *p = p_.data(), *sv = s_vec_.data(), *x = x_.data(), *r = r_.data(), *u_p = u(), *w = w_.data();
    CgScalars *state = sr_state_.data(), *host_state = scalars_.data();
    double *pu = pu_.data(), *pd = pd_.data(), *history = history_.data();
    unsigned nu = grid_, nd = nd_;
    void* args[] = {&iterations, &n, &bcsr_, &dinv_p, &p, &sv, &x, &r, &u_p, &w,
                    &state, &host_state, &pu, &nu, &pd, &nd, &history};
    EB_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(persistent_kernel_),
                                              dim3(persistent_grid_), dim3(kThreads), args, 0, stream_));
  }

  // The chunk's iterations as one graph; all pointers are the engine's own (x is copied in and
  // out), so the graph serves every later solve.
  void capture() {
    graph_ = cuda::capture_graph(
        stream_,
        [&] {
          for (int k = 0; k < chunk_; ++k) iteration_steps();
          publish();
        },
        l2_window_ ? &window_ : nullptr);
  }

  const LinearOperator<T>& A_;
  CgOptions o_;
  Index n_;
  cudaStream_t stream_ = nullptr;
  bool own_stream_ = true;
  cudaGraphExec_t graph_ = nullptr;
  CgScalars* host_ = nullptr;  // pinned
  cuda::DeviceBuffer<T> x_, r_, p_, q_, diag_, dinv_;
  cuda::DeviceBuffer<T> s_vec_, w_, u_;  // single reduction only
  bool fused_dot_ = false;               // the operator fuses delta = u . w into its product
  // Single reduction with its reductions summed by the next kernel (k_sr_update_next): two state
  // slots, the update's partial sums per slot, the product's dot partials (nd_ of them).
  bool next_kernel_ = false, chunk_even_ = false;
  // Next kernel: the update and the fused product launched as programmatic dependents of the kernel
  // before them (bcsr_device.cuh pdl_wait), each starting while the other drains.
  int pdl_ = kPdlOff;
  // Single reduction in one persistent kernel per chunk (k_sr_persistent; solve() only: enqueue(),
  // which a caller may capture in its own graph, keeps the next-kernel launches, the same bits).
  bool persistent_ = false;
  PersistentKernel<T> persistent_kernel_ = nullptr;
  BcsrView<T> bcsr_{};
  unsigned persistent_grid_ = 0;
  unsigned nd_ = 0;
  int parity_ = 0;  // the slot the next update reads
  cuda::DeviceBuffer<CgScalars> sr_state_;
  cuda::DeviceBuffer<double> pu_, pd_;
  cuda::DeviceBuffer<double> partials_, history_;
  cuda::DeviceBuffer<unsigned> ticket_;
  cuda::DeviceBuffer<CgScalars> scalars_;
  unsigned grid_ = 1;
  int chunk_ = 1;
  const T* b_ = nullptr;
  // L2 residency of the operator's values (keep_operator_in_l2), and what release() restores.
  bool l2_window_ = false, set_aside_raised_ = false;
  cudaAccessPolicyWindow window_{};
  cudaStreamAttrValue old_window_{};
  size_t old_set_aside_ = 0;
};

}  // namespace

template <class T>
std::unique_ptr<typename CgSolver<T>::Engine> make_device_cg_engine(const LinearOperator<T>& A, const CgOptions& o) {
  return std::make_unique<DeviceCgEngine<T>>(A, o);
}

template <class T>
CgResult device_cg_solve_from_host(const LinearOperator<T>& A, const std::vector<T>& b, std::vector<T>& x,
                                   const CgOptions& options) {
  cuda::DeviceBuffer<T> db, dx;
  db.upload(b);
  dx.upload(x);
  CgSolver<T> solver(A, options);
  const CgResult res = solver.solve(db.data(), dx.data());
  if (!x.empty()) dx.download(x.data(), x.size());
  return res;
}

EB_LINALG_DEVICE_CG_INSTANTIATIONS(float)
EB_LINALG_DEVICE_CG_INSTANTIATIONS(double)

}  // namespace eb::linalg::detail
