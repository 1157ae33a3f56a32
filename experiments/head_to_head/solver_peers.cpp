#include "experiments/head_to_head/solver_peers.h"

#include <omp.h>

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#if defined(EB_H2H_HAVE_CHOLMOD)
#include <link.h>

#include <Eigen/CholmodSupport>
#include <filesystem>
#endif

#include "experiments/head_to_head/matrix_market.h"
#include "meshes/errors.h"
#include "solvers/common/timers.h"
#include "solvers/hexmg/algebraic_hierarchy.h"
#include "solvers/hexmg/hexmg_simulation.h"
#include "solvers/linalg/cg.h"

namespace eb::head_to_head {
namespace {

using RowMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor>;
using ColMatrix = Eigen::SparseMatrix<double>;
using Vec = Eigen::VectorXd;

double seconds_since(const Stopwatch& w) { return w.elapsed_ms() / 1000.0; }

std::string cpu_threads() {
  const int t = omp_get_max_threads();
  return std::to_string(t) + (t == 1 ? " thread" : " threads");
}

#if defined(EB_H2H_HAVE_CHOLMOD)
// CHOLMOD's supernodal factorization runs in the BLAS that the process loaded: say which, since
// the reference BLAS is one thread and OpenBLAS or MKL use their own threads.
std::string blas_threads() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        if (name.find("blas") != std::string::npos || name.find("mkl") != std::string::npos) {
          std::error_code ec;
          *static_cast<std::string*>(out) = std::filesystem::canonical(name, ec).string();
          return 1;
        }
        return 0;
      },
      &found);
  if (found.find("openblas") != std::string::npos) return "OpenBLAS threads";
  if (found.find("mkl") != std::string::npos) return "MKL threads";
  if (found.find("blis") != std::string::npos) return "BLIS threads";
  if (found.find("/blas/") != std::string::npos) return "1 thread (reference BLAS)";
  return "1 thread (" + (found.empty() ? std::string("no BLAS found") : std::filesystem::path(found).filename().string()) + ")";
}
#endif

double norm_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

// The system's CSR as an Eigen row-major matrix (a copy of the same entries).
RowMatrix eigen_rows(const SolverSystem& s) {
  const auto& c = s.csr;
  RowMatrix m(c.rows, c.cols);
  m.reserve(Eigen::VectorXi::Map(std::vector<int>(c.rows, 0).data(), c.rows));
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(c.nnz());
  for (linalg::Index i = 0; i < c.rows; ++i)
    for (linalg::Offset k = c.row_ptr[std::size_t(i)]; k < c.row_ptr[std::size_t(i) + 1]; ++k)
      t.emplace_back(i, c.col[std::size_t(k)], c.val[std::size_t(k)]);
  m.setFromTriplets(t.begin(), t.end());
  return m;
}

Eigen::Map<const Vec> rhs(const SolverSystem& s) { return Eigen::Map<const Vec>(s.b.data(), Eigen::Index(s.b.size())); }

double true_residual(const SolverSystem& s, const Vec& x) { return true_relative_residual(s.csr, s.b, x.data()); }

// linalg's Jacobi-PCG on a host operator; per-iteration history from CgOptions::on_iteration.
SolveRun host_jacobi_pcg(const SolverSystem& sys, const SolveLimits& lim,
                         const std::function<std::unique_ptr<linalg::LinearOperator<double>>()>& make_operator) {
  SolveRun run;
  const Stopwatch setup;
  const auto A = make_operator();
  linalg::CgOptions o;
  o.preconditioner = linalg::Preconditioner::Jacobi;
  o.tolerance = lim.tolerance;
  o.max_iterations = lim.max_iterations;
  Stopwatch clock;
  const double bn = norm_of(sys.b);
  run.history.kind = "iteration";
  o.on_iteration = [&](int, double r) {
    const double t = seconds_since(clock);
    run.history.seconds.push_back(t);
    run.history.relative_residual.push_back(bn > 0 ? r / bn : r);
    return t < lim.max_seconds;
  };
  linalg::CgSolver<double> cg(*A, o);
  run.setup_seconds = seconds_since(setup);
  std::vector<double> x(sys.b.size(), 0.0);
  clock.reset();
  const linalg::CgResult r = cg.solve(sys.b.data(), x.data());
  run.solve_seconds = seconds_since(clock);
  run.iterations = r.iterations;
  run.relative_residual = true_relative_residual(sys.csr, sys.b, x.data());
  run.converged = r.converged() && run.relative_residual <= 2 * lim.tolerance;
  run.solution = std::move(x);
  return run;
}

SolveRun eigen_cg(const SolverSystem& sys, const SolveLimits& lim) {
  SolveRun run;
  const RowMatrix A = eigen_rows(sys);
  using Cg = Eigen::ConjugateGradient<RowMatrix, Eigen::Lower | Eigen::Upper, Eigen::DiagonalPreconditioner<double>>;
  const Stopwatch setup;
  Cg cg;
  cg.setMaxIterations(lim.max_iterations);
  cg.compute(A);
  run.setup_seconds = seconds_since(setup);
  auto solve_to = [&](double tol, Vec& x) {
    cg.setTolerance(tol);
    const Stopwatch clock;
    x = cg.solve(rhs(sys));
    return seconds_since(clock);
  };
  Vec x;
  run.solve_seconds = solve_to(lim.tolerance, x);
  run.iterations = int(cg.iterations());
  run.relative_residual = true_residual(sys, x);
  run.converged = cg.info() == Eigen::Success && run.relative_residual <= 2 * lim.tolerance;
  run.solution.assign(x.data(), x.data() + x.size());
  decade_history(run, lim, [&](double tol) {
    Vec y;
    const double t = solve_to(tol, y);
    return std::make_pair(t, true_residual(sys, y));
  });
  return run;
}

// A direct factorization: setup = analysis and factorization, solve = the two triangular solves.
template <class Solver>
SolveRun direct(const SolverSystem& sys, const SolveLimits&) {
  SolveRun run;
  const ColMatrix A = eigen_rows(sys);
  const Stopwatch setup;
  Solver f;
  f.compute(A);
  run.setup_seconds = seconds_since(setup);
  if (f.info() != Eigen::Success) throw RuntimeFailure("head-to-head solvers: the factorization failed on " + sys.scene);
  const Stopwatch clock;
  const Vec x = f.solve(rhs(sys));
  run.solve_seconds = seconds_since(clock);
  run.iterations = 0;
  run.relative_residual = true_residual(sys, x);
  run.converged = f.info() == Eigen::Success && run.relative_residual <= 2 * 1e-6;
  run.solution.assign(x.data(), x.data() + x.size());
  run.history.kind = "end";
  run.history.seconds = {run.solve_seconds};
  run.history.relative_residual = {run.relative_residual};
  return run;
}

// hexmg's own V-cycle (the paper's geometric hierarchy) on its open step: setup = the coarse
// levels' Galerkin products (the fine level is the system's assembly, which every solver gets).
SolveRun hexmg_vcycle(const SolverSystem& sys, const SolveLimits& lim) {
  SolveRun run;
  hexmg::HexmgSimulation& sim = *sys.hex;
  const Stopwatch setup;
  for (int l = 1; l < sim.model().n_levels(); ++l) sim.run_phase({hexmg::PhaseKind::Galerkin, l, 0});
  run.setup_seconds = seconds_since(setup);
  sim.restart_solve();
  const double bn = norm_of(sys.b);
  run.history.kind = "iteration";
  run.history.seconds = {0.0};
  run.history.relative_residual = {sim.system_residual() / bn};
  double t = 0, r = run.history.relative_residual[0];
  while (r > lim.tolerance && run.iterations < lim.max_iterations && t < lim.max_seconds && std::isfinite(r)) {
    const Stopwatch clock;
    sim.vcycle();
    t += seconds_since(clock);
    r = sim.system_residual() / bn;  // outside the clock: a stopping test a V-cycle does not need every cycle
    ++run.iterations;
    run.history.seconds.push_back(t);
    run.history.relative_residual.push_back(r);
  }
  run.solve_seconds = t;
  run.relative_residual = r;
  run.converged = r <= lim.tolerance;
  run.solution = sim.get_array(hexmg::PhaseArray::u, 0);
  return run;
}

// hexmg's stencil Jacobi-PCG (its own product on the 27-point stencils), on its open step.
SolveRun hexmg_stencil_pcg(const SolverSystem& sys, const SolveLimits& lim) {
  SolveRun run;
  hexmg::HexmgSimulation& sim = *sys.hex;
  sim.restart_solve();
  const hexmg::ConvergenceTrace tr = sim.jacobi_pcg(lim.max_iterations, lim.tolerance, lim.max_seconds);
  const double bn = norm_of(sys.b);
  run.history.kind = "iteration";
  run.history.seconds = tr.seconds;
  for (double r : tr.residual) run.history.relative_residual.push_back(r / bn);
  run.solve_seconds = tr.seconds.empty() ? 0.0 : tr.seconds.back();
  run.iterations = int(tr.residual.size()) - 1;
  run.relative_residual = sim.system_residual() / bn;
  run.converged = run.relative_residual <= 2 * lim.tolerance;
  run.solution = sim.get_array(hexmg::PhaseArray::u, 0);
  return run;
}

// The V-cycle of the smoothed-P algebraic hierarchy (experiments/dick2011's corrected construction,
// its MG-PCG variant: 1 Jacobi step on P with 3x3 block diagonal, 2 + 2 symmetric block
// Gauss-Seidel sweeps) as CG's preconditioner.
SolveRun hexmg_mg_pcg(const SolverSystem& sys, const SolveLimits& lim) {
  SolveRun run;
  const RowMatrix A = eigen_rows(sys);
  hexmg::AlgebraicOptions o;
  o.prolongation_smoothing = 1;
  o.block_jacobi = true;
  o.pre_smooth = o.post_smooth = 2;
  o.symmetric = true;
  const Stopwatch setup;
  const hexmg::AlgebraicHierarchy h(sys.hex->model(), A, o);
  run.setup_seconds = seconds_since(setup);
  const Vec b = rhs(sys);
  const double bn = b.norm();
  Vec x = Vec::Zero(b.size());
  const Stopwatch clock;
  run.history.kind = "iteration";
  run.history.seconds = {0.0};
  run.history.relative_residual = {1.0};
  run.iterations = hexmg::mg_pcg(h, A, b, x, lim.max_iterations, lim.tolerance, [&](int, const Vec&) {
    // mg_pcg tests |r| itself; the true residual here would cost a product per iteration, so the
    // history's points are taken from a recomputation outside the clock below.
    run.history.seconds.push_back(seconds_since(clock));
    return seconds_since(clock) < lim.max_seconds;
  });
  run.solve_seconds = seconds_since(clock);
  run.relative_residual = true_residual(sys, x);
  run.converged = run.relative_residual <= 2 * lim.tolerance;
  // The residuals of the iterates, replayed without timing (the iterates are deterministic).
  Vec y = Vec::Zero(b.size());
  hexmg::mg_pcg(h, A, b, y, run.iterations, 0.0, [&](int, const Vec& u) {
    run.history.relative_residual.push_back((b - A * u).norm() / bn);
    return true;
  });
  run.history.relative_residual.resize(run.history.seconds.size(), run.relative_residual);
  run.solution.assign(x.data(), x.data() + x.size());
  return run;
}

// CuPy's cupyx.scipy.sparse.linalg.cg (Jacobi preconditioner as a LinearOperator) in a python3
// subprocess on the Matrix Market files of the system (cupy_cg.py states its timing).
std::vector<SolveRun> cupy_cg(const SolverSystem& sys, const SolveLimits& lim, int repeats, const PeerSettings& ps) {
  namespace fs = std::filesystem;
  fs::create_directories(ps.work_dir);
  const fs::path a = ps.work_dir / "A.mtx", b = ps.work_dir / "b.mtx", out = ps.work_dir / "cupy_result.json";
  write_matrix_market(a, sys.A);
  write_matrix_market(b, sys.b);
  fs::remove(out);
  char tol[32];
  std::snprintf(tol, sizeof tol, "%.17g", lim.tolerance);
  const std::string cmd = "python3 '" + ps.cupy_script.string() + "' '" + a.string() + "' '" + b.string() + "' '" +
                          out.string() + "' --tolerance " + tol + " --max-iterations " + std::to_string(lim.max_iterations) +
                          " --repeats " + std::to_string(repeats) + (lim.history ? " --history" : "") + " 2>&1";
  std::string log;
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw RuntimeFailure("cannot start python3 for cupy_cg.py");
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) log += buf;
  const int rc = pclose(p);
  if (rc != 0) throw RuntimeFailure("cupy_cg.py failed (status " + std::to_string(rc) + "): " + log);
  std::ifstream in(out);
  if (!in) throw RuntimeFailure("cupy_cg.py wrote no result: " + log);
  const nlohmann::json j = nlohmann::json::parse(in);
  const std::vector<double> x = read_matrix_market_vector(j.at("x_file").get<std::string>());
  if (x.size() != sys.b.size()) throw RuntimeFailure("cupy_cg.py: the solution has the wrong size");
  const auto setups = j.at("setup_seconds").get<std::vector<double>>();
  const auto solves = j.at("solve_seconds").get<std::vector<double>>();
  std::vector<SolveRun> runs(setups.size());
  for (std::size_t k = 0; k < runs.size(); ++k) {
    SolveRun& run = runs[k];
    run.setup_seconds = setups[k];
    run.solve_seconds = solves.at(k);
    run.iterations = j.at("iterations").get<int>();
    run.relative_residual = true_relative_residual(sys.csr, sys.b, x.data());
    run.converged = run.relative_residual <= 2 * lim.tolerance;
  }
  SolveRun& first = runs.at(0);
  first.solution = x;
  first.history.kind = "decade";
  first.history.seconds = j.at("history_seconds").get<std::vector<double>>();
  first.history.relative_residual = j.at("history_residual").get<std::vector<double>>();
  first.history.seconds.push_back(first.solve_seconds);
  first.history.relative_residual.push_back(first.relative_residual);
  return runs;
}

// Whether python3 can import cupy and see a device: "" or why not.
std::string cupy_unavailable(const PeerSettings& ps) {
  if (!ps.cuda_available) return "no CUDA device in this process";
  if (ps.cupy_script.empty()) return "experiments/head_to_head/cupy_cg.py not found";
  std::FILE* p = popen("python3 -c 'import cupy; print(cupy.cuda.runtime.getDeviceCount())' 2>&1", "r");
  if (!p) return "cannot start python3";
  std::string log;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) log += buf;
  if (pclose(p) != 0) {
    const auto nl = log.find_last_of('\n', log.size() > 1 ? log.size() - 2 : 0);
    std::string last = nl == std::string::npos ? log : log.substr(nl + 1);
    while (!last.empty() && (last.back() == '\n' || last.back() == '\r')) last.pop_back();
    return "python3 cannot use cupy: " + last;
  }
  return "";
}

}  // namespace

void decade_history(SolveRun& run, const SolveLimits& lim, const std::function<std::pair<double, double>(double)>& solve_to) {
  run.history.kind = "decade";
  run.history.seconds = {0.0};
  run.history.relative_residual = {1.0};
  if (lim.history)
    for (double tol = 1e-1; tol > 1.5 * lim.tolerance; tol /= 10) {
      const auto [t, r] = solve_to(tol);
      run.history.seconds.push_back(t);
      run.history.relative_residual.push_back(r);
    }
  run.history.seconds.push_back(run.solve_seconds);
  run.history.relative_residual.push_back(run.relative_residual);
}

std::vector<Peer> solver_peers(const PeerSettings& s) {
  std::vector<Peer> p;
  const auto cpu = [] { return cpu_threads(); };
  const auto one = [] { return std::string("1 thread"); };
  const auto dev = [] { return device_name(); };
  const std::string factor_size = "past the size this part factors (its time budget)";
  p.push_back({"hexmg-vcycle", "hexmg V-cycle (paper's geometric hierarchy)", "cpu", "hex", "", 0, "", cpu, hexmg_vcycle});
  p.push_back({"hexmg-mg-pcg", "hexmg MG-PCG (smoothed-P algebraic hierarchy)", "cpu", "hex", "", 0, "", one, hexmg_mg_pcg});
  p.push_back({"jacobi-pcg-bcsr", "linalg Jacobi-PCG, BCSR", "cpu", "any", "", 0, "", cpu, [](const SolverSystem& sys, const SolveLimits& l) {
                 return host_jacobi_pcg(sys, l, [&] { return linalg::make_matrix_operator(sys.A, linalg::Format::Bcsr, linalg::Location::Host); });
               }});
  p.push_back({"matrix-free-pcg", "Jacobi-PCG, matrix-free (tet: element-wise; hex: hexmg stencils)", "cpu", "any", "", 0, "", cpu,
               [](const SolverSystem& sys, const SolveLimits& l) {
                 if (sys.hex) return hexmg_stencil_pcg(sys, l);
                 return host_jacobi_pcg(sys, l, [&] {
                   std::vector<double> d(sys.b.size());
                   linalg::diagonal(sys.csr, d.data());
                   return std::make_unique<linalg::HostFunctionOperator<double>>(
                       linalg::Index(sys.b.size()), sys.element_product, std::move(d), "element-wise (host)");
                 });
               }});
  p.push_back({"eigen-cg", "Eigen ConjugateGradient (diagonal)", "cpu", "any", "", 0, "", cpu, eigen_cg});
  p.push_back({"eigen-ldlt", "Eigen SimplicialLDLT (AMD)", "cpu", "any", "", s.direct_max_entries, factor_size, one,
               [](const SolverSystem& sys, const SolveLimits& l) { return direct<Eigen::SimplicialLDLT<ColMatrix>>(sys, l); }});
#if defined(EB_H2H_HAVE_CHOLMOD)
  p.push_back({"cholmod", "CHOLMOD supernodal Cholesky", "cpu", "any", "", s.cholmod_max_entries, factor_size, blas_threads,
               [](const SolverSystem& sys, const SolveLimits& l) { return direct<Eigen::CholmodSupernodalLLT<ColMatrix>>(sys, l); }});
#else
  p.push_back({"cholmod", "CHOLMOD supernodal Cholesky", "cpu", "any",
               "this build has no CHOLMOD (Debian libsuitesparse-dev; solvers.cmake)", 0, "", cpu, nullptr});
#endif
  // Debian's hypre is built without OpenMP: one MPI process is one thread.
  p.push_back({"hypre-amg-pcg", "hypre BoomerAMG-PCG", "cpu", "any", hypre_unavailable(), 0, "",
               [] { return std::string("1 thread (one MPI process)"); }, hypre_boomeramg_pcg});
  const std::string no_device = s.cuda_available ? "" : "no CUDA device in this process";
  p.push_back({"cusparse-pcg", "linalg Jacobi-PCG, cuSPARSE CSR SpMV", "cuda", "any", no_device, 0, "", dev,
               [](const SolverSystem& sys, const SolveLimits& l) { return device_jacobi_pcg(sys, l, true); }});
  p.push_back({"device-bcsr-pcg", "linalg Jacobi-PCG, our sliced BCSR kernel", "cuda", "any", no_device, 0, "", dev,
               [](const SolverSystem& sys, const SolveLimits& l) { return device_jacobi_pcg(sys, l, false); }});
  p.push_back({"cupy-cg", "CuPy cg (Jacobi)", "cuda", "any", cupy_unavailable(s), s.cupy_max_entries,
               "past the Matrix Market text this part writes for CuPy (its time budget)", dev, nullptr,
               [s](const SolverSystem& sys, const SolveLimits& l, int repeats) { return cupy_cg(sys, l, repeats, s); }});
  return p;
}

}  // namespace eb::head_to_head
