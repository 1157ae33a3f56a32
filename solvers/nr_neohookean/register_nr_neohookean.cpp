#include "solvers/common/registry.h"
#include "solvers/nr_neohookean/assembly_strategy.h"
#include "solvers/nr_neohookean/nr_neohookean_setup.h"
#include "solvers/nr_neohookean/nr_neohookean_simulation.h"

namespace eb {

void register_method_nr_neohookean(MethodRegistry& r) {
  MethodInfo info;
  info.name = "nr-neohookean";
  info.summary =
      "Cecka, Lew & Darve 2011: compressible neo-Hookean tetrahedra, midpoint rule solved by Newton-Raphson with "
      "Jacobi-PCG; tangent assembled in place by a strategy (variant) into COO/CSR/HYB/DCOO/DCSR/DHYB";
  // Every strategy of this build; the CPU backend takes the host ones only (a device strategy on
  // the CPU backend is refused by build_nr_setup), so the variants are the CUDA backend's list.
  info.variants = nr_neohookean::nr_variants(Backend::Cuda);
  info.options = option_schema<nr_neohookean::NrOptions>(nr_neohookean::validate_nr_options);
  info.dynamic = true;
  info.static_solve = true;
  r.add_method(info);
  for (const nr_neohookean::StrategyInfo& s : nr_neohookean::assembly_strategies())
    for (Precision p : {Precision::Fp32, Precision::Fp64}) {
      if (s.location == linalg::Location::Host)
        r.add({"nr-neohookean", s.name, Backend::Cpu, p,
               [](const Scenario& sc, const RunOptions& o) { return nr_neohookean::make_nr_neohookean(sc, o); }});
#if defined(ELASTOBENCH_HAVE_CUDA)
      r.add({"nr-neohookean", s.name, Backend::Cuda, p,
             [](const Scenario& sc, const RunOptions& o) { return nr_neohookean::make_nr_neohookean(sc, o); },
             [](const Scenario& sc, const RunOptions& o) { return nr_neohookean::estimate_device_bytes(sc, o); }});
#endif
    }
}

}  // namespace eb
