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
#include <sstream>
#include <type_traits>

#include "assembly/hexmg/hex_element.h"
#include "assembly/hexmg/hexmg_kernels.h"
#include "meshes/errors.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
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

// Device-side status of a batch of steps.
struct Flags {
  int bad_element;          // first element with a non-finite F (INT_MAX: none)
  int bad_step;             // its step within the batch
  int first_kept_element;   // first element that kept its previous rotation (INT_MAX: none)
  int first_kept_step;
  unsigned long long kept;  // element-steps that kept their previous rotation
  unsigned long long coarse_iterations;
  unsigned long long coarse_solves;
  double norm2;             // residual norm accumulator
};

template <class T>
__global__ void k_rotations(FineView<T> f, const int* step, Flags* flags) {
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= f.n_elems) return;
  const int st = element_rotation(e, f);
  if (st == kRotationKeptPrevious) {
    atomicAdd(&flags->kept, 1ull);
    if (atomicMin(&flags->first_kept_element, int(e)) > int(e)) flags->first_kept_step = *step;
  } else if (st == kRotationNonFinite) {
    if (atomicMin(&flags->bad_element, int(e)) > int(e)) flags->bad_step = *step;
  }
}

template <class T>
__global__ void k_assembly(FineView<T> f, LevelView<T> L0, const T* factors, const int* step) {
  const int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x >= L0.n) return;
  f.factor = factors + int64_t(*step) * (f.ncurves > 0 ? f.ncurves : 1);
  assemble_vertex(x, f, L0, ConstK<T>());
}

// 9 threads per coarse vertex: 9 warps per 32 vertices, warp w owns component w (Sec. 4.2.3).
template <class T>
__global__ void __launch_bounds__(288) k_galerkin(LevelView<T> F, LevelView<T> C) {
  const int c = threadIdx.x / 32;
  const int64_t x = int64_t(blockIdx.x) * 32 + (threadIdx.x % 32);
  if (x >= C.n || C.nbr(x, kCentre) < 0) return;
  galerkin_components<1>(x, c, F, C);
}

// Gauss-Seidel on one colour subset [begin, begin + count): 13 warps per 32 vertices, warp w
// sums the off-diagonal stencil entries 2w and 2w+1, warp 0 reduces and solves (Sec. 4.2.4).
template <class T>
__global__ void __launch_bounds__(kGsWarps * 32) k_gauss_seidel(LevelView<T> L, int begin) {
  __shared__ T part[kGsWarps][3][32];
  const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t x = begin + int64_t(blockIdx.x) * 32 + lane;
  const bool valid = L.nbr(x, kCentre) >= 0;
  // off-diagonal entries k = 2w, 2w+1 of 26 map to stencil indices skipping the centre
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
  const int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  double n2 = 0;
  if (x < L.n) n2 = double(residual_vertex(x, L));
  if (norm2) block_add_norm<T>(n2, norm2);
}

template <class T>
__global__ void k_restrict(LevelView<T> F, LevelView<T> C) {
  const int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x < C.n) restrict_vertex(x, F, C);
}

template <class T>
__global__ void k_interpolate(LevelView<T> F, LevelView<T> C) {
  const int64_t x = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (x < F.n) interpolate_correct_vertex(x, F, C);
}

template <class T>
__global__ void k_update(FineView<T> f, LevelView<T> L0, int* step) {
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

template <class T>
class HexmgCuda final : public HexmgSimulation {
 public:
  HexmgCuda(Model model, Precision p, int device) : HexmgSimulation(std::move(model), Backend::Cuda, p) {
    EB_CUDA_CHECK(cudaSetDevice(device));
    EB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
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
    EB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  ~HexmgCuda() override {
    if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  void advance(int steps) override {
    if (m_.solver.jacobi_pcg) throw InputError("hexmg cuda: solver.variant jacobi-pcg runs on the cpu backend only");
    const bool graph = !m_.solver.profile && !m_.solver.tolerance_mode;
    int done = 0;
    while (done < steps) {
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
  std::size_t device_bytes() const override { return cuda_tracked_bytes(); }

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
    j["coarse_cg_threads"] = cg_threads_;
  }

 private:
  static constexpr int kBatch = 4096;  // steps per graph-launch batch (load factors uploaded per batch)

  struct LevelDev {
    DeviceBuffer<T> A, b, u, r;
    DeviceBuffer<int32_t> nbr, child, parent;
    DeviceBuffer<uint8_t> dead;
  };

  template <class U>
  static std::vector<double> aos_of(const DeviceBuffer<U>& buf, size_t comps, size_t n) {
    const std::vector<U> h = buf.to_host();
    std::vector<double> out(comps * n);
    for (size_t i = 0; i < n; ++i)
      for (size_t c = 0; c < comps; ++c) out[i * comps + c] = double(h[c * n + i]);
    return out;
  }

  void reset_flags() {
    Flags f{};
    f.bad_element = f.first_kept_element = 0x7fffffff;
    f.bad_step = f.first_kept_step = -1;
    EB_CUDA_CHECK(cudaMemcpy(flags_.data(), &f, sizeof(Flags), cudaMemcpyHostToDevice));
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

  void check_flags() {
    Flags f;
    EB_CUDA_CHECK(cudaMemcpy(&f, flags_.data(), sizeof(Flags), cudaMemcpyDeviceToHost));
    if (f.bad_element != 0x7fffffff) {
      std::ostringstream msg;
      msg << "hexmg cuda: element " << f.bad_element << " has a non-finite deformation gradient at step "
          << batch_first_step_ + f.bad_step << " (the solution diverged; try a smaller time.dt or more solver.cycles)";
      throw RuntimeFailure(msg.str());
    }
    if (f.kept) {
      kept_rotation_count_ += int64_t(f.kept);
      if (first_inverted_element_ < 0) {
        first_inverted_element_ = f.first_kept_element;
        first_inverted_step_ = batch_first_step_ + f.first_kept_step;
      }
    }
    coarse_iter_done_ += f.coarse_iterations;
    coarse_solves_done_ += f.coarse_solves;
    reset_flags();
  }

  void phase_begin(bool timed, const char* name) {
    if (timed) timer_.begin(name, stream_);
  }
  void phase_end(bool timed) {
    if (timed) timer_.end(stream_);
  }

  // Rotations, simulation-level assembly and the coarse-grid equations of the next step.
  void prepare(bool timed) {
    const int64_t n0 = views_[0].n;
    if (!m_.solver.linear) {
      phase_begin(timed, "rotations");
      k_rotations<T><<<blocks_for(m_.n_elems(), kBlock1), kBlock1, 0, stream_>>>(fv_, dstep_.data(), flags_.data());
      EB_CUDA_CHECK_LAUNCH();
      phase_end(timed);
    }
    phase_begin(timed, "assembly");
    k_assembly<T><<<blocks_for(n0, kBlock1), kBlock1, 0, stream_>>>(fv_, views_[0], factors_.data(), dstep_.data());
    EB_CUDA_CHECK_LAUNCH();
    phase_end(timed);
    phase_begin(timed, "coarse_assembly");
    for (int l = 1; l < m_.n_levels(); ++l) {
      k_galerkin<T><<<blocks_for(views_[l].n, 32), 288, 0, stream_>>>(views_[l - 1], views_[l]);
      EB_CUDA_CHECK_LAUNCH();
    }
    phase_end(timed);
  }

  void launch_update() {
    k_update<T><<<blocks_for(views_[0].n, kBlock1), kBlock1, 0, stream_>>>(fv_, views_[0], dstep_.data());
    EB_CUDA_CHECK_LAUNCH();
  }

  void gs_sweep(int l) {
    const auto& cb = m_.levels[l].colour_begin;
    for (int c = 0; c < 8; ++c) {
      const int count = cb[c + 1] - cb[c];
      if (count == 0) continue;
      if (m_.solver.gs_thread_per_vertex)
        k_gauss_seidel_1t<T><<<blocks_for(count, kBlock1), kBlock1, 0, stream_>>>(views_[l], cb[c], count);
      else
        k_gauss_seidel<T><<<unsigned(count / 32), kGsWarps * 32, 0, stream_>>>(views_[l], cb[c]);
      EB_CUDA_CHECK_LAUNCH();
    }
  }

  void vcycle_level(int l, bool timed = false) {
    const int last = m_.n_levels() - 1;
    if (l == last) {
      phase_begin(timed, "coarse_cg");
      const int64_t n = views_[l].n;
      Strided<T> r{cg_r_.data(), 1, n}, p{cg_p_.data(), 1, n}, q{cg_q_.data(), 1, n};
      k_coarse_cg<T><<<1, cg_threads_, 0, stream_>>>(views_[l], r, p, q, T(m_.solver.coarse_tolerance),
                                                    m_.solver.coarse_max_iterations, flags_.data());
      EB_CUDA_CHECK_LAUNCH();
      phase_end(timed);
      return;
    }
    phase_begin(timed, "gauss_seidel");
    for (int i = 0; i < m_.solver.pre_smooth; ++i) gs_sweep(l);
    phase_end(timed);
    phase_begin(timed, "residual");
    k_residual<T><<<blocks_for(views_[l].n, kBlock1), kBlock1, 0, stream_>>>(views_[l], nullptr);
    EB_CUDA_CHECK_LAUNCH();
    phase_end(timed);
    phase_begin(timed, "restriction");
    k_restrict<T><<<blocks_for(views_[l + 1].n, kBlock1), kBlock1, 0, stream_>>>(views_[l], views_[l + 1]);
    EB_CUDA_CHECK_LAUNCH();
    phase_end(timed);
    vcycle_level(l + 1, timed);
    phase_begin(timed, "interpolation");
    k_interpolate<T><<<blocks_for(views_[l].n, kBlock1), kBlock1, 0, stream_>>>(views_[l], views_[l + 1]);
    EB_CUDA_CHECK_LAUNCH();
    phase_end(timed);
    phase_begin(timed, "gauss_seidel");
    for (int i = 0; i < m_.solver.post_smooth; ++i) gs_sweep(l);
    phase_end(timed);
  }

  double residual_norm2(int l) {
    Flags* f = flags_.data();
    EB_CUDA_CHECK(cudaMemsetAsync(&f->norm2, 0, sizeof(double), stream_));
    k_residual<T><<<blocks_for(views_[l].n, kBlock1), kBlock1, 0, stream_>>>(views_[l], &f->norm2);
    EB_CUDA_CHECK_LAUNCH();
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
    last_converged_ = std::isfinite(r) && r <= s.tolerance * r0;
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
  DeviceBuffer<T> cg_r_, cg_p_, cg_q_;
  FineView<T> fv_;
  int cg_threads_ = 32;
  int64_t batch_first_step_ = 1;
  unsigned long long coarse_iter_done_ = 0, coarse_solves_done_ = 0;
  bool step_open_ = false;
};

}  // namespace

std::unique_ptr<HexmgSimulation> make_hexmg_cuda_impl(const Scenario& sc, const RunOptions& o) {
  Model m = build_model(sc, o);
  if (m.solver.jacobi_pcg) throw InputError("hexmg cuda: solver.variant jacobi-pcg runs on the cpu backend only (Fig. 11 is timed on one core)");
  if (o.precision == Precision::Fp32) return std::make_unique<HexmgCuda<float>>(std::move(m), o.precision, o.device);
  return std::make_unique<HexmgCuda<double>>(std::move(m), o.precision, o.device);
}

std::unique_ptr<Simulation> make_hexmg_cuda(const Scenario& sc, const RunOptions& o) { return make_hexmg_cuda_impl(sc, o); }

}  // namespace eb::hexmg
