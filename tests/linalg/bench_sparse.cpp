// bench_sparse: SpMV per format and one Jacobi-PCG iteration on linear-elastic stiffness matrices
// from ~0.1M to ~12M DOFs, on the CPU (OpenMP) and, in CUDA builds, on the device; Eigen's sparse
// product (CPU) and cuSPARSE CSR/BSR SpMV (device, generic API) on the same matrices.
//
// Matrices (linear tets, isotropic Hooke, the base clamped; DOFs as built):
//   box<n>      the voxel-tetrahedralized cantilever, n x n/4 x n/4 cubes of 6 tets (meshes/box.h),
//               clamped at x = 0, lattice order: box80 107,163, box160 811,923, box240 2,690,283,
//               box400 12,271,803 DOFs (~30 GB of host memory)
//   bunny<r>    bunny.off voxelized at r voxels along its longest axis (meshes/voxelize.h), 6 tets
//               per voxel (voxel_to_tet), nodes in RCM order (meshes/reorder.h), clamped at its
//               base (y): bunny53 104,145, bunny116 1,004,169, bunny256 10,378,275 DOFs (its
//               build peaks at 13 GB of host memory, 80-90 s on 2 busy cores; a whole run ~25 GB)
//   armadillo   Armadillo13K.msh in the file's order, 39,690 DOFs, base clamped along y
//   armadillo_rcm, hand_rcm (hand_olivier.mesh, 61,623 DOFs, wrist clamped: low y),
//   raptor19409_rcm (raptorTetra_19409.vtu, 17,970 DOFs, feet clamped: low y): RCM order
// The real meshes and the bunny come from the data folder (linalg_test_util.h); without it they are
// left out. EB_BENCH_SPARSE_MATRICES chooses (comma- or space-separated names; a bare number n means
// box<n>; the older EB_BENCH_SPARSE_SIZES is read the same way); default: all of the above.
// Benchmark names: spmv/<backend>/<format>/<fp>/<matrix>, pcg_iteration/..., pcg_iteration_sr/cuda/...
// (the single-reduction iteration), pcg_marginal[_sr]/cuda/... (the added time of an iteration:
// solves of 50 and 150 iterations, their difference per added one), pcg_marginal[_sr]_l2/cuda/bcsr/...
// (the same with the matrix's values kept in the L2: CgOptions::l2_resident_operator), eigen/...,
// cusparse_csr|bsr/... (SpMV), pcg_iteration/cusparse_csr|bsr/... (our PCG on cuSPARSE's SpMV);
// select with --benchmark_filter. Each matrix's build prints its sizes to stderr.
//
// --eb_json_out=PATH: Google Benchmark's JSON of what the console shows, rewritten whole after
// every benchmark (a temporary file renamed onto PATH): a process killed by a time limit leaves a
// valid file with every benchmark that finished (--benchmark_out writes as it goes, and a killed
// process leaves it truncated). A benchmark that throws (a mesh missing, device memory) is
// reported as an error and the others run on.
//
// Counters (rates per second of the timed loop): GB (shown as GB/s) by compulsory bytes = the format's arrays
// once (ELL/HYB padding included: it must be read), x read once, y written once (PCG: plus the 13
// vector passes of cg_algorithm.h, 11 for the single reduction); GFLOP (/s) = 2 x stored entries
// (padding excluded) per SpMV (PCG: plus 13 per row, 16 for the single reduction). BCSR rows report `gpu_padding`: padded blocks per real block of the
// sliced GPU layout.
// CPU benchmarks use wall time; device benchmarks CUDA events (manual time). Device rows also report
// `triad_GBps` (STREAM triad of the same device, same precision, measured once) and `of_triad`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <vector>

#include <Eigen/Sparse>

#include "meshes/box.h"
#include "meshes/errors.h"
#include "meshes/mesh_io.h"
#include "meshes/reorder.h"
#include "meshes/voxelize.h"
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

// The real meshes by matrix name: file, clamped axis, node order.
struct DataMesh {
  const char* name;
  const char* file;
  int axis;
  bool rcm;
};
constexpr DataMesh kDataMeshes[] = {
    {"armadillo", "Armadillo13K.msh", 1, false},
    {"armadillo_rcm", "Armadillo13K.msh", 1, true},
    {"hand_rcm", "hand_olivier.mesh", 1, true},
    {"raptor19409_rcm", "raptorTetra_19409.vtu", 1, true},
};
constexpr const char* kBunnyFile = "bunny.off";
const char* const kDefaultMatrices[] = {"box80",   "box160",    "box240",        "box400",   "bunny53",        "bunny116",
                                        "bunny256", "armadillo", "armadillo_rcm", "hand_rcm", "raptor19409_rcm"};

// n of "<prefix><n>", or 0.
int size_suffix(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return 0;
  const std::string digits = name.substr(prefix.size());
  if (digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return std::stoi(digits);
}

const DataMesh* data_mesh(const std::string& name) {
  for (const DataMesh& d : kDataMeshes)
    if (name == d.name) return &d;
  return nullptr;
}

// The data file a matrix needs ("" for the cantilevers); InputError for an unknown name.
std::string data_file(const std::string& name) {
  if (size_suffix(name, "box") > 0) return "";
  if (size_suffix(name, "bunny") > 0) return kBunnyFile;
  if (const DataMesh* d = data_mesh(name)) return d->file;
  std::string known;
  for (const char* m : kDefaultMatrices) known += std::string(known.empty() ? "" : ", ") + m;
  throw InputError("bench_sparse: unknown matrix '" + name + "' (box<n>, bunny<r>, or one of " + known + ")");
}

bool data_available(const std::string& file) {
  return file.empty() || (!test::data_dir().empty() && std::filesystem::exists(test::data_dir() / file));
}

std::filesystem::path data_path(const std::string& file) {
  if (!data_available(file)) throw InputError(file + " not found in the data folder");
  return test::data_dir() / file;
}

AssembledMatrix<double> build_matrix(const std::string& name) {
  const auto start = std::chrono::steady_clock::now();
  const std::string file = data_file(name);
  mesh::TetMesh m;
  int axis = 1;
  bool rcm = true;
  if (const int n = size_suffix(name, "box"); n > 0) {
    m = test::box_cantilever(n, 6);
    axis = 0;
    rcm = false;  // lattice order already
  } else if (const DataMesh* d = data_mesh(name)) {
    m = mesh::read_tet_mesh(data_path(file));
    axis = d->axis;
    rcm = d->rcm;
  } else {  // bunny<r>
    const mesh::TriSurface s = mesh::read_surface(data_path(file));
    m = mesh::voxel_to_tet(mesh::voxelize_resolution(s, size_suffix(name, "bunny"), file), 6);
  }
  if (rcm) mesh::reorder_nodes(m, mesh::NodeOrdering::Rcm);
  AssembledMatrix<double> K = test::clamped_problem(m, name, axis).K;
  std::fprintf(stderr, "bench_sparse: matrix %s: %zu nodes, %zu tets, %d DOFs, %zu entries, %s order, built in %.1f s\n",
               name.c_str(), m.nodes.size(), m.elems.size(), K.rows, K.nnz(), rcm ? "RCM" : "file/lattice",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return K;
}

// EB_BENCH_SPARSE_MATRICES (or EB_BENCH_SPARSE_SIZES): names separated by commas or spaces, a bare
// number n meaning box<n>. Matrices whose data file is absent are left out, with a note.
std::vector<std::string> matrix_names() {
  std::vector<std::string> asked;
  const char* e = std::getenv("EB_BENCH_SPARSE_MATRICES");
  if (!e || !*e) e = std::getenv("EB_BENCH_SPARSE_SIZES");
  if (e && *e) {
    std::string list = e;
    std::replace(list.begin(), list.end(), ',', ' ');
    std::stringstream ss(list);
    for (std::string item; ss >> item;)
      asked.push_back(item.find_first_not_of("0123456789") == std::string::npos ? "box" + item : item);
  } else {
    asked.assign(std::begin(kDefaultMatrices), std::end(kDefaultMatrices));
  }
  std::vector<std::string> names;
  for (const std::string& m : asked) {
    const std::string file = data_file(m);
    if (data_available(file))
      names.push_back(m);
    else
      std::fprintf(stderr, "bench_sparse: %s left out: %s not in the data folder\n", m.c_str(), file.c_str());
  }
  return names;
}

template <class T>
const char* fp() {
  return sizeof(T) == 4 ? "fp32" : "fp64";
}

template <class T>
void cpu_spmv(benchmark::State& state, const std::string& matrix, Format f) {
  const AssembledMatrix<T>& A = bench_matrix<T>(matrix);
  const AnyMatrix<T>& m = bench_format<T>(matrix, f);
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
template const AssembledMatrix<double>& bench_matrix(const std::string&);
template <class T>
const AnyMatrix<T>& bench_format(const std::string& name, Format f) {
  return prepared_cache().get<AnyMatrix<T>>(name + to_string(f) + fp<T>(),
                                            [&] { return make_format(bench_matrix<T>(name), f); });
}
template const AnyMatrix<float>& bench_format(const std::string&, Format);
template const AnyMatrix<double>& bench_format(const std::string&, Format);
template <class T>
std::vector<T> bench_vector(std::size_t n, uint32_t seed) {
  return test::cast_vector<T>(test::random_vector(n, seed));
}
template std::vector<float> bench_vector(std::size_t, uint32_t);
template std::vector<double> bench_vector(std::size_t, uint32_t);

void set_counters(benchmark::State& state, double bytes, double flops, Index rows, std::size_t nnz) {
  using benchmark::Counter;
  state.counters["GB"] = Counter(bytes * 1e-9, Counter::kIsIterationInvariantRate);
  state.counters["GFLOP"] = Counter((2.0 * double(nnz) + flops) * 1e-9, Counter::kIsIterationInvariantRate);
  state.counters["DOFs"] = rows;
  state.counters["nnz"] = double(nnz);
}

namespace {

// Runs a benchmark's body; an exception (a mesh missing, a conversion or a device failure) marks
// that benchmark as failed instead of ending the process.
template <class Body>
void guarded(benchmark::State& state, Body&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Every benchmark reports its repetitions' min and max beside Google Benchmark's median, mean,
// stddev and cv: the report gives each time with its range (--benchmark_report_aggregates_only
// keeps these aggregates).
template <class Body>
benchmark::internal::Benchmark* add(const std::string& name, Body body) {
  return benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& s) { guarded(s, [&] { body(s); }); })
      ->ComputeStatistics("min", [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); })
      ->ComputeStatistics("max", [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); });
}

// The display reporter (console, as the flags choose), which also keeps a complete JSON file of
// what it was shown: after each benchmark the whole document is written to PATH.tmp and renamed
// onto PATH (--eb_json_out).
class JsonFileKeeper : public benchmark::BenchmarkReporter {
 public:
  JsonFileKeeper(benchmark::BenchmarkReporter* display, std::string path)
      : display_(display), path_(std::move(path)) {}
  bool ReportContext(const Context& context) override {
    context_.emplace(context);
    write();
    return display_->ReportContext(context);
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    display_->ReportRuns(runs);
    runs_.insert(runs_.end(), runs.begin(), runs.end());
    write();
  }
  void Finalize() override { display_->Finalize(); }

 private:
  void write() const {
    std::ostringstream text;
    benchmark::JSONReporter json;
    json.SetOutputStream(&text);
    json.SetErrorStream(&text);
    json.ReportContext(*context_);
    if (!runs_.empty()) json.ReportRuns(runs_);
    json.Finalize();
    const std::string tmp = path_ + ".tmp";
    {
      std::ofstream f(tmp, std::ios::trunc);
      f << text.str();
      if (!f.flush()) throw RuntimeFailure("bench_sparse: cannot write " + tmp);
    }
    std::filesystem::rename(tmp, path_);
  }

  benchmark::BenchmarkReporter* display_;
  std::string path_;
  std::optional<Context> context_;
  std::vector<Run> runs_;
};

template <class T>
void register_precision(const std::string& matrix) {
  const std::string p = fp<T>();
  for (Format f : all_formats()) {
    const std::string tail = to_string(f) + "/" + p + "/" + matrix;
    add("spmv/cpu/" + tail, [=](benchmark::State& s) { cpu_spmv<T>(s, matrix, f); })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
#if defined(EB_BENCH_CUDA)
    add("spmv/cuda/" + tail, [=](benchmark::State& s) { cuda_spmv<T>(s, matrix, f); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
#endif
  }
#if defined(EB_BENCH_CUDA)
  // The BCSR kernel with each fixed number of warps per slice, beside the device's choice above.
  for (int w : {1, 2, 4, 8})
    add("spmv/cuda/bcsr_w" + std::to_string(w) + "/" + p + "/" + matrix,
        [=](benchmark::State& s) { cuda_spmv<T>(s, matrix, Format::Bcsr, w); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
#endif
  for (Format f : {Format::Bcsr, Format::Csr}) {
    const std::string tail = to_string(f) + "/" + p + "/" + matrix;
    add("pcg_iteration/cpu/" + tail, [=](benchmark::State& s) { cpu_pcg_iteration<T>(s, matrix, f); })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
#if defined(EB_BENCH_CUDA)
    add("pcg_iteration/cuda/" + tail, [=](benchmark::State& s) { cuda_pcg_iteration<T>(s, matrix, f); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    // The single-reduction iteration (CgOptions::single_reduction): BCSR fuses its dot into the
    // product (2 kernels per iteration), CSR runs the dot as a kernel of its own (3).
    add("pcg_iteration_sr/cuda/" + tail, [=](benchmark::State& s) { cuda_pcg_iteration<T>(s, matrix, f, true); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    // The marginal iteration of both (solves of 50 and 150 iterations, the difference per added
    // one), without the start and host reads a solve does once.
    for (bool sr : {false, true})
      add(std::string(sr ? "pcg_marginal_sr" : "pcg_marginal") + "/cuda/" + tail,
          [=](benchmark::State& s) { cuda_pcg_marginal<T>(s, matrix, f, sr); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond);
    // The same with the matrix's values kept in the L2 between products (CgOptions::
    // l2_resident_operator): where values and vectors about fill the L2, the iteration then reads
    // fewer bytes from DRAM than its compulsory count, so its ratio to that count says how much the
    // cache saves, not how close the kernels come to the DRAM bound.
    if (f == Format::Bcsr)
      for (bool sr : {false, true})
        add(std::string(sr ? "pcg_marginal_sr_l2" : "pcg_marginal_l2") + "/cuda/" + tail,
            [=](benchmark::State& s) { cuda_pcg_marginal<T>(s, matrix, f, sr, true); })
            ->UseManualTime()
            ->Unit(benchmark::kMicrosecond);
#endif
  }
#if defined(EB_BENCH_CUDA)
  for (bool bsr : {false, true}) {
    const std::string lib = bsr ? "cusparse_bsr" : "cusparse_csr";
    add(lib + "/" + p + "/" + matrix, [=](benchmark::State& s) { cusparse_spmv<T>(s, matrix, bsr); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    add("pcg_iteration/" + lib + "/" + p + "/" + matrix,
        [=](benchmark::State& s) { cusparse_pcg_iteration<T>(s, matrix, bsr); })
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
#endif
}

}  // namespace

}  // namespace eb::linalg::bench

int main(int argc, char** argv) {
  using namespace eb::linalg::bench;
  // --eb_json_out=PATH is ours: taken out before Google Benchmark reads the flags.
  std::string json_out;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--eb_json_out=", 0) == 0)
      json_out = a.substr(std::string("--eb_json_out=").size());
    else
      argv[kept++] = argv[i];
  }
  argc = kept;
  argv[argc] = nullptr;
  try {
    // Grouped by matrix, so that each is built once (the caches keep one matrix at a time).
    for (const std::string& m : matrix_names()) {
      register_precision<double>(m);
      register_precision<float>(m);
      add("eigen/cpu/csr/fp64/" + m, [=](benchmark::State& s) { eigen_spmv(s, m); })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  } catch (const eb::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  // Provenance in the JSON's context: the build and the machine (GPU included), as run summaries carry.
  const eb::BuildInfo& b = eb::build_info();
  benchmark::AddCustomContext("eb_git_commit", b.git_commit);
  benchmark::AddCustomContext("eb_build", b.build_type + ", " + b.cxx_compiler +
                                              (b.cuda_compiler.empty() ? "" : ", CUDA " + b.cuda_compiler));
  benchmark::AddCustomContext("eb_machine", eb::machine_info().dump());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (json_out.empty()) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    JsonFileKeeper keeper(benchmark::CreateDefaultDisplayReporter(), json_out);
    benchmark::RunSpecifiedBenchmarks(&keeper);
  }
  benchmark::Shutdown();
  return 0;
}
