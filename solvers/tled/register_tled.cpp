#include "solvers/common/registry.h"
#include "solvers/tled/tled_simulation.h"

namespace eb {

void register_method_tled(MethodRegistry& r) {
  const std::string summary =
      "Strbac 2015 TLED: one-point hexahedra, neo-Hookean (+damage), mass-damped explicit central difference";
  for (Precision p : {Precision::Fp32, Precision::Fp64}) {
    r.add({"tled", Backend::Cpu, p, summary, [](const Scenario& s, const RunOptions& o) {
             return tled::make_tled_cpu(s, o);
           }});
#if defined(ELASTOBENCH_HAVE_CUDA)
    r.add({"tled", Backend::Cuda, p, summary, [](const Scenario& s, const RunOptions& o) {
             return tled::make_tled_cuda(s, o);
           }});
#endif
  }
}

}  // namespace eb
