#include "solvers/common/runner.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "meshes/errors.h"
#include "meshes/mesh_spec.h"
#include "solvers/common/boundary.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/progress.h"
#include "solvers/common/registry.h"
#include "solvers/common/results.h"
#include "solvers/common/run_output.h"
#include "solvers/common/solver_summary.h"
#include "solvers/common/validity.h"

namespace eb {
namespace {

const char* kNonFinite = "non-finite state";

void check_request(const RunRequest& req, const Scenario& sc) {
  if (req.steps == 0 || req.steps < -1) throw InputError("the step count must be > 0 (got " + std::to_string(req.steps) + ")");
  if (req.vtk_every < -1) throw InputError("the VTK interval must be >= 0 (got " + std::to_string(req.vtk_every) + ")");
  if (req.options.threads < 0)
    throw InputError("the thread count must be >= 0 (got " + std::to_string(req.options.threads) + ")");
  if (is_static(sc) && req.steps > 0)
    throw InputError("a step count applies to time stepping; a static run (time.mode = \"static\") takes "
                     "static.load_steps (e.g. --set static.load_steps=" + std::to_string(req.steps) + ")");
  if (is_static(sc) && req.warmup_steps >= 0)
    throw InputError("warm-up steps apply to time stepping; a static run times every load step");
}

double loads_complete_time(const BoundarySpec& b) {
  double t = 0.0;
  auto take = [&](const LoadCurve& c) { t = std::max(t, c.start + (c.shape == "step" ? 0.0 : c.duration)); };
  for (const auto& p : b.prescribed) take(p.curve);
  for (const auto& p : b.point_forces) take(p.curve);
  for (const auto& p : b.surface_forces) take(p.curve);
  return t;
}

// When a time-stepping run stops, how much of it is warm-up and how often it is sampled.
struct StepPlan {
  long total = 0;
  std::string rule;  // what set `total`
  bool until_rest = false;
  double rest_after = 0.0;  // s: the loads are fully on
  long warmup = 0;
  long sample_every = 1;
};

StepPlan plan_steps(const RunRequest& req, const Scenario& sc, double dt) {
  StepPlan p;
  if (req.steps > 0) {
    p.total = req.steps;
    p.rule = "steps (command line)";
  } else if (sc.time.steps > 0) {
    p.total = sc.time.steps;
    p.rule = "time.steps";
  } else if (sc.time.end_time > 0) {
    p.total = long(std::ceil(sc.time.end_time / dt - 1e-9));
    p.rule = "time.end_time";
  } else {
    p.total = sc.time.max_steps;
    p.rule = "time.max_steps";
  }
  if (p.total > sc.time.max_steps) {
    p.total = sc.time.max_steps;
    p.rule = "time.max_steps";
  }
  p.until_rest = sc.time.until_rest && req.steps <= 0;
  p.rest_after = loads_complete_time(sc.boundary);
  p.warmup = req.warmup_steps >= 0 ? std::min<long>(req.warmup_steps, p.total - 1) : std::min<long>(10, p.total / 10);
  p.sample_every = sc.output.probe_every > 0 ? sc.output.probe_every : std::max<long>(1, p.total / 200);
  return p;
}

// Reads the state a step produced, checks it and records it: a timeseries.csv row, the solver
// statistics of the step's solve, a VTK frame.
class Sampler {
 public:
  Sampler(Simulation& sim, ValidityTracker& validity, FrameWriter& frames, const std::vector<Probe>& probes,
          long vtk_every, bool static_run)
      : sim_(sim), validity_(validity), frames_(frames), probes_(probes), vtk_every_(vtk_every), static_(static_run),
        series_(columns(probes, static_run)) {}

  // `time` is the load factor in a static run, which also gives the load step's solve time.
  // A frame is written when `frame` is set, on the VTK interval, and for a non-finite state
  // (it shows where the run went wrong). Returns false when the state is non-finite.
  bool sample(long step, double time, bool frame, double solve_ms = 0.0) {
    sim_.copy_state_to_host(u_, v_);
    const bool finite = validity_.check_state(step, u_, v_);
    double max_u = 0.0;
    max_v_ = 0.0;
    for (size_t i = 0; i < u_.size() / 3; ++i) {
      max_u = std::max(max_u, norm3(&u_[3 * i]));
      max_v_ = std::max(max_v_, norm3(&v_[3 * i]));
    }
    if (!finite) max_u = max_v_ = std::numeric_limits<double>::quiet_NaN();
    stats_ = sim_.solver_stats();
    if (step > 0) {  // the initial state had no solve
      validity_.check_solver(step, stats_);
      solver_.add(stats_);
    }
    std::vector<std::string> row = {std::to_string(step), CsvTable::num(time)};
    if (static_) row.push_back(CsvTable::num(solve_ms));
    row.push_back(CsvTable::num(max_u));
    if (!static_) row.push_back(CsvTable::num(max_v_));
    for (auto& c : SolverSummary::csv_cells(stats_)) row.push_back(std::move(c));
    for (auto& c : probe_cells(probes_, u_)) row.push_back(std::move(c));
    series_.add_row(std::move(row));
    if (frame || !finite || (frames_.enabled() && step % vtk_every_ == 0)) write_frame(step, time);
    return finite;
  }

  // A frame of the last sampled state (once per step).
  void write_frame(long step, double time) {
    if (!frames_.enabled() || step == framed_step_) return;
    frames_.write(sim_, step, time, u_, v_);
    framed_step_ = step;
  }

  double max_velocity() const { return max_v_; }
  const std::vector<double>& u() const { return u_; }
  const SolverStats& stats() const { return stats_; }
  const SolverSummary& solver() const { return solver_; }
  const CsvTable& series() const { return series_; }

 private:
  static std::vector<std::string> columns(const std::vector<Probe>& probes, bool static_run) {
    std::vector<std::string> c = static_run ? std::vector<std::string>{"load_step", "load_factor", "solve_ms", "max_displacement"}
                                            : std::vector<std::string>{"step", "time", "max_displacement", "max_velocity"};
    for (auto& x : SolverSummary::csv_columns()) c.push_back(std::move(x));
    for (auto& x : probe_columns(probes)) c.push_back(std::move(x));
    return c;
  }

  Simulation& sim_;
  ValidityTracker& validity_;
  FrameWriter& frames_;
  const std::vector<Probe>& probes_;
  long vtk_every_;
  bool static_;
  CsvTable series_;
  std::vector<double> u_, v_;
  double max_v_ = 0.0;
  SolverStats stats_;
  SolverSummary solver_;
  long framed_step_ = -1;
};

// What a loop adds to the summary besides the sampled states.
struct LoopResult {
  long steps = 0;
  std::string stopped_by;
  double steps_per_second = 0.0;  // measured (time stepping)
  nlohmann::json time, timing;    // summary "time" and the mode's part of "timing"
  nlohmann::json static_record;   // summary "static" (static runs)
};

// Time stepping: advances in chunks up to the next sample, VTK frame or the end of the warm-up,
// timing every chunk after the warm-up; stops at the planned step count, at rest, or at a
// non-finite state.
LoopResult run_dynamic(Simulation& sim, const StepPlan& plan, double dt, const Scenario& sc, Sampler& sampler,
                       ValidityTracker& validity, Progress& progress, long vtk_every) {
  LoopResult r;
  r.stopped_by = plan.rule;
  const bool frames = vtk_every > 0;
  double measured_ms = 0.0, total_ms = 0.0;
  long measured_steps = 0, step = 0;
  validity.set_method_counts(sim.validity());
  if (!sampler.sample(0, 0.0, false) || validity.diverged()) r.stopped_by = kNonFinite;
  while (step < plan.total && !validity.diverged()) {
    long next = std::min(plan.total, (step / plan.sample_every + 1) * plan.sample_every);
    if (frames) next = std::min(next, (step / vtk_every + 1) * vtk_every);
    if (step < plan.warmup) next = std::min(next, plan.warmup);
    const long chunk = next - step;
    Stopwatch clock;
    sim.advance(int(chunk));
    const double ms = clock.elapsed_ms();
    total_ms += ms;
    if (step >= plan.warmup) {
      measured_ms += ms;
      measured_steps += chunk;
    }
    step = next;
    progress.update(step);
    validity.set_method_counts(sim.validity());
    const bool last = step == plan.total;
    if (validity.diverged()) {
      // The method met non-finite values: this state is the last one worth recording.
      sampler.sample(step, step * dt, true);
      r.stopped_by = kNonFinite;
      break;
    }
    const bool on_sample = step % plan.sample_every == 0 || last;
    if (!on_sample && !(frames && step % vtk_every == 0)) continue;
    if (!sampler.sample(step, step * dt, last)) {
      r.stopped_by = kNonFinite;
      break;
    }
    if (on_sample && plan.until_rest && !last && step >= 10 && step * dt >= plan.rest_after &&
        sampler.max_velocity() < sc.time.rest_velocity) {
      r.stopped_by = "rest (max |v| < time.rest_velocity)";
      sampler.write_frame(step, step * dt);
      break;
    }
  }
  // A method may check the last state only when it is copied out (the final sample above).
  validity.set_method_counts(sim.validity());
  r.steps = step;
  r.steps_per_second = measured_ms > 0 ? measured_steps / (measured_ms / 1000.0) : 0.0;
  r.time = {{"mode", "dynamic"},          {"dt", dt}, {"steps", step}, {"planned_steps", plan.total},
            {"simulated_time", step * dt}, {"stopped_by", r.stopped_by}};
  r.timing = {{"warmup_steps", plan.warmup},    {"measured_steps", measured_steps},
              {"measured_ms", measured_ms},     {"total_advance_ms", total_ms},
              {"steps_per_second", r.steps_per_second}};
  return r;
}

// Static: load step k of n solves for equilibrium at load factor k / n from the previous
// equilibrium; each solve is timed and recorded. Stops at a non-finite state or at a solve that
// missed static.tolerance (the next load step would start from a state out of equilibrium).
LoopResult run_static(Simulation& sim, const Scenario& sc, Sampler& sampler, ValidityTracker& validity,
                      Progress& progress) {
  LoopResult r;
  const long n = sc.static_solve.load_steps;
  r.stopped_by = "static.load_steps";
  nlohmann::json records = nlohmann::json::array();
  double total_ms = 0.0, factor = 0.0;
  long k = 0;
  validity.set_method_counts(sim.validity());
  if (!sampler.sample(0, 0.0, false) || validity.diverged()) r.stopped_by = kNonFinite;
  while (k < n && !validity.diverged()) {
    ++k;
    factor = double(k) / double(n);
    Stopwatch clock;
    sim.solve_static(factor);
    const double ms = clock.elapsed_ms();
    total_ms += ms;
    progress.update(k);
    validity.set_method_counts(sim.validity());
    const std::optional<bool> converged = sim.solver_stats().step_converged();
    const bool failed = converged.has_value() && !*converged;
    const bool finite = sampler.sample(k, factor, k == n || failed || validity.diverged(), ms);
    nlohmann::json rec = {{"load_step", k}, {"load_factor", factor}, {"solve_ms", ms}};
    rec.update(SolverSummary::solve_json(sampler.stats()));
    records.push_back(rec);
    if (!finite || validity.diverged()) {
      r.stopped_by = kNonFinite;
      break;
    }
    if (failed && k < n) {
      r.stopped_by = "a load step missed static.tolerance";
      break;
    }
  }
  r.steps = k;
  r.time = {{"mode", "static"},     {"dt", nullptr},       {"steps", k}, {"planned_steps", n},
            {"simulated_time", nullptr}, {"load_factor", factor}, {"stopped_by", r.stopped_by}};
  r.timing = {{"warmup_steps", 0},  {"measured_steps", k}, {"measured_ms", total_ms}, {"total_advance_ms", total_ms},
              {"steps_per_second", nullptr}, {"solve_ms", total_ms}};
  r.static_record = {{"load_steps", records},
                     {"tolerance", sc.static_solve.tolerance},
                     {"max_iterations", sc.static_solve.max_iterations}};
  return r;
}

nlohmann::json performance_json(const WorkCounts& work, double steps_per_second) {
  auto counted = [](double x) { return x > 0 ? nlohmann::json(x) : nlohmann::json(nullptr); };
  return {{"flops_per_step", counted(work.flops)},
          {"bytes_per_step", counted(work.bytes)},
          {"bytes_convention", work.bytes > 0 ? nlohmann::json(to_string(work.bytes_convention)) : nlohmann::json(nullptr)},
          {"gflops", counted(work.flops * steps_per_second / 1e9)},
          {"effective_gbps", counted(work.bytes * steps_per_second / 1e9)}};
}

void warn_if_invalid(const ValidityTracker& validity, const std::string& label) {
  if (validity.valid()) return;
  std::string line = "warning: " + label + ": invalid run: ";
  const auto reasons = validity.reasons();
  for (size_t i = 0; i < reasons.size(); ++i) line += (i ? "; " : "") + reasons[i];
  std::fprintf(stderr, "%s\n", line.c_str());
}

// The run's options with the thread count settled (0: every core) and OpenMP told.
RunOptions thread_options(const RunOptions& requested) {
  RunOptions opts = requested;
  if (opts.threads == 0) opts.threads = omp_get_num_procs();
  omp_set_num_threads(opts.threads);
  return opts;
}

// The simulation, built and timed, with the device memory the process held before (this run's
// own peak leaves it out).
struct Built {
  std::unique_ptr<Simulation> sim;
  double setup_ms = 0.0;
  std::size_t device_baseline = 0;
};

Built build_simulation(const MethodEntry& entry, const Scenario& sc, const RunOptions& opts) {
  Built b;
  b.device_baseline = cuda_tracked_bytes();
  cuda_reset_peak_tracked_bytes();
  Stopwatch clock;
  b.sim = entry.factory(sc, opts);
  b.setup_ms = clock.elapsed_ms();
  return b;
}

// Everything summary.json is made of.
struct RunRecord {
  const RunRequest& req;
  const Scenario& sc;
  const RunOptions& opts;
  const ResolvedMethod& method;
  const Built& built;
  const LoopResult& loop;
  const Sampler& sampler;
  const ValidityTracker& validity;
  const std::vector<Probe>& probes;
  long warmup;
  bool vtk, render_surface;
};

nlohmann::json summary_json(const RunRecord& r) {
  Simulation& sim = *r.built.sim;
  const int npc = nodes_per_cell(sim.cell_type());
  const size_t n_nodes = sim.nodes().size();
  const size_t n_elems = npc ? sim.connectivity().size() / npc : 0;
  const std::size_t peak = cuda_peak_tracked_bytes();
  const std::size_t device_peak = std::max(sim.device_bytes(), peak - std::min(r.built.device_baseline, peak));
  nlohmann::json timing = {{"setup_ms", r.built.setup_ms}};
  timing.update(r.loop.timing);
  timing["phases"] = sim.timings().to_json(r.warmup);
  const bool cuda = r.opts.backend == Backend::Cuda;
  nlohmann::json summary = {
      {"schema", "elastobench.summary/1"},
      {"method", r.req.method},
      {"variant", r.method.entry->variant},
      {"backend", to_string(r.opts.backend)},
      {"precision", to_string(r.opts.precision)},
      {"threads", cuda ? nlohmann::json(nullptr) : nlohmann::json(r.opts.threads)},
      {"scenario", {{"name", r.sc.name}, {"origin", r.req.scenario_origin}, {"definition", scenario_to_json(r.sc)}}},
      {"method_options", r.method.options},
      {"mesh", {{"element_type", cell_name(sim.cell_type())}, {"nodes", n_nodes}, {"elements", n_elems}, {"dofs", 3 * n_nodes}}},
      {"machine", machine_info(r.opts.device)},
      {"build", build_json()},
      {"time", r.loop.time},
      {"timing", timing},
      {"performance", performance_json(sim.work_per_step(), r.loop.steps_per_second)},
      {"memory", {{"peak_host_bytes", peak_host_memory_bytes()},
                  {"peak_device_bytes", cuda ? nlohmann::json(device_peak) : nlohmann::json(nullptr)}}},
      {"solver", r.sampler.solver().to_json(sim.solver_stats())},
      {"validity", r.validity.to_json()},
      {"displacement", displacement_json(r.sampler.u())},
      {"probes", probes_json(r.probes, r.sampler.u())},
      {"probe_nodes", probe_nodes_json(r.probes, sim.nodes())},
      {"method_details", sim.details()},
      {"files", {{"timeseries", "timeseries.csv"},
                 {"vtk", r.vtk ? nlohmann::json("vtk/series.pvd") : nlohmann::json(nullptr)},
                 {"render_surface", r.render_surface ? nlohmann::json("vtk/render_surface.pvd") : nlohmann::json(nullptr)}}},
  };
  if (is_static(r.sc)) summary["static"] = r.loop.static_record;
  return summary;
}

}  // namespace

nlohmann::json run_simulation(const RunRequest& req) {
  // The method's choices and the request's counts, before anything is built or written.
  Scenario sc = req.scenario;
  if (!req.variant.empty()) sc.solver.variant = req.variant;
  const ResolvedMethod method = methods().resolve(sc, req.method, req.options.backend, req.options.precision);
  sc.solver.variant = method.entry->variant;  // the factory and the summary see the variant that runs
  if (req.options.backend == Backend::Cuda) {
    const GpuInfo g = cuda_device_info(req.options.device);
    if (!g.usable) throw RuntimeFailure("--backend cuda: " + g.reason);
  }
  check_request(req, sc);
  const bool static_run = is_static(sc);
  const RunOptions opts = thread_options(req.options);
  const std::string label = req.method + " " + to_string(opts.backend) + " " + to_string(opts.precision);

  const Built built = build_simulation(*method.entry, sc, opts);
  Simulation& sim = *built.sim;
  const double dt = static_run ? 0.0 : sim.dt();
  if (!static_run && (!(dt > 0) || !std::isfinite(dt)))
    throw RuntimeFailure(label + ": the method chose an invalid time step");
  const StepPlan plan = static_run ? StepPlan{} : plan_steps(req, sc, dt);

  // Outputs, then the run itself; a failure on the way removes the folders it created.
  const long vtk_every = req.vtk_every >= 0 ? req.vtk_every : sc.output.vtk_every;
  const bool write_vtk = req.write_files && vtk_every > 0;
  OutputFolder folder(req.out_dir, req.write_files, write_vtk);
  FrameWriter frames(folder.vtk_dir(), write_vtk);
  const std::vector<Probe> probes = place_probes(sc.output.probes, sim.nodes());
  ValidityTracker validity(bounding_box_diagonal(sim.nodes()), dt);
  Sampler sampler(sim, validity, frames, probes, vtk_every, static_run);
  LoopResult loop;
  try {
    frames.bind_render_surface(sc, sim, opts.data_dir.empty() ? mesh::default_data_dir() : opts.data_dir);
    Progress progress(label, static_run ? sc.static_solve.load_steps : plan.total, req.quiet);
    loop = static_run ? run_static(sim, sc, sampler, validity, progress)
                      : run_dynamic(sim, plan, dt, sc, sampler, validity, progress, write_vtk ? vtk_every : 0);
    progress.finish();
  } catch (...) {
    folder.discard();
    throw;
  }

  nlohmann::json summary = summary_json(
      {req, sc, opts, method, built, loop, sampler, validity, probes, plan.warmup, write_vtk, frames.has_surface()});
  warn_if_invalid(validity, label);
  if (req.after_run) req.after_run(sim, summary);
  if (req.write_files) {
    sampler.series().write(req.out_dir / "timeseries.csv");
    write_json_atomic(req.out_dir / "summary.json", summary);
  }
  return summary;
}

}  // namespace eb
