#pragma once
// The solvers of the head-to-head comparison (issue 24, part `solvers`), each run on a
// SolverSystem from x = 0 to ||b - A x|| <= tolerance ||b||: ours (hexmg's V-cycle, MG-PCG through
// the algebraic hierarchy, linalg's Jacobi-PCG on BCSR, matrix-free CG, linalg's CG with
// cuSPARSE's SpMV and with our device BCSR) and the peers a user would reach for (Eigen's
// ConjugateGradient, Eigen's SimplicialLDLT, CHOLMOD, hypre BoomerAMG-PCG, CuPy's CG).
//
// A solver that cannot run here (a library this build lacks, no device, a system too large for
// a direct factorization) is listed with the reason and produces no numbers.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "experiments/head_to_head/solver_system.h"

namespace eb::head_to_head {

// Residual against time since the solve began (setup excluded). How it was taken:
//   "iteration"  a timestamp per iteration of the solve itself (host loops);
//   "decade"     separate solves from x = 0 to 1e-1, 1e-2, ... (the same iterates, stopped
//                earlier; where the solver offers no per-iteration moment: libraries, the device);
//   "end"        the solve's end only (direct solvers).
struct SolveHistory {
  std::string kind;
  std::vector<double> seconds, relative_residual;
};

struct SolveRun {
  double setup_seconds = 0, solve_seconds = 0;
  int iterations = 0;
  double relative_residual = 0;  // true: ||b - A x|| / ||b|| with the assembled matrix, fp64
  bool converged = false;
  SolveHistory history;
  std::vector<double> solution;  // x (the tests compare it with a direct solve)
};

struct SolveLimits {
  double tolerance = 1e-6;
  int max_iterations = 20000;
  double max_seconds = 30;  // per solve: a solver that has not converged by then stops
  bool history = false;     // record the history (decade solves cost extra time)
};

struct Peer {
  std::string name;     // e.g. "eigen-cg"
  std::string label;    // for tables, e.g. "Eigen ConjugateGradient (diagonal)"
  std::string backend;  // "cpu" or "cuda"
  std::string family;   // "any", "hex" or "tet": the systems it applies to
  std::string unavailable;  // non-empty: why it cannot run in this build or on this machine
  // Most matrix entries it is run on (0: no limit), and why: direct factorizations grow faster
  // than the rest; CuPy's Matrix Market text grows ~40 bytes an entry.
  long max_entries = 0;
  std::string max_entries_reason;
  std::function<std::string()> threads;  // "8 threads", "1 thread", the device's name
  std::function<SolveRun(const SolverSystem&, const SolveLimits&)> run;
  // Instead of `run`, for a solver in another process: all `repeats` runs at once (the first with
  // the history; fewer when the first missed the tolerance).
  std::function<std::vector<SolveRun>(const SolverSystem&, const SolveLimits&, int repeats)> run_all = {};
};

struct PeerSettings {
  bool cuda_available = false;
  std::filesystem::path work_dir;       // Matrix Market files for the CuPy solver
  std::filesystem::path cupy_script;    // experiments/head_to_head/cupy_cg.py ("" if not found)
  long direct_max_entries = 0;    // SimplicialLDLT
  long cholmod_max_entries = 0;
  long cupy_max_entries = 0;
};

std::vector<Peer> solver_peers(const PeerSettings& s);

// The separate translation units of the peers that need a library or CUDA.
// hypre BoomerAMG as CG's preconditioner (solver_hypre.cpp); hypre_unavailable() says why not when
// the build lacks hypre ("" when it has it).
std::string hypre_unavailable();
SolveRun hypre_boomeramg_pcg(const SolverSystem& sys, const SolveLimits& lim);
// linalg's Jacobi-PCG on the device (solver_device.cu; solver_device_none.cpp without CUDA):
// with cuSPARSE's SpMV on CSR (`cusparse`) or our sliced BCSR kernel, timed with CUDA events;
// the history by decade solves.
SolveRun device_jacobi_pcg(const SolverSystem& sys, const SolveLimits& lim, bool cusparse);
std::string device_name();

// The residual history of a solver without per-iteration moments: separate solves from 0 to
// each decade above the tolerance (`solve_to(tol)` returns {seconds, true relative residual};
// only when lim.history), then the timed solve's own end (run.solve_seconds, run.relative_residual).
void decade_history(SolveRun& run, const SolveLimits& lim, const std::function<std::pair<double, double>(double)>& solve_to);

}  // namespace eb::head_to_head
