// bench_sparse: SpMV per format and one Jacobi-PCG iteration on linear-elastic stiffness matrices
// from ~0.1M to ~12M DOFs, on the CPU (OpenMP) and, in CUDA builds, on the device; Eigen's sparse
// product (CPU) and cuSPARSE CSR/BSR SpMV (device, generic API) on the same matrices.
//
// Matrices: the voxel-tetrahedralized cantilever, n x n/4 x n/4 cubes of 6 tets (meshes/box.h)
// clamped at x = 0: n = 80, 160, 240, 400 -> 107K, 812K, 2.69M, 12.3M DOFs (EB_BENCH_SPARSE_SIZES
// = a comma-separated list of n to choose; the 12.3M matrix needs ~30 GB of host memory), plus
// Armadillo13K (39,690 DOFs) when the data folder is there. Names: spmv/<backend>/<format>/<fp>/<matrix>,
// pcg_iteration/..., eigen/..., cusparse_csr|bsr/...; select with --benchmark_filter.
//
// Counters (rates per second of the timed loop): GB (shown as GB/s) by compulsory bytes = the format's arrays
// once (ELL/HYB padding included: it must be read), x read once, y written once (PCG: plus the 13
// vector passes of cg_algorithm.h); GFLOP (/s) = 2 x stored entries (padding excluded) per SpMV
// (PCG: plus 13 per row). BCSR rows report `gpu_padding`: padded blocks per real block of the
// sliced GPU layout.
// CPU benchmarks use wall time; device benchmarks CUDA events (manual time). Device rows also report
// `triad_GBps` (STREAM triad of the same device, same precision, measured once) and `of_triad`.
#include <cstdlib>
#include <map>
#include <sstream>
#include <vector>

#include <Eigen/Sparse>

#include "meshes/errors.h"
#include "solvers/common/build_info.h"
#include "solvers/common/results.h"
#include "solvers/linalg/cg.h"
#include "tests/linalg/bench_sparse.h"
#include "tests/linalg/linalg_test_util.h"

namespace eb::linalg::bench {

namespace {

SlotCache& host_cache() {
  static SlotCache c;
  return c;
}
SlotCache& prepared_cache() {
  static SlotCache c;
  return c;
}

AssembledMatrix<double> build_matrix(const std::string& name) {
  if (name == "armadillo") {
    const mesh::TetMesh m = test::load_data_mesh("Armadillo13K.msh");
    if (m.elems.empty()) throw InputError("Armadillo13K.msh not found in the data folder");
    return test::clamped_problem(m, name, 1).K;
  }
  const int n = std::stoi(name.substr(3));  // "box<n>"
  return test::clamped_problem(test::box_cantilever(n, 6), name, 0).K;
}

std::vector<std::string> matrix_names() {
  std::vector<std::string> names;
  std::string sizes = "80,160,240,400";
  if (const char* e = std::getenv("EB_BENCH_SPARSE_SIZES"); e && *e) sizes = e;
  std::stringstream ss(sizes);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) names.push_back("box" + item);
  if (!test::data_dir().empty()) names.push_back("armadillo");
  return names;
}

template <class T>
const char* fp() {
  return sizeof(T) == 4 ? "fp32" : "fp64";
}

template <class T>
void cpu_spmv(benchmark::State& state, const std::string& matrix, Format f) {
  const AssembledMatrix<T>& A = bench_matrix<T>(matrix);
  auto& m = prepared_cache().get<AnyMatrix<T>>(matrix + to_string(f) + fp<T>(), [&] { return make_format(A, f); });
  const std::vector<T> x = bench_vector<T>(size_t(A.rows), 1);
  std::vector<T> y(x.size());
  for (auto _ : state) {
    spmv(m, x.data(), y.data());
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, spmv_bytes<T>(storage_bytes(m), A.rows), 0, A.rows, A.nnz());
  if (f == Format::Bcsr) {  // what the GPU layout would add (bcsr_slices.h, default window)
    const auto& b = std::get<BcsrMatrix<T>>(m);
    state.counters["gpu_padding"] = double(padding_blocks(make_sliced_bcsr(b))) / double(b.blocks());
  }
}

template <class T>
void cpu_pcg_iteration(benchmark::State& state, const std::string& matrix, Format f) {
  const AssembledMatrix<T>& A = bench_matrix<T>(matrix);
  struct Prepared {
    std::unique_ptr<LinearOperator<T>> op;
    std::size_t bytes;
  };
  auto& p = prepared_cache().get<Prepared>(matrix + to_string(f) + fp<T>() + "op", [&] {
    const AnyMatrix<T> m = make_format(A, f);
    return Prepared{make_matrix_operator(A, f, Location::Host), storage_bytes(m)};
  });
  constexpr int kIterations = 20;  // per solve; the start pass is amortized over them
  CgOptions o;
  o.tolerance = 0;
  o.max_iterations = kIterations;
  CgSolver<T> solver(*p.op, o);
  const std::vector<T> b = bench_vector<T>(size_t(A.rows), 2);
  std::vector<T> x(b.size());
  for (auto _ : state) {
    std::fill(x.begin(), x.end(), T(0));
    const CgResult r = solver.solve(b.data(), x.data());
    if (r.iterations != kIterations) state.SkipWithError("PCG stopped early");
  }
  state.SetItemsProcessed(state.iterations() * kIterations);
  set_counters(state, kIterations * pcg_iteration_bytes<T>(p.bytes, A.rows), kIterations * 13.0 * A.rows, A.rows,
               A.nnz());
  state.counters["iterations_per_solve"] = kIterations;
}

void eigen_spmv(benchmark::State& state, const std::string& matrix) {
  const AssembledMatrix<double>& A = bench_matrix<double>(matrix);
  using M = Eigen::SparseMatrix<double, Eigen::RowMajor>;
  auto& E = prepared_cache().get<M>(matrix + "eigen", [&] { return test::to_eigen(A); });
  const Eigen::VectorXd x = Eigen::VectorXd::Random(A.rows);
  Eigen::VectorXd y(A.rows);
  for (auto _ : state) {
    y.noalias() = E * x;
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  // Eigen's CSR: outer index (rows + 1, int32), inner indices (int32), values.
  const double bytes = double(E.nonZeros()) * (sizeof(int) + sizeof(double)) + (A.rows + 1.0) * sizeof(int);
  set_counters(state, spmv_bytes<double>(std::size_t(bytes), A.rows), 0, A.rows, A.nnz());
}

}  // namespace

template <class T>
const AssembledMatrix<T>& bench_matrix(const std::string& name) {
  const auto& A = host_cache().get<AssembledMatrix<double>>(name, [&] { return build_matrix(name); });
  if constexpr (std::is_same_v<T, double>) {
    return A;
  } else {
    static SlotCache single;
    return single.get<AssembledMatrix<float>>(name, [&] { return cast_values<float>(A); });
  }
}
template const AssembledMatrix<float>& bench_matrix(const std::string&);
template <class T>
std::vector<T> bench_vector(std::size_t n, uint32_t seed) {
  return test::cast_vector<T>(test::random_vector(n, seed));
}
template std::vector<float> bench_vector(std::size_t, uint32_t);
template std::vector<double> bench_vector(std::size_t, uint32_t);
template const AssembledMatrix<double>& bench_matrix(const std::string&);

void set_counters(benchmark::State& state, double bytes, double flops, Index rows, std::size_t nnz) {
  using benchmark::Counter;
  state.counters["GB"] = Counter(bytes * 1e-9, Counter::kIsIterationInvariantRate);
  state.counters["GFLOP"] = Counter((2.0 * double(nnz) + flops) * 1e-9, Counter::kIsIterationInvariantRate);
  state.counters["DOFs"] = rows;
  state.counters["nnz"] = double(nnz);
}

namespace {

template <class T>
void register_precision(const std::string& matrix) {
  const std::string p = fp<T>();
  for (Format f : all_formats()) {
    const std::string tail = to_string(f) + "/" + p + "/" + matrix;
    benchmark::RegisterBenchmark(("spmv/cpu/" + tail).c_str(), [=](benchmark::State& s) { cpu_spmv<T>(s, matrix, f); })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
#if defined(EB_BENCH_CUDA)
    benchmark::RegisterBenchmark(("spmv/cuda/" + tail).c_str(), [=](benchmark::State& s) { cuda_spmv<T>(s, matrix, f); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
#endif
  }
  for (Format f : {Format::Bcsr, Format::Csr}) {
    const std::string tail = to_string(f) + "/" + p + "/" + matrix;
    benchmark::RegisterBenchmark(("pcg_iteration/cpu/" + tail).c_str(),
                                 [=](benchmark::State& s) { cpu_pcg_iteration<T>(s, matrix, f); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
#if defined(EB_BENCH_CUDA)
    benchmark::RegisterBenchmark(("pcg_iteration/cuda/" + tail).c_str(),
                                 [=](benchmark::State& s) { cuda_pcg_iteration<T>(s, matrix, f); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
#endif
  }
#if defined(EB_BENCH_CUDA)
  for (bool bsr : {false, true})
    benchmark::RegisterBenchmark(((bsr ? "cusparse_bsr/" : "cusparse_csr/") + p + "/" + matrix).c_str(),
                                 [=](benchmark::State& s) { cusparse_spmv<T>(s, matrix, bsr); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
#endif
}

}  // namespace

}  // namespace eb::linalg::bench

int main(int argc, char** argv) {
  using namespace eb::linalg::bench;
  // Grouped by matrix, so that each is built once (the caches keep one matrix at a time).
  for (const std::string& m : matrix_names()) {
    register_precision<double>(m);
    register_precision<float>(m);
    benchmark::RegisterBenchmark(("eigen/cpu/csr/fp64/" + m).c_str(), [=](benchmark::State& s) { eigen_spmv(s, m); })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
  // Provenance in the JSON's context: the build and the machine (GPU included), as run summaries carry.
  const eb::BuildInfo& b = eb::build_info();
  benchmark::AddCustomContext("eb_git_commit", b.git_commit);
  benchmark::AddCustomContext("eb_build", b.build_type + ", " + b.cxx_compiler +
                                              (b.cuda_compiler.empty() ? "" : ", CUDA " + b.cuda_compiler));
  benchmark::AddCustomContext("eb_machine", eb::machine_info().dump());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
