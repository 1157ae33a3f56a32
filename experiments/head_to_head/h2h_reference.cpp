#include "experiments/head_to_head/h2h_reference.h"

#include "experiments/head_to_head/h2h_probe.h"
#include "solvers/common/timers.h"

namespace eb::head_to_head {

ReferenceSolution solve_reference(const Scene& s, double resolution, Backend backend, int threads,
                                  const std::filesystem::path& data_dir) {
  std::vector<std::string> ov = mesh_overrides(s, resolution);
  for (const char* o : {"time.mode=static", "static.tolerance=1e-8", "static.max_iterations=30",
                        "bcsr-pcg.static_cg_tolerance=1e-10", "bcsr-pcg.cg_max_iterations=100000"})
    ov.push_back(o);
  Scenario sc = scene_scenario(s, ov);
  const ResolvedMethod m = methods().resolve(sc, "bcsr-pcg", backend, Precision::Fp64);
  sc.solver.variant = m.entry->variant;
  RunOptions o;
  o.backend = backend;
  o.precision = Precision::Fp64;
  o.threads = threads;
  o.data_dir = data_dir;
  ReferenceSolution r;
  r.resolution = resolution;
  r.backend = to_string(backend);
  Stopwatch clock;
  auto sim = m.entry->factory(sc, o);
  sim->solve_static(1.0);
  r.seconds = clock.elapsed_ms() * 1e-3;
  const SolverStats st = sim->solver_stats();
  r.converged = st.step_converged().value_or(false) && !sim->validity().solver_failures;
  r.newton_iterations = st.outer_iterations;
  r.cg_iterations = st.iterations;
  r.elements = long(sim->connectivity().size() / 4);
  r.nodes = long(sim->nodes().size());
  std::vector<double> u, v;
  sim->copy_state_to_host(u, v);
  const ProbeBinding b = bind_probes(sc.output.probes, *sim);
  r.probe_names = b.names;
  r.probes = probe_displacements(b, u);
  r.outside = b.binding.outside;
  return r;
}

}  // namespace eb::head_to_head
