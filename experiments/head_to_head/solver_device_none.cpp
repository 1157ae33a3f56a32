// The device peers of the solver comparison in a build without CUDA: they say so.
#if !defined(ELASTOBENCH_HAVE_CUDA)
#include "experiments/head_to_head/solver_peers.h"
#include "meshes/errors.h"

namespace eb::head_to_head {

std::string device_name() { return "none"; }

SolveRun device_jacobi_pcg(const SolverSystem&, const SolveLimits&, bool) {
  throw RuntimeFailure("head-to-head solvers: this build has no CUDA backend");
}

}  // namespace eb::head_to_head
#endif
