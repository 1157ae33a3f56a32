// bcsr-pcg on CUDA, the driver: the backend class (buffers, the phases' launches on one stream,
// the CUDA graph of a step), the device-memory plan and the factories. The kernels, with the
// layouts of the arrays they read and write, are in bcsr_pcg_kernels.cuh. The global matrix is
// solved by the shared Jacobi-PCG; in fixed iteration mode a whole step (with the CG's start and
// its iterations) is one CUDA graph.
#include <algorithm>
#include <cmath>

#include "meshes/errors.h"
#include "solvers/bcsr_pcg/bcsr_pcg_kernels.cuh"
#include "solvers/bcsr_pcg/bcsr_pcg_simulation.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
#include "solvers/common/device_checks.cuh"
#include "solvers/linalg/cg_algorithm.h"
#include "solvers/linalg/device_formats.cuh"

namespace eb::bcsr_pcg {
namespace {

using linalg::Offset;
using namespace kernels;

// The global matrix as the CG's operator on the device: the sliced SpMV of solvers/linalg (with
// its fused dot and its values offered to the L2, so that the CG engine can plan the single
// reduction and L2 residency as for any BCSR operator), and the diagonal read from the current
// values.
template <class T>
class SlicedOperator final : public linalg::LinearOperator<T> {
 public:
  SlicedOperator(const linalg::DeviceBcsr<T>& m, const Offset* diag_pos) : matrix_(m), diag_position_(diag_pos) {}
  linalg::Index rows() const override { return 3 * matrix_.block_rows; }
  linalg::Location location() const override { return linalg::Location::Device; }
  void apply(const T* x, T* y, linalg::StreamHandle s) const override { linalg::spmv(matrix_, x, y, linalg::cuda_stream(s)); }
  void diagonal(T* d, linalg::StreamHandle s) const override {
    const int64_t n = rows();
    if (n) k_diagonal<T><<<cuda::blocks_for(n, kVectorThreads), kVectorThreads, 0, linalg::cuda_stream(s)>>>(n, diag_position_, matrix_.val.data(), d);
    EB_CUDA_CHECK_LAUNCH();
  }
  std::string name() const override { return "bcsr-pcg global matrix (sliced BCSR)"; }
  std::size_t fused_dot_blocks() const override { return linalg::spmv_dot_blocks(matrix_); }
  void apply_dot(const T* x, T* y, const linalg::DotTarget& t, linalg::StreamHandle s) const override {
    linalg::spmv_dot(matrix_, x, y, t, linalg::cuda_stream(s));
  }
  typename linalg::LinearOperator<T>::Storage hot_storage() const override {
    return {matrix_.val.data(), matrix_.val.bytes()};
  }

 private:
  const linalg::DeviceBcsr<T>& matrix_;
  const Offset* diag_position_;
};

template <class T>
std::vector<T> to_entry_major(const std::vector<double>& src, int64_t E, int k) {
  std::vector<T> out(src.size());
  for (int64_t e = 0; e < E; ++e)
    for (int j = 0; j < k; ++j) out[size_t(j * E + e)] = T(src[size_t(e * k + j)]);
  return out;
}
template <class T>
std::vector<double> from_entry_major(const std::vector<T>& src, int64_t E, int k) {
  std::vector<double> out(src.size());
  for (int64_t e = 0; e < E; ++e)
    for (int j = 0; j < k; ++j) out[size_t(e * k + j)] = double(src[size_t(j * E + e)]);
  return out;
}
// The local matrices between the host's element-major order (value (3 a + i) * 12 + 3 b + j of
// element e at e * 144 + ...) and the device's block-major one (element_gather.h): f(host index,
// device index) for every value.
template <class F>
void for_local_values(int64_t E, F&& f) {
  for (int64_t e = 0; e < E; ++e)
    for (int ab = 0; ab < 16; ++ab)
      for (int c = 0; c < 9; ++c)
        f(size_t(144 * e + (3 * (ab / 4) + c / 3) * 12 + 3 * (ab % 4) + c % 3),
          size_t(linalg::block_major_offset(E, e, ab, c)));
}
template <class T>
std::vector<T> to_block_major(const std::vector<double>& src, int64_t E) {
  std::vector<T> out(src.size());
  for_local_values(E, [&](size_t host, size_t device) { out[device] = T(src[host]); });
  return out;
}
template <class T>
std::vector<double> from_block_major(const std::vector<T>& src, int64_t E) {
  std::vector<double> out(src.size());
  for_local_values(E, [&](size_t host, size_t device) { out[host] = double(src[device]); });
  return out;
}

// The sliced layout of the global matrix and the gather's index blocks, built on the host before
// any device allocation: the estimate counts them, the constructor uploads them.
template <class T>
struct HostLayout {
  linalg::SlicedBcsr<T> sliced;
  linalg::SlicedGatherIndex gi;
};
template <class T>
HostLayout<T> host_layout(const BcsrPcgSetup& s) {
  HostLayout<T> h;
  h.sliced = linalg::make_gather_layout<T>(s.plan);
  h.gi = linalg::make_sliced_gather_index(s.plan, h.sliced);
  return h;
}

// The CG problem of the global matrix (SlicedOperator), known from the host layout before the
// operator exists: the engine's plan, and so its memory, follows from it (linalg::choose_cg_plan).
template <class T>
linalg::CgProblem cg_problem_of(const BcsrPcgSetup& s, const HostLayout<T>& h, const linalg::CgDeviceProperties& device) {
  linalg::CgProblem p;
  p.location = linalg::Location::Device;
  p.rows = 3 * linalg::Index(s.num_nodes);
  p.value_bytes = sizeof(T);
  const int warps = h.sliced.warps_per_slice > 0
                        ? h.sliced.warps_per_slice
                        : linalg::choose_warps_per_slice(h.sliced.slices(), h.sliced.steps(), device.multiprocessors);
  p.fused_dot_blocks = h.sliced.slices() > 0 ? linalg::sliced_bcsr_product_blocks(h.sliced.slices(), warps) : 0;
  p.hot_bytes = h.sliced.val.size() * sizeof(T);
  p.device = device;
  return p;
}

// What BcsrPcgCuda allocates for `s` with layout `h` (build(), in its order, and the two CG
// solvers of make_solvers()) on `device`.
template <class T>
std::size_t planned_bytes(const BcsrPcgSetup& s, const HostLayout<T>& h, const linalg::CgDeviceProperties& device) {
  using linalg::Index;
  const std::size_t E = std::size_t(s.num_elements), n = 3 * std::size_t(s.num_nodes), w = sizeof(T);
  std::size_t b = 4 * E * sizeof(int32_t) + (s.Dm_inv.size() + s.Dm.size() + s.volume.size()) * w;
  b += 5 * n * w + (9 + 144 + 12) * E * w;  // u, v, sol, rhs, spmv_out; R, local, local_rhs
  b += (h.sliced.perm.size() + h.sliced.col.size()) * sizeof(Index) + h.sliced.slice_ptr.size() * sizeof(Offset) +
       h.sliced.val.size() * w;
  if (s.update == Update::Gather)
    b += h.gi.sub_ptr.size() * sizeof(Offset) + h.gi.block.size() * sizeof(int32_t) + h.gi.keep.size() * sizeof(uint16_t);
  else
    b += s.plan.element_block.size() * (sizeof(Offset) + sizeof(uint16_t));
  b += h.gi.diag_position.size() * sizeof(Offset) + s.plan.node_ptr.size() * sizeof(Offset) +
       s.plan.node_slot.size() * sizeof(int64_t) + s.constrained.size();
  if (!s.loads.empty()) {
    std::size_t nodes = 0;
    for (std::size_t k = 0; k < s.loads.size(); ++k) nodes += k == 0 || s.loads[k].node != s.loads[k - 1].node;
    b += nodes * sizeof(int32_t) + (nodes + 1) * sizeof(int) + s.loads.size() * (sizeof(int) + 3 * sizeof(double));
  }
  b += s.curves.size() * (sizeof(CurveParams) + sizeof(double));
  b += sizeof(StepState) + 2 * sizeof(cuda::DeviceElementChecks);
  const linalg::CgProblem problem = cg_problem_of(s, h, device);
  for (bool stat : {false, true})
    b += linalg::choose_cg_plan(problem, cg_options(s.options, stat, 3 * s.num_nodes)).device_bytes;
  return b;
}

template <class T>
class BcsrPcgCuda final : public BcsrPcgSimulation {
 public:
  BcsrPcgCuda(BcsrPcgSetup setup, HostLayout<T> layout, Precision p, int device)
      : BcsrPcgSimulation(std::move(setup), Backend::Cuda, p), device_(device) {
    EB_CUDA_CHECK(cudaSetDevice(device_));
    // A blocking stream: DeviceBuffer's synchronous copies run on the legacy stream, which then
    // orders with every kernel here.
    EB_CUDA_CHECK(cudaStreamCreate(&stream_));
    try {
      build(std::move(layout));
    } catch (...) {
      release();
      throw;
    }
  }
  ~BcsrPcgCuda() override { release(); }

  void set_coefficients(const ElementCoefficients<double>& k) override { coefficients_ = cast_coefficients<T>(k); }
  void use_static_solver(bool on) override { static_ = on; }

  void set_static_cg(double tolerance, int max_iterations) override {
    if (tolerance == static_cg_.tolerance && max_iterations == static_cg_.max_iterations) return;
    // The options are kept only once the solver is built: a refused rebuild (a non-positive
    // diagonal) must not leave them describing a solver that does not exist.
    linalg::CgOptions next = static_cg_;
    next.tolerance = tolerance;
    next.max_iterations = max_iterations;
    sync();
    cg_static_ = std::make_unique<linalg::CgSolver<T>>(*matrix_operator_, next);
    static_cg_ = next;
  }

  double rhs_norm() override {
    const std::vector<T> r = rhs_.to_host();
    double s = 0;
    for (T x : r) s += double(x) * double(x);
    return std::sqrt(s);
  }

  std::vector<double> get_array(PhaseArray a) override {
    sync();
    const int64_t E = setup_.num_elements;
    switch (a) {
      case PhaseArray::u: return widen(u_.to_host());
      case PhaseArray::v: return widen(v_.to_host());
      case PhaseArray::sol: return widen(sol_.to_host());
      case PhaseArray::rhs: return widen(rhs_.to_host());
      case PhaseArray::R: return from_entry_major(R_.to_host(), E, 9);
      case PhaseArray::local: return from_block_major(local_.to_host(), E);
      case PhaseArray::local_rhs: return widen(local_rhs_.to_host());
      case PhaseArray::matrix: {
        const std::vector<T> val = K_.val.to_host();
        std::vector<double> out(9 * size_t(setup_.plan.blocks()));
        for (Offset b = 0; b < setup_.plan.blocks(); ++b) {
          const Offset pos = gather_index_.block_position[size_t(b)];
          for (int c = 0; c < 9; ++c) out[size_t(9 * b + c)] = double(val[size_t((pos / 32) * kSliceEntries + c * 32 + pos % 32)]);
        }
        return out;
      }
    }
    throw std::invalid_argument("bcsr-pcg: unknown array");
  }

  void set_array(PhaseArray a, const std::vector<double>& values) override {
    sync();
    const int64_t E = setup_.num_elements;
    auto check = [&](size_t n) {
      if (values.size() != n)
        throw std::invalid_argument("bcsr-pcg: array " + to_string(a) + " has " + std::to_string(n) + " values, got " +
                                    std::to_string(values.size()));
    };
    switch (a) {
      case PhaseArray::u: check(u_.size()); u_.upload(narrow(values)); break;
      case PhaseArray::v:
        check(v_.size());
        v_.upload(narrow(values));
        sol_.upload(narrow(values));
        break;
      case PhaseArray::sol: check(sol_.size()); sol_.upload(narrow(values)); break;
      case PhaseArray::rhs: check(rhs_.size()); rhs_.upload(narrow(values)); break;
      case PhaseArray::R: check(R_.size()); R_.upload(to_entry_major<T>(values, E, 9)); break;
      case PhaseArray::local: check(local_.size()); local_.upload(to_block_major<T>(values, E)); break;
      case PhaseArray::local_rhs: check(local_rhs_.size()); local_rhs_.upload(narrow(values)); break;
      case PhaseArray::matrix: {
        check(9 * size_t(setup_.plan.blocks()));
        std::vector<T> val = K_.val.to_host();
        for (Offset b = 0; b < setup_.plan.blocks(); ++b) {
          const Offset pos = gather_index_.block_position[size_t(b)];
          for (int c = 0; c < 9; ++c) val[size_t((pos / 32) * kSliceEntries + c * 32 + pos % 32)] = T(values[size_t(9 * b + c)]);
        }
        K_.val.upload(val);
        break;
      }
    }
  }

  linalg::CgResult run_phase(Phase p) override {
    timer_.begin(phase_name(p), stream_);
    linalg::CgResult r;
    switch (p) {
      case Phase::Rotation: enqueue_rotation(); break;
      case Phase::Matrix: enqueue_matrix(); break;
      case Phase::Update:
        upload_factors();
        enqueue_update();
        break;
      case Phase::Solve: {
        linalg::CgSolver<T>& cg = solver();
        cg.refresh_preconditioner();
        if (!static_ && !setup_.options.warm_start) zero_sol();
        r = cg.solve(rhs_.data(), sol_.data());  // on stream_, synchronized: the events span it
        break;
      }
      case Phase::Integrate: enqueue_integrate(true); break;
      case Phase::Increment: enqueue_integrate(false); break;
    }
    timer_.end(stream_);
    timer_.flush(timings_, 1);
    read_checks();
    return r;
  }

  // Fix (with the label above): static iterations do not advance the device's step counter, so
  // every load step's det F checks were labelled 1; it now holds the load step's number, which
  // the CPU backend's checks carry (BcsrPcgSimulation::solve_static: checks_step_ = step_).
  void solve_static(double load_factor) override {
    const StepState st{static_cast<long long>(step_ + 1)};
    sync();
    state_.upload(&st, 1);
    BcsrPcgSimulation::solve_static(load_factor);
  }

  void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) override {
    if (!state_checked()) {  // the state copied out is checked too (see validity()), into its own counters
      const cuda::DeviceElementChecks fresh;
      state_checks_buf_.upload(&fresh, 1);
      const int64_t E = setup_.num_elements;
      k_rotation<T><<<cuda::blocks_for(E, kElementThreads), kElementThreads, 0, stream_>>>(
          E, conn_.data(), Dm_inv_.data(), u_.data(), R_.data(), state_checks_buf_.data(), state_.data());
      EB_CUDA_CHECK_LAUNCH();
      sync();
      cuda::DeviceElementChecks c;
      state_checks_buf_.download(&c, 1);
      ValidityCounts v;
      cuda::copy_checks(c, v);
      record_state_checks({v.inverted_element_steps, v.first_inverted_element, v.min_det_f, v.first_nonfinite_element});
    }
    sync();
    u = widen(u_.to_host());
    v = widen(v_.to_host());
  }

  std::size_t device_bytes() const override { return allocated_; }

  // One SpMV with the current matrix: median of `repeats` batches of kSpmvBatch (ms per product).
  double time_spmv_ms(int repeats) override {
    sync();
    if (repeats < 1) return 0.0;
    cudaEvent_t a, b;
    EB_CUDA_CHECK(cudaEventCreate(&a));
    EB_CUDA_CHECK(cudaEventCreate(&b));
    std::vector<double> ms;
    for (int k = 0; k < repeats; ++k) {
      EB_CUDA_CHECK(cudaEventRecord(a, stream_));
      for (int j = 0; j < kSpmvBatch; ++j) matrix_operator_->apply(sol_.data(), spmv_out_.data(), stream_);
      EB_CUDA_CHECK(cudaEventRecord(b, stream_));
      EB_CUDA_CHECK(cudaEventSynchronize(b));
      float t = 0;
      EB_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
      ms.push_back(double(t) / kSpmvBatch);
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    std::sort(ms.begin(), ms.end());
    return ms.empty() ? 0.0 : ms[ms.size() / 2];
  }

 protected:
  void step_impl() override { BcsrPcgSimulation::step_impl(); }

 public:
  void advance(int steps) override {
    if (!use_graph()) {
      BcsrPcgSimulation::advance(steps);
      return;
    }
    use_static_solver(false);
    if (steps <= 0) return;
    set_coefficients(dynamic_coefficients());
    if (!graph_) capture();
    timer_.begin("step", stream_);
    for (int k = 0; k < steps; ++k) EB_CUDA_CHECK(cudaGraphLaunch(graph_, stream_));
    timer_.end(stream_);
    timer_.flush(timings_, steps);
    step_ += steps;
    const linalg::CgResult r = solver().last_result();
    record_solve(r);
    solves_ += steps - 1;
    cg_iterations_total_ += int64_t(r.iterations) * (steps - 1);
    read_checks();
  }

 private:
  bool use_graph() const { return setup_.options.graph && setup_.options.cg_tolerance == 0; }

  static std::vector<double> widen(const std::vector<T>& v) { return std::vector<double>(v.begin(), v.end()); }
  static std::vector<T> narrow(const std::vector<double>& v) { return std::vector<T>(v.begin(), v.end()); }

  template <class U>
  void alloc(cuda::DeviceBuffer<U>& b, size_t n, const char* what) {
    b.resize(n, what);
    allocated_ += b.bytes();
  }
  template <class U>
  void put(cuda::DeviceBuffer<U>& b, const std::vector<U>& h, const char* what) {
    alloc(b, h.size(), what);
    if (!h.empty()) b.upload(h.data(), h.size());
  }

  void build(HostLayout<T> layout) {
    const int64_t E = setup_.num_elements, N = setup_.num_nodes;
    const size_t n = 3 * size_t(N);
    std::vector<int32_t> conn(4 * size_t(E));
    for (int64_t e = 0; e < E; ++e)
      for (int a = 0; a < 4; ++a) conn[size_t(a * E + e)] = setup_.connectivity[size_t(4 * e + a)];
    put(conn_, conn, "bcsr-pcg connectivity");
    put(Dm_inv_, to_entry_major<T>(setup_.Dm_inv, E, 9), "bcsr-pcg Dm^-1");
    put(Dm_, to_entry_major<T>(setup_.Dm, E, 9), "bcsr-pcg Dm");
    put(volume_, std::vector<T>(setup_.volume.begin(), setup_.volume.end()), "bcsr-pcg volumes");
    for (auto* b : {&u_, &v_, &sol_, &rhs_, &spmv_out_}) {
      alloc(*b, n, "bcsr-pcg node vector");
      b->fill_zero();
    }
    alloc(R_, 9 * size_t(E), "bcsr-pcg rotations");
    alloc(local_, 144 * size_t(E), "bcsr-pcg local matrices");
    alloc(local_rhs_, 12 * size_t(E), "bcsr-pcg local right-hand sides");
    // The global matrix: the sliced layout of the plan's pattern, and the gather's index blocks.
    const linalg::SlicedBcsr<T> sliced = std::move(layout.sliced);
    gather_index_ = std::move(layout.gi);
    K_ = linalg::upload(sliced);
    allocated_ += K_.perm.bytes() + K_.slice_ptr.bytes() + K_.col.bytes() + K_.val.bytes();
    steps_ = sliced.steps();
    if (setup_.update == Update::Gather) {
      put(sub_ptr_, gather_index_.sub_ptr, "bcsr-pcg gather steps");
      put(gather_block_, gather_index_.block, "bcsr-pcg gather indices");
      put(gather_keep_, gather_index_.keep, "bcsr-pcg gather masks");
      for (int c = 0; c < 9; ++c) component_offset_.v[c] = gather_index_.component_offset[size_t(c)];
    } else {
      std::vector<Offset> pos(setup_.plan.element_block.size());
      std::vector<uint16_t> keep(pos.size());
      for (size_t k = 0; k < pos.size(); ++k) {
        pos[k] = gather_index_.block_position[size_t(setup_.plan.element_block[k])];
        keep[k] = setup_.plan.keep[size_t(setup_.plan.element_block[k])];
      }
      put(scatter_pos_, pos, "bcsr-pcg scatter positions");
      put(scatter_keep_, keep, "bcsr-pcg scatter masks");
    }
    put(diag_pos_, gather_index_.diag_position, "bcsr-pcg diagonal positions");
    put(node_ptr_, setup_.plan.node_ptr, "bcsr-pcg node slots");
    put(node_slot_, setup_.plan.node_slot, "bcsr-pcg node slots");
    put(constrained_, setup_.constrained, "bcsr-pcg constraints");
    // Loads, grouped by node.
    std::vector<int32_t> lnode;
    std::vector<int> lptr{0}, lcurve;
    std::vector<double> lforce;
    for (size_t k = 0; k < setup_.loads.size(); ++k) {
      if (lnode.empty() || lnode.back() != setup_.loads[k].node) {
        if (!lnode.empty()) lptr.push_back(int(k));
        lnode.push_back(setup_.loads[k].node);
      }
      lcurve.push_back(setup_.loads[k].curve);
      for (int d = 0; d < 3; ++d) lforce.push_back(setup_.loads[k].force[d]);
    }
    lptr.push_back(int(setup_.loads.size()));
    load_nodes_ = int(lnode.size());
    if (load_nodes_) {
      put(load_node_, lnode, "bcsr-pcg loads");
      put(load_ptr_, lptr, "bcsr-pcg loads");
      put(load_curve_, lcurve, "bcsr-pcg loads");
      put(load_force_, lforce, "bcsr-pcg loads");
    }
    std::vector<CurveParams> curves;
    for (const LoadCurve& c : setup_.curves) curves.push_back(curve_params(c));
    if (!curves.empty()) {
      put(curves_, curves, "bcsr-pcg curves");
      alloc(factors_, curves.size(), "bcsr-pcg load factors");
    }
    alloc(state_, 1, "bcsr-pcg step");
    state_.fill_zero();
    alloc(checks_, 1, "bcsr-pcg checks");
    alloc(state_checks_buf_, 1, "bcsr-pcg state checks");
    reset_checks();
    lame_ = {T(setup_.lambda), T(setup_.mu)};
    matrix_operator_ = std::make_unique<SlicedOperator<T>>(K_, diag_pos_.data());
    layout_entries_ = double(steps_) * kSliceEntries;
    index_entries_ = double(gather_index_.block.size());
    index_bytes_ = gather_index_.index_bytes();
    spmv_bytes_ = double(K_.val.bytes() + K_.col.bytes() + K_.perm.bytes() + K_.slice_ptr.bytes()) + 2.0 * double(n) * sizeof(T);
    padded_ = gather_index_.padded_entries();
    // The host copies of the index blocks are no longer needed (block_position stays for get/set).
    std::vector<int32_t>().swap(gather_index_.block);
    std::vector<uint16_t>().swap(gather_index_.keep);
    // The solvers read the diagonal when they are made (and every step's Solve refreshes it): the
    // identity's diagonal until a step has filled the matrix.
    {
      std::vector<T> val(K_.val.size(), T(0));
      for (Offset p : gather_index_.diag_position) val[size_t(p)] = T(1);
      K_.val.upload(val);
    }
    make_solvers();
  }

  void release() noexcept {
    if (graph_) cudaGraphExecDestroy(graph_);
    graph_ = nullptr;
    cg_dynamic_.reset();
    cg_static_.reset();
    if (stream_) cudaStreamDestroy(stream_);
    stream_ = nullptr;
  }

  void sync() { EB_CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  void zero_sol() { EB_CUDA_CHECK(cudaMemsetAsync(sol_.data(), 0, sol_.bytes(), stream_)); }

  void reset_checks() {
    const cuda::DeviceElementChecks c;
    checks_.upload(&c, 1);
  }
  void read_checks() {
    sync();
    cuda::DeviceElementChecks c;
    checks_.download(&c, 1);
    cuda::copy_checks(c, counts_);
  }

  // Non-graph mode: the host's load factors (set_load_time) for the Update.
  void upload_factors() {
    if (setup_.curves.empty()) return;
    std::vector<double> f(setup_.curves.size());
    for (size_t c = 0; c < f.size(); ++c) f[c] = load_scale_ * load_factors_[c];
    sync();
    factors_.upload(f.data(), f.size());
  }

  void enqueue_rotation() {
    const int64_t E = setup_.num_elements;
    k_rotation<T><<<cuda::blocks_for(E, kElementThreads), kElementThreads, 0, stream_>>>(
        E, conn_.data(), Dm_inv_.data(), u_.data(), R_.data(), checks_.data(), state_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void enqueue_matrix() {
    const int64_t E = setup_.num_elements;
    MatrixParams<T> p{E, conn_.data(), R_.data(), Dm_.data(), Dm_inv_.data(), volume_.data(), u_.data(), v_.data(),
                      lame_, coefficients_, local_.data(), local_rhs_.data()};
    k_matrix<T><<<cuda::blocks_for(E, kElementThreads), kElementThreads, 0, stream_>>>(p);
    EB_CUDA_CHECK_LAUNCH();
  }
  void enqueue_update() {
    const int64_t E = setup_.num_elements, N = setup_.num_nodes;
    if (setup_.update == Update::Gather) {
      if (steps_) k_gather<T><<<unsigned(steps_), kSliceEntries, 0, stream_>>>(sub_ptr_.data(), gather_block_.data(), gather_keep_.data(),
                                                                    component_offset_, local_.data(), K_.val.data());
    } else {
      EB_CUDA_CHECK(cudaMemsetAsync(K_.val.data(), 0, K_.val.bytes(), stream_));
      k_scatter<T><<<cuda::blocks_for(16 * E, kElementThreads), kElementThreads, 0, stream_>>>(
          E, scatter_pos_.data(), scatter_keep_.data(), local_.data(), K_.val.data());
    }
    EB_CUDA_CHECK_LAUNCH();
    k_gather_rhs<T><<<cuda::blocks_for(N, kVectorThreads), kVectorThreads, 0, stream_>>>(
        N, node_ptr_.data(), node_slot_.data(), constrained_.data(), local_rhs_.data(), rhs_.data());
    EB_CUDA_CHECK_LAUNCH();
    if (load_nodes_) {
      k_loads<T><<<cuda::blocks_for(load_nodes_, 128), 128, 0, stream_>>>(load_nodes_, load_node_.data(), load_ptr_.data(),
                                                                     load_curve_.data(), load_force_.data(),
                                                                     constrained_.data(), factors_.data(), rhs_.data());
      EB_CUDA_CHECK_LAUNCH();
    }
  }
  void enqueue_integrate(bool dynamic) {
    const int64_t n = 3 * setup_.num_nodes;
    k_integrate<T><<<cuda::blocks_for(std::max<int64_t>(n, 1), kVectorThreads), kVectorThreads, 0, stream_>>>(
        n, sol_.data(), u_.data(), v_.data(), T(setup_.dt), dynamic, state_.data());
    EB_CUDA_CHECK_LAUNCH();
  }

  linalg::CgSolver<T>& solver() { return static_ ? *cg_static_ : *cg_dynamic_; }

  void make_solvers() {
    auto options = [&](bool stat) {
      linalg::CgOptions o = cg_options(setup_.options, stat, 3 * setup_.num_nodes);
      o.stream = stream_;
      return o;
    };
    cg_dynamic_ = std::make_unique<linalg::CgSolver<T>>(*matrix_operator_, options(false));
    static_cg_ = options(true);
    cg_static_ = std::make_unique<linalg::CgSolver<T>>(*matrix_operator_, static_cg_);
  }

  // One dynamic step as a graph: loads' factors from the device step counter, the phases, the
  // preconditioner refresh and the whole fixed-count CG.
  void capture() {
    linalg::CgSolver<T>& cg = solver();
    sync();
    graph_ = cuda::capture_graph(stream_, [&] {
      if (!setup_.curves.empty())
        k_curve_factors<<<1, 32 * ((int(setup_.curves.size()) + 31) / 32), 0, stream_>>>(
            int(setup_.curves.size()), curves_.data(), state_.data(), setup_.dt, factors_.data());
      enqueue_rotation();
      enqueue_matrix();
      enqueue_update();
      cg.refresh_preconditioner();
      if (!setup_.options.warm_start) zero_sol();
      cg.enqueue(rhs_.data(), sol_.data());
      enqueue_integrate(true);
    });
  }

  void add_details(nlohmann::json& j) const override {
    j["device"] = device_;
    // What the CG engine chose for this size and precision (linalg::choose_cg_plan), and why.
    if (cg_dynamic_) j["cg_dynamic"] = linalg::describe(cg_dynamic_->plan());
    if (cg_static_) j["cg_static"] = linalg::describe(cg_static_->plan());
    j["graph"] = use_graph();
    j["sliced_steps"] = steps_;
    j["gather_padding"] = index_entries_ > 0 ? double(padded_) / index_entries_ : 0.0;
  }

  int device_;
  bool static_ = false;
  cudaStream_t stream_ = nullptr;
  cudaGraphExec_t graph_ = nullptr;
  cuda::EventTimer timer_;
  std::size_t allocated_ = 0;
  Offset steps_ = 0, padded_ = 0;
  int load_nodes_ = 0;
  linalg::SlicedGatherIndex gather_index_;
  linalg::DeviceBcsr<T> K_;
  cuda::DeviceBuffer<int32_t> conn_, gather_block_, load_node_;
  cuda::DeviceBuffer<int> load_ptr_, load_curve_;
  cuda::DeviceBuffer<double> load_force_, factors_;
  cuda::DeviceBuffer<CurveParams> curves_;
  cuda::DeviceBuffer<T> Dm_inv_, Dm_, volume_, u_, v_, sol_, rhs_, spmv_out_, R_, local_, local_rhs_;
  cuda::DeviceBuffer<Offset> sub_ptr_, scatter_pos_, diag_pos_, node_ptr_;
  cuda::DeviceBuffer<int64_t> node_slot_;
  cuda::DeviceBuffer<uint16_t> scatter_keep_, gather_keep_;
  ComponentOffsets component_offset_{};
  cuda::DeviceBuffer<uint8_t> constrained_;
  cuda::DeviceBuffer<StepState> state_;
  cuda::DeviceBuffer<cuda::DeviceElementChecks> checks_, state_checks_buf_;
  tet::Lame<T> lame_{};
  ElementCoefficients<T> coefficients_{};
  std::unique_ptr<linalg::LinearOperator<T>> matrix_operator_;
  std::unique_ptr<linalg::CgSolver<T>> cg_dynamic_, cg_static_;
  linalg::CgOptions static_cg_;  // cg_static_'s options (set_static_cg)
};

// The layout on the host, the estimate checked, then the device's allocations.
template <class T>
std::unique_ptr<BcsrPcgSimulation> make_typed(BcsrPcgSetup s, const RunOptions& o,
                                              const linalg::CgDeviceProperties& device) {
  HostLayout<T> layout = host_layout<T>(s);
  require_device_memory(double(planned_bytes(s, layout, device)),
                        "bcsr-pcg cuda " + to_string(o.precision) + " on " + std::to_string(s.num_elements) +
                            " tetrahedra and " + std::to_string(s.num_nodes) + " nodes",
                        o.device, o.gpu_memory_limit);
  return std::make_unique<BcsrPcgCuda<T>>(std::move(s), std::move(layout), o.precision, o.device);
}

// The properties the plan depends on, of `device` made current (as the backend's constructor does).
linalg::CgDeviceProperties usable_device(int device) {
  const GpuInfo g = cuda_device_info(device);
  if (!g.usable) throw RuntimeFailure("bcsr-pcg cuda: " + g.reason);
  EB_CUDA_CHECK(cudaSetDevice(device));
  return linalg::cg_device_properties();
}

}  // namespace

std::size_t estimate_device_bytes(const BcsrPcgSetup& s, Precision p, int device) {
  const linalg::CgDeviceProperties d = usable_device(device);
  if (p == Precision::Fp32) return planned_bytes(s, host_layout<float>(s), d);
  return planned_bytes(s, host_layout<double>(s), d);
}

std::unique_ptr<BcsrPcgSimulation> make_bcsr_pcg_cuda_impl(const Scenario& sc, const RunOptions& o) {
  if (cuda_device_count() == 0) throw RuntimeFailure("bcsr-pcg cuda: " + cuda_device_info(o.device).reason);
  BcsrPcgSetup s = build_bcsr_pcg_setup(sc, o);
  const linalg::CgDeviceProperties d = usable_device(o.device);
  if (o.precision == Precision::Fp32) return make_typed<float>(std::move(s), o, d);
  return make_typed<double>(std::move(s), o, d);
}

std::unique_ptr<Simulation> make_bcsr_pcg_cuda(const Scenario& sc, const RunOptions& o) {
  return make_bcsr_pcg_cuda_impl(sc, o);
}

}  // namespace eb::bcsr_pcg
