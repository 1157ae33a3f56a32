#include "solvers/common/registry.h"
#include "solvers/corot_cg/corot_cg_setup.h"
#include "solvers/corot_cg/corot_cg_simulation.h"

namespace eb {

void register_method_corot_cg(MethodRegistry& r) {
  MethodInfo info;
  info.name = "corot-cg";
  info.summary =
      "Campo 2015 (SOFA TetrahedronFEMForceField \"large\"): co-rotational linear tetrahedra, implicit Euler with "
      "Rayleigh damping, matrix-free CG, ground plane by penalty, render surface mapping";
  info.variants = corot_cg::corot_cg_variants();
  info.options = option_schema<corot_cg::CorotCgOptions>(corot_cg::validate_corot_cg_options);
  info.dynamic = true;
  info.static_solve = true;
  info.features = {"boundary.ground", "boundary.random_impulses", "time.rayleigh_stiffness"};
  r.add_method(info);
  for (const auto& v : info.variants)
    for (Precision p : {Precision::Fp32, Precision::Fp64}) {
      r.add({"corot-cg", v.name, Backend::Cpu, p,
             [](const Scenario& s, const RunOptions& o) { return corot_cg::make_corot_cg_cpu(s, o); }});
#if defined(ELASTOBENCH_HAVE_CUDA)
      r.add({"corot-cg", v.name, Backend::Cuda, p,
             [](const Scenario& s, const RunOptions& o) { return corot_cg::make_corot_cg_cuda(s, o); },
             [](const Scenario& s, const RunOptions& o) {
               return corot_cg::estimate_device_bytes(corot_cg::build_corot_cg_setup(s, o), o.precision, o.device);
             }});
#endif
    }
}

}  // namespace eb
