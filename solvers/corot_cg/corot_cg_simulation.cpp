#include "solvers/corot_cg/corot_cg_simulation.h"

#include <cfloat>
#include <cmath>

#include "solvers/tet_model/static_newton.h"

#include "meshes/errors.h"

namespace eb::corot_cg {

const char* stage_name(Stage s) {
  switch (s) {
    case Stage::Forces: return "forces";
    case Stage::Solve: return "cg";
    case Stage::Integrate: return "integrate";
    case Stage::Mapping: return "mapping";
  }
  return "?";
}

CorotCgSimulation::CorotCgSimulation(CorotCgSetup setup, Backend backend, Precision precision)
    : MeshSimulation(mesh::CellType::Tetra), setup_(std::move(setup)), backend_(backend), precision_(precision) {
  bind_mesh(setup_.nodes, setup_.connectivity, setup_.fixed_any);
  counts_.det_f_checked = true;
  counts_.inverted_threshold = 0.0;
  curve_factors_.assign(setup_.curves.size(), 0.0);
}

void CorotCgSimulation::set_loads(double t, double scale, double gravity_scale, const std::optional<Impulse>& impulse) {
  for (size_t c = 0; c < setup_.curves.size(); ++c) curve_factors_[c] = scale * load_factor(setup_.curves[c], t);
  gravity_scale_ = gravity_scale;
  impulse_ = impulse;
}

void CorotCgSimulation::frame() {
  set_loads(double(step_) * setup_.dt, 1.0, 1.0, impulse_at(setup_.impulses, step_, setup_.num_nodes));
  if (impulse_) applied_impulses_.push_back(*impulse_);
  run_stage(Stage::Forces);
  record_solve(run_stage(Stage::Solve));
  run_stage(Stage::Integrate);
  if (setup_.render_vertices > 0) run_stage(Stage::Mapping);
}

void CorotCgSimulation::advance(int steps) {
  use_static_solver(false);
  set_coefficients(rayleigh_euler<double>(setup_.dt, setup_.rayleigh_mass, setup_.rayleigh_stiffness));
  for (int k = 0; k < steps; ++k) {
    // The Forces stage checks the state it starts from: the state of step step_.
    checks_step_ = step_;
    frame();
    ++step_;
    if (counts_.nonfinite_steps > 0) break;
  }
}

void CorotCgSimulation::solve_static(double load_factor) {
  use_static_solver(true);
  set_coefficients(static_coefficients<double>());
  set_loads(0.0, load_factor, load_factor, std::nullopt);
  // Static loads at full value times the factor: curves do not apply (scenario.h).
  for (double& f : curve_factors_) f = load_factor;
  ++step_;
  checks_step_ = step_;
  std::vector<double> zero(3 * size_t(setup_.num_nodes), 0.0);
  set_array(StageArray::v, zero);
  tet::StaticNewtonOptions o;
  o.spec = setup_.static_spec;
  o.forcing = tet::parse_forcing(setup_.options.static_forcing);
  o.cg_tolerance = setup_.options.static_cg_tolerance;
  o.cg_max_iterations = setup_.options.static_cg_max_iterations;
  o.unknowns = 3 * setup_.num_nodes;
  o.line_search = false;  // full steps: Integrate adds the whole increment
  o.residual_floor = tet::static_residual_floor(setup_, precision_ == Precision::Fp32 ? double(FLT_EPSILON) : DBL_EPSILON);
  tet::StaticNewtonOps ops;
  ops.assemble = [&] {
    run_stage(Stage::Forces);
    double r = 0;
    for (double x : get_array(StageArray::b)) r += x * x;
    return std::sqrt(r);
  };
  ops.solve = [&](double tolerance, int max_iterations) {
    set_static_cg(tolerance, max_iterations);
    const linalg::CgResult cg = run_stage(Stage::Solve);
    ++solves_;
    cg_iterations_total_ += cg.iterations;
    return cg;
  };
  ops.move = [&](double) { run_stage(Stage::Integrate); };  // static coefficients: u += dv, v stays 0
  ops.slope = [] { return 0.0; };
  const SolverStats st = tet::static_newton(o, ops);
  if (!st.outer_converged.value_or(false)) {
    ++counts_.solver_failures;
    if (counts_.first_solver_failure_step < 0) counts_.first_solver_failure_step = step_;
  }
  stats_ = st;
  set_array(StageArray::v, zero);
}

void CorotCgSimulation::record_solve(const linalg::CgResult& r) {
  ++solves_;
  cg_iterations_total_ += r.iterations;
  SolverStats st;
  st.iterations = r.iterations;
  st.initial_residual = r.initial_residual();
  st.final_residual = r.final_residual();
  last_residual_ = r.final_residual();
  // SOFA's CGLinearSolver (Table 5.1: 25 iterations, tolerance 1e-3) is a capped solve: it stops
  // at the tolerance or at its iteration count, and a frame that ends at the count goes on with
  // that iterate. So `converged` is left unset (SolverStats: the residual reached is the measure)
  // and details() counts the frames that met the tolerance; a breakdown or a non-finite residual
  // is a failure.
  if (r.converged()) ++tolerance_met_;
  if (r.status == linalg::CgStatus::Breakdown || r.status == linalg::CgStatus::NonFinite) {
    ++counts_.solver_failures;
    if (counts_.first_solver_failure_step < 0) counts_.first_solver_failure_step = checks_step_;
  }
  stats_ = st;
}

ValidityCounts CorotCgSimulation::validity() const { return counts_; }

WorkCounts CorotCgSimulation::work_per_step() const {
  const int it = solves_ > 0 ? int(std::lround(double(cg_iterations_total_) / double(solves_))) : setup_.options.cg_iterations;
  WorkCounts w;
  for (const StageWork& s : corot_cg_stage_work(setup_, backend_, precision_, it)) {
    w.flops += s.flops;
    w.bytes += s.bytes;
  }
  w.bytes_convention = BytesConvention::Compulsory;
  return w;
}

nlohmann::json CorotCgSimulation::details() const {
  nlohmann::json j = setup_.describe();
  j["backend"] = to_string(backend_);
  j["precision"] = to_string(precision_);
  j["cg"]["mean_iterations"] = solves_ > 0 ? double(cg_iterations_total_) / double(solves_) : 0.0;
  j["cg"]["solves"] = solves_;
  j["cg"]["last_residual"] = last_residual_;
  j["cg"]["solves_meeting_tolerance"] = tolerance_met_;
  const int it = solves_ > 0 ? int(std::lround(double(cg_iterations_total_) / double(solves_))) : setup_.options.cg_iterations;
  nlohmann::json work = nlohmann::json::object();
  for (const StageWork& s : corot_cg_stage_work(setup_, backend_, precision_, it)) work[s.stage] = {{"flops", s.flops}, {"bytes", s.bytes}};
  j["stage_work"] = work;
  j["cg_iteration_compulsory_bytes"] = cg_iteration_compulsory_bytes(setup_, backend_, precision_);
  nlohmann::json imp = nlohmann::json::array();
  for (const Impulse& i : applied_impulses_)
    imp.push_back({{"frame", i.frame}, {"node", i.node}, {"force", {i.force[0], i.force[1], i.force[2]}}});
  j["impulses_applied"] = imp;
  add_details(j);
  return j;
}

std::unique_ptr<CorotCgSimulation> make_corot_cg_cpu_impl(const Scenario& sc, const RunOptions& o);
#if defined(ELASTOBENCH_HAVE_CUDA)
std::unique_ptr<CorotCgSimulation> make_corot_cg_cuda_impl(const Scenario& sc, const RunOptions& o);
#endif

std::unique_ptr<CorotCgSimulation> make_corot_cg(const Scenario& sc, const RunOptions& o) {
#if defined(ELASTOBENCH_HAVE_CUDA)
  if (o.backend == Backend::Cuda) return make_corot_cg_cuda_impl(sc, o);
#else
  if (o.backend == Backend::Cuda) throw RuntimeFailure("corot-cg: this build has no CUDA backend");
#endif
  return make_corot_cg_cpu_impl(sc, o);
}

std::unique_ptr<Simulation> make_corot_cg_cpu(const Scenario& sc, const RunOptions& o) { return make_corot_cg_cpu_impl(sc, o); }

}  // namespace eb::corot_cg
