// Device half of bench_sparse: our SpMV per format and one Jacobi-PCG iteration, and cuSPARSE's
// CSR and BSR SpMV (generic API) on the same matrices. Times are CUDA events around a batch of
// calls (manual time per call).
#include <cusparse.h>

#include <cstdlib>
#include <map>
#include <vector>

#include "meshes/errors.h"
#include "solvers/common/cuda_info.h"
#include "solvers/linalg/device_formats.cuh"
#include "tests/linalg/bench_sparse.h"

namespace eb::linalg::bench {

namespace {

#define EB_CUSPARSE_CHECK(call)                                                                  \
  do {                                                                                           \
    cusparseStatus_t st_ = (call);                                                               \
    if (st_ != CUSPARSE_STATUS_SUCCESS)                                                          \
      throw RuntimeFailure(std::string(#call) + ": " + cusparseGetErrorString(st_));             \
  } while (0)

constexpr int kBatch = 10;  // calls per timed batch

SlotCache& device_cache() {
  static SlotCache c;
  return c;
}

cudaStream_t bench_stream() {
  static cudaStream_t s = [] {
    cudaStream_t st = nullptr;
    EB_CUDA_CHECK(cudaStreamCreate(&st));
    return st;
  }();
  return s;
}

// STREAM triad of the device in this precision, measured once per process.
double triad_gbps(int element_bytes) {
  static std::map<int, double> measured;
  auto it = measured.find(element_bytes);
  if (it == measured.end()) it = measured.emplace(element_bytes, cuda_stream_triad_gbps(0, element_bytes)).first;
  return it->second;
}

// Seconds per call of fn over a batch, timed by events on the stream.
template <class F>
double time_batch(cudaStream_t st, int calls, F fn) {
  static cudaEvent_t ev[2] = {nullptr, nullptr};
  if (!ev[0])
    for (auto& e : ev) EB_CUDA_CHECK(cudaEventCreate(&e));
  EB_CUDA_CHECK(cudaEventRecord(ev[0], st));
  for (int i = 0; i < calls; ++i) fn();
  EB_CUDA_CHECK(cudaEventRecord(ev[1], st));
  EB_CUDA_CHECK(cudaEventSynchronize(ev[1]));
  float ms = 0;
  EB_CUDA_CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
  return 1e-3 * double(ms) / calls;
}

bool skip_without_device(benchmark::State& state) {
  if (cuda_device_count() > 0) return false;
  state.SkipWithError(("no usable CUDA device: " + cuda_device_info(0).reason).c_str());
  return true;
}

template <class T>
const char* fp() {
  return sizeof(T) == 4 ? "fp32" : "fp64";
}

// Runs the timed loop and sets the counters, including the fraction of the device's triad.
// `st`: the stream the calls run on (events are recorded there).
template <class T, class F>
void run_timed(benchmark::State& state, cudaStream_t st, double bytes, double extra_flops, Index rows, std::size_t nnz,
               int calls, F fn) {
  fn();  // warm-up (first-touch, graph capture)
  EB_CUDA_CHECK(cudaStreamSynchronize(st));
  double total = 0;
  for (auto _ : state) {
    const double s = time_batch(st, calls, fn);
    total += s;
    state.SetIterationTime(s);
  }
  set_counters(state, bytes, extra_flops, rows, nnz);
  const double gbps = bytes * 1e-9 * double(state.iterations()) / total;
  state.counters["triad_GBps"] = triad_gbps(int(sizeof(T)));
  state.counters["of_triad"] = gbps / triad_gbps(int(sizeof(T)));
}

template <class T>
struct DeviceSpmv {
  std::unique_ptr<LinearOperator<T>> op;
  std::size_t bytes = 0;
  double padding = 0;  // BCSR: padded blocks per real block in the sliced layout
  int warps_per_slice = 0;  // BCSR: as uploaded (the device's choice unless the benchmark fixes it)
  cuda::DeviceBuffer<T> x, y;
};

// warps: BCSR's warps per slice (0: the library's choice for this device).
template <class T>
DeviceSpmv<T> prepare_spmv(const std::string& matrix, Format f, int warps = 0) {
  DeviceSpmv<T> p;
  const AnyMatrix<T>& m = bench_format<T>(matrix, f);
  const Index rows = rows_of(m);
  p.bytes = storage_bytes(m);
  if (f == Format::Bcsr) {
    const auto& b = std::get<BcsrMatrix<T>>(m);
    int window = kDefaultSortWindow;
    if (const char* e = std::getenv("EB_BENCH_BCSR_WINDOW"); e && *e) window = std::atoi(e);
    SlicedBcsr<T> s = make_sliced_bcsr(b, window);
    s.warps_per_slice = warps;
    p.padding = double(padding_blocks(s)) / double(std::max<std::size_t>(1, b.blocks()));
    DeviceBcsr<T> dev = upload(s);
    p.warps_per_slice = dev.warps_per_slice;
    p.op = std::make_unique<DeviceMatrixOperator<DeviceBcsr<T>>>(std::move(dev), sliced_diagonal_positions(s),
                                                                 "bcsr (device)");
  } else {
    p.op = std::visit([&](const auto& h) -> std::unique_ptr<LinearOperator<T>> { return make_device_operator(h, to_string(f)); }, m);
  }
  p.x.upload(bench_vector<T>(size_t(rows), 1));
  p.y.resize(size_t(rows), "bench y");
  return p;
}

constexpr int kPcgIterations = 50;

// cuSPARSE's SpMV on the CSR or BSR form of the matrix (int32 indices).
template <class T>
class CusparseSpmv {
 public:
  CusparseSpmv(const std::string& matrix, bool bsr) : rows_(bench_matrix<T>(matrix).rows) {
    const cudaDataType type = sizeof(T) == 4 ? CUDA_R_32F : CUDA_R_64F;
    EB_CUSPARSE_CHECK(cusparseCreate(&handle_));
    EB_CUSPARSE_CHECK(cusparseSetStream(handle_, bench_stream()));
    auto ptr32 = [](const std::vector<Offset>& p) {
      if (p.back() > Offset(INT32_MAX)) throw RuntimeFailure("cuSPARSE benchmark: more than 2^31 entries");
      return std::vector<int>(p.begin(), p.end());
    };
    if (bsr) {
      const auto& b = std::get<BcsrMatrix<T>>(bench_format<T>(matrix, Format::Bcsr));
      row_ptr_.upload(ptr32(b.row_ptr));
      col_.upload(b.col);
      val_.upload(b.val);
      bytes_ = b.blocks() * (sizeof(int) + 9 * sizeof(T)) + b.row_ptr.size() * sizeof(int);
      EB_CUSPARSE_CHECK(cusparseCreateBsr(&mat_, b.block_rows, b.block_cols, Offset(b.blocks()), 3, 3, row_ptr_.data(),
                                          col_.data(), val_.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                          CUSPARSE_INDEX_BASE_ZERO, type, CUSPARSE_ORDER_ROW));
    } else {
      const auto& c = std::get<CsrMatrix<T>>(bench_format<T>(matrix, Format::Csr));
      row_ptr_.upload(ptr32(c.row_ptr));
      col_.upload(c.col);
      val_.upload(c.val);
      bytes_ = c.nnz() * (sizeof(int) + sizeof(T)) + c.row_ptr.size() * sizeof(int);
      EB_CUSPARSE_CHECK(cusparseCreateCsr(&mat_, c.rows, c.cols, Offset(c.nnz()), row_ptr_.data(), col_.data(),
                                          val_.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                          CUSPARSE_INDEX_BASE_ZERO, type));
    }
    x_.upload(bench_vector<T>(size_t(rows_), 1));
    y_.resize(size_t(rows_), "cusparse y");
    EB_CUSPARSE_CHECK(cusparseCreateDnVec(&vx_, rows_, x_.data(), type));
    EB_CUSPARSE_CHECK(cusparseCreateDnVec(&vy_, rows_, y_.data(), type));
    alg_ = bsr ? CUSPARSE_SPMV_BSR_ALG1 : CUSPARSE_SPMV_CSR_ALG1;
    size_t buffer = 0;
    EB_CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, mat_, vx_, &zero_, vy_,
                                              type, alg_, &buffer));
    buffer_.resize(std::max<size_t>(buffer, 1), "cusparse buffer");
    EB_CUSPARSE_CHECK(cusparseSpMV_preprocess(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, mat_, vx_, &zero_, vy_,
                                              type, alg_, buffer_.data()));
    type_ = type;
  }
  ~CusparseSpmv() {
    if (vx_) cusparseDestroyDnVec(vx_);
    if (vy_) cusparseDestroyDnVec(vy_);
    if (mat_) cusparseDestroySpMat(mat_);
    if (handle_) cusparseDestroy(handle_);
  }
  CusparseSpmv(const CusparseSpmv&) = delete;
  CusparseSpmv& operator=(const CusparseSpmv&) = delete;

  void run() {
    EB_CUSPARSE_CHECK(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, mat_, vx_, &zero_, vy_, type_,
                                   alg_, buffer_.data()));
  }
  // y = A x on the caller's vectors and stream. The preprocessing depends on the matrix only, so
  // the vectors may change between calls.
  void apply(const T* x, T* y, cudaStream_t st) {
    EB_CUSPARSE_CHECK(cusparseSetStream(handle_, st));
    EB_CUSPARSE_CHECK(cusparseDnVecSetValues(vx_, const_cast<T*>(x)));
    EB_CUSPARSE_CHECK(cusparseDnVecSetValues(vy_, y));
    run();
  }
  Index rows() const { return rows_; }
  std::size_t bytes() const { return bytes_; }

 private:
  Index rows_;
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t mat_ = nullptr;
  cusparseDnVecDescr_t vx_ = nullptr, vy_ = nullptr;
  cusparseSpMVAlg_t alg_ = CUSPARSE_SPMV_ALG_DEFAULT;
  cudaDataType type_ = CUDA_R_64F;
  cuda::DeviceBuffer<int> row_ptr_;
  cuda::DeviceBuffer<Index> col_;
  cuda::DeviceBuffer<T> val_, x_, y_;
  cuda::DeviceBuffer<char> buffer_;
  std::size_t bytes_ = 0;
  T one_ = T(1), zero_ = T(0);
};

// cuSPARSE's product as the operator of our Jacobi-PCG, so that a whole solve with cuSPARSE's SpMV
// (same Krylov code, vector kernels and graph) stands beside the solve with our BCSR.
template <class T>
class CusparseOperator final : public LinearOperator<T> {
 public:
  CusparseOperator(const std::string& matrix, bool bsr) : spmv_(matrix, bsr) {
    const auto& b = std::get<BcsrMatrix<T>>(bench_format<T>(matrix, Format::Bcsr));
    std::vector<T> d(size_t(3 * b.block_rows));
    linalg::diagonal(b, d.data());
    diag_.upload(d);
  }
  Index rows() const override { return spmv_.rows(); }
  Location location() const override { return Location::Device; }
  void apply(const T* x, T* y, StreamHandle stream) const override { spmv_.apply(x, y, cuda_stream(stream)); }
  void diagonal(T* d, StreamHandle stream) const override {
    EB_CUDA_CHECK(cudaMemcpyAsync(d, diag_.data(), diag_.bytes(), cudaMemcpyDeviceToDevice, cuda_stream(stream)));
  }
  std::string name() const override { return "cusparse"; }
  std::size_t bytes() const { return spmv_.bytes(); }

 private:
  mutable CusparseSpmv<T> spmv_;  // cuSPARSE's descriptors change with the vectors: not const
  cuda::DeviceBuffer<T> diag_;
};

// A solve of kPcgIterations Jacobi-PCG iterations from x = 0 (one graph launch and one status read),
// its setup cached per matrix, format and precision.
template <class T>
struct PcgRun {
  std::unique_ptr<LinearOperator<T>> op;
  std::size_t bytes = 0;  // compulsory bytes of the operator's arrays
  bool single_reduction = false;
  // CgOptions::l2_resident_operator. Its solvers live only while their benchmark runs: a live one
  // keeps the process's persisting-L2 set-aside raised and would shrink every later row's L2.
  bool l2 = false;
  std::unique_ptr<CgSolver<T>> solver;
  std::unique_ptr<CgSolver<T>> longer;  // pcg_marginal's second solve, made when first used
  cuda::DeviceBuffer<T> b, x;
};

// The solver of a fixed-count solve of `iterations` iterations (tolerance 0), all of them in one
// chunk (one graph launch and one status read). The iteration and the L2 residency are set, not
// left to the size rule, so that each row times what its name says.
template <class T>
std::unique_ptr<CgSolver<T>> fixed_count_solver(const LinearOperator<T>& op, int iterations, bool single_reduction,
                                                bool l2 = false) {
  CgOptions o;
  o.single_reduction = single_reduction ? SingleReduction::On : SingleReduction::Off;
  o.l2_resident_operator = l2 ? L2Residency::On : L2Residency::Off;
  o.tolerance = 0;
  o.max_iterations = iterations;
  o.check_every = iterations;
  return std::make_unique<CgSolver<T>>(op, o);
}

template <class T>
PcgRun<T> make_pcg_run(std::unique_ptr<LinearOperator<T>> op, std::size_t bytes, bool single_reduction = false) {
  PcgRun<T> r;
  const Index rows = op->rows();
  r.op = std::move(op);
  r.bytes = bytes;
  r.single_reduction = single_reduction;
  r.solver = fixed_count_solver(*r.op, kPcgIterations, single_reduction);
  r.b.upload(bench_vector<T>(size_t(rows), 2));
  r.x.resize(size_t(rows), "bench pcg x");
  return r;
}

// Times solves of `run`. The solver runs on its own stream, which is ordered with the legacy
// default stream: the memset and the events go there.
template <class T>
void time_pcg(benchmark::State& state, PcgRun<T>& p, const AssembledMatrix<T>& A) {
  auto solve = [&] {
    EB_CUDA_CHECK(cudaMemsetAsync(p.x.data(), 0, p.x.bytes(), nullptr));
    const CgResult r = p.solver->solve(p.b.data(), p.x.data());
    if (r.iterations != kPcgIterations) throw RuntimeFailure("PCG stopped early: " + to_string(r.status));
  };
  run_timed<T>(state, nullptr, kPcgIterations * pcg_iteration_bytes<T>(p.bytes, A.rows, p.single_reduction),
               kPcgIterations * pcg_vector_flops(p.single_reduction) * A.rows, A.rows, A.nnz(), 1, solve);
  state.SetItemsProcessed(state.iterations() * kPcgIterations);  // items/s = PCG iterations per second
  state.counters["iterations_per_solve"] = kPcgIterations;
}

// The marginal cost of an iteration: a solve of kPcgIterations iterations and one of
// kPcgIterations + kMarginalIterations, from the same x = 0, each timed with CUDA events; the
// benchmark's time is their difference, per added iteration through iterations_per_solve. A
// whole-solve time per iteration (time_pcg) also charges each iteration 1/50 of what a solve does
// once: the start (r = b - A x and the first product), the host's status reads, the copies of x,
// which is not small against an iteration at ~0.1M DOFs (PERF_NOTES.md).
constexpr int kMarginalIterations = 100;

template <class T>
void time_pcg_marginal(benchmark::State& state, PcgRun<T>& p, const AssembledMatrix<T>& A) {
  // The triad before any L2-resident solver exists: while one lives, its persisting-L2 set-aside
  // slows every other kernel's DRAM streaming (PERF_NOTES.md).
  const double triad = triad_gbps(int(sizeof(T)));
  if (!p.solver) p.solver = fixed_count_solver(*p.op, kPcgIterations, p.single_reduction, p.l2);
  if (!p.longer) p.longer = fixed_count_solver(*p.op, kPcgIterations + kMarginalIterations, p.single_reduction, p.l2);
  CgSolver<T>& longer = *p.longer;
  auto solve = [&](CgSolver<T>& solver, int expect) {
    EB_CUDA_CHECK(cudaMemsetAsync(p.x.data(), 0, p.x.bytes(), nullptr));
    const CgResult r = solver.solve(p.b.data(), p.x.data());
    if (r.iterations != expect) throw RuntimeFailure("PCG stopped early: " + to_string(r.status));
  };
  solve(*p.solver, kPcgIterations);  // warm-up (first touch, graph capture)
  solve(longer, kPcgIterations + kMarginalIterations);
  double total = 0;
  for (auto _ : state) {
    const double t_short = time_batch(nullptr, 1, [&] { solve(*p.solver, kPcgIterations); });
    const double t_long = time_batch(nullptr, 1, [&] { solve(longer, kPcgIterations + kMarginalIterations); });
    total += t_long - t_short;
    state.SetIterationTime(t_long - t_short);
  }
  const double bytes = kMarginalIterations * pcg_iteration_bytes<T>(p.bytes, A.rows, p.single_reduction);
  set_counters(state, bytes, kMarginalIterations * pcg_vector_flops(p.single_reduction) * A.rows, A.rows, A.nnz());
  state.counters["triad_GBps"] = triad;
  state.counters["of_triad"] = bytes * 1e-9 * double(state.iterations()) / total / triad;
  state.SetItemsProcessed(state.iterations() * kMarginalIterations);
  state.counters["iterations_per_solve"] = kMarginalIterations;
  state.counters["l2_resident_operator"] = p.l2 ? 1 : 0;
  if (p.l2) {
    // What the solvers' set-aside costs every other kernel while they live: the triad again, now.
    state.counters["triad_GBps_while_resident"] = cuda_stream_triad_gbps(0, int(sizeof(T)));
    p.solver.reset();
    p.longer.reset();
  }
}

}  // namespace

template <class T>
void cuda_pcg_marginal(benchmark::State& state, const std::string& matrix, Format f, bool single_reduction, bool l2) {
  if (skip_without_device(state)) return;
  const AssembledMatrix<T>& A = bench_matrix<T>(matrix);
  const std::string key = matrix + to_string(f) + fp<T>() + (single_reduction ? "pcg_sr" : "pcg") + (l2 ? "_l2" : "");
  auto& p = device_cache().get<PcgRun<T>>(key, [&] {
    DeviceSpmv<T> d = prepare_spmv<T>(matrix, f);
    PcgRun<T> r = make_pcg_run<T>(std::move(d.op), d.bytes, single_reduction);
    r.l2 = l2;
    r.solver.reset();  // made (with the window) when timed
    return r;
  });
  time_pcg_marginal(state, p, A);
}

template <class T>
void cuda_spmv(benchmark::State& state, const std::string& matrix, Format f, int warps) {
  if (skip_without_device(state)) return;
  const AssembledMatrix<T>& A = bench_matrix<T>(matrix);
  auto& p = device_cache().get<DeviceSpmv<T>>(matrix + to_string(f) + fp<T>() + "w" + std::to_string(warps),
                                              [&] { return prepare_spmv<T>(matrix, f, warps); });
  cudaStream_t st = bench_stream();
  run_timed<T>(state, st, spmv_bytes<T>(p.bytes, A.rows), 0, A.rows, A.nnz(), kBatch,
               [&] { p.op->apply(p.x.data(), p.y.data(), st); });
  if (f == Format::Bcsr) {
    state.counters["gpu_padding"] = p.padding;
    state.counters["warps_per_slice"] = p.warps_per_slice;
  }
}

template <class T>
void cuda_pcg_iteration(benchmark::State& state, const std::string& matrix, Format f, bool single_reduction) {
  if (skip_without_device(state)) return;
  const AssembledMatrix<T>& A = bench_matrix<T>(matrix);
  auto& p = device_cache().get<PcgRun<T>>(matrix + to_string(f) + fp<T>() + (single_reduction ? "pcg_sr" : "pcg"), [&] {
    DeviceSpmv<T> d = prepare_spmv<T>(matrix, f);
    return make_pcg_run<T>(std::move(d.op), d.bytes, single_reduction);
  });
  time_pcg(state, p, A);
}

template <class T>
void cusparse_pcg_iteration(benchmark::State& state, const std::string& matrix, bool bsr) {
  if (skip_without_device(state)) return;
  const AssembledMatrix<T>& A = bench_matrix<T>(matrix);
  auto& p = device_cache().get<PcgRun<T>>(matrix + (bsr ? "bsr" : "csr") + fp<T>() + "cusparse_pcg", [&] {
    auto op = std::make_unique<CusparseOperator<T>>(matrix, bsr);
    const std::size_t bytes = op->bytes();
    return make_pcg_run<T>(std::move(op), bytes);
  });
  time_pcg(state, p, A);
}

template <class T>
void cusparse_spmv(benchmark::State& state, const std::string& matrix, bool bsr) {
  if (skip_without_device(state)) return;
  const AssembledMatrix<T>& A = bench_matrix<T>(matrix);
  auto& c = device_cache().emplace<CusparseSpmv<T>>(matrix + (bsr ? "bsr" : "csr") + fp<T>(), matrix, bsr);
  run_timed<T>(state, bench_stream(), spmv_bytes<T>(c.bytes(), A.rows), 0, A.rows, A.nnz(), kBatch, [&] { c.run(); });
}

template void cuda_spmv<float>(benchmark::State&, const std::string&, Format, int);
template void cuda_spmv<double>(benchmark::State&, const std::string&, Format, int);
template void cuda_pcg_iteration<float>(benchmark::State&, const std::string&, Format, bool);
template void cuda_pcg_iteration<double>(benchmark::State&, const std::string&, Format, bool);
template void cuda_pcg_marginal<float>(benchmark::State&, const std::string&, Format, bool, bool);
template void cuda_pcg_marginal<double>(benchmark::State&, const std::string&, Format, bool, bool);
template void cusparse_pcg_iteration<float>(benchmark::State&, const std::string&, bool);
template void cusparse_pcg_iteration<double>(benchmark::State&, const std::string&, bool);
template void cusparse_spmv<float>(benchmark::State&, const std::string&, bool);
template void cusparse_spmv<double>(benchmark::State&, const std::string&, bool);

}  // namespace eb::linalg::bench
