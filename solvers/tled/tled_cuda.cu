// CUDA backend of TLED (Strbac 2015 Sec. 2.3), the driver: the backend class (buffers, the three
// kernels of a step launched on one stream, the CUDA graph of kGraphSteps steps, the kernel
// profile), the device-memory estimate and the factories. The whole time loop runs on the device;
// the kernels are in tled_kernels.cuh. The regime (precision x texture fetch x damage x assembly)
// is chosen once in the factory.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "meshes/errors.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
#include "solvers/common/device_checks.cuh"
#include "solvers/tled/tled_kernels.cuh"
#include "solvers/tled/tled_simulation.h"

namespace eb::tled {
namespace {

using namespace kernels;

constexpr int kGraphSteps = 50;  // steps per graph launch (even: the graph ends at the parity it began)

template <class T>
std::vector<T> cast_vec(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

class TextureObject {
 public:
  TextureObject() = default;
  ~TextureObject() {
    if (u_texture_) cudaDestroyTextureObject(u_texture_);
  }
  TextureObject(const TextureObject&) = delete;
  TextureObject& operator=(const TextureObject&) = delete;
  template <class T>
  void create(const T* data, size_t count) {
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = const_cast<T*>(data);
    res.res.linear.desc = sizeof(T) == 4 ? cudaCreateChannelDesc<float>() : cudaCreateChannelDesc<int2>();
    res.res.linear.sizeInBytes = count * sizeof(T);
    cudaTextureDesc td{};
    td.readMode = cudaReadModeElementType;
    EB_CUDA_CHECK(cudaCreateTextureObject(&u_texture_, &res, &td, nullptr));
  }
  cudaTextureObject_t get() const { return u_texture_; }

 private:
  cudaTextureObject_t u_texture_ = 0;
};

template <class T, bool Texture, bool Damage, Assembly Asm>
class TledCuda final : public TledSimulationBase {
 public:
  TledCuda(TledSetup setup, const RunOptions& options)
      : TledSimulationBase(std::move(setup), Backend::Cuda, sizeof(T) == 4 ? Precision::Fp32 : Precision::Fp64) {
    const GpuInfo info = cuda_device_info(options.device);
    if (!info.usable) throw RuntimeFailure("tled cuda: " + info.reason);
    device_ = options.device;
    gpu_name_ = info.name;
    EB_CUDA_CHECK(cudaSetDevice(device_));
    // A blocking stream: DeviceBuffer's uploads and downloads run on the legacy default stream,
    // and a non-blocking stream would not wait for them (a pageable cudaMemcpy to the device may
    // return before its DMA has landed). With this flag unset, every such copy is ordered with
    // the kernels here, as in hexmg.
    EB_CUDA_CHECK(cudaStreamCreate(&stream_));
    upload();
  }

  ~TledCuda() override {
    if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  void advance(int steps) override {
    if (steps <= 0) return;
    int left = steps;
    if (parity() == 1) {  // graphs start at parity 0
      timed_direct_steps(1);
      --left;
    }
    const int graphs = left / kGraphSteps;
    if (graphs > 0) {
      if (!graph_exec_) build_graph();
      for (int g = 0; g < graphs; ++g) {
        timer_.begin("step", stream_);
        EB_CUDA_CHECK(cudaGraphLaunch(graph_exec_, stream_));
        timer_.end(stream_);
      }
      timer_.flush(timings_, kGraphSteps);  // synchronizes
      step_ += int64_t(graphs) * kGraphSteps;
      left -= graphs * kGraphSteps;
    }
    if (left > 0) timed_direct_steps(left);
  }

  // The kernel checks each state u^n when it computes its forces (step n + 1), so the checks
  // cover the states before the last one.
  ValidityCounts validity() const override {
    ValidityCounts c = counts_;
    cuda::copy_checks(checks_.to_host()[0], c);
    for (const T m : warp_min_j_.to_host()) c.min_det_f = std::min(c.min_det_f, double(m));
    return c;
  }

  nlohmann::json kernel_profile() override { return profile(); }

  void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) override {
    const std::vector<T> cur = U_[parity()].to_host(), prev = U_[1 - parity()].to_host();
    u.resize(cur.size());
    v.resize(cur.size());
    const double inv_dt = 1.0 / setup_.dt;
    for (size_t i = 0; i < cur.size(); ++i) {
      u[i] = double(cur[i]);
      v[i] = (double(cur[i]) - double(prev[i])) * inv_dt;
    }
  }

  void cell_fields(std::vector<mesh::Field>& out) override {
    const std::vector<T> u = U_[parity()].to_host();
    std::vector<T> beta = Damage ? beta_.to_host() : std::vector<T>(size_t(setup_.num_elements), T(0));
    tled_cell_fields(setup_, u, beta, out);
  }

  std::size_t device_bytes() const override { return allocated_; }

 protected:
  // u^n is U[parity], u^{n-1} U[1 - parity]; element forces are stored [(d * S + k) E + e]
  // here (S slots per element: 4, or 8 with hourglass control) and [3 (k E + e) + d] in the
  // neutral layout.
  std::vector<double> read_array(PhaseArray a) override {
    const std::vector<T> v = buffer_of(a).to_host();
    if (a != PhaseArray::fe) return std::vector<double>(v.begin(), v.end());
    std::vector<double> out(v.size());
    const size_t SE = size_t(kSlots) * size_t(setup_.num_elements);
    for (size_t slot = 0; slot < SE; ++slot)
      for (size_t d = 0; d < 3; ++d) out[3 * slot + d] = double(v[d * SE + slot]);
    return out;
  }
  void write_array(PhaseArray a, const std::vector<double>& values) override {
    std::vector<T> v(values.size());
    const size_t SE = size_t(kSlots) * size_t(setup_.num_elements);
    if (a == PhaseArray::fe) {
      for (size_t slot = 0; slot < SE; ++slot)
        for (size_t d = 0; d < 3; ++d) v[d * SE + slot] = T(values[3 * slot + d]);
    } else {
      for (size_t i = 0; i < v.size(); ++i) v[i] = T(values[i]);
    }
    buffer_of(a).upload(v.data(), v.size());
  }

  // Exactly the one kernel, launched as enqueue_step launches it at this parity; the uploads
  // and downloads of the arrays run on the legacy stream, which this blocking stream waits for.
  void run_phase_impl(Phase ph) override {
    const int p = parity();
    switch (ph) {
      case Phase::Element: enqueue_element(p); break;
      case Phase::Node: enqueue_node(p, U_[1 - p].data()); break;
      case Phase::Boundary: enqueue_boundary(p, U_[1 - p].data()); break;
    }
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void add_details(nlohmann::json& j) const override {
    j["gpu"] = gpu_name_;
    j["texture_fetch"] = Texture ? (sizeof(T) == 4 ? "tex1Dfetch<float>" : "tex1Dfetch<int2> (two 32-bit halves)")
                                 : "plain global loads";
    j["graph_steps"] = kGraphSteps;
  }

 private:
  int parity() const { return int(step_ & 1); }

  cuda::DeviceBuffer<T>& buffer_of(PhaseArray a) {
    switch (a) {
      case PhaseArray::u: return U_[parity()];
      case PhaseArray::u_prev: return U_[1 - parity()];
      case PhaseArray::fe: return fe_;
      case PhaseArray::fnode: return fnode_;
      case PhaseArray::beta: return beta_;
    }
    throw std::logic_error("tled cuda: unknown array");
  }

  template <class V>
  void put(cuda::DeviceBuffer<V>& buf, const std::vector<V>& host, const char* what) {
    buf.resize(host.size(), what);
    if (!host.empty()) buf.upload(host.data(), host.size());
    allocated_ += buf.bytes();
  }

  void upload() {
    const int64_t E = setup_.num_elements, N = setup_.num_nodes;
    // Structure-of-arrays layouts so that consecutive threads touch consecutive addresses.
    std::vector<int32_t> conn(8 * E);
    for (int64_t e = 0; e < E; ++e)
      for (int a = 0; a < 8; ++a) conn[a * E + e] = setup_.connectivity[8 * e + a];
    std::vector<T> G(9 * E);
    for (int64_t e = 0; e < E; ++e)
      for (int k = 0; k < 9; ++k) G[k * E + e] = T(setup_.G[9 * e + k]);
    put(conn_, conn, "tled connectivity");
    put(G_, G, "tled shape derivatives");
    put(V_, cast_vec<T>(setup_.volume), "tled volumes");
    put(a_, cast_vec<T>(setup_.a), "tled central-difference a");
    put(mask_, setup_.constrained, "tled constraint masks");
    if (Damage) put(beta_, std::vector<T>(E, T(0)), "tled damage history");
    if (Asm == Assembly::Hourglass) {
      std::vector<T> hg(size_t(kHourglassEntries) * E);
      for (int64_t e = 0; e < E; ++e)
        for (int i = 0; i < kHourglassEntries; ++i) hg[i * E + e] = T(setup_.hourglass[kHourglassEntries * e + i]);
      put(hg_, hg, "tled hourglass matrices");
    }
    if (gathers(Asm)) {
      put(slot_offset_, setup_.slot_offset, "tled slot offsets");
      put(slot_index_, setup_.slot_index, "tled slot lists");
      put(fe_, std::vector<T>(3 * kSlots * E, T(0)), "tled element forces");
    } else {
      put(fnode_, std::vector<T>(3 * N, T(0)), "tled nodal forces");
    }
    // Initial state at rest with the displacements prescribed at t = 0.
    std::vector<T> u0(3 * N, T(0));
    for (const auto& p : setup_.prescribed) {
      const double fac = curve_factor(setup_.curves[p.curve], 0.0);
      for (int d = 0; d < 3; ++d)
        if ((p.mask >> d) & 1) u0[3 * size_t(p.node) + d] = T(p.displacement[d] * fac);
    }
    put(U_[0], u0, "tled displacement");
    put(U_[1], u0, "tled displacement");
    put(step_ctr_, std::vector<long long>{0, 0}, "tled step counter");
    put(checks_, std::vector<cuda::DeviceElementChecks>{fresh_checks()}, "tled det F checks");
    put(warp_min_j_, fresh_warp_minima(), "tled det F minima per warp");
    if (Texture)
      for (int k = 0; k < 2; ++k) u_texture_[k].create(U_[k].data(), U_[k].size());

    // Boundary lists.
    if (setup_.curves.size() > size_t(kMaxCurves))
      throw InputError("tled cuda: at most " + std::to_string(kMaxCurves) + " distinct load curves are supported");
    std::vector<int32_t> fnode, fcurve, pnode, pcurve;
    std::vector<T> fval, pval;
    std::vector<uint8_t> ffree, pmask;
    for (const auto& f : setup_.forces) {
      fnode.push_back(f.node);
      fcurve.push_back(f.curve);
      for (int d = 0; d < 3; ++d) fval.push_back(T(f.force[d]));
      ffree.push_back(uint8_t(~setup_.constrained[f.node] & 7u));
    }
    for (const auto& p : setup_.prescribed) {
      pnode.push_back(p.node);
      pcurve.push_back(p.curve);
      for (int d = 0; d < 3; ++d) pval.push_back(T(p.displacement[d]));
      pmask.push_back(p.mask);
    }
    put(force_node_, fnode, "tled force nodes");
    put(force_curve_, fcurve, "tled force curves");
    put(force_value_, fval, "tled force values");
    put(force_free_, ffree, "tled force masks");
    put(presc_node_, pnode, "tled prescribed nodes");
    put(presc_curve_, pcurve, "tled prescribed curves");
    put(presc_value_, pval, "tled prescribed values");
    put(presc_mask_, pmask, "tled prescribed masks");

    element_args_ = {E,        conn_.data(), G_.data(), V_.data(), beta_.data(), fe_.data(), hg_.data(), fnode_.data(),
           {T(setup_.mu), T(setup_.kappa), T(setup_.damage.gamma), T(setup_.damage.m), T(setup_.damage.psi0)},
           checks_.data(), warp_min_j_.data()};
    node_args_ = {N,        E,        slot_offset_.data(), slot_index_.data(), fe_.data(), fnode_.data(),
           a_.data(), mask_.data(), T(setup_.b), T(setup_.c),
           {T(setup_.a_factor * setup_.gravity[0]), T(setup_.a_factor * setup_.gravity[1]), T(setup_.a_factor * setup_.gravity[2])}};
    boundary_args_ = {};
    boundary_args_.n_forces = int(fnode.size());
    boundary_args_.n_prescribed = int(pnode.size());
    boundary_args_.force_node = force_node_.data();
    boundary_args_.force_value = force_value_.data();
    boundary_args_.force_curve = force_curve_.data();
    boundary_args_.force_free = force_free_.data();
    boundary_args_.presc_node = presc_node_.data();
    boundary_args_.presc_value = presc_value_.data();
    boundary_args_.presc_curve = presc_curve_.data();
    boundary_args_.presc_mask = presc_mask_.data();
    boundary_args_.a = a_.data();
    boundary_args_.dt = setup_.dt;
    for (size_t k = 0; k < setup_.curves.size(); ++k) boundary_args_.curves[k] = setup_.curves[k];
  }

  static cuda::DeviceElementChecks fresh_checks() { return {}; }
  std::vector<T> fresh_warp_minima() const {
    const size_t warps = size_t(cuda::blocks_for(setup_.num_elements, kElementBlock)) * (kElementBlock / 32);
    return std::vector<T>(warps, std::numeric_limits<T>::infinity());
  }

  // The three kernels of one step at parity p (u^n in U[p], u^{n-1} in U[1-p], counter in ctr[p]).
  void enqueue_element(int p) { enqueue_element(p, element_args_); }
  void enqueue_element(int p, const ElementArgs<T>& ea) {
    tled_element_kernel<T, Texture, Damage, Asm><<<cuda::blocks_for(setup_.num_elements, kElementBlock), kElementBlock, 0, stream_>>>(
        ea, U_[p].data(), Texture ? u_texture_[p].get() : 0, step_ctr_.data() + p);
    EB_CUDA_CHECK_LAUNCH();
  }
  void enqueue_node(int p, T* out) {
    tled_node_kernel<T, Asm><<<cuda::blocks_for(setup_.num_nodes, kNodeBlock), kNodeBlock, 0, stream_>>>(
        node_args_, U_[p].data(), U_[1 - p].data(), out);
    EB_CUDA_CHECK_LAUNCH();
  }
  void enqueue_boundary(int p, T* out) {
    const int n = std::max(1, boundary_args_.n_forces + boundary_args_.n_prescribed);
    tled_boundary_kernel<T><<<cuda::blocks_for(n, 128), 128, 0, stream_>>>(boundary_args_, out, step_ctr_.data() + p,
                                                                      step_ctr_.data() + (1 - p));
    EB_CUDA_CHECK_LAUNCH();
  }
  void enqueue_step(int p) {
    enqueue_element(p);
    enqueue_node(p, U_[1 - p].data());
    enqueue_boundary(p, U_[1 - p].data());
  }

  void timed_direct_steps(int n) {
    for (int k = 0; k < n; ++k) {
      timer_.begin("step", stream_);
      enqueue_step(parity());
      timer_.end(stream_);
      ++step_;
    }
    timer_.flush(timings_, 1);
  }

  void build_graph() {
    cudaGraph_t graph = nullptr;
    EB_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    for (int k = 0; k < kGraphSteps; ++k) enqueue_step(k & 1);
    EB_CUDA_CHECK(cudaStreamEndCapture(stream_, &graph));
    EB_CUDA_CHECK(cudaGraphInstantiate(&graph_exec_, graph, 0));
    EB_CUDA_CHECK(cudaGraphDestroy(graph));
  }

  // Kernel-level timing on the current state without changing it: the node and boundary
  // kernels write to a scratch buffer, the element kernel is idempotent for a fixed state and
  // counts its checks into scratch counters (the run's own counts stay as they were), and
  // registers per thread. The device's bandwidth ceiling is the caller's to measure
  // (cuda_stream_triad_gbps), outside any run.
  nlohmann::json profile() {
    nlohmann::json j;
    try {
      const int p = parity();
      cuda::DeviceBuffer<T> scratch(3 * size_t(setup_.num_nodes), "tled profiling scratch");
      cuda::DeviceBuffer<cuda::DeviceElementChecks> scratch_checks(1, "tled profiling checks");
      scratch_checks.upload(std::vector<cuda::DeviceElementChecks>{fresh_checks()});
      cuda::DeviceBuffer<T> scratch_minima;
      scratch_minima.upload(fresh_warp_minima());
      ElementArgs<T> ea = element_args_;
      ea.checks = scratch_checks.data();
      ea.warp_min_j = scratch_minima.data();
      EB_CUDA_CHECK(cudaMemcpyAsync(scratch.data(), U_[1 - p].data(), scratch.bytes(), cudaMemcpyDeviceToDevice, stream_));
      constexpr int reps = 30;
      cudaEvent_t ev[4];
      for (auto& e : ev) EB_CUDA_CHECK(cudaEventCreate(&e));
      std::vector<double> te, tn, tb;
      // The scratch copy of u^{n-1} is the node kernel's u_prev input and its output: the
      // same aliasing as the time loop.
      NodeArgs<T> na = node_args_;
      for (int r = 0; r < reps + 3; ++r) {
        EB_CUDA_CHECK(cudaEventRecord(ev[0], stream_));
        enqueue_element(p, ea);
        EB_CUDA_CHECK(cudaEventRecord(ev[1], stream_));
        tled_node_kernel<T, Asm><<<cuda::blocks_for(setup_.num_nodes, kNodeBlock), kNodeBlock, 0, stream_>>>(
            na, U_[p].data(), scratch.data(), scratch.data());
        EB_CUDA_CHECK_LAUNCH();
        EB_CUDA_CHECK(cudaEventRecord(ev[2], stream_));
        const int nb = std::max(1, boundary_args_.n_forces + boundary_args_.n_prescribed);
        // Counter output to the slot this step's own kernels will overwrite anyway.
        tled_boundary_kernel<T><<<cuda::blocks_for(nb, 128), 128, 0, stream_>>>(boundary_args_, scratch.data(), step_ctr_.data() + p,
                                                                          step_ctr_.data() + (1 - p));
        EB_CUDA_CHECK_LAUNCH();
        EB_CUDA_CHECK(cudaEventRecord(ev[3], stream_));
        EB_CUDA_CHECK(cudaEventSynchronize(ev[3]));
        float a = 0, b = 0, c = 0;
        EB_CUDA_CHECK(cudaEventElapsedTime(&a, ev[0], ev[1]));
        EB_CUDA_CHECK(cudaEventElapsedTime(&b, ev[1], ev[2]));
        EB_CUDA_CHECK(cudaEventElapsedTime(&c, ev[2], ev[3]));
        if (r >= 3) {
          te.push_back(a * 1e3);
          tn.push_back(b * 1e3);
          tb.push_back(c * 1e3);
        }
      }
      auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
      };
      const double w = sizeof(T);
      const double E = double(setup_.num_elements), N = double(setup_.num_nodes);
      // Element kernel DRAM-minimum bytes: connectivity, G, V, u (once per node), damage
      // history, the hourglass matrices and the forces written (gather) -- see PERF_NOTES.md.
      const double stored = 3.0 * kSlots;
      const double elem_bytes = E * (32.0 + 10.0 * w + (Damage ? 2.0 * w : 0.0)) + N * 3.0 * w +
                                (Asm == Assembly::Hourglass ? E * double(kHourglassEntries) * w : 0.0) +
                                (gathers(Asm) ? E * stored * w : N * 3.0 * w);
      const double node_bytes = (gathers(Asm) ? (N + 1) * 4.0 + double(setup_.slot_index.size()) * 4.0 + E * stored * w
                                              : N * 6.0 * w) +
                                N * (10.0 * w + 1.0);
      const double me = median(te), mn = median(tn), mb = median(tb);
      j["element_us"] = me;
      j["node_us"] = mn;
      j["element_us_min"] = *std::min_element(te.begin(), te.end());
      j["element_us_max"] = *std::max_element(te.begin(), te.end());
      j["node_us_min"] = *std::min_element(tn.begin(), tn.end());
      j["node_us_max"] = *std::max_element(tn.begin(), tn.end());
      j["boundary_us"] = mb;
      j["kernels_sum_us"] = me + mn + mb;
      j["element_bytes_model"] = elem_bytes;
      j["node_bytes_model"] = node_bytes;
      j["element_effective_gbps"] = elem_bytes / (me * 1e-6) / 1e9;
      j["node_effective_gbps"] = node_bytes / (mn * 1e-6) / 1e9;
      j["bytes_convention"] = "compulsory (each array once per kernel, u once per node: PERF_NOTES.md)";
      j["repetitions"] = reps;
      cudaFuncAttributes fa{};
      EB_CUDA_CHECK(cudaFuncGetAttributes(&fa, tled_element_kernel<T, Texture, Damage, Asm>));
      j["element_registers"] = fa.numRegs;
      j["element_local_bytes"] = fa.localSizeBytes;
      EB_CUDA_CHECK(cudaFuncGetAttributes(&fa, tled_node_kernel<T, Asm>));
      j["node_registers"] = fa.numRegs;
      j["node_local_bytes"] = fa.localSizeBytes;
      int per_sm = 0;
      EB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, tled_element_kernel<T, Texture, Damage, Asm>, kElementBlock, 0));
      j["element_blocks_per_sm"] = per_sm;
      j["element_block"] = kElementBlock;

      for (auto& e : ev) cudaEventDestroy(e);
      j["note"] =
          "kernel times are medians of individually event-timed launches on the final state; the time loop "
          "itself runs from a CUDA graph (phase 'step'), so launch gaps there are smaller than the sum here";
    } catch (const std::exception& ex) {
      j["error"] = ex.what();
    }
    return j;
  }

  static constexpr int kSlots = slots_per_element(Asm);
  int device_ = 0;
  std::string gpu_name_;
  cudaStream_t stream_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
  cuda::EventTimer timer_;
  std::size_t allocated_ = 0;

  cuda::DeviceBuffer<int32_t> conn_, slot_offset_, slot_index_, force_node_, force_curve_, presc_node_, presc_curve_;
  cuda::DeviceBuffer<T> G_, V_, a_, beta_, fe_, fnode_, hg_, force_value_, presc_value_, warp_min_j_;
  cuda::DeviceBuffer<T> U_[2];
  cuda::DeviceBuffer<uint8_t> mask_, force_free_, presc_mask_;
  cuda::DeviceBuffer<long long> step_ctr_;
  cuda::DeviceBuffer<cuda::DeviceElementChecks> checks_;
  TextureObject u_texture_[2];
  ElementArgs<T> element_args_{};
  NodeArgs<T> node_args_{};
  BoundaryArgs<T> boundary_args_{};
};

template <class T, bool Texture>
std::unique_ptr<Simulation> make_cuda_tex(TledSetup s, const RunOptions& o) {
  const bool dmg = s.damage_enabled;
  if (s.assembly == Assembly::Gather) {
    if (dmg) return std::make_unique<TledCuda<T, Texture, true, Assembly::Gather>>(std::move(s), o);
    return std::make_unique<TledCuda<T, Texture, false, Assembly::Gather>>(std::move(s), o);
  }
  if (s.assembly == Assembly::Hourglass) {
    if (dmg) return std::make_unique<TledCuda<T, Texture, true, Assembly::Hourglass>>(std::move(s), o);
    return std::make_unique<TledCuda<T, Texture, false, Assembly::Hourglass>>(std::move(s), o);
  }
  if (dmg) return std::make_unique<TledCuda<T, Texture, true, Assembly::Atomic>>(std::move(s), o);
  return std::make_unique<TledCuda<T, Texture, false, Assembly::Atomic>>(std::move(s), o);
}

template <class T>
std::unique_ptr<Simulation> make_cuda_typed(TledSetup s, const RunOptions& o) {
  if (s.texture) return make_cuda_tex<T, true>(std::move(s), o);
  return make_cuda_tex<T, false>(std::move(s), o);
}

// What TledCuda::upload() allocates (its put() calls, in order), from the setup's sizes.
template <class T>
std::size_t device_bytes_of(const TledSetup& s) {
  const std::size_t E = std::size_t(s.num_elements), N = std::size_t(s.num_nodes);
  const std::size_t F = s.forces.size(), P = s.prescribed.size(), w = sizeof(T), i32 = sizeof(int32_t);
  std::size_t b = 8 * E * i32 + 9 * E * w + s.volume.size() * w + s.a.size() * w + s.constrained.size();
  if (s.damage_enabled) b += E * w;
  if (s.assembly == Assembly::Hourglass) b += std::size_t(kHourglassEntries) * E * w;
  if (gathers(s.assembly))
    b += (s.slot_offset.size() + s.slot_index.size()) * i32 + 3 * std::size_t(slots_per_element(s.assembly)) * E * w;
  else
    b += 3 * N * w;
  b += 2 * 3 * N * w + 2 * sizeof(long long) + sizeof(cuda::DeviceElementChecks);
  b += std::size_t(cuda::blocks_for(s.num_elements, kElementBlock)) * (kElementBlock / 32) * w;  // warp minima
  b += (F + P) * (2 * i32 + 3 * w + 1);  // boundary lists: node, curve, 3 values, mask
  return b;
}

}  // namespace

std::size_t estimate_device_bytes(const TledSetup& setup, Precision precision) {
  return precision == Precision::Fp32 ? device_bytes_of<float>(setup) : device_bytes_of<double>(setup);
}

std::unique_ptr<Simulation> make_tled_cuda(const Scenario& scenario, const RunOptions& options) {
  if (cuda_device_count() == 0) throw RuntimeFailure("tled cuda: " + cuda_device_info(options.device).reason);
  TledSetup s = build_tled_setup(scenario, options);
  require_device_memory(double(estimate_device_bytes(s, options.precision)),
                        "tled cuda " + to_string(options.precision) + " on " + std::to_string(s.num_elements) +
                            " hexahedra and " + std::to_string(s.num_nodes) + " nodes",
                        options.device, options.gpu_memory_limit);
  if (options.precision == Precision::Fp32) return make_cuda_typed<float>(std::move(s), options);
  return make_cuda_typed<double>(std::move(s), options);
}

}  // namespace eb::tled
