// `elastobench reproduce head-to-head --parts corot`: corotational linear elasticity, every method
// on the same scenes (issue 24).
//
// Methods and variants come from a table (h2h_scenes.cpp: hexmg vcycle / smoothed-vcycle /
// smoothed-pcg, bcsr-pcg gather, corot-cg edge / polar, and at small strain tled gather /
// hourglass and nr-neohookean); a variant not in this build is skipped with a note
// (corot_skipped.csv). Scenes: the cantilever, the Stanford bunny under gravity (voxels as
// hexahedra for hexmg and tled, the same voxels split into 6 tetrahedra each for the tetrahedral
// methods) and SOFA's beam at small strain (h2h_scenes.cpp says why its load is reduced).
//
// Time to accuracy, the definition:
//  - Reference: the scene's static equilibrium under its full load, in fp64, on tetrahedra at least
//    as fine as every searched level (Scene::reference) and at two coarser levels (edge x2, x4, or
//    voxels / 8, / 64), solved by bcsr-pcg's static Newton with Jacobi-PCG to a relative Newton
//    residual of 1e-8 (h2h_reference.h); all three must converge. The probes are Richardson-
//    extrapolated from the finest two with the order observed over the three (linear tetrahedra
//    lock in bending: the finest affordable mesh alone is percents from the continuum); the
//    error estimate, written beside every row, is how far the extrapolations from (h, 2h) and
//    (2h, 4h) disagree.
//  - Probes: the cantilever's tip centre, the bunny's ear tip and tail, the beam's free-end
//    centre, interpolated in each method's own mesh (barycentric in tetrahedra, trilinear in
//    hexahedra; h2h_probe.h).
//  - A trial runs the scene dynamically from rest for the scene's settling time T (cantilever
//    1 s, bunny 3 s, beam 15 s; each scene's mass damping settles its slowest mode well within
//    T) at one setting (element size, dt, solver effort); its error is max over probes
//    |u(T) - u_ref| / |u_ref|. It is invalid when the state inverts an element, turns
//    non-finite, a solve misses its tolerance (ValidityTracker), or when it would exceed the
//    trial budget (max_element_steps: elements x steps, decided before it runs, or
//    corot_trial_seconds, extrapolated after each tenth of the run); it passes a
//    tolerance when valid, its error is below it and it has settled (its probes moved by less
//    than a tenth of the tolerance x |u_ref| over the last 10% of T).
//  - Cost: wall time per simulated second; the run is timed in 10 batches of equal steps
//    (host wall clock around advance(), which returns synchronized), cost = median batch time
//    per step x steps / T, with the batches' min and max.
//  - Search (h2h_search.h): per level, dt from the scene's ladder (largest first; explicit
//    methods: their stable step x courant 0.8 then 0.4) and effort doubled from the cheapest
//    (hexmg cycles, or a CG, Newton or PCG tolerance divided by 10) until the error is below the
//    tolerance; the first level with a passing trial is the last searched, and the cheapest
//    passing trial wins; 10%, 1% and 0.1%, each only when the reference's error estimate is at
//    most half of it. On the GPU, fp32 and fp64.
//    --quick: the cantilever only, its two coarsest levels, the two largest dt, the six cheapest
//    efforts.
// Throughput: steps/s (median of 5 batches, min-max) and bytes per element per step (the
// method's WorkCounts, with its convention) at the scene's default dt and the variant's default
// effort, for sizes from about 1e4 to 1e6 elements (option corot_sizes), CPU 1 thread and all
// threads, CUDA, fp32 and fp64.
//
// Files under ctx.out_dir, one of each per scene (corot_<table>_<scene>.csv, so that scenes and
// phases can run in separate calls): reference, throughput, trials, accuracy (per tolerance,
// variant and configuration the winner, or on a miss the closest error any settled valid trial
// reached), skipped (the search's) and throughput_skipped; and corot_meta.json.
// analysis/head_to_head.py draws them.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <new>
#include <set>
#include <sstream>

#include <omp.h>

#include "experiments/head_to_head/h2h_probe.h"
#include "experiments/head_to_head/h2h_reference.h"
#include "experiments/head_to_head/h2h_scenes.h"
#include "experiments/head_to_head/h2h_search.h"
#include "experiments/head_to_head/parts.h"
#include "meshes/errors.h"
#include "meshes/host_memory.h"
#include "solvers/common/boundary.h"
#include "solvers/common/results.h"
#include "solvers/common/validity.h"

namespace eb::head_to_head {
namespace {

namespace fs = std::filesystem;
std::string num(double v) { return CsvTable::num(v); }
// 10% as well as the 1% and 0.1%: the bunny's ear converges at order 1 (its reference
// is uncertain to 2.7%, and its finest tetrahedra are 9% off), so only 10% compares methods there.
constexpr double kTolerances[] = {1e-1, 1e-2, 1e-3};
// A tolerance is searched only when the reference's error estimate is below 1/kReferenceMargin of
// it: against a reference uncertain to more than half the tolerance a pass or miss means nothing.
constexpr double kReferenceMargin = 2.0;

struct Config {
  Backend backend;
  Precision precision;
  int threads;  // CPU; 0 on CUDA
  std::string label() const {
    std::string s = to_string(backend) + "-" + to_string(precision);
    if (backend == Backend::Cpu) s += "-t" + std::to_string(threads);
    return s;
  }
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// The part's options (declared in head_to_head.cpp, checked there by check_corot_option).
struct Options {
  std::vector<double> sizes;         // steps/s sweep: target elements
  std::vector<std::string> scenes;   // empty: all
  std::vector<std::string> methods;  // method or method/variant; empty: all
  std::vector<Config> accuracy;      // configurations of the search
  double max_element_steps = 0;
  double trial_seconds = 60;
  std::vector<double> tolerances{std::begin(kTolerances), std::end(kTolerances)};
  std::filesystem::path reference_from;  // read the references from an earlier run's folder
  bool throughput = true, search = true;
};

Config parse_config(const std::string& s, int max_threads) {
  // cpu-fp64-tN | cpu-fp64 (all threads) | cuda-fp32
  std::vector<std::string> f;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, '-');) f.push_back(item);
  if (f.size() < 2 || f.size() > 3) throw InputError("head-to-head option corot_accuracy: '" + s + "' is not BACKEND-PRECISION[-tN]");
  Config c{parse_backend(f[0]), parse_precision(f[1]), 0};
  if (c.backend == Backend::Cpu) c.threads = max_threads;
  if (f.size() == 3) {
    if (f[2].size() < 2 || f[2][0] != 't' || c.backend != Backend::Cpu)
      throw InputError("head-to-head option corot_accuracy: '" + s + "': a thread count is -tN, CPU only");
    c.threads = std::stoi(f[2].substr(1));
  }
  return c;
}

Options read_options(const ExperimentContext& ctx) {
  Options o;
  const bool gpu = ctx.cuda_available && !ctx.quick;
  o.sizes = ctx.quick ? std::vector<double>{3000} : std::vector<double>{1e4, 1e5, 1e6};
  if (const std::string* v = ctx.option("corot_sizes")) {
    o.sizes.clear();
    if (*v != "none")
      for (const auto& x : split(*v)) o.sizes.push_back(std::stod(x));
  }
  // --quick: the cantilever alone (the three scenes' searches took ~30 min on 2 loaded cores);
  // corot_scenes adds the others.
  if (ctx.quick) o.scenes = {"cantilever"};
  if (const std::string* v = ctx.option("corot_scenes")) o.scenes = split(*v);
  if (const std::string* v = ctx.option("corot_methods")) o.methods = split(*v);
  // On the GPU every variant is searched in both precisions, each method at its best: at the fine
  // levels fp32 fails one method after another. tled's explicit update moves u only when
  // dt^2 f / m exceeds an ulp of u (settled 47% off at 5,120 hexahedra, courant 0.4); corot-cg keeps
  // positions, SOFA's way, so its strain is a difference of numbers of order 1 m (3% off at 30K
  // tets against 0.05% in fp64); bcsr-pcg's Jacobi-PCG breaks down at 1.97M tets and dt 0.02
  // (residual grown 4e4-fold in 1,181 iterations; fp64 reached 1e-1 in 2,465); hexmg's settled
  // error jitters by ~0.1% (0.60-0.77% at 40,960 hexahedra against 0.31% in fp64).
  if (gpu) o.accuracy = {{Backend::Cuda, Precision::Fp32, 0}, {Backend::Cuda, Precision::Fp64, 0}};
  else o.accuracy = {{Backend::Cpu, Precision::Fp64, ctx.quick ? 1 : ctx.max_threads}};
  if (const std::string* v = ctx.option("corot_accuracy")) {
    o.accuracy.clear();
    if (*v != "none")
      for (const auto& x : split(*v)) o.accuracy.push_back(parse_config(x, ctx.max_threads));
  }
  o.search = !o.accuracy.empty();
  o.max_element_steps = ctx.quick ? 2e7 : 5e9;
  if (const std::string* v = ctx.option("corot_max_element_steps")) o.max_element_steps = std::stod(*v);
  if (const std::string* v = ctx.option("corot_trial_seconds")) o.trial_seconds = std::stod(*v);
  if (const std::string* v = ctx.option("corot_tolerances")) {  // checked by the option's validator
    o.tolerances.clear();
    for (const auto& x : split(*v)) o.tolerances.push_back(std::stod(x));
  }
  if (const std::string* v = ctx.option("corot_reference_from")) o.reference_from = *v;
  o.throughput = !o.sizes.empty();
  return o;
}

// The variants to run, in the order corot_methods names them (the table's order without it), so
// that a run cut short by a time limit has done the ones asked for first.
std::vector<VariantSpec> selected_variants(const Options& o) {
  if (o.methods.empty()) return corot_variants();
  std::vector<VariantSpec> out;
  for (const auto& m : o.methods)
    for (const VariantSpec& v : corot_variants()) {
      if (m != v.method && m != v.method + "/" + v.variant) continue;
      const bool seen = std::any_of(out.begin(), out.end(), [&](const VariantSpec& x) {
        return x.method == v.method && x.variant == v.variant;
      });
      if (!seen) out.push_back(v);
    }
  return out;
}

void set_threads(const Config& c) {
  if (c.backend == Backend::Cpu) omp_set_num_threads(c.threads);
}

struct Built {
  std::unique_ptr<Simulation> sim;
  Scenario scenario;
  std::string setting;  // the overrides that set the method's effort and dt, for the tables
};

// The variant on the scene at `resolution`, dt (implicit, seconds) or courant (explicit), effort.
Built build(const ExperimentContext& ctx, const Scene& s, const VariantSpec& v, const Config& c, double resolution,
            double dt_or_courant, int effort) {
  std::vector<std::string> ov = mesh_overrides(s, resolution);
  for (const auto& f : v.fixed) ov.push_back(f);
  std::string setting;
  if (v.explicit_dt) {
    ov.push_back("time.dt=0");
    ov.push_back("time.courant=" + num(dt_or_courant));
    setting = "courant=" + num(dt_or_courant);
  } else {
    ov.push_back("time.dt=" + num(dt_or_courant));
    setting = "dt=" + num(dt_or_courant);
  }
  if (effort >= 0 && !v.effort_key.empty()) {
    const std::string kv = v.effort_key + "=" + v.effort_ladder[size_t(effort)];
    ov.push_back(v.method + "." + kv);
    setting += " " + kv;
  }
  Built b;
  b.scenario = scene_scenario(s, ov);
  b.scenario.solver.variant = v.variant;
  const ResolvedMethod m = methods().resolve(b.scenario, v.method, c.backend, c.precision);
  RunOptions o;
  o.backend = c.backend;
  o.precision = c.precision;
  o.threads = c.backend == Backend::Cpu ? c.threads : 0;
  o.data_dir = ctx.data_dir;
  set_threads(c);
  b.sim = m.entry->factory(b.scenario, o);
  b.setting = setting;
  return b;
}

struct BatchTimes {
  double median = 0, min = 0, max = 0;  // ms per step
  long steps_timed = 0;
  int batches = 0;
};
BatchTimes summarize(std::vector<double> per_step_ms, long steps) {
  BatchTimes t;
  if (per_step_ms.empty()) return t;
  std::sort(per_step_ms.begin(), per_step_ms.end());
  const size_t n = per_step_ms.size();
  t.median = n % 2 ? per_step_ms[n / 2] : 0.5 * (per_step_ms[n / 2 - 1] + per_step_ms[n / 2]);
  t.min = per_step_ms.front();
  t.max = per_step_ms.back();
  t.steps_timed = steps;
  t.batches = int(n);
  return t;
}

std::string invalid_reason(const ValidityTracker& t) {
  const auto r = t.reasons();
  return r.empty() ? "invalid" : r.front();
}

// ---- throughput ------------------------------------------------------------------------------

const std::vector<std::string> kThroughputColumns = {
    "scene", "elements", "nodes", "method", "variant", "backend", "precision", "threads", "steps_timed", "validity",
    "steps_per_s", "steps_per_s_min", "steps_per_s_max", "bytes_per_element_step", "bytes_convention",
    "flops_per_element_step", "setting"};

// Returns the median ms per step measured (and the elements built), valid row or not: it predicts
// the next size's cost (an invalid run costs its time too); NaN when the size could not be built.
double throughput_row(const ExperimentContext& ctx, const Scene& s, const VariantSpec& v, const Config& c, double target,
                      CsvTable& t, long* built_elements) {
  double ms_per_step = std::numeric_limits<double>::quiet_NaN();
  const mesh::CellType cell = v.method == "hexmg" || v.method == "tled" ? mesh::CellType::Hexahedron : mesh::CellType::Tetra;
  const double res = resolution_for_elements(s, target, cell);
  std::vector<std::string> row = {s.name};
  try {
    Built b = build(ctx, s, v, c, res, v.explicit_dt ? kCourantLadder[0] : s.throughput_dt, -1);
    Simulation& sim = *b.sim;
    const long elements = long(sim.connectivity().size() / (cell == mesh::CellType::Tetra ? 4 : 8));
    ValidityTracker tracker(bounding_box_diagonal(sim.nodes()), sim.dt());
    sim.advance(2);  // warm-up: first-touch allocations, graph capture
    Stopwatch probe;
    sim.advance(1);
    const double one = std::max(probe.elapsed_ms(), 1e-3);
    const double batch_ms = c.backend == Backend::Cuda ? 50.0 : 200.0;
    const int k = std::clamp(int(std::ceil(batch_ms / one)), 1, 1000);
    std::vector<double> per_step;
    std::vector<double> u, vel;
    for (int i = 0; i < 5; ++i) {
      Stopwatch w;
      sim.advance(k);
      per_step.push_back(w.elapsed_ms() / k);
      tracker.check_solver(long(3 + (i + 1) * k), sim.solver_stats());
    }
    sim.copy_state_to_host(u, vel);
    tracker.check_state(long(3 + 5 * k), u, vel);
    tracker.set_method_counts(sim.validity());
    const BatchTimes bt = summarize(per_step, 5L * k);
    const WorkCounts w = sim.work_per_step();
    const bool ok = tracker.valid();
    ms_per_step = bt.median;
    *built_elements = elements;
    row.insert(row.end(), {std::to_string(elements), std::to_string(sim.nodes().size()), v.method, v.variant,
                           to_string(c.backend), to_string(c.precision),
                           c.backend == Backend::Cpu ? std::to_string(c.threads) : "", std::to_string(bt.steps_timed),
                           ok ? "valid" : invalid_reason(tracker), ok ? num(1000.0 / bt.median) : "",
                           ok ? num(1000.0 / bt.max) : "", ok ? num(1000.0 / bt.min) : "",
                           w.bytes > 0 ? num(w.bytes / double(elements)) : "", to_string(w.bytes_convention),
                           w.flops > 0 ? num(w.flops / double(elements)) : "", b.setting});
    if (!ctx.quiet)
      std::cerr << "head-to-head corot: " << s.name << " " << v.method << "/" << v.variant << " " << c.label() << " "
                << elements << " elements: " << (ok ? num(1000.0 / bt.median) + " steps/s" : row[9]) << "\n";
  } catch (const std::exception& e) {
    // A size the method or the device cannot take (memory, an unsupported feature) is a row that
    // says so, not a stop of the whole part.
    row.resize(kThroughputColumns.size());
    row[3] = v.method, row[4] = v.variant, row[5] = to_string(c.backend), row[6] = to_string(c.precision);
    row[9] = "not run: " + (dynamic_cast<const std::bad_alloc*>(&e) ? mesh::out_of_host_memory_text() : std::string(e.what()));
    if (!ctx.quiet) std::cerr << "head-to-head corot: " << s.name << " " << v.method << "/" << v.variant << ": " << row[9] << "\n";
  }
  t.add_row(row);
  return ms_per_step;
}

// A throughput row takes at least 8 steps (2 warm-up, 1 probe, 5 timed batches); a size whose
// steps, predicted from the last size's by the element ratio, would take longer than this is
// skipped with a note (a method that is slow per step at 1e5 elements would hold the whole sweep
// at 1e6).
constexpr double kThroughputRowBudgetMs = 30e3;

// ---- time to accuracy ------------------------------------------------------------------------

struct TrialRecord {
  long elements = 0;
  long steps = 0;
  std::string setting;
  double settle_change = 0;
  BatchTimes times;
};

TrialOutcome run_trial(const ExperimentContext& ctx, const Options& opt, const Scene& s, const VariantSpec& v,
                       const Config& c, const std::vector<double>& levels, const std::vector<Vec3>& ref,
                       const TrialSetting& ts, TrialRecord& rec) {
  TrialOutcome out;
  const double dt_value = v.explicit_dt ? kCourantLadder[ts.dt] : s.dt_ladder[size_t(ts.dt)];
  try {
    Built b = build(ctx, s, v, c, levels[size_t(ts.level)], dt_value, v.effort_key.empty() ? -1 : ts.effort);
    Simulation& sim = *b.sim;
    rec.setting = b.setting;
    rec.elements = long(sim.connectivity().size() / (sim.cell_type() == mesh::CellType::Tetra ? 4 : 8));
    const double dt = sim.dt();
    rec.steps = std::max(10L, std::lround(std::ceil(s.settle_time / dt - 1e-9)));
    if (double(rec.steps) * double(rec.elements) > opt.max_element_steps) {
      out.why = "over the trial budget (" + num(double(rec.steps) * double(rec.elements)) + " element-steps > " +
                num(opt.max_element_steps) + ")";
      out.over_budget = true;
      return out;
    }
    const ProbeBinding probes = bind_probes(b.scenario.output.probes, sim);
    ValidityTracker tracker(bounding_box_diagonal(sim.nodes()), dt);
    std::vector<double> per_step, u, vel;
    std::vector<Vec3> at_09;
    long done = 0;
    double elapsed_ms = 0;
    for (int batch = 0; batch < 10; ++batch) {
      const long until = rec.steps * (batch + 1) / 10;
      const long n = until - done;
      if (n <= 0) continue;
      Stopwatch w;
      sim.advance(int(n));
      per_step.push_back(w.elapsed_ms() / double(n));
      elapsed_ms += per_step.back() * double(n);
      done = until;
      // Validity first (a failed solve or an inverted element ends the trial as invalid, whatever
      // its cost), then the time budget.
      tracker.check_solver(done, sim.solver_stats());
      tracker.set_method_counts(sim.validity());
      sim.copy_state_to_host(u, vel);
      if (!tracker.check_state(done, u, vel) || !tracker.valid()) break;
      const double predicted_s = elapsed_ms * 1e-3 * double(rec.steps) / double(done);
      if (done < rec.steps && predicted_s > opt.trial_seconds) {
        rec.times = summarize(per_step, done);
        out.why = "over the trial time budget (about " + num(predicted_s) + " s predicted after " + std::to_string(done) +
                  " of " + std::to_string(rec.steps) + " steps > corot_trial_seconds = " + num(opt.trial_seconds) + ")";
        out.over_budget = true;
        return out;
      }
      if (batch == 8) at_09 = probe_displacements(probes, u);
    }
    tracker.set_method_counts(sim.validity());
    rec.times = summarize(per_step, done);
    if (!tracker.valid()) {
      out.why = invalid_reason(tracker);
      return out;
    }
    const std::vector<Vec3> at_t = probe_displacements(probes, u);
    out.error = probe_error(at_t, ref);
    double change = 0;
    for (size_t p = 0; p < at_t.size(); ++p) {
      const double r = std::hypot(ref[p][0], ref[p][1], ref[p][2]);
      change = std::max(change, std::hypot(at_t[p][0] - at_09[p][0], at_t[p][1] - at_09[p][1], at_t[p][2] - at_09[p][2]) / r);
    }
    rec.settle_change = change;
    out.settle_change = change;
    out.wall_per_sim_s = rec.times.median * 1e-3 * double(rec.steps) / s.settle_time;
    out.valid = std::isfinite(out.error) && std::isfinite(change);
    if (!out.valid) out.why = "non-finite probe displacement";
  } catch (const std::bad_alloc&) {
    // A setting that does not fit in the host's memory: a finer level or more effort needs more,
    // so the search treats it as over the budget (host_memory.h's limit turns the kernel's
    // out-of-memory kill into this exception).
    out.why = "not run: " + mesh::out_of_host_memory_text();
    out.over_budget = true;
  } catch (const std::exception& e) {
    out.why = std::string("not run: ") + e.what();
  }
  return out;
}

// Per search level, the distance of the reference's static solution at that level from the
// extrapolation, max over probes of ||u_level| - |u*|| / |u*| (a lower bound of the vector
// distance), where a reference level (h, 2h, 4h) coincides with a search level; the others by
// fill_level_floors.
std::vector<double> level_floors(const Scene& s, const std::vector<double>& levels, double ref_res,
                                 const RichardsonReference& rr) {
  std::vector<double> known(levels.size(), std::numeric_limits<double>::quiet_NaN());
  double res = ref_res;
  for (const auto& mags : rr.level_magnitudes) {
    for (size_t i = 0; i < levels.size(); ++i) {
      if (std::abs(levels[i] - res) > 1e-9 * res || mags.size() != rr.probes.size()) continue;
      double f = 0;
      for (size_t p = 0; p < mags.size(); ++p) {
        const double m = norm3(rr.probes[p]);
        if (m > 0) f = std::max(f, std::abs(mags[p] - m) / m);
      }
      known[i] = f;
    }
    res = coarser(s, res);
  }
  return fill_level_floors(known);
}

const std::vector<std::string> kTrialColumns = {
    "scene", "level", "resolution", "elements", "method", "variant", "backend", "precision", "threads", "setting",
    "steps", "steps_timed", "validity", "error", "settle_change", "wall_per_sim_s", "wall_per_sim_s_min",
    "wall_per_sim_s_max"};
const std::vector<std::string> kAccuracyColumns = {
    "scene", "tolerance", "method", "variant", "backend", "precision", "threads", "found", "level", "elements",
    "setting", "steps_timed", "validity", "error", "wall_per_sim_s", "wall_per_sim_s_min", "wall_per_sim_s_max",
    "trials", "reference_error_estimate"};

void search_variant(const ExperimentContext& ctx, const Options& opt, const Scene& s, const VariantSpec& v,
                    const Config& c, const std::vector<double>& levels, const std::vector<Vec3>& ref, double ref_err,
                    const std::vector<double>& floors, CsvTable& trials_csv, CsvTable& acc_csv) {
  std::map<TrialSetting, TrialRecord> records;
  TrialCache cache([&](const TrialSetting& ts) {
    TrialRecord& rec = records[ts];
    const TrialOutcome o = run_trial(ctx, opt, s, v, c, levels, ref, ts, rec);
    const double t = s.settle_time;
    const double steps = double(rec.steps);
    trials_csv.add_row({s.name, std::to_string(ts.level), num(levels[size_t(ts.level)]), std::to_string(rec.elements),
                        v.method, v.variant, to_string(c.backend), to_string(c.precision),
                        c.backend == Backend::Cpu ? std::to_string(c.threads) : "", rec.setting,
                        std::to_string(rec.steps), std::to_string(rec.times.steps_timed), o.valid ? "valid" : o.why,
                        // An invalid trial's row gives its reason and no number.
                        o.valid ? num(o.error) : "", o.valid ? num(rec.settle_change) : "",
                        o.valid ? num(rec.times.median * 1e-3 * steps / t) : "",
                        o.valid ? num(rec.times.min * 1e-3 * steps / t) : "",
                        o.valid ? num(rec.times.max * 1e-3 * steps / t) : ""});
    trials_csv.write(ctx.out_dir / ("corot_trials_" + s.name + ".csv"));
    if (!ctx.quiet)
      std::cerr << "head-to-head corot: " << s.name << " " << v.method << "/" << v.variant << " " << c.label()
                << " level " << ts.level << " " << rec.setting << ": "
                << (o.valid ? "error " + num(o.error) + ", " + num(o.wall_per_sim_s) + " s/s" : o.why) << "\n";
    return o;
  });
  SearchSpace space{int(levels.size()), v.explicit_dt ? int(std::size(kCourantLadder)) : int(s.dt_ladder.size()),
                    v.effort_key.empty() ? 1 : int(v.effort_ladder.size()), floors};
  if (ctx.quick) {  // minutes on 2 cores: the two largest dt and the six cheapest efforts
    space.dts = std::min(space.dts, 2);
    space.efforts = std::min(space.efforts, 6);
  }
  std::vector<double> tolerances;
  for (double tol : opt.tolerances)
    if (kReferenceMargin * ref_err <= tol) tolerances.push_back(tol);
  search_tolerances(space, tolerances, cache, [&](const ToleranceResult& tr) {
    const SearchResult& r = tr.result;
    const double tol = tr.tolerance;
    std::vector<std::string> row = {s.name, num(tol), v.method, v.variant, to_string(c.backend), to_string(c.precision),
                                    c.backend == Backend::Cpu ? std::to_string(c.threads) : "",
                                    r.found ? "yes" : "no"};
    if (r.found) {
      const TrialRecord& rec = records.at(r.best);
      const double steps = double(rec.steps), t = s.settle_time;
      row.insert(row.end(), {std::to_string(r.best.level), std::to_string(rec.elements), rec.setting,
                             std::to_string(rec.times.steps_timed), "valid", num(r.best_outcome.error),
                             num(r.best_outcome.wall_per_sim_s), num(rec.times.min * 1e-3 * steps / t),
                             num(rec.times.max * 1e-3 * steps / t)});
    } else if (!tr.searched) {
      row.insert(row.end(), {"", "", "", "", "not searched: the looser tolerance found no passing setting", "", "", "", ""});
    } else {
      // The closest any settled valid trial came, so that a miss says by how much.
      double closest = std::numeric_limits<double>::infinity();
      for (const auto& [setting, o] : cache.all())
        if (o.valid && o.settle_change < 0.1 * tol) closest = std::min(closest, o.error);
      std::string why = "no valid setting met the tolerance";
      if (!r.skipped_levels.empty()) {
        double floor = std::numeric_limits<double>::infinity();
        std::string which;
        for (int l : r.skipped_levels) {
          floor = std::min(floor, floors[size_t(l)]);
          which += (which.empty() ? "" : " ") + std::to_string(l);
        }
        why += "; levels " + which + " not searched (their static solutions are at least " + num(floor) +
               " from the reference)";
      }
      row.insert(row.end(), {"", "", "", "", why, std::isfinite(closest) ? num(closest) : "", "", "", ""});
    }
    row.push_back(std::to_string(r.tried.size()));
    row.push_back(num(ref_err));
    acc_csv.add_row(row);
    acc_csv.write(ctx.out_dir / ("corot_accuracy_" + s.name + ".csv"));
  });
  for (double tol : opt.tolerances) {
    if (kReferenceMargin * ref_err <= tol) continue;
    acc_csv.add_row({s.name, num(tol), v.method, v.variant, to_string(c.backend), to_string(c.precision),
                     c.backend == Backend::Cpu ? std::to_string(c.threads) : "", "no", "", "", "", "",
                     "not searched: the reference's error estimate " + num(ref_err) + " is over half the tolerance", "", "",
                     "", "", "0", num(ref_err)});
    acc_csv.write(ctx.out_dir / ("corot_accuracy_" + s.name + ".csv"));
  }
}

}  // namespace

void run_corot_part(const ExperimentContext& ctx) {
  const Options opt = read_options(ctx);
  const bool gpu = ctx.cuda_available && !ctx.quick;
  const fs::path meta_path = ctx.out_dir / "corot_meta.json";
  nlohmann::json meta = fs::exists(meta_path) ? read_json_file(meta_path) : nlohmann::json::object();
  const nlohmann::json run = {{"quick", ctx.quick}, {"machine", machine_info(0)}, {"build", build_json()}};
  if (opt.throughput) meta["throughput_run"] = run;
  if (opt.search) meta["search_run"] = run;
  meta.update(nlohmann::json{{"part", "corot"},
                         {"quick", ctx.quick},
                         {"machine", machine_info(0)},
                         {"build", build_json()},
                         {"search", search_description()},
                         {"tolerances", opt.tolerances},
                         {"reference_margin", "a tolerance is searched only when it is at least twice the reference's error estimate"},
                         {"settled", "a passing trial's probes moved less than tolerance / 10 x |u_ref| over the last 10% of T"},
                         {"max_element_steps", opt.max_element_steps},
                         {"trial_seconds", opt.trial_seconds},
                         {"reference",
                          "static equilibrium, full load, fp64, bcsr-pcg static Newton (relative residual 1e-8) with "
                          "Jacobi-PCG to 1e-10, at the reference resolution h and at 2h and 4h; the probes "
                          "Richardson-extrapolated from h and 2h with the order observed over the three levels "
                          "(clamped to [1, 3]); error estimate max_p |u*_h - u*_2h| / |u*_h|, the extrapolations "
                          "from (h, 2h) and (2h, 4h)"},
                         {"timing",
                          "throughput: 5 batches after 3 warm-up steps, steps/s from the median batch (min-max from "
                          "the batches); trials: 10 batches of equal steps, cost = median batch time per step x "
                          "steps / T"}});

  std::vector<Config> thr_configs;
  for (Precision p : {Precision::Fp32, Precision::Fp64}) {
    thr_configs.push_back({Backend::Cpu, p, 1});
    // --quick: all threads in fp64 only, to stay within minutes.
    if (ctx.max_threads > 1 && (!ctx.quick || p == Precision::Fp64)) thr_configs.push_back({Backend::Cpu, p, ctx.max_threads});
    if (gpu) thr_configs.push_back({Backend::Cuda, p, 0});
  }
  // Large CPU sweeps would take a GPU machine's call: beside a GPU, CPU rows are the cantilever's
  // up to 1e4 elements. Without one (and with --quick) every scene at the sizes asked for, each
  // row within kThroughputRowBudgetMs.
  constexpr double kCpuMaxElements = 1e4;

  // By scene name, merged with an earlier call's into the same folder.
  nlohmann::json scenes_meta = meta.contains("scenes") && meta["scenes"].is_object() ? meta["scenes"] : nlohmann::json::object();
  for (const Scene& s : corot_scenes()) {
    if (!opt.scenes.empty() && std::find(opt.scenes.begin(), opt.scenes.end(), s.name) == opt.scenes.end()) continue;
    // Each scene and phase writes its own files (corot_<table>_<scene>.csv), so that the steps/s
    // sweep and the search of each scene can run in separate calls into one folder.
    CsvTable thr_skipped({"scene", "method", "variant", "backend", "precision", "why"});
    CsvTable skipped({"scene", "method", "variant", "backend", "precision", "why"});
    CsvTable ref_csv({"scene", "resolution", "elements", "nodes", "backend", "converged", "newton_iterations",
                      "cg_iterations", "seconds", "probe", "ux", "uy", "uz", "magnitude", "probe_outside",
                      "coarser_magnitude", "coarser2_magnitude", "difference_to_coarser", "observed_order",
                      "extrapolated_ux", "extrapolated_uy", "extrapolated_uz", "extrapolated_magnitude",
                      "extrapolation_change", "error_estimate"});
    CsvTable thr_csv(kThroughputColumns);
    CsvTable trials_csv(kTrialColumns);
    CsvTable acc_csv(kAccuracyColumns);
    const std::vector<double>& levels = ctx.quick ? s.quick_levels : s.levels;
    const double ref_res = ctx.quick ? s.quick_reference : s.reference;
    scenes_meta[s.name] = nlohmann::json({{"scenario", s.scenario}, {"summary", s.summary},
                           {"settle_time_s", s.settle_time}, {"dt_ladder", s.dt_ladder}, {"levels", levels},
                           {"reference_resolution", ref_res}, {"resolution", s.voxel ? "voxels" : "element edge (m)"},
                           {"throughput_dt", s.throughput_dt}});
    meta["scenes"] = scenes_meta;
    write_json_atomic(meta_path, meta);

    if (opt.throughput)
      for (const VariantSpec& v : selected_variants(opt)) {
        // Configurations differ also in threads, which the unavailability does not depend on: one row each.
        std::set<std::string> unavailable_noted;
        for (const Config& c : thr_configs) {
          const std::string why = variant_unavailable(v, c.backend, c.precision);
          if (!why.empty()) {
            if (unavailable_noted.insert(to_string(c.backend) + "/" + to_string(c.precision)).second)
              thr_skipped.add_row({s.name, v.method, v.variant, to_string(c.backend), to_string(c.precision), why});
            continue;
          }
          double last_ms = std::numeric_limits<double>::quiet_NaN();
          long last_elements = 0;
          for (double n : opt.sizes) {
            if (c.backend == Backend::Cpu && gpu && (n > kCpuMaxElements || s.name != "cantilever")) continue;
            if (std::isfinite(last_ms) && last_elements > 0 && 8.0 * last_ms * n / double(last_elements) > kThroughputRowBudgetMs) {
              thr_skipped.add_row({s.name, v.method, v.variant, to_string(c.backend), to_string(c.precision),
                                   "about " + num(8.0 * last_ms * n / double(last_elements) / 1e3) + " s for 8 steps at " +
                                       num(n) + " elements (from " + num(last_ms) + " ms per step at " +
                                       std::to_string(last_elements) + "): over the row budget of " +
                                       num(kThroughputRowBudgetMs / 1e3) + " s"});
              // Written as it grows, as the rows are: a part cut short keeps its notes.
              thr_skipped.write(ctx.out_dir / ("corot_throughput_skipped_" + s.name + ".csv"));
              if (!ctx.quiet)
                std::cerr << "head-to-head corot: " << s.name << " " << v.method << "/" << v.variant << " " << c.label()
                          << " " << num(n) << " elements: skipped, over the row budget\n";
              continue;
            }
            long built = 0;
            last_ms = throughput_row(ctx, s, v, c, n, thr_csv, &built);
            last_elements = built;
            thr_csv.write(ctx.out_dir / ("corot_throughput_" + s.name + ".csv"));
          }
        }
      }
    if (opt.throughput) thr_skipped.write(ctx.out_dir / ("corot_throughput_skipped_" + s.name + ".csv"));
    if (!opt.search) continue;

    // The reference: three levels (h, 2h, 4h), Richardson-extrapolated with the observed order.
    // Linear tetrahedra lock in bending, so even the finest affordable mesh is percents from the
    // continuum (the quick cantilever's 30K tets: ~5%); the extrapolation removes the leading
    // error term, and the difference between the extrapolations from (h, 2h) and (2h, 4h)
    // bounds what is left. On the GPU when there is one.
    RichardsonReference rr;
    if (!opt.reference_from.empty()) {
      // An earlier run's reference of this scene, copied beside this run's results.
      std::vector<std::string> names;
      for (const ProbeSpec& p : scene_scenario(s, {}).output.probes) names.push_back(p.name);
      std::string text;
      const fs::path from = opt.reference_from / ("corot_reference_" + s.name + ".csv");
      rr = read_reference_csv(from, s.name, ref_res, names, &text);
      write_file_atomic(ctx.out_dir / ("corot_reference_" + s.name + ".csv"), text);
      scenes_meta[s.name]["reference_from"] = from.string();
      meta["scenes"] = scenes_meta;
      write_json_atomic(meta_path, meta);
      if (!ctx.quiet)
        std::cerr << "head-to-head corot: " << s.name << " reference read from " << from.string() << ", error estimate "
                  << num(rr.error_estimate) << "\n";
    } else {
      const Backend rb = gpu ? Backend::Cuda : Backend::Cpu;
      set_threads({Backend::Cpu, Precision::Fp64, ctx.max_threads});
      const ReferenceSolution ref = solve_reference(s, ref_res, rb, ctx.max_threads, ctx.data_dir);
      const ReferenceSolution coarse = solve_reference(s, coarser(s, ref_res), rb, ctx.max_threads, ctx.data_dir);
      const ReferenceSolution coarse2 = solve_reference(s, coarser(s, coarser(s, ref_res)), rb, ctx.max_threads, ctx.data_dir);
      rr = richardson(ref.probes, coarse.probes, coarse2.probes);
      for (size_t p = 0; p < ref.probes.size(); ++p) {
        const Vec3& a = ref.probes[p];
        const Vec3& b = coarse.probes[p];
        const double m = norm3(a), mx = norm3(rr.probes[p]);
        ref_csv.add_row({s.name, num(ref.resolution), std::to_string(ref.elements), std::to_string(ref.nodes), ref.backend,
                         ref.converged && coarse.converged && coarse2.converged ? "yes" : "no",
                         std::to_string(ref.newton_iterations), std::to_string(ref.cg_iterations), num(ref.seconds),
                         ref.probe_names[p], num(a[0]), num(a[1]), num(a[2]), num(m), num(ref.outside[p]), num(norm3(b)),
                         num(norm3(coarse2.probes[p])), num(norm3(sub3(a, b)) / m), num(rr.order), num(rr.probes[p][0]),
                         num(rr.probes[p][1]), num(rr.probes[p][2]), num(mx), num(norm3(sub3(rr.probes[p], a)) / mx),
                         num(rr.error_estimate)});
      }
      ref_csv.write(ctx.out_dir / ("corot_reference_" + s.name + ".csv"));
      if (!ctx.quiet)
        std::cerr << "head-to-head corot: " << s.name << " reference " << ref.elements << " tets, "
                  << (ref.converged ? "converged" : "NOT converged") << ", observed order " << num(rr.order)
                  << ", extrapolated, error estimate " << num(rr.error_estimate) << "\n";
      if (!ref.converged || !coarse.converged || !coarse2.converged) {
        skipped.add_row({s.name, "(all)", "", "", "", "a reference level's solve did not converge: no time to accuracy"});
        skipped.write(ctx.out_dir / ("corot_skipped_" + s.name + ".csv"));
        continue;
      }
    }
    const std::vector<double> floors = level_floors(s, levels, ref_res, rr);
    scenes_meta[s.name]["tet_level_floor"] = floors;  // NaN (no bound) is written as null
    meta["scenes"] = scenes_meta;
    write_json_atomic(meta_path, meta);
    for (const VariantSpec& v : selected_variants(opt)) {
      for (const Config& c : opt.accuracy) {
        const std::string why = variant_unavailable(v, c.backend, c.precision);
        if (!why.empty()) {
          skipped.add_row({s.name, v.method, v.variant, to_string(c.backend), to_string(c.precision), why});
          continue;
        }
        search_variant(ctx, opt, s, v, c, levels, rr.probes, rr.error_estimate,
                       v.reference_element ? floors : std::vector<double>{}, trials_csv, acc_csv);
      }
    }
    skipped.write(ctx.out_dir / ("corot_skipped_" + s.name + ".csv"));
  }
  write_json_atomic(meta_path, meta);
}

}  // namespace eb::head_to_head
