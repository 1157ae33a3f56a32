#include "experiments/head_to_head/nl_runs.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include "experiments/head_to_head/nl_probes.h"
#include "solvers/common/boundary.h"
#include "solvers/common/registry.h"
#include "solvers/common/results.h"
#include "solvers/common/validity.h"
#include "solvers/tled/exact_solution.h"

namespace eb::head_to_head {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Mass damping of tled's central difference as strbac2015 runs the cube (Eq. 5): light enough
// to leave the quasi-static answer unchanged, strong enough to settle the waves the loading starts.
const char* kTledConvergenceRate = "tled.convergence_rate=0.999";
// Mass damping of tled's dynamic relaxation on the block (NlScene::relax_time says why).
constexpr double kRelaxDamping = 300.0;
// The block's explicit step, below the default 0.8 of the stable step: at 48 elements per edge
// and 0.8 the fp64 relaxation inverted an element at step 524 (t = 0.041 s) and diverged, with
// or without hourglass control; at 0.5 it stays valid (min det F 0.931).
constexpr double kRelaxCourant = 0.5;

}  // namespace

NlScene cube_scene() {
  NlScene s;
  s.name = "cube";
  s.description = "cube-compression: 50 mm quarter cube, 20% compression over 5 s, laterally free (homogeneous)";
  s.probes = {{0.05, 0.05, 0.05}, {0.05, 0.025, 0.025}, {0.025, 0.05, 0.0375}, {0.0375, 0.0375, 0.0125}};
  s.exact = true;
  return s;
}

NlScene block_scene() {
  NlScene s;
  s.name = "block";
  s.description =
      "the cube's quarter block and material without the top plate, sagging under its own weight at 200 m/s^2 "
      "(about 20 g; bottom on a frictionless plane, lateral faces free): a smooth inhomogeneous large-strain "
      "state, static equilibrium";
  s.overrides = {"boundary.prescribed=[]", "boundary.gravity=[0.0, 0.0, -200.0]"};
  // Material points of the body, not its top corner: there the two free vertical faces meet the
  // free top and the linear tetrahedra converge slowest, so a probe there would measure that
  // corner alone.
  s.probes = {{0.05, 0.05, 0.0}, {0.05, 0.025, 0.025}, {0.025, 0.025, 0.05}, {0.0375, 0.0375, 0.0375},
              {0.0, 0.0, 0.025}};
  s.relax = true;
  // Mass damping alpha makes every under-damped mode decay as exp(-alpha t / 2); the slowest mode
  // (axial, period ~4 H / sqrt(E / rho) = 36 ms) is near critical at alpha = 300 1/s, and 0.2 s
  // leaves exp(-30) of the initial transient.
  s.relax_time = 0.2;
  return s;
}

double cecka_lateral_stretch(double mu, double lambda, double axial) {
  double lo = 1e-3, hi = 1e3;
  for (int it = 0; it < 200; ++it) {
    const double l = 0.5 * (lo + hi);
    const double g = mu * l * l + lambda * std::log(l * l * axial) - mu;  // l P_xx
    (g > 0 ? hi : lo) = l;
  }
  return 0.5 * (lo + hi);
}

std::vector<mesh::Vec3> exact_probes(const NlScene& scene, const std::string& method) {
  const Scenario sc = load_scenario("cube-compression", scene.overrides);
  const ElasticConstants ec = elastic_constants(sc.material);
  const double axial = 1.0 + sc.boundary.prescribed.at(0).displacement[2] / sc.mesh.size[2];
  const double lateral = method == "nr-neohookean" ? cecka_lateral_stretch(ec.mu, ec.lambda, axial)
                                                   : tled::uniaxial_neo_hookean(ec.mu, ec.bulk, axial).lateral_stretch;
  std::vector<mesh::Vec3> out;
  for (const auto& p : scene.probes) out.push_back({(lateral - 1) * p[0], (lateral - 1) * p[1], (axial - 1) * p[2]});
  return out;
}

std::string NlSetting::label() const {
  std::ostringstream o;
  o << method << "_n" << per_edge;
  if (method == "nr-neohookean") o << "_ls" << load_steps << "_tol" << tolerance;
  if (steps > 0) o << "_steps" << steps;
  return o.str();
}

std::string nl_variant(const std::string& method, Backend backend) {
  if (method == "nr-neohookean" && backend == Backend::Cuda) return "globalnz";
  return methods().info(method).variants.front().name;
}

namespace {

std::unique_ptr<Simulation> make_nl(const NlScene& scene, const NlSetting& setting, Backend backend,
                                    Precision precision, int threads, const std::filesystem::path& data_dir) {
  std::vector<std::string> o = scene.overrides;
  o.push_back("mesh.elements_per_edge=" + std::to_string(setting.per_edge));
  o.push_back("output.probe_every=0");
  const bool nr = setting.method == "nr-neohookean";
  if (nr) {
    o.push_back("time.mode=\"static\"");
    o.push_back("static.load_steps=" + std::to_string(setting.load_steps));
    o.push_back("static.tolerance=" + CsvTable::num(setting.tolerance));
    o.push_back("static.max_iterations=40");
    // CG well below the Newton tolerance, so that Newton converges at its own rate.
    o.push_back("nr-neohookean.cg_tolerance=" + CsvTable::num(std::min(1e-6, setting.tolerance * 1e-2)));
  } else if (scene.relax) {
    o.push_back("time.damping=" + CsvTable::num(kRelaxDamping));
    o.push_back("time.courant=" + CsvTable::num(kRelaxCourant));
    o.push_back("time.end_time=" + CsvTable::num(scene.relax_time));
  } else {
    o.push_back(kTledConvergenceRate);
  }
  Scenario sc = load_scenario("cube-compression", o);
  const std::string variant = nl_variant(setting.method, backend);
  sc.solver.variant = variant;
  RunOptions opt;
  opt.backend = backend;
  opt.precision = precision;
  opt.threads = threads;
  opt.data_dir = data_dir;
  return methods().find(setting.method, variant, backend, precision).factory(sc, opt);
}

long element_count(const Simulation& sim) {
  return long(sim.connectivity().size() / (sim.cell_type() == mesh::CellType::Tetra ? 4 : 8));
}

}  // namespace

NlRun run_nl(const NlScene& scene, const NlSetting& setting, Backend backend, Precision precision, int threads,
             const std::filesystem::path& data_dir, double stop_after_s) {
  const bool nr = setting.method == "nr-neohookean";
  NlRun r;
  const auto t0 = Clock::now();
  std::unique_ptr<Simulation> sim = make_nl(scene, setting, backend, precision, threads, data_dir);
  r.setup_s = seconds_since(t0);
  const double end_time = scene.relax ? scene.relax_time : load_scenario("cube-compression", {}).time.end_time;
  r.elements = element_count(*sim);
  ValidityTracker tracker(bounding_box_diagonal(sim->nodes()), nr ? 0.0 : sim->dt());
  std::vector<double> u, v;
  if (nr) {
    r.steps = setting.load_steps;
    double solve_s = 0;
    for (int k = 1; k <= setting.load_steps; ++k) {
      const auto t1 = Clock::now();
      sim->solve_static(double(k) / setting.load_steps);
      solve_s += seconds_since(t1);
      const SolverStats st = sim->solver_stats();
      r.newton_iterations += st.outer_iterations;
      r.cg_iterations += st.iterations;
      tracker.check_solver(k, st);
      tracker.set_method_counts(sim->validity());
      if (tracker.diverged()) break;
      if (stop_after_s > 0 && solve_s > stop_after_s && k < setting.load_steps) {
        r.stopped = true;
        break;
      }
    }
    r.wall_s = solve_s;
  } else {
    r.dt = sim->dt();
    r.steps = setting.steps > 0 ? setting.steps : long(std::ceil(end_time / r.dt - 1e-9));
    const auto t1 = Clock::now();
    if (stop_after_s > 0) {
      const long piece = std::max(1L, r.steps / 20);
      for (long k = 0; k < r.steps;) {
        const long n = std::min(piece, r.steps - k);
        sim->advance(int(n));
        k += n;
        if (seconds_since(t1) > stop_after_s && k < r.steps) {
          r.stopped = true;
          break;
        }
      }
    } else {
      sim->advance(int(r.steps));
    }
    r.wall_s = seconds_since(t1);
    tracker.set_method_counts(sim->validity());
  }
  sim->copy_state_to_host(u, v);
  tracker.check_state(r.steps, u, v);
  r.valid = tracker.valid();
  r.validity = r.valid ? "valid" : "invalid: " + tracker.reasons().front();
  const ProbeInterpolator probes(sim->nodes(), sim->cell_type(), sim->connectivity(), scene.probes);
  r.probes = probes.interpolate(u);
  return r;
}

}  // namespace eb::head_to_head

namespace eb::head_to_head {

long RelaxHistory::steps_to(double target) const {
  long first = 0;
  for (size_t k = error.size(); k-- > 0;) {
    if (!(error[k] <= target)) break;
    first = steps[k];
  }
  return first;
}

RelaxHistory relax_history(const NlScene& scene, const NlSetting& setting, const std::vector<mesh::Vec3>& ref,
                           const std::filesystem::path& data_dir, int threads) {
  RelaxHistory h;
  NlRun& r = h.run;
  const auto t0 = Clock::now();
  std::unique_ptr<Simulation> sim = make_nl(scene, setting, Backend::Cpu, Precision::Fp64, threads, data_dir);
  r.setup_s = seconds_since(t0);
  r.elements = element_count(*sim);
  r.dt = sim->dt();
  r.steps = long(std::ceil(scene.relax_time / r.dt - 1e-9));
  ValidityTracker tracker(bounding_box_diagonal(sim->nodes()), r.dt);
  const ProbeInterpolator probes(sim->nodes(), sim->cell_type(), sim->connectivity(), scene.probes);
  std::vector<double> u, v;
  const long chunk = std::max(1L, r.steps / 200);
  const auto t1 = Clock::now();
  for (long k = 0; k < r.steps;) {
    const long n = std::min(chunk, r.steps - k);
    sim->advance(int(n));
    k += n;
    sim->copy_state_to_host(u, v);
    tracker.check_state(k, u, v);
    tracker.set_method_counts(sim->validity());
    if (tracker.diverged()) break;
    h.steps.push_back(k);
    h.error.push_back(max_relative_error(probes.interpolate(u), ref));
  }
  r.wall_s = seconds_since(t1);
  r.valid = tracker.valid();
  r.validity = r.valid ? "valid" : "invalid: " + tracker.reasons().front();
  r.probes = probes.interpolate(u);
  return h;
}

}  // namespace eb::head_to_head
