// CUDA backend of hexmg (Dick et al. 2011, Sec. 4), the host driver: structure-of-arrays layout
// with every colour subset padded to a multiple of 32 and ordered lexicographically (Sec. 4.3),
// the coarsest level's warp-slot layout, the launch of each kernel (hexmg_cuda_kernels.cuh holds
// them), its order within a step, and the whole time step captured in a CUDA graph.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "assembly/hexmg/hex_element.h"
#include "meshes/errors.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
#include "solvers/hexmg/hexmg_cuda_kernels.cuh"
#include "solvers/hexmg/hexmg_simulation.h"
#include "solvers/hexmg/smoothed_cuda_kernels.cuh"
#include "solvers/hexmg/smoothed_plan.h"

namespace eb::hexmg {
namespace {

using cuda::DeviceBuffer;
using namespace device;  // hexmg_cuda_kernels.cuh

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

// Warp-slot layout of the coarsest matrix for k_coarse_cg, planned on the host for a device
// whose blocks may opt in to `optin` bytes of shared memory (scalars of `scalar` bytes), with at
// most `max_shared_slots` warp-slots per warp in shared memory (-1: as many as fit;
// hexmg.coarse_shared_slots). The constructor uploads perm, bases and src and sizes the global
// overflow from global_slots; the estimate counts the same. A coarsest level of more than
// kCoarseSmemMaxThreads slots is an InputError (before anything is allocated).
struct CoarseLayoutPlan {
  std::vector<int32_t> perm, bases, src;
  int shared_slots = 0, global_slots = 0, cap = 0, warps = 0;
  size_t smem_bytes = 0;
};

CoarseLayoutPlan plan_coarse_layout(const Level& C, int optin, size_t scalar, int max_shared_slots) {
  CoarseLayoutPlan plan;
  const int n = C.n_padded;
  // The octree stops below kCoarsestMaxVertices vertices, which with their colour padding is
  // fewer slots than this, unless it stops early because no two cells of a level share a parent.
  if (n > kCoarseSmemMaxThreads)
    throw InputError("hexmg cuda: the coarsest level has " + std::to_string(n) + " vertex slots, more than the " +
                     std::to_string(kCoarseSmemMaxThreads) +
                     " of the single-block coarsest CG (the mesh does not coarsen: no two cells of a level share a "
                     "parent cell); the cpu backend runs it");
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
  if (max_shared_slots >= 0) cap = std::min(cap, max_shared_slots);
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
  if (bytes > avail + 3 * size_t(n) * scalar)  // not even p fits (every CUDA device has room for it)
    throw RuntimeFailure("hexmg cuda: the coarsest CG's vectors do not fit in the device's shared memory");
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
    level_buffers_.resize(nl);
    views_.resize(nl);
    for (int l = 0; l < nl; ++l) {
      const Level& L = m_.levels[l];
      const size_t n = size_t(L.n_padded);
      auto& d = level_buffers_[l];
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
    elem_vertices_.upload(soa<int32_t>(m_.ev, ne, -1));
    vertex_elems_.upload(soa<int32_t>(m_.ve, n0, -1));
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
    batch_step_.resize(1, "hexmg step counter");
    batch_step_.fill_zero();
    flags_.resize(1, "hexmg flags");
    reset_flags();
    volume_flags_.resize(1, "hexmg volume check");
    fine_.n_elems = int32_t(ne);
    fine_.h = T(m_.h);
    fine_.dt = T(m_.dt);
    fine_.alpha = T(m_.alpha);
    fine_.ev = {elem_vertices_.data(), 1, int64_t(ne)};
    fine_.ve = {vertex_elems_.data(), 1, int64_t(n0)};
    fine_.youngs = youngs_.data();
    fine_.R = {R_.data(), 1, int64_t(ne)};
    fine_.mass = mass_.data();
    fine_.u0 = {u0_.data(), 1, int64_t(n0)};
    fine_.v0 = {v0_.data(), 1, int64_t(n0)};
    fine_.a0 = {a0_.data(), 1, int64_t(n0)};
    fine_.force = {force_.data(), 1, int64_t(n0)};
    fine_.presc = {presc_.data(), 1, int64_t(n0)};
    fine_.cmask = cmask_.data();
    fine_.ncurves = m_.ncurves;
    fine_.factor = factors_.data();
    setup_coarse_layout(device);
    if (m_.solver.smoothed) init_smoothed();
    EB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  ~HexmgCuda() override {
    if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
    if (graph_exec_lagged_) cudaGraphExecDestroy(graph_exec_lagged_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  // What the constructor allocates for `m` on a device of `optin` bytes of opt-in shared memory
  // per block (every buffer device_bytes() counts), from the model's sizes alone: the estimate
  // checked before the first allocation (estimate_device_bytes).
  static std::size_t planned_bytes(const Model& m, int optin) {
    const size_t w = sizeof(T), i32 = sizeof(int32_t);
    size_t b = 0;
    for (const Level& L : m.levels) {  // LevelBuffers: A, b, u, r, nbr, child, parent, dead, order
      const size_t n = size_t(L.n_padded);
      b += n * kCoeffs * w + 3 * (3 * n * w);
      b += n * kStencil * i32;
      if (!L.child.empty()) b += n * L.child[0].size() * i32;
      if (!L.parent.empty()) b += n * L.parent[0].size() * i32;
      b += L.dead.size();
      for (int32_t x = 0; x < L.n_padded; ++x) b += L.coord[x][0] >= 0 ? i32 : 0;
    }
    const size_t n0 = size_t(m.levels[0].n_padded), ne = size_t(m.n_elems());
    const size_t fc = 3 * size_t(m.ncurves + 1), pc = 3 * size_t(std::max(1, m.ncurves));
    b += 8 * ne * i32 + 8 * n0 * i32;                                 // ev, ve
    b += (m.youngs.size() + 9 * ne + m.mass.size() + 3 * 3 * n0) * w;  // youngs, R, mass, u0, v0, a0
    b += (fc + pc) * n0 * w + m.cmask.size();                         // force, presc, cmask
    b += size_t(kBatch) * std::max(1, m.ncurves) * w;                 // factors
    b += sizeof(int) + sizeof(Flags) + sizeof(ElementFlags);          // dstep, flags, volume flags
    const CoarseLayoutPlan p = plan_coarse_layout(m.levels.back(), optin, sizeof(T), m.solver.coarse_shared_slots);
    b += (p.perm.size() + p.bases.size() + p.src.size()) * i32 + size_t(std::max(p.global_slots, 1)) * 32 * (9 * w + i32);
    if (m.smoothed) b += smoothed_bytes(*m.smoothed, n0);
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
        // smoothed-* with hexmg.galerkin_every > 1: a second graph without the Galerkin kernels for
        // the steps that keep the last coarse operators.
        const bool lagged = m_.solver.smoothed && m_.solver.galerkin_every > 1;
        if (!graph_exec_) graph_exec_ = capture_graph(true);
        if (lagged && !graph_exec_lagged_) graph_exec_lagged_ = capture_graph(false);
        timer_.begin("step", stream_);
        for (int i = 0; i < chunk; ++i) {
          const bool galerkin = !lagged || galerkin_due(step_ + i);
          EB_CUDA_CHECK(cudaGraphLaunch(galerkin ? graph_exec_ : graph_exec_lagged_, stream_));
          have_galerkin_ = have_galerkin_ || galerkin;
        }
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
          prepare(true, galerkin_step());
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
    prepare(false, galerkin_step());
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    check_flags();
    have_trace_residuals_ = false;
    step_open_ = true;
  }
  void vcycle() override {
    m_.solver.smoothed ? sm_cycle(0, m_.solver.mg_pcg) : vcycle_level(0);
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  double system_residual() override { return std::sqrt(residual_norm2(0)); }
  void restart_solve() override { level_buffers_[0].u.fill_zero(); }
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
    level_buffers_[0].u.fill_zero();
    step_open_ = false;
  }

  std::vector<double> rotations() override { return aos_of(R_, 9, size_t(m_.n_elems())); }
  std::vector<double> slot_displacement() override {
    std::vector<double> u = aos_of(u0_, 3, size_t(m_.levels[0].n_padded));
    if (step_open_) {
      const std::vector<double> du = aos_of(level_buffers_[0].u, 3, size_t(m_.levels[0].n_padded));
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
    size_t b = elem_vertices_.bytes() + vertex_elems_.bytes() + youngs_.bytes() + R_.bytes() + mass_.bytes() + u0_.bytes() + v0_.bytes() +
               a0_.bytes() + force_.bytes() + presc_.bytes() + factors_.bytes() + cmask_.bytes() + batch_step_.bytes() +
               flags_.bytes() + volume_flags_.bytes() + coarse_vertex_of_thread_.bytes() +
               coarse_warp_bases_.bytes() + coarse_slot_offsets_.bytes() + coarse_overflow_blocks_.bytes() + coarse_overflow_neighbours_.bytes();
    for (const LevelBuffers& d : level_buffers_)
      b += d.A.bytes() + d.b.bytes() + d.u.bytes() + d.r.bytes() + d.nbr.bytes() + d.child.bytes() + d.parent.bytes() +
           d.order.bytes() + d.dead.bytes();
    return b;
  }

  void export_system(std::vector<Triplet>& A, std::vector<double>& b, std::vector<double>& u) override {
    const size_t n = size_t(m_.levels[0].n_padded);
    const std::vector<T> Ah = level_buffers_[0].A.to_host();
    b = aos_of(level_buffers_[0].b, 3, n);
    u = aos_of(level_buffers_[0].u, 3, n);
    level0_triplets(Ah.data(), 1, int64_t(n), A);
  }

 protected:
  void last_step_residuals(double& initial, double& final_) override {
    auto& u = level_buffers_[0].u;
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
    j["programmatic_dependent_launch"] = programmatic_launch_;
    j["kernels_per_step"] = kernels_per_step();
    j["gather_kernels_order"] = lattice_order_ ? "lattice" : "colour subsets";
    j["coarse_cg_global_warp_slots"] = coarse_global_slots_;
    j["coarse_cg_threads"] = int(views_.back().n);
    j["coarse_cg_kernel"] = "one block, one vertex per thread, blocks in shared memory (" + std::to_string(coarse_smem_bytes_) +
                            " B; " + std::to_string(coarse_global_slots_) + " warp-slots of blocks in global memory)";
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

  const SmoothedPlan* smoothed_plan() const override { return m_.smoothed.get(); }
  std::vector<double> smoothed_array(SmoothedArray a, int l) override {
    check_smoothed(a, l);
    if (l == 0) return read_array(a == SmoothedArray::b ? PhaseArray::b : a == SmoothedArray::u ? PhaseArray::u : PhaseArray::r, 0);
    const std::vector<T> h = sm_buffer(a, l).to_host();
    return std::vector<double>(h.begin(), h.end());
  }
  void set_smoothed_array(SmoothedArray a, int l, const std::vector<double>& values) override {
    check_smoothed(a, l);
    if (l == 0) {
      set_array(a == SmoothedArray::b ? PhaseArray::b : a == SmoothedArray::u ? PhaseArray::u : PhaseArray::r, 0, values);
      return;
    }
    DeviceBuffer<T>& d = sm_buffer(a, l);
    if (values.size() != d.size())
      throw std::invalid_argument("hexmg: smoothed array of level " + std::to_string(l) + " needs " + std::to_string(d.size()) +
                                  " values, got " + std::to_string(values.size()));
    d.upload(std::vector<T>(values.begin(), values.end()));
  }
  void run_smoothed_phase(SmoothedPhaseKind k, int l) override {
    check_smoothed(SmoothedArray::b, l);
    const int last = m_.n_levels() - 1;
    if ((k == SmoothedPhaseKind::Galerkin || k == SmoothedPhaseKind::Restrict || k == SmoothedPhaseKind::Prolong) && l < 1)
      throw std::invalid_argument("hexmg: smoothed phase needs a level >= 1");
    if (k == SmoothedPhaseKind::CoarseSolve && (l != last || l < 1))
      throw std::invalid_argument("hexmg: the coarse solve runs on the coarsest level (>= 1)");
    switch (k) {
      case SmoothedPhaseKind::Galerkin: sm_galerkin(l); break;
      case SmoothedPhaseKind::Sweep: sm_sweep(l, false); break;
      case SmoothedPhaseKind::SweepBackward: sm_sweep(l, true); break;
      case SmoothedPhaseKind::Residual: sm_residual(l); break;
      case SmoothedPhaseKind::Restrict: sm_restrict(l); break;
      case SmoothedPhaseKind::Prolong: sm_prolong(l); break;
      case SmoothedPhaseKind::CoarseSolve: sm_coarse_solve(l); break;
      case SmoothedPhaseKind::Cycle: sm_cycle(0, m_.solver.mg_pcg); break;
    }
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  ElementChecks check_volumes() override {
    upload_element_flags(volume_flags_.data());
    launch(k_volumes<T>, cuda::blocks_for(m_.n_elems(), kThreadsPerBlock), kThreadsPerBlock, 0, fine_, volume_flags_.data());
    ElementFlags f;
    EB_CUDA_CHECK(cudaMemcpyAsync(&f, volume_flags_.data(), sizeof(f), cudaMemcpyDeviceToHost, stream_));
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return element_checks_of(f);
  }
 private:
  static constexpr int kBatch = 4096;  // steps per graph-launch batch (load factors uploaded per batch)

  struct LevelBuffers {
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
      case PhaseArray::A: return {&level_buffers_[level].A, kCoeffs, n};
      case PhaseArray::b: return {&level_buffers_[level].b, 3, n};
      case PhaseArray::u: return {&level_buffers_[level].u, 3, n};
      case PhaseArray::r: return {&level_buffers_[level].r, 3, n};
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
  // different colours, far apart in the launch, so each fine matrix came from DRAM several times
  // (PERF_NOTES.md). hexmg.lattice_order = false: the paper's order.
  const int32_t* order_of(int l) const { return lattice_order_ ? level_buffers_[l].order.data() : nullptr; }
  int32_t count_of(int l) const { return lattice_order_ ? level_buffers_[l].n_real : views_[l].n; }

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
  // Every kernel of a step goes through here: with PDL the launch carries the programmatic
  // stream serialization attribute (see pdl_wait in the kernels).
  template <class... KArgs, class... Args>
  void launch(void (*kernel)(KArgs...), unsigned grid, unsigned block, size_t smem, Args&&... args) {
    cuda::launch_kernel(programmatic_launch_, kernel, dim3(grid), dim3(block), smem, stream_, std::forward<Args>(args)...);
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
  static ElementChecks element_checks_of(const ElementFlags& f) {
    ElementChecks c;
    c.inverted = int64_t(f.kept);
    if (f.first_kept != ~0ull) c.first_inverted = int64_t(f.first_kept & 0xffffffffull);
    if (f.first_bad != ~0ull) c.first_nonfinite = int64_t(f.first_bad & 0xffffffffull);
    c.min_det_f = det_of_key(f.min_det);  // +infinity when no finite det F was met
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
    EB_CUDA_CHECK(cudaMemsetAsync(batch_step_.data(), 0, sizeof(int), stream_));
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
    ElementChecks c = element_checks_of(f.elem), bad;
    bad.first_nonfinite = c.first_nonfinite;
    c.first_nonfinite = -1;
    record_checks(c, batch_first_step_ - 1 + int64_t(f.elem.first_kept >> 32));
    if (bad.first_nonfinite >= 0) record_checks(bad, batch_first_step_ - 1 + int64_t(f.elem.first_bad >> 32));
  }

  void phase_begin(bool timed, const char* name) {
    if (timed) timer_.begin(name, stream_);
  }
  void phase_end(bool timed) {
    if (timed) timer_.end(stream_);
  }

  // Whether the coming step (state step_) launches the coarse operators' kernels: always for the
  // paper's hierarchy, every hexmg.galerkin_every steps for the smoothed one (galerkin_due).
  bool galerkin_step() {
    const bool g = !m_.solver.smoothed || galerkin_due(step_);
    have_galerkin_ = have_galerkin_ || g;
    return g;
  }
  // Rotations, simulation-level assembly and (galerkin) the coarse-grid equations of the next step.
  void prepare(bool timed, bool galerkin) {
    if (!m_.solver.linear) {
      phase_begin(timed, "rotations");
      launch_rotations();
      phase_end(timed);
    }
    phase_begin(timed, "assembly");
    launch_assembly();
    phase_end(timed);
    if (!galerkin) return;
    phase_begin(timed, "coarse_assembly");
    for (int l = 1; l < m_.n_levels(); ++l) m_.solver.smoothed ? sm_galerkin(l) : launch_galerkin(l);
    phase_end(timed);
  }

  // One launcher per kernel (the step, the graph and run_phase all go through them).
  void launch_rotations() {
    launch(k_rotations<T>, cuda::blocks_for(m_.n_elems(), kThreadsPerBlock), kThreadsPerBlock, 0, fine_, batch_step_.data(), flags_.data());
  }
  void launch_assembly() {
    // Colour order here: in lattice order each warp's stores of A split into two half-warp runs
    // that straddle sectors, and the partly written sectors cost DRAM traffic (PERF_NOTES.md).
    launch(k_assembly<T>, cuda::blocks_for(views_[0].n, kThreadsPerBlock), kThreadsPerBlock, 0, fine_, views_[0], factors_.data(), batch_step_.data());
    last_.matrix_level = 0;
  }
  void launch_galerkin(int l) {
    launch(k_galerkin<T>, cuda::blocks_for(count_of(l), 32), 288, 0, views_[l - 1], views_[l], order_of(l), count_of(l));
    last_.matrix_level = l;
  }
  void launch_update() {
    launch(k_update<T>, cuda::blocks_for(views_[0].n, kThreadsPerBlock), kThreadsPerBlock, 0, fine_, views_[0], batch_step_.data());
  }
  void launch_gs_colour(int l, int c) {
    const auto& cb = m_.levels[l].colour_begin;
    const int count = cb[c + 1] - cb[c];
    if (count == 0) return;
    if (m_.solver.gs_thread_per_vertex)
      launch(k_gauss_seidel_1t<T>, cuda::blocks_for(count, kThreadsPerBlock), kThreadsPerBlock, 0, views_[l], cb[c], count);
    else
      launch(k_gauss_seidel<T>, unsigned(count / 32), kGsWarps * 32, 0, views_[l], cb[c], may_preload(l, false));
  }
  void gs_sweep(int l) {
    for (int c = 0; c < 8; ++c) launch_gs_colour(l, c);
  }
  void launch_residual(int l, double* norm2) {
    launch(k_residual<T>, cuda::blocks_for(views_[l].n, kThreadsPerBlock), kThreadsPerBlock, 0, views_[l], norm2);
  }
  // b and u of coarse level lc from the residual of lc - 1; u of lc - 1 corrected from lc.
  void launch_restrict(int lc) {
    launch(k_restrict<T>, cuda::blocks_for(count_of(lc), kThreadsPerBlock), kThreadsPerBlock, 0, views_[lc - 1], views_[lc], order_of(lc), count_of(lc));
  }
  void launch_interpolate(int lc) {
    launch(k_interpolate<T>, cuda::blocks_for(views_[lc - 1].n, kThreadsPerBlock), kThreadsPerBlock, 0, views_[lc - 1], views_[lc]);
  }
  void launch_coarse_cg() {
    const int l = m_.n_levels() - 1;
    launch(k_coarse_cg<T>, 1, unsigned(views_[l].n), coarse_smem_bytes_, views_[l], coarse_layout_, T(m_.solver.coarse_tolerance),
           m_.solver.coarse_max_iterations, flags_.data(), may_preload(l, true));
    last_.coarse_cg = true;
  }

  // Warp-slot layout of the coarsest matrix for k_coarse_cg.
  void setup_coarse_layout(int device) {
    CoarseLayoutPlan p = plan_coarse_layout(m_.levels.back(), shared_memory_optin(device), sizeof(T), m_.solver.coarse_shared_slots);
    EB_CUDA_CHECK(cudaFuncSetAttribute(k_coarse_cg<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(p.smem_bytes)));
    coarse_vertex_of_thread_.upload(p.perm);
    coarse_warp_bases_.upload(p.bases);
    coarse_slot_offsets_.upload(p.src);
    coarse_overflow_blocks_.resize(size_t(std::max(p.global_slots, 1)) * 32 * 9, "hexmg coarse overflow blocks");
    coarse_overflow_neighbours_.resize(size_t(std::max(p.global_slots, 1)) * 32, "hexmg coarse overflow neighbours");
    coarse_layout_ = CoarseLayout{coarse_vertex_of_thread_.data(), coarse_warp_bases_.data(), coarse_slot_offsets_.data(), coarse_overflow_blocks_.data(), coarse_overflow_neighbours_.data(), p.shared_slots, p.cap, p.warps};
    coarse_global_slots_ = p.global_slots;
    coarse_smem_bytes_ = p.smem_bytes;
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
    if (s.mg_pcg) {
      sm_pcg(s.max_iterations, s.tolerance);
      return;
    }
    if (!s.tolerance_mode) {
      for (int c = 0; c < s.cycles; ++c) s.smoothed ? sm_cycle(0, false) : vcycle_level(0, s.profile);
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
      s.smoothed ? sm_cycle(0, false) : vcycle_level(0, s.profile);
      r = system_residual();
      ++it;
    }
    record_tolerance_solve(it, r0, r, s.tolerance);
  }

  // One fixed-cycle step as a graph (galerkin: with the coarse operators' kernels).
  cudaGraphExec_t capture_graph(bool galerkin) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    EB_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    prepare(false, galerkin);
    for (int c = 0; c < m_.solver.cycles; ++c) m_.solver.smoothed ? sm_cycle(0, false) : vcycle_level(0);
    launch_update();
    EB_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    EB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    EB_CUDA_CHECK(cudaGraphDestroy(graph));
    return exec;
  }

  void check_smoothed(SmoothedArray a, int l) const {
    if (!m_.solver.smoothed) throw InputError("hexmg: this variant has no smoothed hierarchy");
    if (l < 0 || l >= m_.n_levels() || (l == 0 && (a == SmoothedArray::A || a == SmoothedArray::AP)))
      throw std::invalid_argument("hexmg: the smoothed hierarchy has no such array on level " + std::to_string(l));
  }
  DeviceBuffer<T>& sm_buffer(SmoothedArray a, int l) {
    SmLevel& d = sm_[size_t(l)];
    switch (a) {
      case SmoothedArray::A: return d.A;
      case SmoothedArray::AP: return d.AP;
      case SmoothedArray::b: return d.b;
      case SmoothedArray::u: return d.u;
      case SmoothedArray::r: return d.r;
    }
    throw std::logic_error("hexmg cuda: unknown smoothed array");
  }

  // --- the smoothed hierarchy (smoothed_hierarchy.h), the kernels of smoothed_cuda_kernels.cuh --------
  struct SmLevel {
    DeviceBuffer<int32_t> A_ptr, A_col, A_mirror, AP_ptr, AP_col, P_ptr, P_col, R_ptr, R_col, order;
    DeviceBuffer<T> A, AP, P, R, b, u, r;
    DeviceBuffer<uint8_t> dead;
  };
  const SmoothedPlan& plan() const { return *m_.smoothed; }

  template <class U>
  static void upload_nonempty(DeviceBuffer<U>& d, const std::vector<U>& h) {
    if (!h.empty()) d.upload(h);
  }
  // Device bytes of the smoothed hierarchy's buffers (init_smoothed), for planned_bytes.
  static size_t smoothed_bytes(const SmoothedPlan& p, size_t n0) {
    const size_t w = sizeof(T), i32 = sizeof(int32_t);
    size_t b = (p.A0.ptr.size() + 2 * p.A0.col.size()) * i32;  // level-0 pattern and value indices
    b += 7 * 3 * n0 * w;                                       // outer PCG vectors
    b += kSmDotBlocks * sizeof(double);
    for (int l = 1; l < p.n_levels(); ++l) {
      const SmoothedLevel& S = p.levels[size_t(l)];
      b += (S.A.ptr.size() + 2 * S.A.col.size() + S.AP.ptr.size() + S.AP.col.size() + S.P.ptr.size() + S.P.col.size() +
            S.R.ptr.size() + S.R.col.size() + S.colour_order.size()) * i32;
      b += 9 * size_t(S.A.nnz() + S.AP.nnz() + S.P.nnz() + S.R.nnz()) * w + 3 * 3 * size_t(S.n) * w + S.dead.size();
    }
    const int last = p.n_levels() - 1;
    if (last >= 1) b += 3 * 3 * size_t(p.levels[size_t(last)].n) * w;  // coarsest CG scratch
    return b;
  }
  static constexpr int kSmDotBlocks = 240;

  void init_smoothed() {
    const SmoothedPlan& p = plan();
    const size_t n0 = size_t(m_.levels[0].n_padded);
    std::vector<int32_t> blk(p.A0_offset.size());
    for (int32_t x = 0; x < p.A0.rows; ++x)
      for (int32_t q = p.A0.ptr[size_t(x)]; q < p.A0.ptr[size_t(x) + 1]; ++q)
        blk[size_t(q)] = x + 9 * p.A0_offset[size_t(q)] * int32_t(n0);  // SoA: A(x, 9 l + k) at x + (9 l + k) n
    a0_ptr_.upload(p.A0.ptr);
    upload_nonempty(a0_col_, p.A0.col);
    upload_nonempty(a0_blk_, blk);
    for (DeviceBuffer<T>* v : {&pcg_x_, &pcg_b_, &pcg_r_, &pcg_z_, &pcg_zold_, &pcg_p_, &pcg_q_}) {
      v->resize(3 * n0, "hexmg smoothed PCG vector");
      v->fill_zero();
    }
    dot_partial_.resize(kSmDotBlocks, "hexmg smoothed dot partial sums");
    sm_.resize(size_t(p.n_levels()));
    for (int l = 1; l < p.n_levels(); ++l) {
      const SmoothedLevel& S = p.levels[size_t(l)];
      SmLevel& d = sm_[size_t(l)];
      d.A_ptr.upload(S.A.ptr);
      upload_nonempty(d.A_col, S.A.col);
      upload_nonempty(d.A_mirror, S.A_mirror);
      d.AP_ptr.upload(S.AP.ptr);
      upload_nonempty(d.AP_col, S.AP.col);
      d.P_ptr.upload(S.P.ptr);
      upload_nonempty(d.P_col, S.P.col);
      d.R_ptr.upload(S.R.ptr);
      upload_nonempty(d.R_col, S.R.col);
      upload_nonempty(d.order, S.colour_order);
      d.A.resize(9 * size_t(S.A.nnz()), "hexmg smoothed A");
      d.AP.resize(9 * size_t(S.AP.nnz()), "hexmg smoothed AP");
      upload_nonempty(d.P, std::vector<T>(S.P_val.begin(), S.P_val.end()));
      upload_nonempty(d.R, std::vector<T>(S.R_val.begin(), S.R_val.end()));
      for (DeviceBuffer<T>* v : {&d.b, &d.u, &d.r}) {
        v->resize(3 * size_t(S.n), "hexmg smoothed vector");
        v->fill_zero();
      }
      d.dead.upload(S.dead);
    }
    const int last = p.n_levels() - 1;
    if (last >= 1)
      for (DeviceBuffer<T>* v : {&cg_r_, &cg_p_, &cg_q_}) v->resize(3 * size_t(p.levels[size_t(last)].n), "hexmg smoothed coarsest CG");
  }

  static BlockRows<const T> rows_c(const BlockPattern& p, const DeviceBuffer<int32_t>& ptr, const DeviceBuffer<int32_t>& col,
                                   const DeviceBuffer<T>& v) {
    return {p.rows, ptr.data(), col.data(), nullptr, {v.data(), 9, 1}};
  }
  static BlockRows<T> rows_m(const BlockPattern& p, const DeviceBuffer<int32_t>& ptr, const DeviceBuffer<int32_t>& col,
                             DeviceBuffer<T>& v) {
    return {p.rows, ptr.data(), col.data(), nullptr, {v.data(), 9, 1}};
  }
  BlockRows<const T> sm_A(int l) const {
    if (l == 0) {
      const int64_t n0 = m_.levels[0].n_padded;
      return {plan().A0.rows, a0_ptr_.data(), a0_col_.data(), a0_blk_.data(), {level_buffers_[0].A.data(), 1, n0}};
    }
    const SmLevel& d = sm_[size_t(l)];
    return rows_c(plan().levels[size_t(l)].A, d.A_ptr, d.A_col, d.A);
  }
  // b, u or r of level l (level 0: the simulation level's, structure of arrays).
  Strided<T> sm_vec(int l, char which) {
    if (l == 0) {
      LevelBuffers& d = level_buffers_[0];
      return {(which == 'b' ? d.b : which == 'u' ? d.u : d.r).data(), 1, int64_t(m_.levels[0].n_padded)};
    }
    SmLevel& d = sm_[size_t(l)];
    return {(which == 'b' ? d.b : which == 'u' ? d.u : d.r).data(), 3, 1};
  }
  static Strided<const T> cview(const Strided<T>& v) { return {v.p, v.vs, v.cs}; }
  static unsigned grid_for(int64_t n) { return unsigned(std::max<int64_t>(1, (n + kThreadsPerBlock - 1) / kThreadsPerBlock)); }

  void sm_galerkin(int l) {
    const SmoothedLevel& S = plan().levels[size_t(l)];
    SmLevel& d = sm_[size_t(l)];
    k_sm_spgemm<T><<<grid_for(S.AP.rows), kThreadsPerBlock, 0, stream_>>>(sm_A(l - 1), rows_c(S.P, d.P_ptr, d.P_col, d.P),
                                                                          rows_m(S.AP, d.AP_ptr, d.AP_col, d.AP), false);
    k_sm_spgemm<T><<<grid_for(S.A.rows), kThreadsPerBlock, 0, stream_>>>(rows_c(S.R, d.R_ptr, d.R_col, d.R),
                                                                         rows_c(S.AP, d.AP_ptr, d.AP_col, d.AP),
                                                                         rows_m(S.A, d.A_ptr, d.A_col, d.A), true);
    k_sm_mirror<T><<<grid_for(S.A.rows), kThreadsPerBlock, 0, stream_>>>(d.A_mirror.data(), rows_m(S.A, d.A_ptr, d.A_col, d.A));
    EB_CUDA_CHECK(cudaGetLastError());
  }
  void sm_sweep(int l, bool backward) {
    if (l == 0) {
      for (int c = 0; c < 8; ++c) launch_gs_colour(0, backward ? 7 - c : c);
      return;
    }
    const SmoothedLevel& S = plan().levels[size_t(l)];
    SmLevel& d = sm_[size_t(l)];
    const int nc = S.colours();
    for (int k = 0; k < nc; ++k) {
      const int c = backward ? nc - 1 - k : k;
      const int32_t b = S.colour_begin[size_t(c)], count = S.colour_begin[size_t(c) + 1] - b;
      k_sm_gs_warp<T><<<grid_for(int64_t(count) * kSmWarp), kThreadsPerBlock, 0, stream_>>>(
          sm_A(l), d.dead.data(), d.order.data() + b, count, cview(sm_vec(l, 'b')), sm_vec(l, 'u'));
    }
    EB_CUDA_CHECK(cudaGetLastError());
  }
  void sm_residual(int l) {
    if (l == 0) {
      launch_residual(0, nullptr);
      return;
    }
    const int64_t n = plan().levels[size_t(l)].n;
    k_sm_residual_warp<T><<<grid_for(n * kSmWarp), kThreadsPerBlock, 0, stream_>>>(
        sm_A(l), cview(sm_vec(l, 'b')), cview(sm_vec(l, 'u')), sm_vec(l, 'r'));
    EB_CUDA_CHECK(cudaGetLastError());
  }
  void sm_restrict(int l) {
    const SmoothedLevel& S = plan().levels[size_t(l)];
    SmLevel& d = sm_[size_t(l)];
    k_sm_gather<T><<<grid_for(S.R.rows), kThreadsPerBlock, 0, stream_>>>(
        rows_c(S.R, d.R_ptr, d.R_col, d.R), cview(sm_vec(l - 1, 'r')), sm_vec(l, 'b'), false, sm_vec(l, 'u'));
    EB_CUDA_CHECK(cudaGetLastError());
  }
  void sm_prolong(int l) {
    const SmoothedLevel& S = plan().levels[size_t(l)];
    SmLevel& d = sm_[size_t(l)];
    k_sm_gather<T><<<grid_for(S.P.rows), kThreadsPerBlock, 0, stream_>>>(
        rows_c(S.P, d.P_ptr, d.P_col, d.P), cview(sm_vec(l, 'u')), sm_vec(l - 1, 'u'), true, Strided<T>{});
    EB_CUDA_CHECK(cudaGetLastError());
  }
  void sm_coarse_solve(int l) {
    SmLevel& d = sm_[size_t(l)];
    Flags* f = flags_.data();
    k_sm_coarse_cg<T><<<1, kSmCoarseThreads, 0, stream_>>>(sm_A(l), d.dead.data(), d.b.data(), d.u.data(), cg_r_.data(),
                                                           cg_p_.data(), cg_q_.data(), m_.solver.coarse_tolerance,
                                                           m_.solver.coarse_max_iterations, &f->coarse_iterations,
                                                           &f->coarse_solves);
    EB_CUDA_CHECK(cudaGetLastError());
  }
  void sm_cycle(int l, bool symmetric) {
    const int last = m_.n_levels() - 1;
    if (l == last) {
      l == 0 ? launch_coarse_cg() : sm_coarse_solve(l);
      return;
    }
    for (int i = 0; i < m_.solver.pre_smooth; ++i) sm_sweep(l, false);
    sm_residual(l);
    sm_restrict(l + 1);
    sm_cycle(l + 1, symmetric);
    sm_prolong(l + 1);
    for (int i = 0; i < m_.solver.post_smooth; ++i) sm_sweep(l, symmetric);
  }

  // Dot product: per-block partial sums on the device, added on the host in block order.
  double sm_dot(const DeviceBuffer<T>& a, const DeviceBuffer<T>& c) {
    k_sm_dot<T><<<kSmDotBlocks, kSmReduceThreads, 0, stream_>>>(a.data(), c.data(), int64_t(a.size()), dot_partial_.data());
    double h[kSmDotBlocks];
    EB_CUDA_CHECK(cudaMemcpyAsync(h, dot_partial_.data(), sizeof(h), cudaMemcpyDeviceToHost, stream_));
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    double s = 0;
    for (double v : h) s += v;
    return s;
  }
  void sm_copy(DeviceBuffer<T>& dst, const DeviceBuffer<T>& src) {
    EB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), src.size() * sizeof(T), cudaMemcpyDeviceToDevice, stream_));
  }
  void sm_axpy(T a, const DeviceBuffer<T>& x, DeviceBuffer<T>& y, bool xpay = false) {
    k_sm_axpy<T><<<grid_for(int64_t(y.size())), kThreadsPerBlock, 0, stream_>>>(a, x.data(), y.data(), int64_t(y.size()), xpay);
  }
  void sm_apply0(DeviceBuffer<T>& v, DeviceBuffer<T>& out) {
    const int64_t n0 = m_.levels[0].n_padded;
    k_sm_stencil_apply<T><<<grid_for(n0), kThreadsPerBlock, 0, stream_>>>(views_[0], Strided<T>{v.data(), 1, n0},
                                                                         Strided<T>{out.data(), 1, n0});
  }
  void sm_precondition(const DeviceBuffer<T>& r, DeviceBuffer<T>& z) {
    LevelBuffers& L0 = level_buffers_[0];
    sm_copy(L0.b, r);
    EB_CUDA_CHECK(cudaMemsetAsync(L0.u.data(), 0, L0.u.size() * sizeof(T), stream_));
    sm_cycle(0, true);
    sm_copy(z, L0.u);
  }
  // The CPU backend's sm_pcg (flexible CG preconditioned by the symmetric V-cycle), step for step.
  void sm_pcg(int iterations, double rel_tolerance) {
    LevelBuffers& L0 = level_buffers_[0];
    sm_copy(pcg_x_, L0.u);
    sm_copy(pcg_b_, L0.b);
    sm_apply0(pcg_x_, pcg_q_);
    sm_copy(pcg_r_, pcg_b_);
    sm_axpy(T(-1), pcg_q_, pcg_r_);
    double rn = std::sqrt(sm_dot(pcg_r_, pcg_r_));
    const double r0 = rn;
    int k = 0;
    if (r0 > 0) {
      sm_precondition(pcg_r_, pcg_z_);
      sm_copy(pcg_p_, pcg_z_);
      double rz = sm_dot(pcg_r_, pcg_z_);
      while (k < iterations && rn > rel_tolerance * r0 && rz > 0 && std::isfinite(rz)) {
        sm_apply0(pcg_p_, pcg_q_);
        const double pq = sm_dot(pcg_p_, pcg_q_);
        if (!(pq > 0)) break;
        const T a = T(rz / pq);
        sm_axpy(a, pcg_p_, pcg_x_);
        sm_axpy(-a, pcg_q_, pcg_r_);
        ++k;
        rn = std::sqrt(sm_dot(pcg_r_, pcg_r_));
        if (!(rn > rel_tolerance * r0)) break;
        std::swap(pcg_z_, pcg_zold_);
        sm_precondition(pcg_r_, pcg_z_);
        const double rz_new = sm_dot(pcg_r_, pcg_z_);
        const T beta = T((rz_new - sm_dot(pcg_r_, pcg_zold_)) / rz);
        sm_axpy(beta, pcg_z_, pcg_p_, true);
        rz = rz_new;
      }
    }
    sm_copy(L0.b, pcg_b_);
    sm_copy(L0.u, pcg_x_);
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    record_tolerance_solve(k, r0, rn, rel_tolerance);
  }

  std::vector<SmLevel> sm_;
  DeviceBuffer<int32_t> a0_ptr_, a0_col_, a0_blk_;
  DeviceBuffer<T> cg_r_, cg_p_, cg_q_;
  DeviceBuffer<T> pcg_x_, pcg_b_, pcg_r_, pcg_z_, pcg_zold_, pcg_p_, pcg_q_;
  DeviceBuffer<double> dot_partial_;

  cudaStream_t stream_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
  cudaGraphExec_t graph_exec_lagged_ = nullptr;  // the step without the Galerkin kernels (galerkin_every > 1)
  cuda::EventTimer timer_;
  std::vector<LevelBuffers> level_buffers_;
  std::vector<LevelView<T>> views_;
  DeviceBuffer<int32_t> elem_vertices_, vertex_elems_;
  DeviceBuffer<T> youngs_, R_, mass_, u0_, v0_, a0_, force_, presc_, factors_;
  DeviceBuffer<uint8_t> cmask_;
  DeviceBuffer<int> batch_step_;  // step index within the current batch (device side)
  DeviceBuffer<Flags> flags_;
  DeviceBuffer<ElementFlags> volume_flags_;  // check_volumes()
  DeviceBuffer<int32_t> coarse_vertex_of_thread_, coarse_warp_bases_, coarse_slot_offsets_;
  DeviceBuffer<T> coarse_overflow_blocks_;
  DeviceBuffer<int32_t> coarse_overflow_neighbours_;
  CoarseLayout coarse_layout_;
  int coarse_global_slots_ = 0;
  size_t coarse_smem_bytes_ = 0;
  // hexmg.programmatic_dependent_launch and hexmg.lattice_order (see launch() and order_of()).
  // The smoothed hierarchy's kernels are launched plainly (no pre-wait rule of theirs), so the
  // paper's kernels around them are too.
  bool programmatic_launch_ = m_.solver.programmatic_dependent_launch && !m_.solver.smoothed;
  bool lattice_order_ = m_.solver.lattice_order;
  FineView<T> fine_;
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
