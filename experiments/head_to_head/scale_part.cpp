// head-to-head part `scale`: the largest model each method (default variant, fp32, CUDA) fits in
// the device's memory. Per method: the cantilever box (hexahedra for hexmg and tled, tetrahedra
// for the others) at two small sizes gives the device bytes (the method's estimate behind
// `run --gpu-memory-limit` and Simulation::device_bytes(), the larger of the two) and the host
// set-up time (mesh generation, set-up, upload); both are extrapolated linearly in the element
// count (scale_fit.h), and the size taken is the largest whose bytes fit scale_memory_fraction of
// the free memory (cudaMemGetInfo) and whose set-up fits scale_setup_s. That model is built and
// run a few steps. Writes under ctx.out_dir:
//   scale_samples.csv  the small sizes: elements, estimate, device_bytes, estimate and set-up seconds, the
//                      build's peak host bytes
//   scale_rows.csv     per method: the plan (fits, limits: device memory, host memory, set-up and
//                      step time, the method's indices), then the large run: elements, predicted
//                      and measured bytes, set-up, steps/s (median of scale_steps with min-max),
//                      validity
//   scale_meta.json    device, free memory, options, notes
// Without a usable CUDA device it writes scale_meta.json with a note that the part is GPU-only.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <sstream>

#if defined(ELASTOBENCH_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

#include "experiments/head_to_head/h2h_scenes.h"
#include "experiments/head_to_head/parts.h"
#include "experiments/head_to_head/scale_fit.h"
#include "meshes/errors.h"
#include "meshes/host_memory.h"
#include "solvers/common/boundary.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/registry.h"
#include "solvers/common/results.h"
#include "solvers/common/validity.h"
#include "solvers/linalg/element_gather.h"
#include "solvers/tled/tled_setup.h"

namespace eb::head_to_head {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
std::string num(double v) { return CsvTable::num(v); }

struct ScaleMethod {
  std::string name;
  bool hexahedra;
  double max_elements = 0;  // the method's own index limit (0: none)
  std::string limit = "";   // what sets it
};
const std::vector<ScaleMethod> kMethods = {
    {"hexmg", true},
    {"tled", true, double(tled::tled_max_elements()), "32-bit element slot indices"},
    {"bcsr-pcg", false, double(linalg::sliced_gather_max_elements(4)), "32-bit gather offsets"},
    {"nr-neohookean", false},
    {"corot-cg", false}};

// The variant a method runs on the GPU, as the corot part's table has it (nr-neohookean: SharedNZ,
// not the registry's first, CPU-assembled variant), else the registry's first.
std::string gpu_variant(const std::string& method) {
  for (const VariantSpec& v : corot_variants())
    if (v.method == method && (v.backends.empty() || std::find(v.backends.begin(), v.backends.end(), Backend::Cuda) != v.backends.end()))
      return v.variant;
  return methods().info(method).variants.front().name;
}

// The cantilever's box at divisions {10 m, m, m} in Cecka's units (mu = 5, lambda = 2, rho = 1,
// gravity 1, dt 0.01: the cecka scenarios' material): nr-neohookean's Newton cannot meet its
// fp32 tolerance on the steel-like cantilever (E = 1e8 at 1 m: fp32 rounding in the residual
// stalls it), and the part runs every method in fp32. Each method takes its own time step where
// it has one (tled its stable step); nr-neohookean solves every step (nr_min_iterations 1: a
// body at rest whose first residual meets the tolerance would otherwise take no iteration).
Scenario scale_scenario(const std::string& method, const std::vector<int>& div) {
  std::vector<std::string> o = {"mesh.divisions=[" + std::to_string(div[0]) + ", " + std::to_string(div[1]) + ", " +
                                    std::to_string(div[2]) + "]",
                                "output.probe_every=0", "time.until_rest=false", "boundary.gravity=[0.0, 0.0, -1.0]",
                                method == "tled" ? "time.dt=0.0" : "time.dt=0.01"};
  if (method == "nr-neohookean") o.push_back("nr-neohookean.nr_min_iterations=1");
  Scenario sc = load_scenario("cantilever", o);
  sc.material.youngs_modulus.reset();
  sc.material.poisson_ratio.reset();
  sc.material.lame_lambda = 2.0;
  sc.material.lame_mu = 5.0;
  sc.material.density = 1.0;
  validate_scenario(sc);
  sc.solver.variant = gpu_variant(method);
  return sc;
}

double free_device_bytes() {
#if defined(ELASTOBENCH_HAVE_CUDA)
  std::size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) return 0;
  return double(free_b);
#else
  return 0;
#endif
}

struct Built {
  std::unique_ptr<Simulation> sim;
  double elements = 0, estimate = 0, device_bytes = 0, setup_s = 0, used_bytes = 0;
  // The estimate builds much of the problem again (tled its host set-up, nr-neohookean its whole
  // SharedNZ plan): the largest model asks for it only where the method does not report its own
  // device bytes (Simulation::device_bytes() 0), and then its seconds count against scale_setup_s.
  double estimate_s = 0;
  double host_bytes = 0;  // peak resident bytes during the build above those before it (0: unknown)
};

Built build(const ScaleMethod& m, const std::vector<int>& div, const RunOptions& opt, bool estimate) {
  const Scenario sc = scale_scenario(m.name, div);
  const MethodEntry& entry = methods().find(m.name, sc.solver.variant, Backend::Cuda, Precision::Fp32);
  Built b;
  const auto te = Clock::now();
  b.estimate = estimate && entry.estimate_device_bytes ? double(entry.estimate_device_bytes(sc, opt)) : 0.0;
  b.estimate_s = seconds_since(te);
  const double free_before = free_device_bytes();
  const bool peak_reset = mesh::reset_peak_resident();
  const double resident_before = double(mesh::resident_bytes());
  const auto t0 = Clock::now();
  b.sim = entry.factory(sc, opt);
  b.setup_s = seconds_since(t0);
  if (peak_reset && resident_before > 0)
    b.host_bytes = std::max(0.0, double(mesh::peak_resident_bytes()) - resident_before);
  b.used_bytes = free_before - free_device_bytes();
  b.device_bytes = double(b.sim->device_bytes());
  b.elements = double(b.sim->connectivity().size() / (m.hexahedra ? 8 : 4));
  return b;
}

// The set-up's stages as the method reports them (details()'s setup_s: [{stage, seconds}]),
// "model 3.1 s; pattern 0.8 s; ...", or "" where it reports none.
std::string setup_stages(const Simulation& sim) {
  const nlohmann::json d = sim.details();
  if (!d.contains("setup_s") || !d["setup_s"].is_array()) return "";
  std::ostringstream o;
  for (const auto& lap : d["setup_s"]) {
    if (o.tellp() > 0) o << "; ";
    o << lap.at("stage").get<std::string>() << " " << num(lap.at("seconds").get<double>()) << " s";
  }
  return o.str();
}

}  // namespace

void run_scale_part(const ExperimentContext& ctx) {
  nlohmann::json meta;
  meta["part"] = "scale";
  meta["machine"] = machine_info(0);
  if (!ctx.cuda_available) {
    meta["note"] = "GPU-only part: no usable CUDA device in this run, so nothing was measured";
    write_json_atomic(ctx.out_dir / "scale_meta.json", meta);
    if (!ctx.quiet) std::cerr << "head-to-head scale: GPU-only, no usable CUDA device: skipped\n";
    return;
  }
  auto number = [&](const char* key, double fallback) {
    const std::string* v = ctx.option(key);
    return v ? std::stod(*v) : fallback;
  };
  const double fraction = number("scale_memory_fraction", 0.8);
  const double host_fraction = number("scale_host_fraction", 0.8);
  const double setup_limit = number("scale_setup_s", 20);
  const int max_steps = std::max(1, int(number("scale_steps", 5)));
  const double run_limit = number("scale_run_s", 10);
  meta["options"] = {{"scale_memory_fraction", fraction}, {"scale_host_fraction", host_fraction}, {"scale_setup_s", setup_limit}, {"scale_steps", max_steps},
                     {"scale_run_s", run_limit}};
  RunOptions opt;
  opt.backend = Backend::Cuda;
  opt.precision = Precision::Fp32;
  opt.data_dir = ctx.data_dir;

  CsvTable samples({"method", "variant", "divisions", "elements", "estimate_bytes", "device_bytes",
                    "cudamemgetinfo_bytes", "estimate_s", "setup_s", "first_step_s", "host_peak_bytes", "setup_stages"});
  CsvTable rows({"method", "variant", "element", "bytes_per_element", "bytes_intercept", "setup_s_per_million",
                 "free_bytes", "memory_elements", "time_elements", "step_elements", "host_bytes_per_element",
                 "host_elements", "limited_by", "divisions", "elements",
                 "predicted_bytes", "estimate_bytes", "device_bytes", "cudamemgetinfo_bytes", "device_bytes_vs_predicted",
                 "predicted_setup_s", "estimate_s", "setup_s", "steps", "step_ms_median", "step_ms_min", "step_ms_max",
                 "steps_per_s", "validity", "setup_stages", "note"});
  meta["device"] = cuda_device_info(0).name;
  write_json_atomic(ctx.out_dir / "scale_meta.json", meta);  // again at the end, with the notes
  // A first build starts the CUDA context and the allocator, outside every measurement.
  { Built warm = build(kMethods[1], {20, 2, 2}, opt, false); }
  std::vector<ScaleMethod> chosen = kMethods;
  if (const std::string* v = ctx.option("scale_methods")) {
    const std::vector<std::string> names = scale_method_list(*v);
    chosen.clear();
    for (const std::string& n : names)
      for (const ScaleMethod& m : kMethods)
        if (m.name == n) chosen.push_back(m);
    meta["options"]["scale_methods"] = names;
  }
  for (const ScaleMethod& m : chosen) {
    const int per_cube = m.hexahedra ? 1 : 6;
    const std::string variant = gpu_variant(m.name);
    std::vector<ScaleSample> fit_samples;
    try {
      bool reports_bytes = true;  // every sample's device_bytes() > 0: the largest model needs no estimate
      auto sample = [&](int mi) {
        const std::vector<int> div = {10 * mi, mi, mi};
        // The estimate is a cross-check where the method reports its device bytes: the two small
        // samples run it, the one at half the planned size (minutes of set-up at 10^7
        // elements for nr-neohookean, whose estimate builds its plan again) does not.
        Built b = build(m, div, opt, !reports_bytes || mi <= 16);
        reports_bytes = reports_bytes && b.device_bytes > 0;
        const auto t0 = Clock::now();
        b.sim->advance(1);
        fit_samples.push_back(
            {b.elements, std::max(b.estimate, b.device_bytes), b.setup_s + (b.device_bytes > 0 ? 0.0 : b.estimate_s),
             seconds_since(t0), b.host_bytes});
        samples.add_row({m.name, variant, std::to_string(div[0]) + "x" + std::to_string(mi) + "x" + std::to_string(mi),
                         num(b.elements), num(b.estimate), num(b.device_bytes), num(b.used_bytes), num(b.estimate_s), num(b.setup_s),
                         num(fit_samples.back().step_s), b.host_bytes > 0 ? num(b.host_bytes) : "", setup_stages(*b.sim)});
        samples.write(ctx.out_dir / "scale_samples.csv");
      };
      sample(8);
      sample(16);
      double free_b = free_device_bytes();
      ScalePlan plan = plan_scale(fit_samples, free_b, fraction, setup_limit, run_limit / max_steps);
      cap_scale(plan, m.max_elements, m.limit);
      cap_scale_host(plan, fit_samples, double(mesh::available_host_memory()), host_fraction);
      // Set-up time grows faster than linearly over two decades (sorting, reordering), so a
      // plan far beyond the samples is checked at half its edge (1/8 of its elements) and
      // redone from the two largest samples.
      const int planned_m = beam_divisions(plan.elements, per_cube)[1];
      if (planned_m >= 40) {
        sample(planned_m / 2);
        free_b = free_device_bytes();
        plan = plan_scale({fit_samples[1], fit_samples[2]}, free_b, fraction, setup_limit, run_limit / max_steps);
        cap_scale(plan, m.max_elements, m.limit);
        cap_scale_host(plan, {fit_samples[1], fit_samples[2]}, double(mesh::available_host_memory()), host_fraction);
      }
      const std::vector<int> div = beam_divisions(plan.elements, per_cube);
      const double elements_planned = double(div[0]) * div[1] * div[2] * per_cube;
      if (!ctx.quiet)
        std::cerr << "head-to-head scale: " << m.name << ": " << elements_planned << " elements (" << plan.limited_by
                  << " bound), predicted " << plan.bytes.at(elements_planned) / 1e9 << " GB\n";
      std::vector<std::string> row = {m.name, variant, m.hexahedra ? "hex8" : "tet4", num(plan.bytes.slope),
                                      num(plan.bytes.intercept), num(plan.setup.slope * 1e6), num(free_b),
                                      num(plan.memory_elements), num(plan.time_elements), num(plan.step_elements),
                                      plan.host.slope > 0 ? num(plan.host.slope) : "",
                                      std::isfinite(plan.host_elements) ? num(plan.host_elements) : "", plan.limited_by,
                                      std::to_string(div[0]) + "x" + std::to_string(div[1]) + "x" + std::to_string(div[2])};
      Built big = build(m, div, opt, !reports_bytes);
      ValidityTracker tracker(bounding_box_diagonal(big.sim->nodes()), big.sim->dt());
      const auto tw = Clock::now();
      big.sim->advance(1);
      const double warm_s = seconds_since(tw);
      const int steps = std::max(1, std::min(max_steps, int(run_limit / std::max(warm_s, 1e-9))));
      std::vector<double> ms;
      for (int k = 0; k < steps; ++k) {
        const auto t0 = Clock::now();
        big.sim->advance(1);
        ms.push_back(seconds_since(t0) * 1e3);
        tracker.check_solver(k + 2, big.sim->solver_stats());
      }
      std::vector<double> u, v;
      big.sim->copy_state_to_host(u, v);
      tracker.check_state(steps + 1, u, v);
      tracker.set_method_counts(big.sim->validity());
      std::sort(ms.begin(), ms.end());
      const bool valid = tracker.valid();
      const double predicted = plan.bytes.at(big.elements);
      const std::vector<std::string> rest = {
          num(big.elements), num(predicted), reports_bytes ? "" : num(big.estimate), num(big.device_bytes), num(big.used_bytes),
          num(std::max(big.estimate, big.device_bytes) / predicted), num(plan.setup.at(big.elements)),
          reports_bytes ? "" : num(big.estimate_s), num(big.setup_s), std::to_string(steps), valid ? num(ms[ms.size() / 2]) : "", valid ? num(ms.front()) : "",
          valid ? num(ms.back()) : "", valid ? num(1e3 / ms[ms.size() / 2]) : "",
          valid ? "valid" : "invalid: " + tracker.reasons().front(), setup_stages(*big.sim),
          steps < max_steps ? "warm-up step took " + num(warm_s) + " s: " + std::to_string(steps) + " steps timed (scale_run_s)"
                            : ""};
      row.insert(row.end(), rest.begin(), rest.end());
      rows.add_row(row);
    } catch (const std::exception& e) {
      // One method's failure (refused or out of memory) is that method's row; the others still run.
      std::vector<std::string> row = {m.name, variant, m.hexahedra ? "hex8" : "tet4"};
      row.resize(rows.columns().size() - 1);
      row.push_back(std::string("failed: ") + e.what());
      rows.add_row(row);
    }
    rows.write(ctx.out_dir / "scale_rows.csv");
  }
  meta["device"] = cuda_device_info(0).name;
  meta["scene"] = "the cantilever's box (1 m x 0.1 m x 0.1 m, clamped at x = 0) at divisions 10m x m x m in Cecka's "
                  "units (mu = 5, lambda = 2, rho = 1, gravity 1, dt 0.01; tled its stable step): the steel-like "
                  "cantilever stalls nr-neohookean's fp32 Newton; hexahedra for hexmg and tled, 6 tetrahedra per "
                  "cube for the others; default variant, fp32, CUDA";
  meta["method"] =
      "device bytes = max(the method's estimate behind run --gpu-memory-limit, Simulation::device_bytes()) at "
      "m = 8 and 16 (and at half the planned m when that is 40 or more, the plan then redone from the two largest "
      "samples), set-up seconds (mesh generation, set-up, upload, and the estimate, which builds much of the problem "
      "again, where the method does not report its device bytes; then the sample at half the planned size and "
      "the largest model skip it) at the same sizes; both fitted as a + b x "
      "elements; the size taken is the largest m whose bytes fit scale_memory_fraction x the free memory "
      "(cudaMemGetInfo, just before), whose host bytes (the build's peak resident bytes, fitted likewise) fit "
      "scale_host_fraction x the host's available memory, whose set-up fits scale_setup_s and whose first step "
      "(fitted likewise) fits scale_run_s / scale_steps";
  meta["timing"] = "host clock around advance(1) (returns with the device synchronized), after one warm-up step";
  write_json_atomic(ctx.out_dir / "scale_meta.json", meta);
}

}  // namespace eb::head_to_head
