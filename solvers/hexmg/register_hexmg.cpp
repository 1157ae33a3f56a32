#include "solvers/common/registry.h"
#include "solvers/hexmg/hexmg_simulation.h"

namespace eb {

void register_method_hexmg(MethodRegistry& r) {
  const std::string summary =
      "Dick, Georgii & Westermann 2011: co-rotated trilinear hexahedra, Newmark, matrix-free geometric multigrid "
      "(8-colour Gauss-Seidel V-cycles, Galerkin coarse grids)";
  for (Precision p : {Precision::Fp32, Precision::Fp64}) {
    r.add({"hexmg", Backend::Cpu, p, summary,
           [](const Scenario& s, const RunOptions& o) { return hexmg::make_hexmg_cpu(s, o); }});
#if defined(ELASTOBENCH_HAVE_CUDA)
    r.add({"hexmg", Backend::Cuda, p, summary,
           [](const Scenario& s, const RunOptions& o) { return hexmg::make_hexmg_cuda(s, o); }});
#endif
  }
}

}  // namespace eb
