// The CUDA CG engine: the orchestration of the kernels in cg_kernels.cuh. It runs the steps of
// cg_algorithm.h in their order on the engine's stream as its CgPlan says (cg_plan.cpp: standard
// or single reduction, how the single reduction's sums are finished, L2 residency), keeps the
// scalars in device memory, and reads the status once per `check_every` iterations (one CUDA graph
// launch between two host reads).
#include <algorithm>
#include <cstddef>
#include <vector>

#include "meshes/errors.h"
#include "solvers/linalg/cg_kernels.cuh"
#include "solvers/linalg/device_formats.cuh"

namespace eb::linalg {

CgDeviceProperties cg_device_properties() {
  int device = 0, sms = 0, l2 = 0, max_persisting = 0, max_window = 0;
  EB_CUDA_CHECK(cudaGetDevice(&device));
  EB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  EB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  EB_CUDA_CHECK(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device));
  EB_CUDA_CHECK(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device));
  CgDeviceProperties p;
  p.multiprocessors = std::max(1, sms);
  p.l2_bytes = std::size_t(std::max(0, l2));
  p.max_persisting_l2_bytes = std::size_t(std::max(0, max_persisting));
  p.max_access_policy_window_bytes = std::size_t(std::max(0, max_window));
  return p;
}

namespace detail {
namespace {

template <class T>
class DeviceCgEngine final : public CgSolver<T>::Engine {
 public:
  DeviceCgEngine(const LinearOperator<T>& A, const CgOptions& o, const CgPlan& plan)
      : A_(A), options_(o), plan_(plan), n_(A.rows()) {
    next_kernel_ = plan.single_reduction && plan.reduction == SrReduction::NextKernel;
    fused_dot_ = plan.single_reduction && A.fused_dot_blocks() > 0;
    blocks_ = plan.vector_blocks;
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
    while (host_scalars_->status == cg_detail::kRunning) {
      enqueue_chunk();
      read_scalars();
    }
    if (n_ > 0) EB_CUDA_CHECK(cudaMemcpyAsync(x, x_.data(), bytes, cudaMemcpyDeviceToDevice, stream_));
    return read_result();
  }

  void refresh_preconditioner() override {
    if (!dinv_.size()) return;
    A_.diagonal(diag_.data(), stream_);
    k_jacobi_inverse<T><<<blocks_, kCgThreads, 0, stream_>>>(n_, diag_.data(), dinv_.data());
    EB_CUDA_CHECK_LAUNCH();
  }

  // The whole solve as plain kernel launches (no graph of its own, no host read), so that a caller
  // capturing its stream records it inside its own graph.
  void enqueue(const T* b, T* x) override {
    b_ = b;
    const size_t bytes = size_t(n_) * sizeof(T);
    if (n_ > 0) EB_CUDA_CHECK(cudaMemcpyAsync(x_.data(), x, bytes, cudaMemcpyDeviceToDevice, stream_));
    start_steps();
    for (int k = 0; k < options_.max_iterations; ++k) iteration_steps();
    publish();
    if (n_ > 0) EB_CUDA_CHECK(cudaMemcpyAsync(x, x_.data(), bytes, cudaMemcpyDeviceToDevice, stream_));
  }

  CgResult last_result() override {
    read_scalars();
    return read_result();
  }

  // ---- the steps (cg_algorithm.h) ----
  void apply_to_x() { A_.apply(x_.data(), q_.data(), stream_); }
  void apply_to_p() { A_.apply(p_.data(), q_.data(), stream_); }
  void start() {
    // The single-reduction start writes u = M r where the standard one writes p = M r.
    T* z = plan_.single_reduction ? u() : p_.data();
    state_slot_ = 0;
    k_start<T><<<blocks_, kCgThreads, 0, stream_>>>(n_, b_, q_.data(), dinv(), r_.data(), z,
                                                    next_kernel_ ? sr_states_.data() : scalars_.data(),
                                                    partials_.data(), ticket_.data(), options_.tolerance,
                                                    options_.max_iterations, history_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void reduce_alpha() {
    k_alpha<T><<<blocks_, kCgThreads, 0, stream_>>>(n_, p_.data(), q_.data(), scalars_.data(), partials_.data(),
                                                    ticket_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void update_solution() {
    k_update<T><<<blocks_, kCgThreads, 0, stream_>>>(n_, p_.data(), q_.data(), dinv(), x_.data(), r_.data(),
                                                     scalars_.data(), partials_.data(), ticket_.data(),
                                                     history_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void update_direction() {
    k_direction<T><<<blocks_, kCgThreads, 0, stream_>>>(n_, r_.data(), dinv(), p_.data(), scalars_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void apply_dot_u() {
    if (next_kernel_) {  // partial sums only: the next update adds them
      if (fused_dot_) {
        DotTarget target;
        target.partials = product_dot_partials_.data();
        target.programmatic = plan_.programmatic_launch;
        A_.apply_dot(u(), w_.data(), target, stream_);
        return;
      }
      A_.apply(u(), w_.data(), stream_);
      k_dot_partials<T><<<blocks_, kCgThreads, 0, stream_>>>(n_, u(), w_.data(), product_dot_partials_.data());
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
    k_dot<T><<<blocks_, kCgThreads, 0, stream_>>>(n_, u(), w_.data(), scalars_.data(), partials_.data(),
                                                  ticket_.data());
    EB_CUDA_CHECK_LAUNCH();
  }
  void sr_update() {
    if (next_kernel_) {
      const size_t slot = size_t(blocks_) * 2;
      CgScalars* states = sr_states_.data();
      double* partials = update_partials_.data();
      cuda::launch_kernel(plan_.programmatic_launch, k_sr_update_next<T>, dim3(blocks_), dim3(kCgThreads), 0,
                          stream_, Offset(n_), static_cast<const T*>(w_.data()), dinv(), p_.data(), s_vec_.data(),
                          x_.data(), r_.data(), u(), static_cast<const CgScalars*>(states + state_slot_),
                          states + (1 - state_slot_), static_cast<const double*>(partials + state_slot_ * slot),
                          partials + (1 - state_slot_) * slot, blocks_,
                          static_cast<const double*>(product_dot_partials_.data()), plan_.product_dot_partials,
                          history_.data());
      state_slot_ = 1 - state_slot_;
      return;
    }
    k_sr_update<T><<<blocks_, kCgThreads, 0, stream_>>>(n_, w_.data(), dinv(), p_.data(), s_vec_.data(), x_.data(),
                                                        r_.data(), u(), scalars_.data(), partials_.data(),
                                                        ticket_.data(), history_.data());
    EB_CUDA_CHECK_LAUNCH();
  }

 private:
  // In the order of cg_plan.cpp device_bytes(), which states what this allocates.
  void allocate() {
    const size_t n = size_t(n_);
    x_.resize(n, "CG x");
    r_.resize(n, "CG r");
    p_.resize(n, "CG p");
    q_.resize(n, "CG q");
    if (options_.preconditioner == Preconditioner::Jacobi && n > 0) {
      diag_.resize(n, "CG diagonal");
      A_.diagonal(diag_.data(), stream_);
      EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
      dinv_.upload(jacobi_inverse(diag_.to_host(), A_.name()));
    }
    if (plan_.single_reduction) {
      s_vec_.resize(n, "CG s");
      w_.resize(n, "CG w");
      if (dinv_.size()) u_.resize(n, "CG u");
    }
    if (next_kernel_) {
      sr_states_.resize(2, "CG single-reduction states");
      update_partials_.resize(size_t(blocks_) * 2 * 2, "CG update partial sums");
      update_partials_.fill_zero();  // read (not used) by the first update after a start
      product_dot_partials_.resize(plan_.product_dot_partials, "CG product-dot partial sums");
      // Every entry is written by each product before the update reads it: NaN (all bits set)
      // until then, so that a partial sum read but never written shows as a NaN stop, not as a
      // silently wrong delta.
      EB_CUDA_CHECK(cudaMemset(product_dot_partials_.data(), 0xff, product_dot_partials_.bytes()));
    }
    partials_.resize(std::max(size_t(blocks_) * 3, fused_dot_ ? A_.fused_dot_blocks() : size_t(0)),
                     "CG partial sums");
    ticket_.resize(1, "CG ticket");
    ticket_.fill_zero();
    scalars_.resize(1, "CG scalars");
    history_.resize(size_t(options_.max_iterations) + 1, "CG residual history");
    chunk_ = std::max(1, std::min(options_.check_every, options_.max_iterations));
    // Next-kernel reductions alternate two state slots per iteration: an even chunk ends where it
    // began, so its graph serves every launch (iterations past a stop do nothing).
    if (next_kernel_) chunk_ += chunk_ & 1;
    EB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_scalars_), sizeof(CgScalars)));
  }

  // CgPlan::l2_resident: the access policy window over the operator's values, and the set-aside
  // the plan asks for. The share marked persisting (the hit ratio) is what the granted set-aside
  // holds; the rest of the window streams (evicted first).
  void keep_operator_in_l2() {
    const auto hot = A_.hot_storage();
    if (!plan_.l2_resident || !hot.data) return;
    EB_CUDA_CHECK(cudaDeviceGetLimit(&old_set_aside_, cudaLimitPersistingL2CacheSize));
    if (plan_.l2_set_aside_bytes > old_set_aside_) {
      EB_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, plan_.l2_set_aside_bytes));
      set_aside_raised_ = true;
    }
    // The driver may round the set-aside: the hit ratio follows what it granted.
    size_t granted = 0;
    EB_CUDA_CHECK(cudaDeviceGetLimit(&granted, cudaLimitPersistingL2CacheSize));
    window_.base_ptr = const_cast<void*>(hot.data);
    window_.num_bytes = plan_.l2_window_bytes;
    const double persisting = std::min(granted, plan_.l2_set_aside_bytes);
    window_.hitRatio = float(std::min(1.0, persisting / double(plan_.l2_window_bytes)));
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
    if (host_scalars_) cudaFreeHost(host_scalars_);
    if (stream_ && own_stream_) cudaStreamDestroy(stream_);
    graph_ = nullptr;
    host_scalars_ = nullptr;
    stream_ = nullptr;
  }

  const T* dinv() const { return dinv_.size() ? dinv_.data() : nullptr; }
  // u = M r of the single-reduction iteration; r itself without a preconditioner.
  T* u() { return dinv_.size() ? u_.data() : r_.data(); }

  void start_steps() {
    if (plan_.single_reduction)
      cg_sr_start_steps(*this);
    else
      cg_start_steps(*this);
  }
  void iteration_steps() {
    if (plan_.single_reduction)
      cg_sr_iteration_steps(*this);
    else
      cg_iteration_steps(*this);
  }

  void read_scalars() {
    EB_CUDA_CHECK(
        cudaMemcpyAsync(host_scalars_, scalars_.data(), sizeof(CgScalars), cudaMemcpyDeviceToHost, stream_));
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // The result from the scalars read last and the residual history.
  CgResult read_result() {
    std::vector<double> history(size_t(host_scalars_->iteration) + 1);
    EB_CUDA_CHECK(cudaMemcpyAsync(history.data(), history_.data(), history.size() * sizeof(double),
                                  cudaMemcpyDeviceToHost, stream_));
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return cg_result(*host_scalars_, history.data());
  }

  // Next-kernel reductions: the state the host reads, from the latest slot (k_sr_publish).
  void publish() {
    if (!next_kernel_) return;
    k_sr_publish<<<1, kCgThreads, 0, stream_>>>(sr_states_.data() + state_slot_,
                                                update_partials_.data() + state_slot_ * size_t(blocks_) * 2, blocks_,
                                                scalars_.data(), history_.data());
    EB_CUDA_CHECK_LAUNCH();
  }

  void enqueue_chunk() {
    if (!options_.use_graph) {
      for (int k = 0; k < chunk_; ++k) iteration_steps();
      publish();
      return;
    }
    if (!graph_) capture();
    EB_CUDA_CHECK(cudaGraphLaunch(graph_, stream_));
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
  CgOptions options_;
  CgPlan plan_;
  Index n_;
  unsigned blocks_ = 1;        // CgPlan::vector_blocks
  bool next_kernel_ = false;   // single reduction, its sums added by the next kernel (k_sr_update_next)
  bool fused_dot_ = false;     // single reduction, the operator fuses delta = u . w into its product
  cudaStream_t stream_ = nullptr;
  bool own_stream_ = true;
  cudaGraphExec_t graph_ = nullptr;
  CgScalars* host_scalars_ = nullptr;  // pinned
  cuda::DeviceBuffer<T> x_, r_, p_, q_, diag_, dinv_;
  cuda::DeviceBuffer<T> s_vec_, w_, u_;  // single reduction only
  // Next kernel: two state slots, the update's partial sums per slot, the product's dot partials.
  cuda::DeviceBuffer<CgScalars> sr_states_;
  cuda::DeviceBuffer<double> update_partials_, product_dot_partials_;
  int state_slot_ = 0;  // the slot the next update reads
  // Last-block reductions: the partial sums and the ticket; the scalars the host reads.
  cuda::DeviceBuffer<double> partials_, history_;
  cuda::DeviceBuffer<unsigned> ticket_;
  cuda::DeviceBuffer<CgScalars> scalars_;
  int chunk_ = 1;  // iterations per graph launch
  const T* b_ = nullptr;
  // L2 residency of the operator's values (keep_operator_in_l2), and what release() restores.
  bool l2_window_ = false, set_aside_raised_ = false;
  cudaAccessPolicyWindow window_{};
  cudaStreamAttrValue old_window_{};
  size_t old_set_aside_ = 0;
};

}  // namespace

template <class T>
std::unique_ptr<typename CgSolver<T>::Engine> make_device_cg_engine(const LinearOperator<T>& A, const CgOptions& o,
                                                                    const CgPlan& plan) {
  return std::make_unique<DeviceCgEngine<T>>(A, o, plan);
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

}  // namespace detail
}  // namespace eb::linalg
