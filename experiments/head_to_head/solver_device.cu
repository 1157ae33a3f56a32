// linalg's Jacobi-PCG on the device for the head-to-head solver comparison (solver_peers.h).
#include <cuda_runtime.h>

#include "experiments/head_to_head/solver_peers.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
#include "solvers/common/timers.h"
#include "solvers/linalg/cg.h"
#include "solvers/linalg/cusparse_operator.h"

namespace eb::head_to_head {
namespace {

struct Events {
  cudaEvent_t start = nullptr, stop = nullptr;
  Events() {
    EB_CUDA_CHECK(cudaEventCreate(&start));
    EB_CUDA_CHECK(cudaEventCreate(&stop));
  }
  ~Events() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
};

}  // namespace

std::string device_name() { return cuda_device_info(0).name; }

SolveRun device_jacobi_pcg(const SolverSystem& sys, const SolveLimits& lim, bool cusparse) {
  SolveRun run;
  cudaStream_t stream = nullptr;
  // A blocking stream: DeviceBuffer's fill_zero (cudaMemset on the legacy default stream) is then
  // ordered before the solver's work on it.
  EB_CUDA_CHECK(cudaStreamCreate(&stream));
  struct StreamGuard {
    cudaStream_t s;
    ~StreamGuard() { cudaStreamDestroy(s); }
  } guard{stream};
  const std::size_t n = sys.b.size();
  Events ev;
  // Setup (host-driven: uploads, layout, workspace, graph capture), on the host's clock: the
  // matrix to the device in the operator's layout and the solver's workspace.
  EB_CUDA_CHECK(cudaDeviceSynchronize());
  const Stopwatch setup;
  std::unique_ptr<linalg::LinearOperator<double>> A =
      cusparse ? linalg::make_cusparse_csr_operator(sys.csr)
               : linalg::make_matrix_operator(sys.A, linalg::Format::Bcsr, linalg::Location::Device);
  linalg::CgOptions o;
  o.preconditioner = linalg::Preconditioner::Jacobi;
  o.tolerance = lim.tolerance;
  o.max_iterations = lim.max_iterations;
  o.stream = stream;
  auto cg = std::make_unique<linalg::CgSolver<double>>(*A, o);
  EB_CUDA_CHECK(cudaDeviceSynchronize());
  run.setup_seconds = setup.elapsed_ms() / 1000.0;
  cuda::DeviceBuffer<double> b(n, "head-to-head b"), x(n, "head-to-head x");
  b.upload(sys.b);
  std::vector<double> xh(n);
  // One solve from 0 with the solver `c`: seconds between CUDA events on its stream. A solver
  // captures its CUDA graph in its first solve, so each is run once untimed first (the graph is
  // a one-time cost like the setup, but of the first solve only, which would blur the histories).
  auto solve = [&](linalg::CgSolver<double>& c, linalg::CgResult& r) {
    x.fill_zero();
    c.solve(b.data(), x.data());
    x.fill_zero();
    EB_CUDA_CHECK(cudaStreamSynchronize(stream));
    EB_CUDA_CHECK(cudaEventRecord(ev.start, stream));
    r = c.solve(b.data(), x.data());
    EB_CUDA_CHECK(cudaEventRecord(ev.stop, stream));
    EB_CUDA_CHECK(cudaEventSynchronize(ev.stop));
    float t = 0;
    EB_CUDA_CHECK(cudaEventElapsedTime(&t, ev.start, ev.stop));
    x.download(xh.data(), n);
    return t / 1000.0;
  };
  linalg::CgResult r;
  run.solve_seconds = solve(*cg, r);
  run.iterations = r.iterations;
  run.relative_residual = true_relative_residual(sys.csr, sys.b, xh.data());
  run.converged = r.converged() && run.relative_residual <= 2 * lim.tolerance;
  run.solution = xh;
  decade_history(run, lim, [&](double tol) {
    linalg::CgOptions ot = o;
    ot.tolerance = tol;
    linalg::CgSolver<double> c(*A, ot);
    linalg::CgResult rt;
    const double t = solve(c, rt);
    return std::make_pair(t, true_relative_residual(sys.csr, sys.b, xh.data()));
  });
  return run;
}

}  // namespace eb::head_to_head
