#include "solvers/bcsr_pcg/bcsr_pcg_simulation.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>

#include "meshes/errors.h"

namespace eb::bcsr_pcg {

std::string to_string(Phase p) { return phase_name(p); }

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::Rotation: return "rotation";
    case Phase::Matrix: return "matrix";
    case Phase::Update: return "update";
    case Phase::Solve: return "cg";
    case Phase::Integrate: return "integrate";
    case Phase::Increment: return "increment";
  }
  return "?";
}

std::string to_string(PhaseArray a) {
  switch (a) {
    case PhaseArray::u: return "u";
    case PhaseArray::v: return "v";
    case PhaseArray::sol: return "sol";
    case PhaseArray::R: return "R";
    case PhaseArray::local: return "local";
    case PhaseArray::local_rhs: return "local_rhs";
    case PhaseArray::matrix: return "matrix";
    case PhaseArray::rhs: return "rhs";
  }
  return "?";
}

BcsrPcgSimulation::BcsrPcgSimulation(BcsrPcgSetup setup, Backend backend, Precision precision)
    : MeshSimulation(mesh::CellType::Tetra), setup_(std::move(setup)), backend_(backend), precision_(precision) {
  bind_mesh(setup_.nodes, setup_.connectivity, setup_.fixed_any);
  counts_.det_f_checked = true;
  counts_.inverted_threshold = 0.0;
  load_factors_.assign(setup_.curves.size(), 0.0);
}

ElementCoefficients<double> BcsrPcgSimulation::dynamic_coefficients() const {
  const double dt = setup_.dt;
  ElementCoefficients<double> k;
  k.matrix_mass = setup_.density + dt * setup_.damping;
  k.rhs_mass = setup_.density;
  k.stiffness = dt * dt;
  k.rhs_force = dt;
  for (int d = 0; d < 3; ++d) k.body[d] = setup_.density * setup_.gravity[d];
  return k;
}

ElementCoefficients<double> BcsrPcgSimulation::static_coefficients(double load_factor) const {
  ElementCoefficients<double> k;
  k.matrix_mass = 0;
  k.rhs_mass = 0;
  k.stiffness = 1;
  k.rhs_force = 1;
  for (int d = 0; d < 3; ++d) k.body[d] = load_factor * setup_.density * setup_.gravity[d];
  k.twist = parse_static_tangent(setup_.options.static_tangent) ? 1.0 : 0.0;
  return k;
}

void BcsrPcgSimulation::set_load_time(double t, double scale) {
  for (size_t c = 0; c < setup_.curves.size(); ++c) load_factors_[c] = load_factor(setup_.curves[c], t);
  load_scale_ = scale;
}

void BcsrPcgSimulation::step_impl() {
  set_coefficients(dynamic_coefficients());
  // Eq. 4 takes the external force of step i, i.e. at the state's time.
  set_load_time(double(step_) * setup_.dt, setup_.dt);
  run_phase(Phase::Rotation);
  run_phase(Phase::Matrix);
  run_phase(Phase::Update);
  record_solve(run_phase(Phase::Solve));
  run_phase(Phase::Integrate);
}

void BcsrPcgSimulation::advance(int steps) {
  use_static_solver(false);
  for (int k = 0; k < steps; ++k) {
    // Fix (tests/bcsr_pcg/test_validity.cpp): this step's Rotation checks the state of step
    // step_ (ValidityCounts: "a step number names the state it produced"), which was labelled
    // step_ + 1, one step after the state that had the inverted element (hexmg and tled name the
    // state). The CUDA kernel labels the same way (k_rotation).
    checks_step_ = step_;
    step_impl();
    ++step_;
    if (counts_.nonfinite_steps > 0) break;  // the runner sees it through validity() and stops
  }
}

void BcsrPcgSimulation::solve_static(double load_factor) {
  use_static_solver(true);
  set_coefficients(static_coefficients(load_factor));
  // Static loads at full value times the factor: load curves do not apply (scenario.h).
  for (double& f : load_factors_) f = 1.0;
  load_scale_ = load_factor;
  ++step_;
  checks_step_ = step_;
  const size_t n = 3 * size_t(setup_.num_nodes);
  tet::StaticNewtonOptions o;
  o.spec = setup_.static_spec;
  o.forcing = tet::parse_forcing(setup_.options.static_forcing);
  o.cg_tolerance = setup_.options.static_cg_tolerance;
  o.cg_max_iterations = setup_.options.static_cg_max_iterations;
  o.unknowns = int64_t(n);
  o.line_search = setup_.options.static_line_search;
  o.residual_floor = tet::static_residual_floor(setup_, precision_ == Precision::Fp32 ? double(FLT_EPSILON) : DBL_EPSILON);
  std::vector<double> du;  // the last solve's increment
  double moved = 0;        // the part of du already added to u
  tet::StaticNewtonOps ops;
  ops.assemble = [&] {
    run_phase(Phase::Rotation);
    run_phase(Phase::Matrix);
    run_phase(Phase::Update);
    return rhs_norm();
  };
  ops.solve = [&](double tolerance, int max_iterations) {
    // The consistent tangent of an inverted or unconstrained state may have a non-positive
    // diagonal, which the Jacobi preconditioner refuses when the solver is rebuilt for a new
    // forcing term (InputError naming the row): that is a failed Newton step of this state (the
    // run becomes invalid, naming the step), not bad input.
    try {
      set_static_cg(tolerance, max_iterations);
    } catch (const InputError&) {
      linalg::CgResult failed;
      failed.status = linalg::CgStatus::Breakdown;
      return failed;
    }
    set_array(PhaseArray::sol, std::vector<double>(n, 0.0));
    const linalg::CgResult cg = run_phase(Phase::Solve);
    ++solves_;
    cg_iterations_total_ += cg.iterations;
    du = get_array(PhaseArray::sol);
    moved = 0;
    return cg;
  };
  // Increment adds sol to u: a full step adds du itself, a shortened one sol = alpha du.
  ops.move = [&](double alpha) {
    if (alpha != 1.0 || moved != 0.0) {
      std::vector<double> step(n);
      for (size_t i = 0; i < n; ++i) step[i] = alpha * du[i];
      set_array(PhaseArray::sol, step);
    }
    moved += alpha;
    run_phase(Phase::Increment);
  };
  ops.slope = [&] {
    const std::vector<double> r = get_array(PhaseArray::rhs);
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += r[i] * du[i];
    return s;
  };
  newton_trace_ = {};
  const SolverStats st = tet::static_newton(o, ops, &newton_trace_);
  if (!st.outer_converged.value_or(false)) {
    ++counts_.solver_failures;
    if (counts_.first_solver_failure_step < 0) counts_.first_solver_failure_step = step_;
  }
  stats_ = st;
  // The warm start of a later time step is the velocity, which a static solve leaves at 0.
  set_array(PhaseArray::sol, get_array(PhaseArray::v));
}

void BcsrPcgSimulation::record_state_checks(const ElementChecks& checks) {
  state_checks_ = checks;
  state_checks_step_ = step_;
}

ValidityCounts BcsrPcgSimulation::validity() const {
  ValidityCounts c = counts_;
  if (state_checks_step_ == step_) c.add(step_, state_checks_);
  return c;
}

void BcsrPcgSimulation::record_solve(const linalg::CgResult& r) {
  ++solves_;
  cg_iterations_total_ += r.iterations;
  SolverStats st;
  st.iterations = r.iterations;
  st.initial_residual = r.initial_residual();
  st.final_residual = r.final_residual();
  const bool tolerance_mode = setup_.options.cg_tolerance > 0;
  if (tolerance_mode) st.converged = r.converged();
  const bool failed = tolerance_mode ? !r.converged() : (r.status == linalg::CgStatus::Breakdown ||
                                                         r.status == linalg::CgStatus::NonFinite);
  if (failed) {
    ++counts_.solver_failures;
    if (counts_.first_solver_failure_step < 0) counts_.first_solver_failure_step = checks_step_;
  }
  stats_ = st;
}

WorkCounts BcsrPcgSimulation::work_per_step() const {
  const int it = setup_.options.cg_tolerance > 0 && solves_ > 0 ? int(std::lround(double(cg_iterations_total_) / solves_))
                                                            : setup_.options.cg_iterations;
  WorkCounts w;
  for (const PhaseWork& p : bcsr_pcg_phase_work(setup_, precision_, layout_entries_, index_bytes_, spmv_bytes_, it)) {
    w.flops += p.flops;
    w.bytes += p.bytes;
  }
  w.bytes_convention = BytesConvention::Compulsory;
  return w;
}

nlohmann::json BcsrPcgSimulation::details() const {
  nlohmann::json j = setup_.describe();
  j["backend"] = to_string(backend_);
  j["precision"] = to_string(precision_);
  j["cg"]["mean_iterations"] = solves_ > 0 ? double(cg_iterations_total_) / double(solves_) : 0.0;
  j["cg"]["solves"] = solves_;
  if (!newton_trace_.step.empty())
    j["static_newton"] = {{"forcing", newton_trace_.forcing},
                          {"step", newton_trace_.step},
                          {"residual", newton_trace_.residual},
                          {"backtracks", newton_trace_.backtracks},
                          {"residual_floor", newton_trace_.residual_floor}};
  const int it = setup_.options.cg_tolerance > 0 && solves_ > 0 ? int(std::lround(double(cg_iterations_total_) / solves_))
                                                            : setup_.options.cg_iterations;
  nlohmann::json work = nlohmann::json::object();
  for (const PhaseWork& p : bcsr_pcg_phase_work(setup_, precision_, layout_entries_, index_bytes_, spmv_bytes_, it))
    work[p.phase] = {{"flops", p.flops}, {"bytes", p.bytes}};
  j["phase_work"] = work;
  j["phase_work_convention"] = "compulsory bytes; FLOPs counted per element formula (PERF_NOTES.md)";
  j["layout"] = {{"entries", layout_entries_}, {"index_entries", index_entries_}, {"index_bytes", index_bytes_},
                 {"spmv_bytes", spmv_bytes_}};
  add_details(j);
  return j;
}

std::unique_ptr<BcsrPcgSimulation> make_bcsr_pcg_cpu_impl(const Scenario& sc, const RunOptions& o);
#if defined(ELASTOBENCH_HAVE_CUDA)
std::unique_ptr<BcsrPcgSimulation> make_bcsr_pcg_cuda_impl(const Scenario& sc, const RunOptions& o);
#endif

std::unique_ptr<BcsrPcgSimulation> make_bcsr_pcg(const Scenario& sc, const RunOptions& o) {
#if defined(ELASTOBENCH_HAVE_CUDA)
  if (o.backend == Backend::Cuda) return make_bcsr_pcg_cuda_impl(sc, o);
#else
  if (o.backend == Backend::Cuda) throw RuntimeFailure("bcsr-pcg: this build has no CUDA backend");
#endif
  return make_bcsr_pcg_cpu_impl(sc, o);
}

}  // namespace eb::bcsr_pcg
