// hypre's BoomerAMG (algebraic multigrid, one V-cycle per application) as the preconditioner of
// hypre's own PCG, on the CPU in one MPI process (Debian libhypre-dev links MPI: a process that
// was not started by mpirun initializes MPI as a singleton). The settings are hypre's advice for
// 3D elasticity: HMIS coarsening, extended+i interpolation truncated to 4 entries, a strong
// threshold of 0.5, and the systems form with 3 functions (unknowns interleaved x, y, z per node,
// as both systems number them), hybrid symmetric Gauss-Seidel smoothing.
#include "experiments/head_to_head/solver_peers.h"

#if defined(EB_H2H_HAVE_HYPRE)
// The C interface only: OpenMPI's C++ bindings would need libmpi_cxx too.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <HYPRE.h>
#include <HYPRE_krylov.h>
#include <HYPRE_parcsr_ls.h>

#include <cstdlib>

#include "meshes/errors.h"
#include "solvers/common/timers.h"
#endif

namespace eb::head_to_head {

#if !defined(EB_H2H_HAVE_HYPRE)

std::string hypre_unavailable() { return "this build has no hypre (Debian libhypre-dev; solvers.cmake)"; }
SolveRun hypre_boomeramg_pcg(const SolverSystem&, const SolveLimits&) {
  throw std::logic_error("hypre_boomeramg_pcg called in a build without hypre");
}

#else

namespace {

void check(HYPRE_Int err, const char* what) {
  if (err) {
    char msg[256] = {0};
    HYPRE_DescribeError(err, msg);
    HYPRE_ClearAllErrors();
    throw RuntimeFailure(std::string("hypre ") + what + ": " + msg);
  }
}

void init_once() {
  static const bool done = [] {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
      int provided = 0;
      MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      std::atexit([] {
        int fin = 0;
        MPI_Finalized(&fin);
        if (!fin) MPI_Finalize();
      });
    }
    HYPRE_Init();
    return true;
  }();
  (void)done;
}

struct IJVector {
  HYPRE_IJVector ij = nullptr;
  HYPRE_ParVector par = nullptr;
  explicit IJVector(HYPRE_BigInt n) {
    check(HYPRE_IJVectorCreate(MPI_COMM_WORLD, 0, n - 1, &ij), "vector create");
    check(HYPRE_IJVectorSetObjectType(ij, HYPRE_PARCSR), "vector type");
    check(HYPRE_IJVectorInitialize(ij), "vector init");
  }
  void set(const std::vector<HYPRE_BigInt>& rows, const double* v) {
    check(HYPRE_IJVectorSetValues(ij, HYPRE_Int(rows.size()), rows.data(), v), "vector values");
    check(HYPRE_IJVectorAssemble(ij), "vector assemble");
    void* o = nullptr;
    check(HYPRE_IJVectorGetObject(ij, &o), "vector object");
    par = static_cast<HYPRE_ParVector>(o);
  }
  void get(const std::vector<HYPRE_BigInt>& rows, double* v) {
    check(HYPRE_IJVectorGetValues(ij, HYPRE_Int(rows.size()), rows.data(), v), "vector get");
  }
  ~IJVector() { HYPRE_IJVectorDestroy(ij); }
};

}  // namespace

std::string hypre_unavailable() { return ""; }

SolveRun hypre_boomeramg_pcg(const SolverSystem& sys, const SolveLimits& lim) {
  init_once();
  const auto& c = sys.csr;
  const HYPRE_BigInt n = c.rows;
  std::vector<HYPRE_BigInt> rows(static_cast<std::size_t>(n));
  std::vector<HYPRE_Int> ncols(static_cast<std::size_t>(n));
  std::vector<HYPRE_BigInt> cols(c.col.begin(), c.col.end());
  for (HYPRE_BigInt i = 0; i < n; ++i) {
    rows[std::size_t(i)] = i;
    ncols[std::size_t(i)] = HYPRE_Int(c.row_ptr[std::size_t(i) + 1] - c.row_ptr[std::size_t(i)]);
  }
  // The matrix in hypre's ParCSR form (a copy: part of no solver's setup here, as the CSR is not
  // part of the others').
  HYPRE_IJMatrix ij = nullptr;
  check(HYPRE_IJMatrixCreate(MPI_COMM_WORLD, 0, n - 1, 0, n - 1, &ij), "matrix create");
  struct MatrixGuard {
    HYPRE_IJMatrix m;
    ~MatrixGuard() { HYPRE_IJMatrixDestroy(m); }
  } mguard{ij};
  check(HYPRE_IJMatrixSetObjectType(ij, HYPRE_PARCSR), "matrix type");
  check(HYPRE_IJMatrixSetRowSizes(ij, ncols.data()), "row sizes");
  check(HYPRE_IJMatrixInitialize(ij), "matrix init");
  check(HYPRE_IJMatrixSetValues(ij, HYPRE_Int(n), ncols.data(), rows.data(), cols.data(), c.val.data()), "matrix values");
  check(HYPRE_IJMatrixAssemble(ij), "matrix assemble");
  void* o = nullptr;
  check(HYPRE_IJMatrixGetObject(ij, &o), "matrix object");
  const auto A = static_cast<HYPRE_ParCSRMatrix>(o);
  IJVector b(n), x(n);
  b.set(rows, sys.b.data());
  std::vector<double> zero(static_cast<std::size_t>(n), 0.0), xh(static_cast<std::size_t>(n));
  x.set(rows, zero.data());

  SolveRun run;
  const Stopwatch setup;
  HYPRE_Solver pcg = nullptr, amg = nullptr;
  check(HYPRE_ParCSRPCGCreate(MPI_COMM_WORLD, &pcg), "PCG create");
  check(HYPRE_BoomerAMGCreate(&amg), "AMG create");
  struct SolverGuard {
    HYPRE_Solver p, a;
    ~SolverGuard() {
      HYPRE_BoomerAMGDestroy(a);
      HYPRE_ParCSRPCGDestroy(p);
    }
  } sguard{pcg, amg};
  HYPRE_PCGSetMaxIter(pcg, lim.max_iterations);
  HYPRE_PCGSetTol(pcg, lim.tolerance);
  HYPRE_PCGSetTwoNorm(pcg, 1);  // ||r||_2 <= tol ||b||_2, the criterion of every solver here
  HYPRE_PCGSetPrintLevel(pcg, 0);
  HYPRE_PCGSetLogging(pcg, 1);
  HYPRE_BoomerAMGSetPrintLevel(amg, 0);
  HYPRE_BoomerAMGSetMaxIter(amg, 1);
  HYPRE_BoomerAMGSetTol(amg, 0.0);
  HYPRE_BoomerAMGSetCoarsenType(amg, 10);  // HMIS
  HYPRE_BoomerAMGSetInterpType(amg, 6);    // extended+i
  HYPRE_BoomerAMGSetPMaxElmts(amg, 4);
  HYPRE_BoomerAMGSetStrongThreshold(amg, 0.5);
  HYPRE_BoomerAMGSetRelaxType(amg, 6);  // hybrid symmetric Gauss-Seidel
  HYPRE_BoomerAMGSetNumSweeps(amg, 1);
  HYPRE_BoomerAMGSetNumFunctions(amg, 3);
  check(HYPRE_PCGSetPrecond(pcg, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSolve, (HYPRE_PtrToSolverFcn)HYPRE_BoomerAMGSetup, amg),
        "set preconditioner");
  check(HYPRE_ParCSRPCGSetup(pcg, A, b.par, x.par), "PCG setup");
  run.setup_seconds = setup.elapsed_ms() / 1000.0;
  auto solve_to = [&](double tol) {
    HYPRE_PCGSetTol(pcg, tol);
    x.set(rows, zero.data());
    const Stopwatch clock;
    const HYPRE_Int err = HYPRE_ParCSRPCGSolve(pcg, A, b.par, x.par);
    const double t = clock.elapsed_ms() / 1000.0;
    if (err && !HYPRE_CheckError(err, HYPRE_ERROR_CONV)) check(err, "PCG solve");
    HYPRE_ClearAllErrors();
    x.get(rows, xh.data());
    return std::make_pair(t, true_relative_residual(sys.csr, sys.b, xh.data()));
  };
  const auto [t, r] = solve_to(lim.tolerance);
  HYPRE_Int its = 0;
  HYPRE_PCGGetNumIterations(pcg, &its);
  run.solve_seconds = t;
  run.iterations = int(its);
  run.relative_residual = r;
  run.converged = r <= 2 * lim.tolerance;
  run.solution = xh;
  decade_history(run, lim, solve_to);
  return run;
}

#endif

}  // namespace eb::head_to_head
