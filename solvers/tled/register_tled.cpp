#include "solvers/common/registry.h"
#include "solvers/tled/tled_setup.h"
#include "solvers/tled/tled_simulation.h"

namespace eb {

void register_method_tled(MethodRegistry& r) {
  MethodInfo info;
  info.name = "tled";
  info.summary = "Strbac 2015 TLED: one-point hexahedra, neo-Hookean (+damage), mass-damped explicit central difference";
  info.variants = tled::tled_variants();
  for (auto& v : info.variants)  // atomic: floating-point atomic adds in the order threads arrive
    v.deterministic = v.name != tled::to_string(tled::Assembly::Atomic);
  info.options = option_schema<tled::TledOptions>(tled::validate_tled_options);
  info.features = {"material.damage"};
  r.add_method(info);
  for (const auto& v : info.variants)
    for (Precision p : {Precision::Fp32, Precision::Fp64}) {
      r.add({"tled", v.name, Backend::Cpu, p, [](const Scenario& s, const RunOptions& o) { return tled::make_tled_cpu(s, o); }});
#if defined(ELASTOBENCH_HAVE_CUDA)
      r.add({"tled", v.name, Backend::Cuda, p, [](const Scenario& s, const RunOptions& o) { return tled::make_tled_cuda(s, o); },
             [](const Scenario& s, const RunOptions& o) {
               return tled::estimate_device_bytes(tled::build_tled_setup(s, o), o.precision);
             }});
#endif
    }
}

}  // namespace eb
