// The CUDA engines of nr-neohookean (nr_neohookean_engine.h):
//  - DeviceEngine (NR_GPU + a device strategy + DCG_GPU, Fig. 16.11): every vector on the device,
//    the Newton vector updates as kernels, the residual norm reduced in a fixed order (per-block
//    double partial sums, added on the host in block order), the tangent in a device operator of
//    the setup's format refilled in place by the strategy; stages timed with CUDA events.
//  - MixedEngine (NR_CPU + a host strategy + DCG_GPU, Fig. 16.10 right): the host engine whose
//    solve copies the tangent's values and the right-hand side to the device, runs CG there and
//    copies the solution back; the copies are the "transfer" stage.
#include <algorithm>
#include <cmath>

#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
#include "solvers/linalg/device_formats.cuh"
#include "solvers/nr_neohookean/nr_neohookean_host_engine.h"

namespace eb::nr_neohookean {

template <class T>
std::size_t estimate_engine_bytes(const NrSetup& s, bool with_strategy);

namespace {

constexpr int kThreads = 256;
constexpr int kNormBlocks = 128;  // fixed: the norm's summation order does not depend on the size

// Sum of squares of v (grid-stride, fixed grid) into partials[blockIdx.x], tree-reduced in double.
__device__ void block_sum_to(double mine, double* partials) {
  __shared__ double s[kThreads];
  s[threadIdx.x] = mine;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w >>= 1) {
    if (int(threadIdx.x) < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = s[0];
}

#define EB_NR_GRID_STRIDE(i, n) \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

template <class T>
__global__ void k_midpoint(int64_t n, T* mid, const T* phi, const T* phik) {
  EB_NR_GRID_STRIDE(i, n) mid[i] = T(0.5) * (phi[i] + phik[i]);
}
template <class T>
__global__ void k_predict(int64_t n, T* phi, const T* phik, const T* p, const T* m, const T* fr, T dt) {
  EB_NR_GRID_STRIDE(i, n) phi[i] = phik[i] + fr[i] * dt * p[i] / m[i];
}
template <class T>
__global__ void k_add_diagonal(int64_t n, linalg::ValueSegments<T> v, const int32_t* diag, const T* m, T c) {
  EB_NR_GRID_STRIDE(i, n) v.at(diag[i]) += c * m[i];
}
template <class T>
__global__ void __launch_bounds__(kThreads) k_residual_dynamic(int64_t n, T* r, const T* phi, const T* phik, const T* p,
                                                               const T* f, const T* fe, const T* m, const T* fr, T a,
                                                               T h, double* partials) {
  double s = 0;
  EB_NR_GRID_STRIDE(i, n) {
    const T v = fr[i] * (p[i] - a * m[i] * (phi[i] - phik[i]) - h * (f[i] - fe[i]));
    r[i] = v;
    s += double(v) * double(v);
  }
  block_sum_to(s, partials);
}
template <class T>
__global__ void __launch_bounds__(kThreads) k_residual_static(int64_t n, T* r, const T* f, const T* fe, const T* fr,
                                                              double* partials) {
  double s = 0;
  EB_NR_GRID_STRIDE(i, n) {
    const T v = fr[i] * (fe[i] - f[i]);
    r[i] = v;
    s += double(v) * double(v);
  }
  block_sum_to(s, partials);
}
template <class T>
__global__ void k_step(int64_t n, T* phi, const T* dx, T alpha) {
  EB_NR_GRID_STRIDE(i, n) phi[i] += alpha * dx[i];
}
template <class T>
__global__ void k_finish(int64_t n, T* p, T* phik, const T* phi, const T* m, T s, T keep) {
  EB_NR_GRID_STRIDE(i, n) {
    p[i] = s * m[i] * (phi[i] - phik[i]) - keep * p[i];
    phik[i] = phi[i];
  }
}
template <class T>
__global__ void k_set_entries(int64_t k, T* v, const int32_t* idx, const T* val) {
  EB_NR_GRID_STRIDE(i, k) v[idx[i]] = val[i];
}

unsigned grid(int64_t n) { return unsigned(std::max<int64_t>(1, std::min<int64_t>(cuda::blocks_for(n, kThreads), 1024))); }

// Event pairs per stage, summed into StageTimes when taken.
class StageEvents {
 public:
  ~StageEvents() {
    for (cudaEvent_t e : pool_) cudaEventDestroy(e);
  }
  void begin(const char* stage, cudaStream_t s) {
    open_ = {stage, take(), take()};
    EB_CUDA_CHECK(cudaEventRecord(open_.a, s));
  }
  void end(cudaStream_t s) {
    EB_CUDA_CHECK(cudaEventRecord(open_.b, s));
    pending_.push_back(open_);
  }
  StageTimes take_times() {
    StageTimes t;
    for (const Pair& p : pending_) {
      EB_CUDA_CHECK(cudaEventSynchronize(p.b));
      float ms = 0;
      EB_CUDA_CHECK(cudaEventElapsedTime(&ms, p.a, p.b));
      t[p.stage] += double(ms);
      free_.push_back(p.a);
      free_.push_back(p.b);
    }
    pending_.clear();
    return t;
  }

 private:
  struct Pair {
    const char* stage;
    cudaEvent_t a, b;
  };
  cudaEvent_t take() {
    if (!free_.empty()) {
      cudaEvent_t e = free_.back();
      free_.pop_back();
      return e;
    }
    cudaEvent_t e;
    EB_CUDA_CHECK(cudaEventCreate(&e));
    pool_.push_back(e);
    return e;
  }
  Pair open_{};
  std::vector<Pair> pending_;
  std::vector<cudaEvent_t> pool_, free_;
};

struct ScopedStage {
  StageEvents& ev;
  cudaStream_t s;
  ScopedStage(StageEvents& e, const char* stage, cudaStream_t st) : ev(e), s(st) { ev.begin(stage, s); }
  ~ScopedStage() { ev.end(s); }
};

template <class T>
std::vector<double> download_values(linalg::ValueSegments<T> v) {
  std::vector<double> out;
  for (int k = 0; k < v.count; ++k) {
    const int64_t n = v.end[k] - (k ? v.end[k - 1] : 0);
    std::vector<T> h(static_cast<size_t>(n));
    if (n > 0) EB_CUDA_CHECK(cudaMemcpy(h.data(), v.data[k], size_t(n) * sizeof(T), cudaMemcpyDeviceToHost));
    out.insert(out.end(), h.begin(), h.end());
  }
  return out;
}

template <class T>
double median_spmv_ms(const linalg::LinearOperator<T>& A, const T* x, T* y, cudaStream_t st, int repeats) {
  constexpr int kBatch = 10;
  cudaEvent_t a, b;
  EB_CUDA_CHECK(cudaEventCreate(&a));
  EB_CUDA_CHECK(cudaEventCreate(&b));
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    EB_CUDA_CHECK(cudaEventRecord(a, st));
    for (int k = 0; k < kBatch; ++k) A.apply(x, y, st);
    EB_CUDA_CHECK(cudaEventRecord(b, st));
    EB_CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0;
    EB_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(double(t) / kBatch);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return ms.empty() ? 0.0 : ms[ms.size() / 2];
}

// Bytes of the device operator of the setup's format (its arrays, the COO carry scratch, the
// diagonal positions where it has no diagonal array), from the sizes the setup recorded when it
// built the format: converting the pattern again only to count it cost seconds at 10^7 elements.
template <class T>
std::size_t operator_bytes(const NrSetup& s) {
  std::size_t bytes = s.format_bytes_fp64 - std::size_t(s.map.value_count) * (sizeof(double) - sizeof(T));
  const std::size_t coo = s.format_coo_nnz;
  if (coo > 0) bytes += 2 * ((coo + 31) / 32) * (sizeof(linalg::Index) + sizeof(T));
  if (!linalg::is_diagonal_first(s.format)) bytes += sizeof(int64_t) * std::size_t(3 * s.num_nodes);
  return bytes;
}

template <class T>
std::size_t cg_bytes(const NrSetup& s, const linalg::CgOptions& o) {
  linalg::CgProblem p;
  p.location = linalg::Location::Device;
  p.rows = linalg::Index(3 * s.num_nodes);
  p.value_bytes = sizeof(T);
  p.device = linalg::cg_device_properties();
  if (s.format == linalg::Format::Csr) p.hot_bytes = s.pattern.nnz() * sizeof(T);  // DeviceMatrixOperator::hot_storage
  return linalg::choose_cg_plan(p, o).device_bytes;
}

template <class T>
class DeviceEngine final : public NrEngine<T> {
 public:
  DeviceEngine(const EngineInput<T>& in, int device) : in_(in), n_(3 * in.setup->num_nodes) {
    // Every buffer below (vectors, strategy, matrix, CG) is a DeviceBuffer: the tracked bytes
    // this constructor adds are the engine's.
    const std::size_t tracked_before = cuda_tracked_bytes();
    EB_CUDA_CHECK(cudaSetDevice(device));
    // The strategy first: it checks its plan's bytes with everything allocated below. Strategies
    // keep a reference to their problem: this copy lives as long as the engine.
    problem_ = in.problem;
    problem_.device_reserve_bytes = estimate_engine_bytes<T>(*in.setup, false);
    strategy_ = make_strategy<T>(in.setup->strategy, problem_);
    EB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    for (auto& v : v_) v.resize(size_t(n_), "nr-neohookean vector");
    for (auto& v : v_) EB_CUDA_CHECK(cudaMemset(v.data(), 0, v.bytes()));
    mass_.upload(in.dof_mass);
    free_.upload(in.free);
    diag_.upload(in.setup->map.diag);
    slot_.resize(1, "element checks");
    partials_.resize(kNormBlocks, "norm partials");
    A_ = linalg::make_matrix_operator(linalg::cast_values<T>(in.setup->pattern), in.setup->format,
                                      linalg::Location::Device);
    cg_options_ = in.cg;
    cg_options_.stream = stream_;
    // The solver and every buffer now, so that steps allocate nothing: the Jacobi setup reads the
    // diagonal, which holds the lumped mass until the first assembly (every solve refreshes it).
    k_add_diagonal<T><<<grid(n_), kThreads, 0, stream_>>>(n_, A_->values(), diag_.data(), mass_.data(), T(1));
    EB_CUDA_CHECK_LAUNCH();
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    cg_ = std::make_unique<linalg::CgSolver<T>>(*A_, cg_options_);
    std::size_t prescribed = 0;
    for (const PrescribedNode& p : in.setup->prescribed)
      for (int d = 0; d < 3; ++d) prescribed += (p.mask >> d) & 1;
    if (prescribed > 0) {
      entry_idx_.resize(prescribed, "prescribed components");
      entry_val_.resize(prescribed, "prescribed values");
    }
    bytes_ = cuda_tracked_bytes() - tracked_before;
  }
  ~DeviceEngine() override {
    cg_.reset();
    cudaStreamDestroy(stream_);
  }
  void upload(Vec v, const std::vector<double>& host) override {
    const std::vector<T> h(host.begin(), host.end());
    EB_CUDA_CHECK(cudaMemcpyAsync(vec(v), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, stream_));
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  std::vector<double> download(Vec v) override {
    std::vector<T> h(static_cast<size_t>(n_));
    EB_CUDA_CHECK(cudaMemcpyAsync(h.data(), vec(v), h.size() * sizeof(T), cudaMemcpyDeviceToHost, stream_));
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return std::vector<double>(h.begin(), h.end());
  }
  void set_entries(Vec v, const std::vector<int32_t>& idx, const std::vector<double>& val) override {
    if (idx.empty()) return;
    ScopedStage s(events_, "nr", stream_);
    if (idx != entry_idx_host_) {
      entry_idx_.upload(idx);  // the size allocated at construction: no reallocation
      entry_idx_host_ = idx;
    }
    const std::vector<T> h(val.begin(), val.end());
    EB_CUDA_CHECK(cudaMemcpyAsync(entry_val_.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, stream_));
    k_set_entries<T><<<grid(int64_t(idx.size())), kThreads, 0, stream_>>>(int64_t(idx.size()), vec(v),
                                                                          entry_idx_.data(), entry_val_.data());
    EB_CUDA_CHECK_LAUNCH();
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));  // h is about to go out of scope
  }
  void copy(Vec to, Vec from) override {
    ScopedStage s(events_, "nr", stream_);
    EB_CUDA_CHECK(cudaMemcpyAsync(vec(to), vec(from), size_t(n_) * sizeof(T), cudaMemcpyDeviceToDevice, stream_));
  }
  void midpoint() override {
    ScopedStage s(events_, "nr", stream_);
    k_midpoint<T><<<grid(n_), kThreads, 0, stream_>>>(n_, vec(Vec::Mid), vec(Vec::Phi), vec(Vec::PhiK));
    EB_CUDA_CHECK_LAUNCH();
  }
  void predict(double dt) override {
    ScopedStage s(events_, "nr", stream_);
    k_predict<T><<<grid(n_), kThreads, 0, stream_>>>(n_, vec(Vec::Phi), vec(Vec::PhiK), vec(Vec::P), mass_.data(),
                                                     free_.data(), T(dt));
    EB_CUDA_CHECK_LAUNCH();
  }
  ElementChecks assemble(Vec at, double tangent_scale, double diag_mass) override {
    {
      ScopedStage s(events_, "assembly", stream_);
      const ElementCheckSlot init;
      EB_CUDA_CHECK(cudaMemcpyAsync(slot_.data(), &init, sizeof(init), cudaMemcpyHostToDevice, stream_));
      AssemblyTargets<T> out;
      out.values = A_->values();
      out.force = vec(Vec::Force);
      out.tangent_scale = T(tangent_scale);
      out.force_scale = T(1);
      out.checks = slot_.data();
      strategy_->assemble(vec(at), out, stream_);
      if (diag_mass != 0) {
        k_add_diagonal<T><<<grid(n_), kThreads, 0, stream_>>>(n_, out.values, diag_.data(), mass_.data(), T(diag_mass));
        EB_CUDA_CHECK_LAUNCH();
      }
    }
    ElementCheckSlot slot;
    EB_CUDA_CHECK(cudaMemcpyAsync(&slot, slot_.data(), sizeof(slot), cudaMemcpyDeviceToHost, stream_));
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return checks_from_slot(slot);
  }
  double residual_dynamic(double mass_coef, double force_coef) override {
    {
      ScopedStage s(events_, "nr", stream_);
      k_residual_dynamic<T><<<kNormBlocks, kThreads, 0, stream_>>>(
          n_, vec(Vec::Res), vec(Vec::Phi), vec(Vec::PhiK), vec(Vec::P), vec(Vec::Force), vec(Vec::Fext), mass_.data(),
          free_.data(), T(mass_coef), T(force_coef), partials_.data());
      EB_CUDA_CHECK_LAUNCH();
    }
    return norm();
  }
  double residual_static() override {
    {
      ScopedStage s(events_, "nr", stream_);
      k_residual_static<T><<<kNormBlocks, kThreads, 0, stream_>>>(n_, vec(Vec::Res), vec(Vec::Force), vec(Vec::Fext),
                                                                  free_.data(), partials_.data());
      EB_CUDA_CHECK_LAUNCH();
    }
    return norm();
  }
  linalg::CgResult solve() override {
    ScopedStage s(events_, "cg", stream_);
    cg_->refresh_preconditioner();
    EB_CUDA_CHECK(cudaMemsetAsync(vec(Vec::Dx), 0, size_t(n_) * sizeof(T), stream_));
    return cg_->solve(vec(Vec::Res), vec(Vec::Dx));
  }
  void step(double alpha) override {
    ScopedStage s(events_, "nr", stream_);
    k_step<T><<<grid(n_), kThreads, 0, stream_>>>(n_, vec(Vec::Phi), vec(Vec::Dx), T(alpha));
    EB_CUDA_CHECK_LAUNCH();
  }
  void finish_dynamic(double momentum_coef, double keep) override {
    ScopedStage s(events_, "nr", stream_);
    k_finish<T><<<grid(n_), kThreads, 0, stream_>>>(n_, vec(Vec::P), vec(Vec::PhiK), vec(Vec::Phi), mass_.data(),
                                                    T(momentum_coef), T(keep));
    EB_CUDA_CHECK_LAUNCH();
  }
  StageTimes take_times() override { return events_.take_times(); }
  std::vector<double> tangent_values() override {
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return download_values(A_->values());
  }
  double time_spmv_ms(int repeats) override {
    return median_spmv_ms(*A_, vec(Vec::Phi), vec(Vec::Dx), stream_, repeats);
  }
  std::string describe_cg() const override { return "DCG_GPU (" + A_->name() + ")"; }
  AssemblyStrategy<T>& strategy() override { return *strategy_; }
  std::size_t device_bytes() const override { return bytes_; }

 private:
  T* vec(Vec v) { return v_[int(v)].data(); }
  double norm() {
    double h[kNormBlocks];
    EB_CUDA_CHECK(cudaMemcpyAsync(h, partials_.data(), sizeof(h), cudaMemcpyDeviceToHost, stream_));
    EB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    double s = 0;
    for (double v : h) s += v;
    return std::sqrt(s);
  }
  const EngineInput<T>& in_;
  int64_t n_;
  cudaStream_t stream_ = nullptr;
  cuda::DeviceBuffer<T> v_[kVecs], mass_, free_, entry_val_;
  cuda::DeviceBuffer<int32_t> diag_, entry_idx_;
  std::vector<int32_t> entry_idx_host_;
  cuda::DeviceBuffer<ElementCheckSlot> slot_;
  cuda::DeviceBuffer<double> partials_;
  AssemblyProblem<T> problem_;  // before strategy_, which refers to it
  std::unique_ptr<AssemblyStrategy<T>> strategy_;
  std::unique_ptr<linalg::LinearOperator<T>> A_;
  linalg::CgOptions cg_options_;
  std::unique_ptr<linalg::CgSolver<T>> cg_;
  std::size_t bytes_ = 0;
  StageEvents events_;
};

template <class T>
class MixedEngine final : public HostEngine<T> {
 public:
  MixedEngine(const EngineInput<T>& in, int threads, int device) : HostEngine<T>(in, threads) {
    EB_CUDA_CHECK(cudaSetDevice(device));
    dA_ = linalg::make_matrix_operator(linalg::cast_values<T>(in.setup->pattern), in.setup->format,
                                       linalg::Location::Device);
    db_.resize(size_t(this->n_), "mixed rhs");
    dx_.resize(size_t(this->n_), "mixed solution");
    // As DeviceEngine: the solver now, its Jacobi setup on the lumped mass (written into the host
    // matrix and copied, which every solve does anyway).
    const linalg::ValueSegments<T> h = this->A_->values();
    for (int64_t i = 0; i < this->n_; ++i) h.at(in.setup->map.diag[size_t(i)]) = in.dof_mass[size_t(i)];
    copy_values();
    dcg_ = std::make_unique<linalg::CgSolver<T>>(*dA_, this->in_.cg);
  }
  linalg::CgResult solve() override {
    {
      StageTimer t(this->times_, "transfer");
      copy_values();
      EB_CUDA_CHECK(cudaMemcpy(db_.data(), this->vec(Vec::Res).data(), db_.bytes(), cudaMemcpyHostToDevice));
      EB_CUDA_CHECK(cudaMemset(dx_.data(), 0, dx_.bytes()));
    }
    linalg::CgResult r;
    {
      StageTimer t(this->times_, "cg");
      dcg_->refresh_preconditioner();
      r = dcg_->solve(db_.data(), dx_.data());
    }
    {
      StageTimer t(this->times_, "transfer");
      EB_CUDA_CHECK(cudaMemcpy(this->vec(Vec::Dx).data(), dx_.data(), dx_.bytes(), cudaMemcpyDeviceToHost));
    }
    return r;
  }
  double time_spmv_ms(int repeats) override { return median_spmv_ms(*dA_, db_.data(), dx_.data(), nullptr, repeats); }
  // The host tangent's values into the device operator, segment by segment.
  void copy_values() {
    const linalg::ValueSegments<T> h = this->A_->values(), d = dA_->values();
    for (int k = 0; k < h.count; ++k) {
      const int64_t n = h.end[k] - (k ? h.end[k - 1] : 0);
      EB_CUDA_CHECK(cudaMemcpy(d.data[k], h.data[k], size_t(n) * sizeof(T), cudaMemcpyHostToDevice));
    }
  }
  std::string describe_cg() const override { return "DCG_GPU (" + dA_->name() + "), assembly on the host"; }

 private:
  std::unique_ptr<linalg::LinearOperator<T>> dA_;
  cuda::DeviceBuffer<T> db_, dx_;
  std::unique_ptr<linalg::CgSolver<T>> dcg_;  // on the device (the base's cg_ is the host one)
};

}  // namespace

template <class T>
std::unique_ptr<NrEngine<T>> make_cuda_engine(const EngineInput<T>& in, int threads, int device) {
  if (cuda_device_count() == 0) throw RuntimeFailure("nr-neohookean (cuda): " + cuda_device_info(device).reason);
  if (find_strategy(in.setup->strategy).location == linalg::Location::Device)
    return std::make_unique<DeviceEngine<T>>(in, device);
  return std::make_unique<MixedEngine<T>>(in, threads, device);
}

// The engine's device bytes; with_strategy false: all but the assembly strategy's (which a
// device strategy checks itself once its plan is built: AssemblyProblem::device_reserve_bytes).
template <class T>
std::size_t estimate_engine_bytes(const NrSetup& s, bool with_strategy) {
  const std::size_t n = std::size_t(3 * s.num_nodes);
  const std::size_t op = operator_bytes<T>(s);
  linalg::CgOptions o;
  o.tolerance = s.options.cg_tolerance;
  o.max_iterations = s.options.cg_max_iterations;
  const std::size_t cg = cg_bytes<T>(s, o);
  const StrategyInfo& info = find_strategy(s.strategy);
  if (info.location == linalg::Location::Host) return op + cg + 2 * n * sizeof(T);
  std::size_t prescribed = 0;
  for (const PrescribedNode& p : s.prescribed)
    for (int d = 0; d < 3; ++d) prescribed += (p.mask >> d) & 1;
  const std::size_t engine = op + cg + (kVecs + 2) * n * sizeof(T) + n * sizeof(int32_t) + sizeof(ElementCheckSlot) +
                             kNormBlocks * sizeof(double) + prescribed * (sizeof(int32_t) + sizeof(T));
  if (!with_strategy) return engine;
  const auto in = make_engine_input<T>(s, 1, 0);
  return engine + estimate_strategy_bytes<T>(s.strategy, in->problem);
}

std::size_t estimate_cuda_engine_bytes(const NrSetup& s, Precision p, bool with_strategy) {
  return p == Precision::Fp32 ? estimate_engine_bytes<float>(s, with_strategy)
                              : estimate_engine_bytes<double>(s, with_strategy);
}

template <class T>
StrategyRun run_device_strategy(const EngineInput<T>& in, const std::vector<double>& x, int repeats) {
  StrategyRun r;
  auto strategy = make_strategy<T>(in.setup->strategy, in.problem);
  auto A = linalg::make_matrix_operator(linalg::cast_values<T>(in.setup->pattern), in.setup->format,
                                        linalg::Location::Device);
  cuda::DeviceBuffer<T> dx, force(x.size(), "strategy force");
  dx.upload(std::vector<T>(x.begin(), x.end()));
  cuda::DeviceBuffer<ElementCheckSlot> slot(1, "element checks");
  const ElementCheckSlot init;
  EB_CUDA_CHECK(cudaMemcpy(slot.data(), &init, sizeof(init), cudaMemcpyHostToDevice));
  AssemblyTargets<T> out;
  out.values = A->values();
  out.force = force.data();
  out.checks = slot.data();
  strategy->assemble(dx.data(), out, nullptr);
  EB_CUDA_CHECK(cudaDeviceSynchronize());
  ElementCheckSlot h;
  EB_CUDA_CHECK(cudaMemcpy(&h, slot.data(), sizeof(h), cudaMemcpyDeviceToHost));
  r.checks = checks_from_slot(h);
  r.values = download_values(out.values);
  const std::vector<T> f = force.to_host();
  r.force.assign(f.begin(), f.end());
  cudaEvent_t a, b;
  EB_CUDA_CHECK(cudaEventCreate(&a));
  EB_CUDA_CHECK(cudaEventCreate(&b));
  for (int k = 0; k < repeats; ++k) {
    EB_CUDA_CHECK(cudaEventRecord(a, nullptr));
    strategy->assemble(dx.data(), out, nullptr);
    EB_CUDA_CHECK(cudaEventRecord(b, nullptr));
    EB_CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    EB_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    r.ms.push_back(double(ms));
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  r.work = strategy->work();
  r.device_bytes = strategy->device_bytes();
  return r;
}

template std::unique_ptr<NrEngine<float>> make_cuda_engine(const EngineInput<float>&, int, int);
template std::unique_ptr<NrEngine<double>> make_cuda_engine(const EngineInput<double>&, int, int);
template StrategyRun run_device_strategy(const EngineInput<float>&, const std::vector<double>&, int);
template StrategyRun run_device_strategy(const EngineInput<double>&, const std::vector<double>&, int);

}  // namespace eb::nr_neohookean
