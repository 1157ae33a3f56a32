// corot-cg on CUDA: one kernel per stage, each calling the functions of corot_cg_element.h that
// the OpenMP loops call; the CG is linalg's device engine on a matrix-free FunctionOperator
// whose product is k_product. A frame (its inputs, rotations, forces, the whole CG with its
// maximum iteration count, the integration and the mapping) is one CUDA graph: nothing travels
// to the host during a frame, and the CG's stop on the tolerance turns its remaining iterations
// into no-ops except the product (linalg/cg_algorithm.h).
#include <cub/block/block_reduce.cuh>

#include <algorithm>
#include <cmath>

#include "meshes/errors.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
#include "solvers/common/device_checks.cuh"
#include "solvers/corot_cg/corot_cg_simulation.h"
#include "solvers/linalg/device_formats.cuh"
#include "solvers/linalg/function_operator.h"

namespace eb::corot_cg {
namespace {

constexpr int kThreads = 128;
constexpr int kMaxImpulses = 64;  // impulses one advance() may carry (more: split into batches)

template <class T>
struct ImpulseEntry {
  long long frame;
  int node;
  T force[3];
};

// What a frame applies besides the model: its index, the curve factors, the impulse.
template <class T>
struct FrameState {
  long long frame = 0;
  int impulse_node = -1;
  T impulse[3] = {T(0), T(0), T(0)};
  int table_count = 0;
};

// ---- kernels ----

struct MinOp {
  __device__ unsigned long long operator()(unsigned long long a, unsigned long long b) const { return a < b ? a : b; }
};

template <class T>
__global__ void k_frame_inputs(FrameState<T>* st, const ImpulseEntry<T>* table, int curves, const CurveParams* params,
                               double dt, double* factors) {
  const int t = threadIdx.x;
  const long long f = st->frame;
  if (t < curves) factors[t] = curve_factor(params[t], double(f) * dt);
  if (t == 0) {
    st->impulse_node = -1;
    for (int k = 0; k < st->table_count; ++k)
      if (table[k].frame == f) {
        st->impulse_node = table[k].node;
        for (int i = 0; i < 3; ++i) st->impulse[i] = table[k].force[i];
      }
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) k_rotation(ElementArrays<T> m, Rotation method, const T* __restrict__ u,
                                                       T* __restrict__ R, const FrameState<T>* st,
                                                       cuda::DeviceElementChecks* checks, int static_offset) {
  const int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long inverted = 0, first_inv = cuda::kNoKey, first_nf = cuda::kNoKey, min_det = cuda::kNoKey;
  const unsigned long long step = (unsigned long long)(st->frame + static_offset);
  if (e < m.E) {
    T Xe[4][3], xe[4][3], Dinv[9], Re[9], det_f;
    gather_positions(m, e, u, Xe, xe);
    for (int k = 0; k < 9; ++k) Dinv[k] = elem(m.Dm_inv, m.E, e, k);
    const bool ok = element_rotation(method, Xe, xe, Dinv, Re, det_f);
    for (int k = 0; k < 9; ++k) R[int64_t(k) * m.E + e] = Re[k];
    if (!isfinite(double(det_f))) {
      first_nf = cuda::check_key(step, e);
    } else {
      min_det = cuda::det_key(double(det_f));
      if (det_f <= T(0) || !ok) {
        inverted = 1;
        first_inv = cuda::check_key(step, e);
      }
    }
  }
  using Reduce = cub::BlockReduce<unsigned long long, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  const unsigned long long inv_sum = Reduce(tmp).Sum(inverted);
  __syncthreads();
  const unsigned long long fi = Reduce(tmp).Reduce(first_inv, MinOp());
  __syncthreads();
  const unsigned long long fn = Reduce(tmp).Reduce(first_nf, MinOp());
  __syncthreads();
  const unsigned long long md = Reduce(tmp).Reduce(min_det, MinOp());
  if (threadIdx.x == 0) cuda::add_checks(checks, step, inv_sum, fi, fn, md);
}

template <class T>
struct NodeArgs {
  ElementArrays<T> m;
  const int32_t* node_ptr;
  const int32_t* incidence;
  const uint8_t* constrained;
  int64_t N;
  const T* X;
  NodeLoads<T> loads;
  RayleighEuler<T> k;
};

// A warp per node: its lanes split the node's incidences, then a fixed butterfly adds the lanes'
// sums (the same order every run).
constexpr int kWarp = 32;
template <class T>
__device__ __forceinline__ T warp_sum(T x) {
  for (int o = kWarp / 2; o > 0; o /= 2) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

template <class T>
__global__ void __launch_bounds__(kThreads) k_forces(NodeArgs<T> a, const T* __restrict__ u, const T* __restrict__ v,
                                                     const FrameState<T>* st, T* __restrict__ b, T* __restrict__ diag,
                                                     uint8_t* __restrict__ contact) {
  const int64_t n = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int lane = int(threadIdx.x % kWarp);
  if (n >= a.N) return;  // whole warps: N is a warp-uniform bound
  T f[3], dk[3], bn[3], d[3];
  node_force(a.m, a.node_ptr, a.incidence, n, u, v, a.k.rhs_v, f, dk, lane, kWarp);
  for (int i = 0; i < 3; ++i) {
    f[i] = warp_sum(f[i]);
    dk[i] = warp_sum(dk[i]);
  }
  if (lane != 0) return;
  const T* imp = st->impulse_node == n ? st->impulse : nullptr;
  node_rhs(a.k, a.loads, n, a.X, u, v, f, dk, imp, a.constrained[n], bn, d, contact[n]);
  for (int i = 0; i < 3; ++i) {
    b[3 * n + i] = bn[i];
    diag[3 * n + i] = d[i];
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads) k_product(NodeArgs<T> a, const uint8_t* __restrict__ contact,
                                                      const T* __restrict__ p, T* __restrict__ y) {
  const int64_t n = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const int lane = int(threadIdx.x % kWarp);
  if (n >= a.N) return;
  T kp[3], yn[3];
  node_stiffness_times(a.m, a.node_ptr, a.incidence, a.constrained, n, p, kp, lane, kWarp);
  for (int i = 0; i < 3; ++i) kp[i] = warp_sum(kp[i]);
  if (lane != 0) return;
  node_operator(a.k, a.loads.mass, a.loads.ground, a.loads.plane, contact, n, p, kp, yn);
  for (int i = 0; i < 3; ++i) y[3 * n + i] = yn[i];
}

template <class T>
__global__ void k_integrate(int64_t N, T h, bool static_step, const T* __restrict__ dv, T* __restrict__ u,
                            T* __restrict__ v, FrameState<T>* st) {
  const int64_t n = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (n == 0 && !static_step) st->frame += 1;
  if (n >= N) return;
  if (static_step) {
    for (int i = 0; i < 3; ++i) u[3 * n + i] += dv[3 * n + i];
  } else {
    node_integrate(n, h, dv, u, v);
  }
}

template <class T>
__global__ void k_mapping(int64_t V, const int32_t* __restrict__ nodes4, const T* __restrict__ w4, const T* __restrict__ X,
                          const T* __restrict__ u, T* __restrict__ out) {
  const int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= V) return;
  T y[3];
  map_vertex(s, nodes4, w4, X, u, y);
  for (int i = 0; i < 3; ++i) out[3 * s + i] = y[i];
}

// The device arrays (bytes) of a setup, as the constructor allocates them (the estimate and the
// allocation must agree: tests/contract checks the estimate against the tracked peak).
template <class T>
std::size_t array_bytes(const CorotCgSetup& s) {
  const double E = double(s.num_elements), N = double(s.num_nodes), V = double(s.render_vertices), n = 3 * N;
  const double w = sizeof(T);
  double fixed_rows = 0;
  for (uint8_t f : s.fixed_rows) fixed_rows += f;
  double bytes = E * (4 * 4 + 28 * w + 4 * 4)           // conn, Dm^-1, Dm, volume, R; incidence
                 + (N + 1) * 4 + N * (2 + w)            // node_ptr; constrained, contact; mass
                 + n * w * 6                            // X, u, v, dv, b; the operator's diagonal
                 + fixed_rows * sizeof(linalg::Index);  // the operator's fixed-row list
  if (!s.loads.empty()) bytes += (N + 1) * 4 + double(s.load_curve.size()) * 4 + double(s.load_force.size()) * 8;
  if (!s.curves.empty()) bytes += double(s.curves.size()) * (sizeof(CurveParams) + 8);
  if (V > 0) bytes += V * (4 * 4 + 4 * w + 3 * w);
  bytes += kMaxImpulses * sizeof(ImpulseEntry<T>) + sizeof(FrameState<T>) + sizeof(cuda::DeviceElementChecks);
  return std::size_t(bytes);
}

template <class T>
std::size_t cg_bytes(const CorotCgSetup& s, const linalg::CgDeviceProperties& d) {
  std::size_t total = 0;
  for (bool stat : {false, true}) {
    linalg::CgProblem p;
    p.location = linalg::Location::Device;
    p.rows = linalg::Index(3 * s.num_nodes);
    p.value_bytes = sizeof(T);
    p.device = d;
    total += linalg::choose_cg_plan(p, cg_options(s.options, stat, 3 * s.num_nodes)).device_bytes;
  }
  return total;
}

template <class T>
class CorotCgCuda final : public CorotCgSimulation {
 public:
  CorotCgCuda(CorotCgSetup setup, Precision p, int device) : CorotCgSimulation(std::move(setup), Backend::Cuda, p), device_(device) {
    EB_CUDA_CHECK(cudaSetDevice(device_));
    EB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    const CorotCgSetup& s = setup_;
    const int64_t E = s.num_elements, N = s.num_nodes;
    const size_t n = 3 * size_t(N);
    conn_.upload(s.connectivity);
    Dm_inv_.upload(entry_major<T>(s.Dm_inv, E, 9));
    Dm_.upload(entry_major<T>(s.Dm, E, 9));
    volume_.upload(std::vector<T>(s.volume.begin(), s.volume.end()));
    std::vector<T> Rid(9 * size_t(E), T(0));
    for (int64_t e = 0; e < E; ++e)
      for (int k = 0; k < 9; k += 4) Rid[size_t(k * E + e)] = T(1);
    R_.upload(Rid);
    std::vector<T> X(n);
    for (size_t i = 0; i < size_t(N); ++i)
      for (int d = 0; d < 3; ++d) X[3 * i + size_t(d)] = T(s.nodes[i][size_t(d)]);
    X_.upload(X);
    mass_.upload(std::vector<T>(s.mass.begin(), s.mass.end()));
    node_ptr_.upload(s.node_ptr);
    incidence_.upload(s.incidence);
    constrained_.upload(s.constrained);
    const std::vector<T> zero(n, T(0));
    u_.upload(zero);
    v_.upload(zero);
    dv_.upload(zero);
    b_.upload(zero);
    contact_.upload(std::vector<uint8_t>(size_t(N), 0));
    if (!s.loads.empty()) {
      load_ptr_.upload(s.load_ptr);
      load_curve_.upload(s.load_curve);
      load_force_.upload(s.load_force);
    }
    if (!s.curves.empty()) {
      std::vector<CurveParams> cp;
      for (const auto& c : s.curves) cp.push_back(curve_params(c));
      curves_.upload(cp);
      factors_.upload(std::vector<double>(s.curves.size(), 0.0));
    }
    if (s.render_vertices > 0) {
      std::vector<int32_t> nodes4(4 * size_t(s.render_vertices));
      std::vector<T> w4(nodes4.size());
      for (size_t v = 0; v < size_t(s.render_vertices); ++v)
        for (int a = 0; a < 4; ++a) {
          nodes4[4 * v + size_t(a)] = s.binding.nodes[v][size_t(a)];
          w4[4 * v + size_t(a)] = T(s.binding.weights[v][size_t(a)]);
        }
      map_nodes_.upload(nodes4);
      map_weights_.upload(w4);
      render_.upload(std::vector<T>(3 * size_t(s.render_vertices), T(0)));
    }
    table_.resize(kMaxImpulses, "corot-cg impulse table");
    state_.upload(std::vector<FrameState<T>>(1));
    checks_.upload(std::vector<cuda::DeviceElementChecks>(1));

    args_.m.E = E;
    args_.m.conn = conn_.data();
    args_.m.Dm_inv = Dm_inv_.data();
    args_.m.Dm = Dm_.data();
    args_.m.volume = volume_.data();
    args_.m.R = R_.data();
    args_.m.lame = {T(s.lambda), T(s.mu)};
    args_.node_ptr = node_ptr_.data();
    args_.incidence = incidence_.data();
    args_.constrained = constrained_.data();
    args_.N = N;
    args_.X = X_.data();
    args_.loads.mass = mass_.data();
    for (int d = 0; d < 3; ++d) args_.loads.gravity[d] = T(s.gravity[d]);
    args_.loads.load_ptr = s.loads.empty() ? nullptr : load_ptr_.data();
    args_.loads.load_curve = s.loads.empty() ? nullptr : load_curve_.data();
    args_.loads.load_force = s.loads.empty() ? nullptr : load_force_.data();
    args_.loads.curve_factor = s.curves.empty() ? nullptr : factors_.data();
    args_.loads.ground = s.ground;
    for (int d = 0; d < 3; ++d) args_.loads.plane.normal[d] = T(s.ground_normal[d]);
    args_.loads.plane.height = T(s.ground_height);
    args_.loads.plane.stiffness = T(s.ground_stiffness);

    operator_ = linalg::make_function_operator<T>(
        linalg::Location::Device, linalg::Index(n),
        [this](const T* x, T* y, linalg::StreamHandle st) {
          k_product<T><<<cuda::blocks_for(args_.N * kWarp, kThreads), kThreads, 0, linalg::cuda_stream(st)>>>(args_, contact_.data(), x, y);
          EB_CUDA_CHECK_LAUNCH();
        },
        s.fixed_rows, "corot-cg matrix-free (device)");
    auto opts = [&](bool stat) {
      linalg::CgOptions o = cg_options(s.options, stat, 3 * s.num_nodes);
      o.stream = stream_;
      return o;
    };
    cg_dynamic_ = std::make_unique<linalg::CgSolver<T>>(*operator_, opts(false));
    static_cg_ = opts(true);
    cg_static_ = std::make_unique<linalg::CgSolver<T>>(*operator_, static_cg_);
    sync();
  }

  ~CorotCgCuda() override {
    if (graph_) cudaGraphExecDestroy(graph_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  void set_coefficients(const RayleighEuler<double>& k) override {
    const RayleighEuler<T> kt{T(k.mass), T(k.stiffness), T(k.rhs_v), T(k.rhs_mass), T(k.h)};
    if (kt.mass != args_.k.mass || kt.stiffness != args_.k.stiffness || kt.rhs_v != args_.k.rhs_v ||
        kt.rhs_mass != args_.k.rhs_mass || kt.h != args_.k.h)
      drop_graph();  // the graph's kernels carry the coefficients as parameters
    args_.k = kt;
    static_coefficients_ = k.mass == 0;
  }
  void use_static_solver(bool on) override { static_ = on; }
  void set_static_cg(double tolerance, int max_iterations) override {
    if (tolerance == static_cg_.tolerance && max_iterations == static_cg_.max_iterations) return;
    static_cg_.tolerance = tolerance;
    static_cg_.max_iterations = max_iterations;
    sync();
    cg_static_ = std::make_unique<linalg::CgSolver<T>>(*operator_, static_cg_);
  }

  std::vector<double> get_array(StageArray a) override {
    sync();
    if (a == StageArray::R) {
      const int64_t E = setup_.num_elements;
      const std::vector<T> r = R_.to_host();
      std::vector<double> out(9 * size_t(E));
      for (int64_t e = 0; e < E; ++e)
        for (int k = 0; k < 9; ++k) out[size_t(9 * e + k)] = double(r[size_t(k * E + e)]);
      return out;
    }
    std::vector<T> h(3 * size_t(setup_.num_nodes));
    if (a == StageArray::diag) {
      EB_CUDA_CHECK(cudaMemcpy(h.data(), operator_->diagonal_data(), h.size() * sizeof(T), cudaMemcpyDeviceToHost));
      return std::vector<double>(h.begin(), h.end());
    }
    h = buffer(a).to_host();
    return std::vector<double>(h.begin(), h.end());
  }
  void set_array(StageArray a, const std::vector<double>& values) override {
    sync();
    if (a == StageArray::R) {
      const int64_t E = setup_.num_elements;
      if (values.size() != 9 * size_t(E)) throw std::invalid_argument("corot-cg: R has the wrong size");
      std::vector<T> r(values.size());
      for (int64_t e = 0; e < E; ++e)
        for (int k = 0; k < 9; ++k) r[size_t(k * E + e)] = T(values[size_t(9 * e + k)]);
      R_.upload(r.data(), r.size());
      return;
    }
    if (a == StageArray::diag) throw std::invalid_argument("corot-cg: diag is computed by Forces");
    auto& buf = buffer(a);
    if (values.size() != buf.size()) throw std::invalid_argument("corot-cg: array has the wrong size");
    const std::vector<T> t(values.begin(), values.end());
    buf.upload(t.data(), t.size());
  }

  linalg::CgResult run_stage(Stage st) override {
    // One stage at a time: the host's frame inputs first (curve factors, impulse).
    if (st == Stage::Forces) upload_frame_inputs();
    timer_.begin(stage_name(st), stream_);
    linalg::CgResult r;
    switch (st) {
      case Stage::Forces: enqueue_forces(); break;
      case Stage::Solve: {
        linalg::CgSolver<T>& cg = static_ ? *cg_static_ : *cg_dynamic_;
        EB_CUDA_CHECK(cudaMemsetAsync(dv_.data(), 0, dv_.bytes(), stream_));
        if (setup_.options.preconditioner == "jacobi") cg.refresh_preconditioner();
        r = cg.solve(b_.data(), dv_.data());
        break;
      }
      case Stage::Integrate: enqueue_integrate(); break;
      case Stage::Mapping: enqueue_mapping(); break;
    }
    timer_.end(stream_);
    timer_.flush(timings_, 1);
    if (st == Stage::Forces) read_checks();
    return r;
  }

  std::vector<double> apply_operator(const std::vector<double>& p) override {
    sync();
    const std::vector<T> pt(p.begin(), p.end());
    return widen(linalg::apply_from_host(*operator_, pt));
  }

  double time_product_ms(int repeats) override {
    cudaEvent_t a, b;
    EB_CUDA_CHECK(cudaEventCreate(&a));
    EB_CUDA_CHECK(cudaEventCreate(&b));
    std::vector<double> ms;
    for (int r = 0; r < repeats; ++r) {
      EB_CUDA_CHECK(cudaEventRecord(a, stream_));
      for (int k = 0; k < kProductBatch; ++k) operator_->apply(b_.data(), dv_.data(), stream_);
      EB_CUDA_CHECK(cudaEventRecord(b, stream_));
      EB_CUDA_CHECK(cudaEventSynchronize(b));
      float t = 0;
      EB_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
      ms.push_back(double(t) / kProductBatch);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(ms.begin(), ms.end());
    return ms.empty() ? 0.0 : ms[ms.size() / 2];
  }

  void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) override {
    sync();
    u = widen(u_.to_host());
    v = widen(v_.to_host());
  }

  std::size_t device_bytes() const override { return array_bytes<T>(setup_) + cg_bytes_; }

  void advance(int steps) override {
    if (!setup_.options.graph) {
      CorotCgSimulation::advance(steps);
      return;
    }
    use_static_solver(false);
    set_coefficients(rayleigh_euler<double>(setup_.dt, setup_.rayleigh_mass, setup_.rayleigh_stiffness));
    int done = 0;
    while (done < steps && counts_.nonfinite_steps == 0) {
      // A batch whose impulses fit the table.
      int batch = 0;
      std::vector<ImpulseEntry<T>> table;
      while (done + batch < steps) {
        const auto imp = impulse_at(setup_.impulses, step_ + batch, setup_.num_nodes);
        if (imp) {
          if (int(table.size()) == kMaxImpulses) break;
          table.push_back({imp->frame, imp->node, {T(imp->force[0]), T(imp->force[1]), T(imp->force[2])}});
          applied_impulses_.push_back(*imp);
        }
        ++batch;
      }
      sync();
      if (!table.empty()) table_.upload(table.data(), table.size());
      set_frame_state(step_, int(table.size()));
      if (!graph_) capture();
      timer_.begin("frame", stream_);
      for (int k = 0; k < batch; ++k) EB_CUDA_CHECK(cudaGraphLaunch(graph_, stream_));
      timer_.end(stream_);
      timer_.flush(timings_, batch);
      const linalg::CgResult r = cg_dynamic_->last_result();
      record_solve(r);
      solves_ += batch - 1;
      cg_iterations_total_ += int64_t(r.iterations) * (batch - 1);
      step_ += batch;
      done += batch;
      read_checks();
    }
  }

  // Per kernel of a frame: launch shape, attributes, theoretical occupancy and the median of
  // `repeats` event-timed launches (Campo Tables 5.4/5.5).
  nlohmann::json kernel_table(int repeats) override;

 protected:
  void frame() override {
    // Non-graph frames: the stages one by one, each timed by its events.
    CorotCgSimulation::frame();
  }

 private:
  static std::vector<double> widen(const std::vector<T>& v) { return std::vector<double>(v.begin(), v.end()); }
  void sync() { EB_CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  void drop_graph() {
    if (graph_) cudaGraphExecDestroy(graph_);
    graph_ = nullptr;
  }
  cuda::DeviceBuffer<T>& buffer(StageArray a) {
    switch (a) {
      case StageArray::u: return u_;
      case StageArray::v: return v_;
      case StageArray::dv: return dv_;
      case StageArray::b: return b_;
      case StageArray::render: return render_;
      default: break;
    }
    throw std::invalid_argument("corot-cg: no device array for this stage array");
  }

  void set_frame_state(int64_t frame, int table_count) {
    FrameState<T> fs;
    fs.frame = frame;
    fs.table_count = table_count;
    state_.upload(&fs, 1);
  }
  void upload_frame_inputs() {
    sync();
    FrameState<T> fs;
    fs.frame = static_ ? step_ : step_;
    fs.table_count = 0;
    if (impulse_) {
      fs.impulse_node = impulse_->node;
      for (int i = 0; i < 3; ++i) fs.impulse[i] = T(impulse_->force[i]);
    }
    state_.upload(&fs, 1);
    if (!curve_factors_.empty()) factors_.upload(curve_factors_.data(), curve_factors_.size());
  }

  void enqueue_forces() {
    const int64_t E = setup_.num_elements, N = setup_.num_nodes;
    // checks_step_ of the base names the state; the device's frame counter equals step_ in time
    // steps; static iterations label their state step_ (already advanced by solve_static).
    k_rotation<T><<<cuda::blocks_for(E, kThreads), kThreads, 0, stream_>>>(args_.m, setup_.rotation, u_.data(), R_.data(),
                                                                           state_.data(), checks_.data(),
                                                                           int(checks_step_ - step_));
    EB_CUDA_CHECK_LAUNCH();
    NodeArgs<T> a = args_;
    a.loads.gravity_scale = T(gravity_scale_);
    k_forces<T><<<cuda::blocks_for(N * kWarp, kThreads), kThreads, 0, stream_>>>(a, u_.data(), v_.data(), state_.data(),
                                                                                 b_.data(), operator_->diagonal_data(),
                                                                                 contact_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void enqueue_integrate() {
    const int64_t N = setup_.num_nodes;
    k_integrate<T><<<cuda::blocks_for(std::max<int64_t>(N, 1), kThreads), kThreads, 0, stream_>>>(
        N, T(setup_.dt), static_coefficients_, dv_.data(), u_.data(), v_.data(), state_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void enqueue_mapping() {
    const int64_t V = setup_.render_vertices;
    if (V == 0) return;
    k_mapping<T><<<cuda::blocks_for(V, kThreads), kThreads, 0, stream_>>>(V, map_nodes_.data(), map_weights_.data(),
                                                                          X_.data(), u_.data(), render_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void enqueue_frame_inputs() {
    k_frame_inputs<T><<<1, 32, 0, stream_>>>(state_.data(), table_.data(), int(setup_.curves.size()), curves_.data(),
                                             setup_.dt, factors_.data());
    EB_CUDA_CHECK_LAUNCH();
  }

  void capture() {
    if (setup_.curves.size() > 32) throw InputError("corot-cg: at most 32 load curves on the CUDA backend");
    linalg::CgSolver<T>& cg = *cg_dynamic_;
    sync();
    graph_ = cuda::capture_graph(stream_, [&] {
      enqueue_frame_inputs();
      enqueue_forces();
      if (setup_.options.preconditioner == "jacobi") cg.refresh_preconditioner();
      EB_CUDA_CHECK(cudaMemsetAsync(dv_.data(), 0, dv_.bytes(), stream_));
      cg.enqueue(b_.data(), dv_.data());
      enqueue_integrate();
      enqueue_mapping();
    });
  }

  void read_checks() {
    sync();
    cuda::DeviceElementChecks c{};
    checks_.download(&c, 1);
    cuda::copy_checks(c, counts_);
  }

  void add_details(nlohmann::json& j) const override {
    j["device"] = device_;
    j["graph"] = setup_.options.graph;
    if (cg_dynamic_) j["cg_dynamic"] = linalg::describe(cg_dynamic_->plan());
    j["threads_per_block"] = kThreads;
  }

 public:
  std::size_t cg_bytes_ = 0;

 private:
  int device_;
  bool static_ = false, static_coefficients_ = false;
  cudaStream_t stream_ = nullptr;
  cudaGraphExec_t graph_ = nullptr;
  cuda::EventTimer timer_;
  NodeArgs<T> args_{};
  cuda::DeviceBuffer<int32_t> conn_, node_ptr_, incidence_, load_ptr_, map_nodes_;
  cuda::DeviceBuffer<int> load_curve_;
  cuda::DeviceBuffer<double> load_force_, factors_;
  cuda::DeviceBuffer<CurveParams> curves_;
  cuda::DeviceBuffer<uint8_t> constrained_, contact_;
  cuda::DeviceBuffer<T> Dm_inv_, Dm_, volume_, R_, X_, mass_, u_, v_, dv_, b_, render_, map_weights_;
  cuda::DeviceBuffer<ImpulseEntry<T>> table_;
  cuda::DeviceBuffer<FrameState<T>> state_;
  cuda::DeviceBuffer<cuda::DeviceElementChecks> checks_;
  std::unique_ptr<linalg::FunctionOperator<T>> operator_;
  std::unique_ptr<linalg::CgSolver<T>> cg_dynamic_, cg_static_;
  linalg::CgOptions static_cg_;  // cg_static_'s (set_static_cg)
};

template <class K>
nlohmann::json kernel_row(const char* name, K kernel, int64_t items, int threads, const std::function<void()>& launch,
                          cudaStream_t stream, int repeats) {
  cudaFuncAttributes attr{};
  EB_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  int blocks_per_sm = 0;
  EB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, kernel, threads, 0));
  int dev = 0;
  EB_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  EB_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  const double occupancy = double(blocks_per_sm * threads) / double(p.maxThreadsPerMultiProcessor);
  cudaEvent_t a, b;
  EB_CUDA_CHECK(cudaEventCreate(&a));
  EB_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> us;
  launch();  // warm
  for (int r = 0; r < repeats; ++r) {
    EB_CUDA_CHECK(cudaEventRecord(a, stream));
    for (int k = 0; k < 10; ++k) launch();
    EB_CUDA_CHECK(cudaEventRecord(b, stream));
    EB_CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0;
    EB_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    us.push_back(1000.0 * double(t) / 10);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(us.begin(), us.end());
  return {{"kernel", name},
          {"grid", cuda::blocks_for(items, threads)},
          {"block", threads},
          {"duration_us", us.empty() ? 0.0 : us[us.size() / 2]},
          {"duration_us_min", us.empty() ? 0.0 : us.front()},
          {"duration_us_max", us.empty() ? 0.0 : us.back()},
          {"registers_per_thread", attr.numRegs},
          {"static_shared_bytes_per_block", attr.sharedSizeBytes},
          {"local_bytes_per_thread", attr.localSizeBytes},
          {"warps_per_block", (threads + 31) / 32},
          {"theoretical_occupancy", occupancy}};
}

template <class T>
nlohmann::json CorotCgCuda<T>::kernel_table(int repeats) {
  sync();
  const int64_t E = setup_.num_elements, N = setup_.num_nodes, V = setup_.render_vertices;
  nlohmann::json rows = nlohmann::json::array();
  // The kernels run on the current state (idempotent: they overwrite R, b, diag, contacts; the
  // product writes a scratch vector; integrate is left out as it changes the state).
  rows.push_back(kernel_row("k_rotation", k_rotation<T>, E, kThreads, [&] {
    k_rotation<T><<<cuda::blocks_for(E, kThreads), kThreads, 0, stream_>>>(args_.m, setup_.rotation, u_.data(), R_.data(),
                                                                           state_.data(), checks_.data(), 0);
  }, stream_, repeats));
  rows.push_back(kernel_row("k_forces", k_forces<T>, N * kWarp, kThreads, [&] {
    k_forces<T><<<cuda::blocks_for(N * kWarp, kThreads), kThreads, 0, stream_>>>(args_, u_.data(), v_.data(), state_.data(),
                                                                                 b_.data(), operator_->diagonal_data(),
                                                                                 contact_.data());
  }, stream_, repeats));
  rows.push_back(kernel_row("k_product", k_product<T>, N * kWarp, kThreads, [&] {
    k_product<T><<<cuda::blocks_for(N * kWarp, kThreads), kThreads, 0, stream_>>>(args_, contact_.data(), b_.data(),
                                                                                  dv_.data());
  }, stream_, repeats));
  if (V > 0)
    rows.push_back(kernel_row("k_mapping", k_mapping<T>, V, kThreads, [&] {
      k_mapping<T><<<cuda::blocks_for(V, kThreads), kThreads, 0, stream_>>>(V, map_nodes_.data(), map_weights_.data(),
                                                                            X_.data(), u_.data(), render_.data());
    }, stream_, repeats));
  EB_CUDA_CHECK(cudaMemsetAsync(dv_.data(), 0, dv_.bytes(), stream_));
  sync();
  return rows;
}

linalg::CgDeviceProperties usable_device(int device) {
  const GpuInfo g = cuda_device_info(device);
  if (!g.usable) throw RuntimeFailure("corot-cg cuda: " + g.reason);
  EB_CUDA_CHECK(cudaSetDevice(device));
  return linalg::cg_device_properties();
}

template <class T>
std::unique_ptr<CorotCgSimulation> make_typed(CorotCgSetup s, const RunOptions& o, const linalg::CgDeviceProperties& d) {
  const std::size_t cg = cg_bytes<T>(s, d);
  require_device_memory(double(array_bytes<T>(s) + cg),
                        "corot-cg cuda " + to_string(o.precision) + " on " + std::to_string(s.num_elements) +
                            " tetrahedra and " + std::to_string(s.num_nodes) + " nodes",
                        o.device, o.gpu_memory_limit);
  auto sim = std::make_unique<CorotCgCuda<T>>(std::move(s), o.precision, o.device);
  sim->cg_bytes_ = cg;
  return sim;
}

}  // namespace

std::size_t estimate_device_bytes(const CorotCgSetup& s, Precision p, int device) {
  const linalg::CgDeviceProperties d = usable_device(device);
  return p == Precision::Fp32 ? array_bytes<float>(s) + cg_bytes<float>(s, d) : array_bytes<double>(s) + cg_bytes<double>(s, d);
}

std::unique_ptr<CorotCgSimulation> make_corot_cg_cuda_impl(const Scenario& sc, const RunOptions& o) {
  if (cuda_device_count() == 0) throw RuntimeFailure("corot-cg cuda: " + cuda_device_info(o.device).reason);
  CorotCgSetup s = build_corot_cg_setup(sc, o);
  const linalg::CgDeviceProperties d = usable_device(o.device);
  if (o.precision == Precision::Fp32) return make_typed<float>(std::move(s), o, d);
  return make_typed<double>(std::move(s), o, d);
}

std::unique_ptr<Simulation> make_corot_cg_cuda(const Scenario& sc, const RunOptions& o) { return make_corot_cg_cuda_impl(sc, o); }

}  // namespace eb::corot_cg
