#include "solvers/common/registry.h"
#include "solvers/hexmg/hexmg_simulation.h"

namespace eb {

void register_method_hexmg(MethodRegistry& r) {
  MethodInfo info;
  info.name = "hexmg";
  info.summary =
      "Dick, Georgii & Westermann 2011: co-rotated trilinear hexahedra, Newmark, matrix-free geometric multigrid "
      "(8-colour Gauss-Seidel V-cycles, Galerkin coarse grids)";
  for (const auto& v : hexmg::hexmg_variants()) info.variants.push_back({v.name, v.summary, v.keys});
  info.options = option_schema<hexmg::HexmgOptions>(hexmg::validate_hexmg_options);
  info.features = {"material.overrides"};  // Young's modulus and density per element
  r.add_method(info);
  for (const auto& v : hexmg::hexmg_variants())
    for (Precision p : {Precision::Fp32, Precision::Fp64}) {
      r.add({"hexmg", v.name, Backend::Cpu, p,
             [](const Scenario& s, const RunOptions& o) { return hexmg::make_hexmg_cpu(s, o); }});
#if defined(ELASTOBENCH_HAVE_CUDA)
      if (v.cuda)
        r.add({"hexmg", v.name, Backend::Cuda, p,
               [](const Scenario& s, const RunOptions& o) { return hexmg::make_hexmg_cuda(s, o); },
               [](const Scenario& s, const RunOptions& o) {
                 return hexmg::estimate_device_bytes(hexmg::build_model(s, o), o.precision, o.device);
               }});
#endif
    }
}

}  // namespace eb
