// head-to-head part `nonlinear`: nr-neohookean (implicit: static load steps solved by Newton with
// Jacobi-PCG, tetrahedra) against tled (explicit central difference over the 5 s loading,
// one-point hexahedra) on two scenes of one box geometry (nl_runs.h): the cube (exact homogeneous
// solution) and the bonded block at 30% compression (converged fp64 reference). Time to the
// same end state at 1% and 0.1% probe error, each method at its cheapest setting found by the
// documented search below. Writes under ctx.out_dir:
//   nonlinear_reference.csv  the block's reference (nr-neohookean fp64 static, fine and one coarser
//                            level) and their difference
//   nonlinear_search.csv     every setting the search tried (CPU fp64, all threads): error, wall
//   nonlinear_rows.csv       the chosen setting per scene x method x target on every backend,
//                            precision and thread count: steps, iterations, validity, error, wall
//                            time (median of nl_repeats with min-max)
//   nonlinear_meta.json      settings, search rules, machine, notes
// analysis/head_to_head_nonlinear.py draws them.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>

#include "experiments/head_to_head/nl_probes.h"
#include "experiments/head_to_head/nl_runs.h"
#include "experiments/head_to_head/parts.h"
#include "meshes/errors.h"
#include "solvers/common/results.h"

namespace eb::head_to_head {
namespace {

namespace fs = std::filesystem;
std::string num(double v) { return CsvTable::num(v); }

const std::vector<double> kTargets = {1e-2, 1e-3};
// The reference's load increments: more than the search finds necessary, so that Newton never
// works at its limit.
constexpr int kRefLoadSteps = 8;

struct NlOptions {
  int repeats = 5;
  int reference_per_edge = 48;  // the block's finest references (full mode; --quick: 8 and 12)
  double row_budget_s = 60;     // a timed row runs at most this long (repeats x one run)
  double search_run_s = 60;     // the search stops refining a method once one run took longer
};

double positive_option(const ExperimentContext& ctx, const std::string& key, double fallback) {
  const std::string* v = ctx.option(key);
  if (!v) return fallback;
  char* end = nullptr;
  const double x = std::strtod(v->c_str(), &end);
  if (end == v->c_str() || *end != '\0' || !(x > 0))
    throw InputError("head-to-head option " + key + "='" + *v + "' must be a positive number");
  return x;
}

void check_positive(const std::string& key, const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(x > 0))
    throw InputError("head-to-head option " + key + "='" + v + "' must be a positive number");
}

NlOptions read_options(const ExperimentContext& ctx) {
  NlOptions o;
  o.repeats = std::max(5, int(positive_option(ctx, "nl_repeats", 5)));
  o.row_budget_s = positive_option(ctx, "nl_row_budget_s", ctx.quick ? 5 : 15);
  o.search_run_s = positive_option(ctx, "nl_search_run_s", ctx.quick ? 5 : 10);
  o.reference_per_edge = int(positive_option(ctx, "nl_reference_per_edge", 48));
  return o;
}

struct Tried {
  NlSetting setting;
  NlRun run;
  double error = NAN;
  double for_target = 0;  // tled's relaxation: the target its step count was found for; 0: any
};

// The search (CPU, fp64, all threads): tled by element size alone (its dt follows: the stable
// step), coarse to fine; nr-neohookean by element size, Newton tolerance (relative, per load
// increment: loose 1e-3 or tight 1e-6) and the fewest load increments (1, 2, ..., 64) whose
// Newton iterations all converge. Each method stops refining at the first size that meets the
// finest target, or once one run took longer than nl_search_run_s.
std::vector<Tried> search(const ExperimentContext& ctx, const NlScene& scene, const std::string& method,
                          const std::vector<int>& sizes, const std::vector<mesh::Vec3>& ref, const NlOptions& opt,
                          CsvTable& table) {
  std::vector<Tried> out;
  auto record = [&](const NlSetting& s, const NlRun& r) {
    Tried t{s, r, r.valid ? max_relative_error(r.probes, ref) : NAN};
    table.add_row({scene.name, method, s.label(), std::to_string(s.per_edge), std::to_string(r.elements),
                   s.load_steps ? std::to_string(s.load_steps) : "", s.tolerance > 0 ? num(s.tolerance) : "",
                   r.dt > 0 ? num(r.dt) : "", std::to_string(r.steps), std::to_string(r.newton_iterations),
                   std::to_string(r.cg_iterations), r.validity, r.valid ? num(t.error) : "", num(r.wall_s),
                   num(r.setup_s)});
    table.write(ctx.out_dir / "nonlinear_search.csv");
    if (!ctx.quiet)
      std::cerr << "head-to-head nonlinear: " << scene.name << " " << s.label() << ": " << r.validity << ", error "
                << t.error << ", " << r.wall_s << " s\n";
    out.push_back(t);
    return t;
  };
  for (int n : sizes) {
    double slowest = 0, best = INFINITY;
    if (method == "tled" && scene.relax) {
      // One relaxation to relax_time gives, per target, the step count after which the error
      // stays below it; that count is the setting (its wall time scaled from the whole run).
      NlSetting s{method, n, 0, 0, 0};
      const RelaxHistory h = relax_history(scene, s, ref, ctx.data_dir, 1);
      const Tried whole = record(s, h.run);
      slowest = whole.run.wall_s;
      if (!h.run.valid) continue;
      best = whole.error;
      for (double target : kTargets) {
        const long steps = h.steps_to(target);
        if (steps <= 0) continue;
        NlSetting st = s;
        st.steps = steps;
        NlRun est = h.run;
        est.steps = steps;
        est.wall_s = h.run.wall_s * double(steps) / double(h.run.steps);
        Tried t{st, est, 0.0, target};
        for (size_t k = 0; k < h.steps.size(); ++k)
          if (h.steps[k] == steps) t.error = h.error[k];
        out.push_back(t);
      }
    } else if (method == "tled") {
      const NlSetting s{method, n, 0, 0, 0};
      const Tried t = record(s, run_nl(scene, s, Backend::Cpu, Precision::Fp64, 1, ctx.data_dir));
      slowest = t.run.wall_s;
      if (t.run.valid) best = t.error;
    } else {
      for (double tol : {1e-3, 1e-6})
        for (int ls : {1, 2, 4, 8, 16, 32, 64}) {
          const NlSetting s{method, n, ls, tol, 0};
          const Tried t = record(s, run_nl(scene, s, Backend::Cpu, Precision::Fp64, 1, ctx.data_dir));
          slowest = std::max(slowest, t.run.wall_s);
          if (t.run.valid) {
            best = std::min(best, t.error);
            break;
          }
        }
    }
    if (best <= kTargets.back() || slowest > opt.search_run_s) break;
  }
  return out;
}

struct Timed {
  NlRun first;
  double error = NAN;
  std::vector<double> walls;  // empty: not timed (over the row budget or invalid)
  std::string note;
};

Timed time_setting(const ExperimentContext& ctx, const NlScene& scene, const NlSetting& s, Backend b, Precision p,
                   int threads, const std::vector<mesh::Vec3>& ref, const NlOptions& opt) {
  Timed t;
  // The first run (warm-up, validity, error) stops once it passes the row budget.
  t.first = run_nl(scene, s, b, p, threads, ctx.data_dir, opt.row_budget_s);
  if (t.first.stopped) {
    t.first.validity = "not run to the end";
    t.note = "stopped after " + num(t.first.wall_s) + " s of " + std::to_string(t.first.steps) +
             " steps or increments: over nl_row_budget_s = " + num(opt.row_budget_s);
    return t;
  }
  if (!t.first.valid) return t;
  t.error = max_relative_error(t.first.probes, ref);
  if (t.first.wall_s * opt.repeats > opt.row_budget_s) {
    t.note = "not timed: one run took " + num(t.first.wall_s) + " s, " + std::to_string(opt.repeats) +
             " exceed nl_row_budget_s = " + num(opt.row_budget_s);
    return t;
  }
  // The first run is the warm-up (first touch, device start-up): the repeats follow it.
  for (int k = 0; k < opt.repeats; ++k) {
    const NlRun r = run_nl(scene, s, b, p, threads, ctx.data_dir);
    if (!r.valid) {
      t.walls.clear();
      t.note = "repeat " + std::to_string(k) + " " + r.validity;
      return t;
    }
    t.walls.push_back(r.wall_s);
  }
  return t;
}

struct Backends {
  Backend backend;
  Precision precision;
  int threads;
};

}  // namespace

std::vector<ExperimentOption> nonlinear_part_options() {
  return {{"nl_repeats", "nonlinear part: timed repeats per row (>= 5; default 5)",
           [](const std::string& v) { check_positive("nl_repeats", v); }},
          {"nl_row_budget_s",
           "nonlinear part: seconds a timed row may take (repeats x one run; default 15, --quick 5); a row over it "
           "is reported as not timed",
           [](const std::string& v) { check_positive("nl_row_budget_s", v); }},
          {"nl_reference_per_edge",
           "nonlinear part: elements per edge of the block's finest references (full mode; default 48, the coarser "
           "level at 2/3 of it; --quick uses 8 for nr-neohookean, 16 for tled)",
           [](const std::string& v) { check_positive("nl_reference_per_edge", v); }},
          {"nl_search_run_s",
           "nonlinear part: the search stops refining a method once one of its runs took longer (default 10 s, "
           "--quick 5 s)",
           [](const std::string& v) { check_positive("nl_search_run_s", v); }}};
}

void run_nonlinear_part(const ExperimentContext& ctx) {
  const NlOptions opt = read_options(ctx);
  const bool gpu = ctx.cuda_available;
  nlohmann::json meta;
  meta["part"] = "nonlinear";
  meta["quick"] = ctx.quick;
  meta["machine"] = machine_info(0);
  meta["gpu"] = gpu;
  meta["options"] = {{"nl_repeats", opt.repeats}, {"nl_row_budget_s", opt.row_budget_s},
                     {"nl_reference_per_edge", opt.reference_per_edge}, {"nl_search_run_s", opt.search_run_s}};

  // The block's references, one per strain energy (the methods' models agree to first order only,
  // exact_probes): each method's own fp64 solution on its finest mesh, checked by one coarser level.
  const NlScene cube = cube_scene(), block = block_scene();
  const Backend ref_backend = gpu ? Backend::Cuda : Backend::Cpu;
  struct Reference {
    std::string method;
    NlSetting fine, coarse;
    NlRun fine_run, coarse_run;
    double change = NAN;
  };
  // Full mode: both at nl_reference_per_edge, the coarser level at 2/3 of it.
  const int ref_n = opt.reference_per_edge, ref_coarse = std::max(2, (2 * ref_n + 1) / 3);
  std::vector<Reference> refs = {
      {"nr-neohookean", {"nr-neohookean", ctx.quick ? 8 : ref_n, kRefLoadSteps, 1e-8, 0},
       {"nr-neohookean", ctx.quick ? 4 : ref_coarse, kRefLoadSteps, 1e-8, 0}, {}, {}, NAN},
      {"tled", {"tled", ctx.quick ? 16 : ref_n, 0, 0, 0}, {"tled", ctx.quick ? 12 : ref_coarse, 0, 0, 0}, {}, {}, NAN}};
  CsvTable ref_table({"method", "level", "per_edge", "elements", "backend", "load_steps", "tolerance", "steps",
                      "newton_iterations", "cg_iterations", "wall_s", "probe", "x", "y", "z", "ux", "uy", "uz"});
  nlohmann::json ref_meta = nlohmann::json::array();
  for (Reference& r : refs) {
    r.fine_run = run_nl(block, r.fine, ref_backend, Precision::Fp64, ctx.max_threads, ctx.data_dir);
    r.coarse_run = run_nl(block, r.coarse, ref_backend, Precision::Fp64, ctx.max_threads, ctx.data_dir);
    if (!r.fine_run.valid || !r.coarse_run.valid)
      throw RuntimeFailure("head-to-head nonlinear: the block's " + r.method + " fp64 reference at " +
                           std::to_string(r.fine_run.valid ? r.coarse.per_edge : r.fine.per_edge) +
                           " elements per edge is invalid: " +
                           (r.fine_run.valid ? r.coarse_run.validity : r.fine_run.validity) +
                           " (option nl_reference_per_edge sets the reference's resolution)");
    r.change = max_relative_error(r.coarse_run.probes, r.fine_run.probes);
    for (const NlRun* run : {&r.fine_run, &r.coarse_run}) {
      const NlSetting& s = run == &r.fine_run ? r.fine : r.coarse;
      for (size_t k = 0; k < block.probes.size(); ++k)
        ref_table.add_row({r.method, run == &r.fine_run ? "fine" : "coarse", std::to_string(s.per_edge),
                           std::to_string(run->elements), to_string(ref_backend),
                           s.load_steps ? std::to_string(s.load_steps) : "", s.tolerance > 0 ? num(s.tolerance) : "",
                           std::to_string(run->steps), std::to_string(run->newton_iterations),
                           std::to_string(run->cg_iterations), num(run->wall_s), std::to_string(k),
                           num(block.probes[k][0]), num(block.probes[k][1]), num(block.probes[k][2]),
                           num(run->probes[k][0]), num(run->probes[k][1]), num(run->probes[k][2])});
    }
    ref_table.write(ctx.out_dir / "nonlinear_reference.csv");
    ref_meta.push_back({{"method", r.method}, {"fine_per_edge", r.fine.per_edge}, {"coarse_per_edge", r.coarse.per_edge},
                        {"fine_elements", r.fine_run.elements}, {"change_coarse_to_fine", r.change}});
    if (!ctx.quiet)
      std::cerr << "head-to-head nonlinear: block " << r.method << " reference change coarse->fine " << r.change << "\n";
  }
  const double model_gap = max_relative_error(refs[1].fine_run.probes, refs[0].fine_run.probes);
  meta["reference"] = {
      {"scene", "block"}, {"backend", to_string(ref_backend)}, {"levels", ref_meta},
      {"nr-neohookean", "static fp64, " + std::to_string(kRefLoadSteps) + " load increments, Newton 1e-8 relative, CG 1e-10"},
      {"tled", "fp64 dynamic relaxation to 0.2 s under mass damping 300 1/s"},
      {"model_gap", model_gap},
      {"model_gap_note", "max probe difference of tled's fine reference from nr-neohookean's, relative: the two "
                         "strain energies' difference at this strain plus both references' own errors"},
      {"note", "each method is measured against the reference of its own strain energy; a reference's own error is "
               "about its coarse-to-fine change or less, so a target below that change is marked not verifiable"}};
  // The cube's models differ likewise: the exact lateral stretches at 20% compression.
  {
    const std::vector<mesh::Vec3> et = exact_probes(cube, "tled"), en = exact_probes(cube, "nr-neohookean");
    meta["cube_model_gap"] = max_relative_error(et, en);
  }

  // Written now and again at the end, so that a run cut short still describes what it wrote.
  write_json_atomic(ctx.out_dir / "nonlinear_meta.json", meta);

  CsvTable search_table({"scene", "method", "setting", "per_edge", "elements", "load_steps", "newton_tolerance", "dt",
                         "steps", "newton_iterations", "cg_iterations", "validity", "error", "wall_s", "setup_s"});
  CsvTable rows({"scene", "target", "target_verifiable", "method", "variant", "setting", "per_edge", "elements",
                 "load_steps", "newton_tolerance", "dt", "backend", "precision", "threads", "steps",
                 "newton_iterations", "cg_iterations", "validity", "error", "meets_target", "repeats", "wall_median_s",
                 "wall_min_s", "wall_max_s", "note"});
  std::vector<Backends> configs;
  for (Precision p : {Precision::Fp64, Precision::Fp32}) {
    configs.push_back({Backend::Cpu, p, 1});
    if (ctx.max_threads > 1) configs.push_back({Backend::Cpu, p, ctx.max_threads});
    if (gpu) configs.push_back({Backend::Cuda, p, 0});
  }
  nlohmann::json chosen = nlohmann::json::array();
  std::map<std::string, Timed> cache;
  for (const NlScene* scene : {&cube, &block}) {
    for (const std::string method : {"tled", "nr-neohookean"}) {
      const Reference& own = refs[method == "nr-neohookean" ? 0 : 1];
      const std::vector<mesh::Vec3> ref = scene->exact ? exact_probes(*scene, method) : own.fine_run.probes;
      const int coarse_n = own.coarse.per_edge;
      std::vector<int> sizes;
      if (method == "tled")
        sizes = scene->exact ? std::vector<int>{2, 3, 4, 6, 8, 12} : std::vector<int>{2, 3, 4, 6, 8, 12, 16, 24};
      else
        sizes = scene->exact ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{2, 3, 4, 6, 8, 12, 16, 24};
      if (!scene->exact)  // coarser than the reference's coarse level
        sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](int n) { return n >= coarse_n; }), sizes.end());
      if (ctx.quick) sizes.resize(std::min<size_t>(sizes.size(), method == "tled" ? 5 : 4));
      const std::vector<Tried> tried = search(ctx, *scene, method, sizes, ref, opt, search_table);
      for (double target : kTargets) {
        const Tried* best = nullptr;
        for (const Tried& t : tried)
          if (t.run.valid && t.error <= target && (t.for_target == 0 ? !(scene->relax && method == "tled") : t.for_target == target) &&
              (!best || t.run.wall_s < best->run.wall_s))
            best = &t;
        const bool verifiable = scene->exact || own.change <= target;
        if (!best) {
          double lowest = INFINITY;
          for (const Tried& t : tried)
            if (t.run.valid) lowest = std::min(lowest, t.error);
          rows.add_row({scene->name, num(target), verifiable ? "yes" : "no", method, "", "", "", "", "", "", "", "", "",
                        "", "", "", "", "not reached", std::isfinite(lowest) ? num(lowest) : "", "no", "", "", "", "",
                        "no setting tried meets the target (lowest error in the error column)"});
          rows.write(ctx.out_dir / "nonlinear_rows.csv");
          continue;
        }
        const NlSetting& s = best->setting;
        chosen.push_back({{"scene", scene->name}, {"method", method}, {"target", target}, {"setting", s.label()},
                          {"search_wall_s", best->run.wall_s}, {"search_error", best->error}});
        for (const Backends& c : configs) {
          const std::string key = scene->name + s.label() + to_string(c.backend) + to_string(c.precision) +
                                  std::to_string(c.threads);
          if (!cache.count(key)) cache[key] = time_setting(ctx, *scene, s, c.backend, c.precision, c.threads, ref, opt);
          const Timed& t = cache[key];
          std::vector<double> w = t.walls;
          std::sort(w.begin(), w.end());
          const bool timed = !w.empty();
          rows.add_row({scene->name, num(target), verifiable ? "yes" : "no", method, nl_variant(method, c.backend),
                        s.label(), std::to_string(s.per_edge), std::to_string(t.first.elements),
                        s.load_steps ? std::to_string(s.load_steps) : "", s.tolerance > 0 ? num(s.tolerance) : "",
                        t.first.dt > 0 ? num(t.first.dt) : "", to_string(c.backend), to_string(c.precision),
                        c.backend == Backend::Cpu ? std::to_string(c.threads) : "", std::to_string(t.first.steps),
                        std::to_string(t.first.newton_iterations), std::to_string(t.first.cg_iterations),
                        t.first.validity, std::isfinite(t.error) ? num(t.error) : "",
                        std::isfinite(t.error) ? (t.error <= target ? "yes" : "no") : "", timed ? std::to_string(w.size()) : "",
                        timed ? num(w[w.size() / 2]) : "", timed ? num(w.front()) : "", timed ? num(w.back()) : "",
                        t.note});
          rows.write(ctx.out_dir / "nonlinear_rows.csv");
        }
      }
    }
  }
  meta["chosen"] = chosen;
  meta["scenes"] = {{{"name", cube.name}, {"description", cube.description},
                     {"reference", "exact homogeneous solution of each method's strain energy"}},
                    {{"name", block.name}, {"description", block.description},
                     {"reference", "each method's own fp64 solution on its finest mesh (nonlinear_reference.csv)"}}};
  meta["error"] = "max over the probes of |u - u_ref| / max over the probes of |u_ref|; each mesh's displacement "
                  "interpolated at the probes by its own shape functions (nl_probes.h)";
  meta["search"] =
      "CPU fp64, one thread, one run per setting. tled: element size (elements per edge; dt is its stable step x "
      "courant 0.8): on the cube the 5 s loading with convergence_rate 0.999 as strbac2015; on the block dynamic "
      "relaxation under mass damping 300 1/s, one run to 0.2 s with the probe error after every 1/200 of it, "
      "the setting's step count being the first after which the error stays below the target. nr-neohookean: element size, Newton "
      "tolerance (relative per increment, 1e-3 or 1e-6) and the fewest static load increments of 1, 2, 4, ..., 64 "
      "that converge. Each target takes the valid setting of least wall time whose error meets it; refining stops "
      "at the first size meeting 0.1% or once a run took more than nl_search_run_s";
  meta["timing"] = "wall time of the solve alone (advance / solve_static; both return with the device synchronized), "
                   "host clock, median of " + std::to_string(opt.repeats) +
                   " runs (option nl_repeats) after one untimed run that also gives validity and error; "
                   "set-up (mesh, pattern, upload) excluded and listed in nonlinear_search.csv";
  meta["end_state"] =
      "tled: the state at t = 5 s of the quasi-static loading (the paper's); nr-neohookean: static equilibrium under "
      "the full load (an implicit method's way to a quasi-static end state; the dynamic end state differs from it by "
      "inertia of order (wave period / loading time)^2, ~1e-5 here)";
  meta["variants"] = "tled gather (default); nr-neohookean cpu-opt on the CPU, globalnz (all on the GPU) on CUDA";
  write_json_atomic(ctx.out_dir / "nonlinear_meta.json", meta);
}

}  // namespace eb::head_to_head
