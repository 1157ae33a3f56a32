#include "solvers/bcsr_pcg/bcsr_pcg_setup.h"
#include "solvers/bcsr_pcg/bcsr_pcg_simulation.h"
#include "solvers/common/registry.h"

namespace eb {

void register_method_bcsr_pcg(MethodRegistry& r) {
  MethodInfo info;
  info.name = "bcsr-pcg";
  info.summary =
      "Verschoor & Jalba 2012: co-rotational linear tetrahedra, semi-implicit velocity update, global BCSR matrix "
      "refreshed by a gather update, Jacobi-PCG";
  info.variants = bcsr_pcg::bcsr_pcg_variants();
  for (auto& v : info.variants)  // scatter: floating-point atomic adds in the order threads arrive
    v.deterministic = v.name != bcsr_pcg::to_string(bcsr_pcg::Update::Scatter);
  info.options = option_schema<bcsr_pcg::BcsrPcgOptions>(bcsr_pcg::validate_bcsr_pcg_options);
  info.dynamic = true;
  info.static_solve = true;
  r.add_method(info);
  for (const auto& v : info.variants)
    for (Precision p : {Precision::Fp32, Precision::Fp64}) {
      r.add({"bcsr-pcg", v.name, Backend::Cpu, p,
             [](const Scenario& s, const RunOptions& o) { return bcsr_pcg::make_bcsr_pcg_cpu(s, o); }});
#if defined(ELASTOBENCH_HAVE_CUDA)
      r.add({"bcsr-pcg", v.name, Backend::Cuda, p,
             [](const Scenario& s, const RunOptions& o) { return bcsr_pcg::make_bcsr_pcg_cuda(s, o); },
             [](const Scenario& s, const RunOptions& o) {
               return bcsr_pcg::estimate_device_bytes(bcsr_pcg::build_bcsr_pcg_setup(s, o), o.precision, o.device);
             }});
#endif
    }
}

}  // namespace eb
