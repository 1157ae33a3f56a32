// The Newton loop of nr-neohookean, written once against NrEngine (nr_neohookean_simulation.h).
#include "solvers/nr_neohookean/nr_neohookean_simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <omp.h>

#include "meshes/errors.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/load_curve.h"

namespace eb::nr_neohookean {

NrSimulation::NrSimulation(NrSetup setup, Backend backend, Precision precision)
    : MeshSimulation(mesh::CellType::Tetra), setup_(std::move(setup)), backend_(backend), precision_(precision) {
  bind_mesh(setup_.nodes, setup_.connectivity, setup_.fixed_any);
  counts_.det_f_checked = true;
  counts_.inverted_threshold = 0.0;
}

std::vector<double> NrSimulation::external_force(double t, double static_factor) const {
  const size_t N = size_t(setup_.num_nodes);
  std::vector<double> f(3 * N, 0.0);
  const double g = static_factor >= 0 ? static_factor : 1.0;
  for (size_t n = 0; n < N; ++n)
    for (int d = 0; d < 3; ++d) f[3 * n + size_t(d)] = g * setup_.node_mass[n] * setup_.gravity[d];
  for (const tet::NodeLoad& l : setup_.loads) {
    const double s = static_factor >= 0 ? static_factor : load_factor(setup_.curves[size_t(l.curve)], t);
    for (int d = 0; d < 3; ++d) f[3 * size_t(l.node) + size_t(d)] += s * l.force[d];
  }
  for (size_t n = 0; n < N; ++n)
    for (int d = 0; d < 3; ++d)
      if (setup_.constrained[n] >> d & 1) f[3 * n + size_t(d)] = 0.0;
  return f;
}

void NrSimulation::prescribed_positions(double t, double static_factor, std::vector<int32_t>& dof,
                                        std::vector<double>& val) const {
  dof.clear();
  val.clear();
  for (const PrescribedNode& p : setup_.prescribed) {
    const double s = static_factor >= 0 ? static_factor : load_factor(setup_.curves[size_t(p.curve)], t);
    const mesh::Vec3& X = setup_.nodes[size_t(p.node)];
    for (int d = 0; d < 3; ++d)
      if (p.mask >> d & 1) {
        dof.push_back(3 * p.node + d);
        val.push_back(X[size_t(d)] + s * p.displacement[size_t(d)]);
      }
  }
}

void NrSimulation::record_failure(const StepRecord& r) {
  if (r.converged) return;
  ++counts_.solver_failures;
  if (counts_.first_solver_failure_step < 0) counts_.first_solver_failure_step = r.step;
}

WorkCounts NrSimulation::work_per_step() const {
  WorkCounts w;
  if (steps_total_ == 0) return w;
  const double steps = double(steps_total_), n = double(3 * setup_.num_nodes), t = double(value_bytes());
  const double assemblies = double(assemblies_) / steps, cg = double(cg_iterations_total_) / steps;
  const double newton = double(newton_total_) / steps;
  const AssemblyWork a = assembly_work();
  const double nnz = double(setup_.pattern.nnz());
  w.flops = assemblies * a.flops + cg * (2 * nnz + 13 * n) + newton * 10 * n;
  w.bytes = assemblies * a.bytes + cg * (spmv_bytes() + 13 * n * t) + newton * 8 * n * t;
  w.bytes_convention = BytesConvention::Compulsory;
  return w;
}

nlohmann::json NrSimulation::details() const {
  nlohmann::json j = setup_.describe();
  j["backend"] = to_string(backend_);
  j["precision"] = to_string(precision_);
  j["cg_configuration"] = cg_name();
  const double steps = double(std::max<int64_t>(1, steps_total_));
  j["mean_newton_iterations"] = double(newton_total_) / steps;
  j["mean_cg_iterations_per_step"] = double(cg_iterations_total_) / steps;
  j["assemblies"] = assemblies_;
  int64_t failed = 0, at_rounding = 0;
  for (const auto& r : history_) {
    failed += r.converged ? 0 : 1;
    at_rounding += r.at_rounding ? 1 : 0;
  }
  j["failed_steps"] = failed;
  j["steps_converged_at_rounding"] = at_rounding;
  nlohmann::json laps = nlohmann::json::array();
  for (const auto& [name, s] : setup_seconds()) laps.push_back({{"stage", name}, {"seconds", s}});
  j["setup_s"] = laps;
  return j;
}

std::size_t NrSimulation::device_bytes() const { return 0; }

namespace {

template <class T>
class NrSim final : public NrSimulation {
 public:
  NrSim(NrSetup setup, Backend backend, Precision precision, int threads, int device, std::size_t gpu_memory_limit)
      : NrSimulation(std::move(setup), backend, precision), threads_(threads) {
    SetupLaps laps;
    in_ = make_engine_input<T>(setup_, threads, device);
    in_->problem.gpu_memory_limit = gpu_memory_limit;
    EngineInput<T>& in = *in_;
    const size_t N = size_t(setup_.num_nodes);
    omp_set_num_threads(threads);
#if defined(ELASTOBENCH_HAVE_CUDA)
    if (backend == Backend::Cuda)
      engine_ = make_cuda_engine<T>(in, threads, device);
    else
#endif
      engine_ = make_host_engine<T>(in, threads);
    laps.lap("engine");
    std::vector<double> X(3 * N);
    for (size_t n = 0; n < N; ++n)
      for (int d = 0; d < 3; ++d) X[3 * n + size_t(d)] = setup_.nodes[n][size_t(d)];
    engine_->upload(Vec::PhiK, X);
    engine_->upload(Vec::Phi, X);
    engine_->upload(Vec::P, std::vector<double>(3 * N, 0.0));
    laps.lap("state");
    // The format's bytes at T: the fp64 figure less the narrower values (padding included in both).
    const double format_bytes =
        double(setup_.format_bytes_fp64) - double(setup_.map.value_count) * double(sizeof(double) - sizeof(T));
    spmv_bytes_ = format_bytes + 2.0 * double(3 * N) * sizeof(T);
    engine_laps_ = laps.laps();
  }

  std::vector<std::pair<std::string, double>> setup_seconds() const override {
    std::vector<std::pair<std::string, double>> all = setup_.setup_s;
    for (const auto& [name, s] : engine_laps_) {
      if (name == "engine")
        for (const auto& [sub, t] : engine_->strategy().setup_seconds()) all.push_back({"engine: " + sub, t});
      all.push_back({name, s});
    }
    return all;
  }

  void advance(int steps) override {
    omp_set_num_threads(threads_);
    for (int s = 0; s < steps; ++s) dynamic_step();
  }

  void solve_static(double factor) override {
    omp_set_num_threads(threads_);
    StepRecord rec;
    rec.step = step_ + 1;
    set_fext(external_force(0, factor));
    std::vector<int32_t> dof;
    std::vector<double> val;
    prescribed_positions(0, factor, dof, val);
    engine_->copy(Vec::Phi, Vec::PhiK);
    engine_->set_entries(Vec::Phi, dof, val);
    ElementChecks checks = engine_->assemble(Vec::Phi, 1.0, 0.0);
    ++assemblies_;
    const int max_it = setup_.static_spec.max_iterations;
    newton(rec, checks, [&] { return engine_->residual_static(); }, [&] { return engine_->assemble(Vec::Phi, 1.0, 0.0); },
           [&](double r, double r0) { return r <= setup_.static_spec.tolerance * r0 || r == 0.0; }, max_it);
    engine_->copy(Vec::PhiK, Vec::Phi);
    engine_->upload(Vec::P, std::vector<double>(size_t(3 * setup_.num_nodes), 0.0));
    finish_record(rec, checks);
    flush_times();
  }

  void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) override {
    const std::vector<double> phi = engine_->download(Vec::PhiK), p = engine_->download(Vec::P);
    const size_t N = size_t(setup_.num_nodes);
    u.resize(3 * N);
    v.resize(3 * N);
    for (size_t n = 0; n < N; ++n)
      for (int d = 0; d < 3; ++d) {
        u[3 * n + size_t(d)] = phi[3 * n + size_t(d)] - setup_.nodes[n][size_t(d)];
        v[3 * n + size_t(d)] = p[3 * n + size_t(d)] / setup_.node_mass[n];
      }
  }

  void set_state(const std::vector<double>& u, const std::vector<double>& v) override {
    const size_t N = size_t(setup_.num_nodes);
    std::vector<double> phi(3 * N), p(3 * N);
    for (size_t n = 0; n < N; ++n)
      for (int d = 0; d < 3; ++d) {
        phi[3 * n + size_t(d)] = setup_.nodes[n][size_t(d)] + u[3 * n + size_t(d)];
        p[3 * n + size_t(d)] = setup_.node_mass[n] * v[3 * n + size_t(d)];
      }
    engine_->upload(Vec::PhiK, phi);
    engine_->upload(Vec::Phi, phi);
    engine_->upload(Vec::P, p);
  }

  void assemble_at(const std::vector<double>& positions, std::vector<double>& values,
                   std::vector<double>& force) override {
    const std::vector<double> keep = engine_->download(Vec::Mid);
    engine_->upload(Vec::Mid, positions);
    engine_->assemble(Vec::Mid, 1.0, 0.0);
    values = engine_->tangent_values();
    force = engine_->download(Vec::Force);
    engine_->upload(Vec::Mid, keep);
    engine_->take_times();
  }

  double time_spmv_ms(int repeats) override { return engine_->time_spmv_ms(repeats); }
  std::string cg_name() const override { return engine_->describe_cg(); }
  AssemblyWork assembly_work() const override { return engine_->strategy().work(); }
  double spmv_bytes() const override { return spmv_bytes_; }
  std::size_t value_bytes() const override { return sizeof(T); }
  std::size_t device_bytes() const override { return engine_->device_bytes(); }

 private:
  void set_fext(const std::vector<double>& f) {
    if (f == last_fext_) return;
    engine_->upload(Vec::Fext, f);
    last_fext_ = f;
  }

  // The Newton iteration from an assembled state: residual, convergence test, CG, step with
  // halving while the step inverts an element. `checks` ends as the accepted state's.
  template <class Residual, class Assemble, class Converged>
  void newton(StepRecord& rec, ElementChecks& checks, Residual residual, Assemble assemble, Converged converged,
              int max_iterations) {
    const int min_iterations = setup_.options.nr_min_iterations;
    if (checks.inverted > 0 || checks.first_nonfinite >= 0) {
      rec.failure = checks.inverted > 0 ? "inverted element " + std::to_string(checks.first_inverted) + " at the start"
                                        : "non-finite element " + std::to_string(checks.first_nonfinite);
      return;
    }
    ElementChecks blocked;   // the last trial state that inverted an element
    double last_alpha = 0;   // the last accepted update was last_alpha Prev
    double r = residual();
    const double r0 = r;
    rec.residuals.push_back(r);
    // The residual cannot fall below its rounding, about eps x the element forces that cancel in
    // each nodal sum: a body at rest has steps whose first residual is already near that floor,
    // where a relative tolerance (or an absolute one under the floor) is never met and Newton
    // would spend nr_max_iterations on noise (the cantilever settled under backward Euler: 30
    // iterations at 1.3e-10 per step). Such a step is converged once an update stops halving the
    // residual while it lies below sqrt(eps) x the run's load scale (the largest first residual
    // so far): quadratic Newton does not stall above its floor, and a stall far above the floor
    // still fails.
    if (std::isfinite(r0)) load_scale_ = std::max(load_scale_, r0);
    const double floor = std::sqrt(double(std::numeric_limits<T>::epsilon())) * load_scale_;
    for (int it = 0;; ++it) {
      if (!std::isfinite(r)) {
        rec.failure = "non-finite residual";
        return;
      }
      if ((it >= min_iterations || r == 0.0) && converged(r, r0)) {
        rec.converged = true;
        return;
      }
      const size_t nr = rec.residuals.size();
      if (it >= std::max(1, min_iterations) && nr >= 2 && r <= floor && r > 0.5 * rec.residuals[nr - 2]) {
        rec.converged = rec.at_rounding = true;
        return;
      }
      if (it == max_iterations) {
        rec.failure = "no convergence in " + std::to_string(max_iterations) + " Newton iterations";
        // Updates were halved because they inverted elements: the solution this step was heading
        // for inverts them, so the step's validity counts that inversion (not the state kept).
        if (blocked.inverted > 0) {
          checks = blocked;
          rec.failure += " (updates halved: they invert element " + std::to_string(blocked.first_inverted) + ")";
        }
        return;
      }
      const linalg::CgResult cg = engine_->solve();
      rec.cg_iterations.push_back(cg.iterations);
      cg_iterations_total_ += cg.iterations;
      if (cg.status == linalg::CgStatus::NonFinite || cg.status == linalg::CgStatus::Breakdown) {
        // The tangent is not positive definite here (an element sheared or compressed so far that
        // the neo-Hookean tangent loses definiteness): go back half of the last update, as for an
        // inverting one, and solve again from there.
        if (last_alpha == 0 || rec.halvings >= setup_.options.max_step_halvings) {
          rec.failure = "CG " + linalg::to_string(cg.status);
          if (blocked.inverted > 0) checks = blocked;
          return;
        }
        engine_->copy(Vec::Dx, Vec::Prev);
        last_alpha *= 0.5;
        engine_->step(-last_alpha);
        checks = assemble();
        ++assemblies_;
        ++rec.halvings;
        r = residual();
        rec.residuals.push_back(r);
        continue;
      }
      stats_.converged = cg.converged();
      stats_.initial_residual = cg.initial_residual();
      stats_.final_residual = cg.final_residual();
      double alpha = 1.0;
      for (int h = 0;; ++h) {
        engine_->step(alpha);
        checks = assemble();
        ++assemblies_;
        if (checks.inverted == 0 && checks.first_nonfinite < 0) break;
        blocked = checks;
        engine_->step(-alpha);
        if (h == setup_.options.max_step_halvings) {
          // The step fails: the state stays the last one without inversion (reassembled, so the
          // engine's arrays describe it), and the step's validity counts the inversion that
          // every Newton update would have made.
          const ElementChecks inverted = checks;
          assemble();
          ++assemblies_;
          checks = inverted;
          rec.failure = "every halving of the Newton step inverts element " + std::to_string(checks.first_inverted);
          return;
        }
        alpha *= 0.5;
        ++rec.halvings;
      }
      engine_->copy(Vec::Prev, Vec::Dx);
      last_alpha = alpha;
      r = residual();
      rec.residuals.push_back(r);
    }
  }

  void dynamic_step() {
    const double dt = setup_.dt, c = setup_.mass_damping;
    const bool midpoint = setup_.options.integrator == "midpoint";
    StepRecord rec;
    rec.step = step_ + 1;
    // Midpoint (Eq. 4): h(phi) = m (phi - phi^k)(1/dt + c/2) + dt/2 (f((phi + phi^k)/2) - f_ext(t + dt/2)),
    // p^{k+1} = 2 m (phi - phi^k)/dt - p^k. Backward Euler: m (phi - phi^k)(1/dt + c) + dt (f(phi) -
    // f_ext(t + dt)), p^{k+1} = m (phi - phi^k)/dt. Newton solves p^k = h(phi) with h's exact
    // derivative as the tangent; the prescribed motion is taken at the step's end in both.
    set_fext(external_force((double(step_) + (midpoint ? 0.5 : 1.0)) * dt, -1));
    std::vector<int32_t> dof;
    std::vector<double> val;
    prescribed_positions(double(step_ + 1) * dt, -1, dof, val);
    const double mass_coef = midpoint ? 1 / dt + c / 2 : 1 / dt + c, force_coef = midpoint ? dt / 2 : dt;
    auto assemble = [&] {
      if (!midpoint) return engine_->assemble(Vec::Phi, dt, mass_coef);
      engine_->midpoint();
      return engine_->assemble(Vec::Mid, dt / 4, mass_coef);
    };
    engine_->predict(dt);
    engine_->set_entries(Vec::Phi, dof, val);
    ElementChecks checks = assemble();
    ++assemblies_;
    if (checks.inverted > 0) {  // the explicit predictor went too far: start from phi^k
      engine_->copy(Vec::Phi, Vec::PhiK);
      engine_->set_entries(Vec::Phi, dof, val);
      checks = assemble();
      ++assemblies_;
    }
    const double tol = setup_.nr_tolerance, rel = setup_.options.nr_relative_tolerance;
    newton(rec, checks, [&] { return engine_->residual_dynamic(mass_coef, force_coef); }, assemble,
           [&](double r, double r0) { return r <= tol || (rel > 0 && r <= rel * r0); },
           setup_.options.nr_max_iterations);
    engine_->finish_dynamic(midpoint ? 2 / dt : 1 / dt, midpoint ? 1.0 : 0.0);
    finish_record(rec, checks);
    flush_times();
  }

  // The step's stage times, every stage every step (0 where it did not run), so that the phases
  // stay aligned with the step counter.
  void flush_times() {
    const StageTimes t = engine_->take_times();
    for (const char* stage : {"nr", "assembly", "cg", "transfer"}) {
      auto it = t.find(stage);
      timings_.add(stage, it == t.end() ? 0.0 : it->second);
    }
  }

  void finish_record(StepRecord& rec, const ElementChecks& checks) {
    ++step_;
    ++steps_total_;
    counts_.add(step_, checks);
    const int newton_its = int(rec.cg_iterations.size());
    newton_total_ += newton_its;
    stats_.outer_iterations = newton_its;
    stats_.outer_initial_residual = rec.residuals.empty() ? 0.0 : rec.residuals.front();
    stats_.outer_final_residual = rec.residuals.empty() ? 0.0 : rec.residuals.back();
    stats_.outer_converged = rec.converged;
    stats_.inner_per_outer = rec.cg_iterations;
    stats_.iterations = 0;
    for (int k : rec.cg_iterations) stats_.iterations += k;
    if (newton_its == 0) {  // converged before any solve: the one-level view is empty
      stats_.initial_residual = stats_.final_residual = 0;
      stats_.converged.reset();
    }
    record_failure(rec);
    history_.push_back(std::move(rec));
  }

  int threads_;
  double load_scale_ = 0;  // the largest first Newton residual of the run (the rounding floor's scale)
  double spmv_bytes_ = 0;  // the format's arrays, x and y once
  std::unique_ptr<EngineInput<T>> in_;
  std::unique_ptr<NrEngine<T>> engine_;
  std::vector<std::pair<std::string, double>> engine_laps_;
};

}  // namespace

std::unique_ptr<NrSimulation> make_nr_simulation(const Scenario& sc, const RunOptions& o) {
  NrSetup s = build_nr_setup(sc, o);
  const int threads = o.threads > 0 ? o.threads : omp_get_num_procs();
#if !defined(ELASTOBENCH_HAVE_CUDA)
  if (o.backend == Backend::Cuda) throw RuntimeFailure("nr-neohookean: this build has no CUDA backend");
#else
  if (o.backend == Backend::Cuda) {
    // An early refusal before the strategy's plan is built; the strategy checks its own bytes
    // with these once it has (AssemblyProblem::device_reserve_bytes).
    require_device_memory(double(estimate_cuda_engine_bytes(s, o.precision, false)),
                          "nr-neohookean cuda " + to_string(o.precision), o.device, o.gpu_memory_limit);
  }
#endif
  if (o.precision == Precision::Fp32)
    return std::make_unique<NrSim<float>>(std::move(s), o.backend, o.precision, threads, o.device, o.gpu_memory_limit);
  return std::make_unique<NrSim<double>>(std::move(s), o.backend, o.precision, threads, o.device, o.gpu_memory_limit);
}

std::unique_ptr<Simulation> make_nr_neohookean(const Scenario& sc, const RunOptions& o) { return make_nr_simulation(sc, o); }

#if defined(ELASTOBENCH_HAVE_CUDA)
std::size_t estimate_device_bytes(const Scenario& sc, const RunOptions& o) {
  return estimate_cuda_engine_bytes(build_nr_setup(sc, o), o.precision);
}
#endif

}  // namespace eb::nr_neohookean
