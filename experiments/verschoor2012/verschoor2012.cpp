// `elastobench reproduce verschoor2012`: Verschoor & Jalba 2012, co-rotational tetrahedra with a
// gather-updated BCSR matrix and Jacobi-PCG on the GPU. Writes under ctx.out_dir:
//   models.csv       the tetrahedralized models (Sec. 5.5): model, N, elements, nodes, blocks
//   performance.csv  Figs. 3-4: per model and size, per backend x precision x variant x mode, the
//                    time of each phase (Rotation, Matrix, Update, CG, Integrate), one SpMV alone,
//                    the whole step, steps/s, GFLOP/s per phase and the update's and SpMV's
//                    effective bandwidth (compulsory bytes) against the same run's STREAM triad
//   iterations.csv   the CG iterations the tolerance mode needs (paper: 5 to 18), per tolerance
//   cpu_triad.csv    the CPU's STREAM triad at 1..N threads, measured in this run
//   meta.json        parameters, ceilings, conventions and the parts run
//   runs/<label>/summary.json for every run
// Parts: performance, iterations. Options (`reproduce verschoor2012 --option KEY=VALUE`, for device
// calls of limited length): sizes=bunny:64,dragon:128 runs only those sizes in the performance
// part; cpu=off leaves its CPU rows out. No number from an invalid run is tabulated (the row keeps
// what identifies it and "invalid: <reason>"). analysis/verschoor2012.py draws the figures.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>

#include "experiments/experiment.h"
#include "meshes/errors.h"
#include "meshes/mesh_io.h"
#include "meshes/mesh_spec.h"
#include "solvers/bcsr_pcg/bcsr_pcg_simulation.h"
#include "solvers/common/cpu_stream.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/registry.h"
#include "solvers/common/results.h"
#include "solvers/common/runner.h"
#include "solvers/common/validity.h"

namespace eb {
namespace {

namespace fs = std::filesystem;

// Sec. 6: "each dimension is at most 66 cm"; E = 5e5 N/m^2, Poisson 0.2, rho = 1000 kg/m^3,
// dt = 1 ms. The paper's models move freely (bouncing, stretched by the user); ours stand on
// their base (the nodes within 1.5 voxels of the lowest point fixed) under gravity, a load that
// keeps every element far from inversion (strain ~ rho g h / E ~ 1%).
constexpr double kModelSize = 0.66;

struct Model {
  std::string name, file;
};
const std::vector<Model> kModels = {{"bunny", "bunny.off"}, {"dragon", "Dragon_50k.obj"}};

// The scenario text of a model whose surface spans [lo, hi], voxelized with N voxels along its
// longest axis and tetrahedralized as in Sec. 5.5 (6 equal tetrahedra per voxel, the interior
// merged into larger ones), scaled to 66 cm with its bounding box's low corner at the origin.
std::string model_toml(const Model& m, int N, const mesh::Vec3& lo, const mesh::Vec3& hi) {
  const double longest = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
  const double scale = kModelSize / longest, h = kModelSize / N;
  std::ostringstream t;
  t.precision(17);
  t << "name = \"verschoor2012-" << m.name << "\"\n"
    << "description = \"\"\"Verschoor & Jalba 2012 Sec. 5.5/6: " << m.file << " scaled to 66 cm, " << N
    << " voxels along the longest axis (mesh.element_size = 0.66 / N), 6 tetrahedra per voxel, interior merged; "
       "E = 5e5 Pa, nu = 0.2, rho = 1000 kg/m^3, dt = 1 ms. The paper's models move freely; here the base (nodes "
       "within 1.5 voxels of the lowest point) is fixed and gravity acts along -y.\"\"\"\n"
    << "[mesh]\nsource = \"file\"\nfile = \"" << m.file << "\"\nscale = " << scale << "\ntranslate = ["
    << -lo[0] * scale << ", " << -lo[1] * scale << ", " << -lo[2] * scale << "]\nelement_size = " << h
    << "\ntets_per_cube = 6\ntetrahedralizer = \"voxel-merged\"\n"
    << "[material]\nyoungs_modulus = 5.0e5\npoisson_ratio = 0.2\ndensity = 1000.0\n"
    << "[boundary]\ngravity = [0.0, -9.81, 0.0]\n"
    << "[[boundary.fixed]]\ncomponents = \"xyz\"\nwhere = { kind = \"box\", min = [-1.0, -1.0, -1.0], max = [2.0, "
    << 1.5 * h << ", 2.0] }\n"
    << "[time]\ndt = 0.001\nsteps = 100\n"
    << "[output]\nprobe_every = 1\n";
  return t.str();
}

Scenario model_scenario(const Model& m, int N, const fs::path& data_dir) {
  const mesh::TriSurface surf = mesh::read_surface(mesh::resolve_data_file(m.file, data_dir));
  mesh::Vec3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
  for (const auto& p : surf.nodes)
    for (int d = 0; d < 3; ++d) {
      lo[size_t(d)] = std::min(lo[size_t(d)], p[size_t(d)]);
      hi[size_t(d)] = std::max(hi[size_t(d)], p[size_t(d)]);
    }
  Scenario sc = scenario_from_json(parse_scenario_text(model_toml(m, N, lo, hi), "toml", "verschoor2012"),
                                   "verschoor2012 " + m.name);
  sc.name += "-N" + std::to_string(N);
  return sc;
}

// `verschoor2012-bunny` for `elastobench run`: bunny.off's bounding box (SOURCES.md) at N = 64.
const bool kBunnyRegistered = [] {
  if (!find_builtin_scenario("verschoor2012-bunny"))
    register_builtin_scenario({"verschoor2012-bunny",
                               "Verschoor 2012: bunny at 66 cm, 64 voxels, merged tetrahedra, base fixed, gravity",
                               model_toml(kModels[0], 64, {-0.0947581, 0.0329874, -0.0619614},
                                          {0.0610375, 0.187363, 0.0588308})});
  return true;
}();

struct Config {
  Backend backend;
  Precision precision;
  int threads;          // CPU
  std::string variant;  // gather, scatter
  bool graph;           // CUDA: whole step as one graph (steps/s); false: phases timed one by one
};

std::string label(const std::string& model, int N, const Config& c) {
  std::string s = model + "_N" + std::to_string(N) + "_" + to_string(c.backend) + "_" + to_string(c.precision);
  if (c.backend == Backend::Cpu) s += "_t" + std::to_string(c.threads);
  s += "_" + c.variant + (c.graph ? "_graph" : "_phases");
  return s;
}

std::string num(double v) { return CsvTable::num(v); }

struct Ceilings {
  CpuTriad cpu;
  double gpu_fp32 = 0, gpu_fp64 = 0;
  double triad_for(const Config& c) const {
    if (c.backend == Backend::Cuda) return c.precision == Precision::Fp32 ? gpu_fp32 : gpu_fp64;
    for (const auto& p : cpu.points)
      if (p.threads == c.threads) return p.median_gbps;
    return 0;
  }
};

const char* kPhases[] = {"rotation", "matrix", "update", "cg", "integrate"};

const std::vector<std::string> kPerfColumns = {
    "model", "N", "elements", "nodes", "blocks", "backend", "precision", "threads", "variant", "mode", "validity",
    "steps_timed", "rotation_ms", "matrix_ms", "update_ms", "cg_ms", "integrate_ms", "step_ms", "step_ms_min",
    "step_ms_max", "steps_per_s", "spmv_ms", "cg_iterations", "rotation_gflops", "matrix_gflops", "update_gflops",
    "cg_gflops", "spmv_gflops", "total_gflops", "update_gbps", "spmv_gbps", "step_gbps", "stream_triad_gbps",
    "update_of_triad", "spmv_of_triad", "step_of_triad", "bytes_convention", "rotation_ms_min", "rotation_ms_max",
    "matrix_ms_min", "matrix_ms_max", "update_ms_min", "update_ms_max", "cg_ms_min", "cg_ms_max", "integrate_ms_min",
    "integrate_ms_max"};

// Runs one configuration and appends its row. Every configuration starts from rest and times the
// same steps (warm-up, then `timed`), so CPU and GPU rows describe the same work.
void run_config(const ExperimentContext& ctx, const Model& m, int N, const Config& c, int warmup, int timed,
                const Ceilings& ceilings, CsvTable& table, nlohmann::json& spmv_profile) {
  RunRequest req;
  req.method = "bcsr-pcg";
  req.variant = c.variant;
  req.options.backend = c.backend;
  req.options.precision = c.precision;
  req.options.threads = c.threads;
  req.options.data_dir = ctx.data_dir;
  req.scenario = model_scenario(m, N, ctx.data_dir);
  req.scenario.method_options["bcsr-pcg"] = {{"graph", c.graph}};
  req.scenario_origin = req.scenario.name;
  req.out_dir = ctx.out_dir / "runs" / label(m.name, N, c);
  req.quiet = ctx.quiet;
  req.steps = warmup + timed;
  req.warmup_steps = warmup;
  double spmv_ms = 0;
  req.after_run = [&](Simulation& sim, nlohmann::json& summary) {
    auto* b = dynamic_cast<bcsr_pcg::BcsrPcgSimulation*>(&sim);
    if (!b || !run_is_valid(summary)) return;
    spmv_ms = b->time_spmv_ms(7);
    summary["spmv_alone_ms"] = spmv_ms;
  };
  const nlohmann::json s = run_simulation(req);
  std::string why;
  const bool valid = run_is_valid(s, &why);
  const auto& d = s["method_details"];
  std::vector<std::string> row = {m.name, std::to_string(N), std::to_string(s["mesh"]["elements"].get<long>()),
                                  std::to_string(s["mesh"]["nodes"].get<long>()), num(d["blocks"].get<double>()),
                                  to_string(c.backend), to_string(c.precision),
                                  c.backend == Backend::Cpu ? std::to_string(c.threads) : "", c.variant,
                                  c.graph ? "graph" : "phases", valid ? "valid" : why,
                                  std::to_string(s["timing"]["measured_steps"].get<long>())};
  if (!valid) {
    row.resize(kPerfColumns.size());
    table.add_row(row);
    return;
  }
  const auto& phases = s["timing"]["phases"];
  auto median = [&](const char* p) { return phases.contains(p) ? phases[p]["median_ms"].get<double>() : 0.0; };
  double step_ms = 0, step_min = 0, step_max = 0;
  if (phases.contains("step")) {
    step_ms = median("step");
    step_min = phases["step"]["min_ms"].get<double>();
    step_max = phases["step"]["max_ms"].get<double>();
  } else {
    for (const char* p : kPhases) step_ms += median(p);
  }
  for (const char* p : kPhases) row.push_back(phases.contains(p) ? num(median(p)) : "");
  row.push_back(num(step_ms));
  row.push_back(phases.contains("step") ? num(step_min) : "");
  row.push_back(phases.contains("step") ? num(step_max) : "");
  row.push_back(num(s["timing"]["steps_per_second"].get<double>()));
  row.push_back(num(spmv_ms));
  row.push_back(num(d["cg"]["mean_iterations"].get<double>()));
  const auto& work = d["phase_work"];
  auto gflops = [&](const char* p) {
    const double ms = median(p);
    return ms > 0 && work.contains(p) ? num(work[p]["flops"].get<double>() / (ms * 1e-3) / 1e9) : std::string();
  };
  for (const char* p : {"rotation", "matrix", "update", "cg"}) row.push_back(gflops(p));
  const double spmv_flops = 2.0 * 9.0 * d["blocks"].get<double>();
  const double spmv_bytes = d["layout"]["spmv_bytes"].get<double>();
  row.push_back(spmv_ms > 0 ? num(spmv_flops / (spmv_ms * 1e-3) / 1e9) : "");
  double flops = 0, bytes = 0;
  for (auto it = work.begin(); it != work.end(); ++it) {
    flops += it.value()["flops"].get<double>();
    bytes += it.value()["bytes"].get<double>();
  }
  row.push_back(step_ms > 0 ? num(flops / (step_ms * 1e-3) / 1e9) : "");
  const double update_gbps = median("update") > 0 ? work["update"]["bytes"].get<double>() / (median("update") * 1e-3) / 1e9 : 0;
  const double spmv_gbps = spmv_ms > 0 ? spmv_bytes / (spmv_ms * 1e-3) / 1e9 : 0;
  const double step_gbps = step_ms > 0 ? bytes / (step_ms * 1e-3) / 1e9 : 0;
  const double triad = ceilings.triad_for(c);
  for (double g : {update_gbps, spmv_gbps, step_gbps}) row.push_back(g > 0 ? num(g) : "");
  row.push_back(triad > 0 ? num(triad) : "");
  for (double g : {update_gbps, spmv_gbps, step_gbps}) row.push_back(g > 0 && triad > 0 ? num(g / triad) : "");
  row.push_back("compulsory");
  // Each phase's range over the timed steps, beside its median (columns rotation_ms ... above).
  for (const char* p : kPhases)
    for (const char* k : {"min_ms", "max_ms"})
      row.push_back(phases.contains(p) ? num(phases[p][k].get<double>()) : "");
  table.add_row(row);
  spmv_profile[label(m.name, N, c)] = spmv_ms;
}

struct Size {
  const Model* model;
  int N;
};

// The experiment's options (register_experiment_verschoor2012 declares them), validated before
// any run.
struct PerformanceOptions {
  std::vector<Size> sizes;  // empty: the sizes of the mode (quick or full)
  bool cpu_rows = true;
};

std::vector<Size> parse_sizes(const std::string& list) {
  std::vector<Size> sizes;
  std::stringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    const auto colon = item.find(':');
    const std::string name = item.substr(0, colon);
    const auto it = std::find_if(kModels.begin(), kModels.end(), [&](const Model& m) { return m.name == name; });
    const std::string n = colon == std::string::npos ? "" : item.substr(colon + 1);
    const bool digits =
        !n.empty() && n.size() <= 4 && std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (it == kModels.end() || !digits || std::stoi(n) < 2)
      throw InputError("verschoor2012 option sizes: '" + item +
                       "' is not MODEL:N with MODEL bunny or dragon and N an integer from 2 to 9999");
    sizes.push_back({&*it, std::stoi(n)});
  }
  if (sizes.empty()) throw InputError("verschoor2012 option sizes: no size given (e.g. sizes=bunny:64,dragon:128)");
  return sizes;
}

bool parse_cpu(const std::string& value) {
  if (value != "on" && value != "off") throw InputError("verschoor2012 option cpu: '" + value + "' is not on or off");
  return value == "on";
}

PerformanceOptions performance_options(const ExperimentContext& ctx) {
  PerformanceOptions o;
  if (const std::string* list = ctx.option("sizes")) o.sizes = parse_sizes(*list);
  if (const std::string* cpu = ctx.option("cpu")) o.cpu_rows = parse_cpu(*cpu);
  return o;
}

void performance(const ExperimentContext& ctx, const PerformanceOptions& options, bool gpu, const Ceilings& ceilings,
                 nlohmann::json& meta) {
  std::vector<Size> sizes = options.sizes;  // empty unless the sizes option names a subset
  if (sizes.empty() && ctx.quick) {
    for (int N : {8, 16, 24}) sizes.push_back({&kModels[0], N});
  } else if (sizes.empty()) {
    // ~600 to ~1.1M tetrahedra (merged: 627K at bunny N = 128).
    for (int N : {8, 16, 32, 64, 128, 192}) sizes.push_back({&kModels[0], N});
    for (int N : {32, 64, 128, 256}) sizes.push_back({&kModels[1], N});
  }
  CsvTable models({"model", "N", "elements", "nodes", "blocks", "min_volume", "max_volume"});
  CsvTable perf(kPerfColumns);
  nlohmann::json spmv = nlohmann::json::object();
  const int warmup = 3, timed = ctx.quick ? 5 : 10;
  // cpu=off: GPU rows only (a device call that has no time for the CPU rows).
  const bool cpu_rows = options.cpu_rows;
  meta["performance_cpu_rows"] = cpu_rows;
  for (const Size& sz : sizes) {
    const Model& m = *sz.model;
    {
      RunOptions o;
      o.data_dir = ctx.data_dir;
      const bcsr_pcg::BcsrPcgSetup s = bcsr_pcg::build_bcsr_pcg_setup(model_scenario(m, sz.N, ctx.data_dir), o);
      models.add_row({m.name, std::to_string(sz.N), std::to_string(s.num_elements), std::to_string(s.num_nodes),
                      std::to_string(s.plan.blocks()), num(s.min_volume), num(s.max_volume)});
      models.write(ctx.out_dir / "models.csv");
      if (!ctx.quiet) std::cerr << "verschoor2012: " << m.name << " N=" << sz.N << ": " << s.num_elements << " tetrahedra\n";
    }
    std::vector<Config> configs;
    for (Precision p : {Precision::Fp32, Precision::Fp64}) {
      if (gpu) {
        configs.push_back({Backend::Cuda, p, 0, "gather", true});
        configs.push_back({Backend::Cuda, p, 0, "gather", false});
        configs.push_back({Backend::Cuda, p, 0, "scatter", false});
      }
      // The CPU at all threads on every size of the quick mode and up to N = 64 otherwise; one
      // thread (the papers' "one core") on the small ones.
      if (!cpu_rows) continue;
      if (ctx.quick || sz.N <= 64) configs.push_back({Backend::Cpu, p, ctx.max_threads, "gather", false});
      if (ctx.max_threads > 1 && (ctx.quick ? sz.N <= 16 : sz.N <= 32))
        configs.push_back({Backend::Cpu, p, 1, "gather", false});
    }
    for (const Config& c : configs) {
      run_config(ctx, m, sz.N, c, warmup, timed, ceilings, perf, spmv);
      perf.write(ctx.out_dir / "performance.csv");
    }
  }
  meta["performance"] = {
      {"warmup_steps", warmup},
      {"timed_steps", timed},
      {"modes",
       "graph: each step one CUDA graph launch (steps_per_s, step_ms = median per step over the timed steps); "
       "phases: every phase enqueued alone, timed with CUDA events (CPU: steady clock), the step's time is their sum"},
      {"spmv", "spmv_ms: one product of the final matrix alone, after the timed run: median of 7 timings, on the GPU each a batch of 10 back-to-back products / 10"},
      {"flops", "counted per element formula and per stored matrix entry (solvers/bcsr_pcg/PERF_NOTES.md)"}};
}

void iterations(const ExperimentContext& ctx, bool gpu, nlohmann::json& meta) {
  CsvTable t({"model", "N", "elements", "backend", "precision", "tolerance", "validity", "steps", "iterations_min",
              "iterations_mean", "iterations_max", "reduction_worst"});
  const std::vector<double> tolerances = {1e-2, 1e-3, 1e-4};
  std::vector<Size> sizes;
  if (ctx.quick)
    sizes = {{&kModels[0], 8}, {&kModels[0], 16}};
  else
    sizes = {{&kModels[0], 16}, {&kModels[0], 32}, {&kModels[0], 64}, {&kModels[1], 64}, {&kModels[1], 128}};
  const int steps = ctx.quick ? 30 : 100;
  for (const Size& sz : sizes)
    for (double tol : tolerances) {
      RunRequest req;
      req.method = "bcsr-pcg";
      req.options.backend = gpu ? Backend::Cuda : Backend::Cpu;
      req.options.precision = Precision::Fp64;
      req.options.threads = ctx.max_threads;
      req.options.data_dir = ctx.data_dir;
      req.scenario = model_scenario(*sz.model, sz.N, ctx.data_dir);
      req.scenario.method_options["bcsr-pcg"] = {{"cg_tolerance", tol}, {"cg_max_iterations", 500}};
      req.scenario.output.probe_every = 0;
      req.scenario_origin = req.scenario.name;
      std::ostringstream lab;
      lab << sz.model->name << "_N" << sz.N << "_tol" << tol;
      req.out_dir = ctx.out_dir / "runs" / ("iterations_" + lab.str());
      req.quiet = ctx.quiet;
      req.steps = steps;
      const nlohmann::json s = run_simulation(req);
      std::string why;
      const bool valid = run_is_valid(s, &why);
      std::vector<std::string> row = {sz.model->name, std::to_string(sz.N), std::to_string(s["mesh"]["elements"].get<long>()),
                                      to_string(req.options.backend), "fp64", num(tol), valid ? "valid" : why,
                                      std::to_string(s["time"]["steps"].get<long>())};
      if (valid) {
        const auto& it = s["solver"]["inner"]["iterations"];
        row.push_back(num(it["min"].get<double>()));
        row.push_back(num(it["mean"].get<double>()));
        row.push_back(num(it["max"].get<double>()));
        row.push_back(num(s["solver"]["inner"]["reduction"]["max"].get<double>()));
      } else {
        row.resize(12);
      }
      t.add_row(row);
      t.write(ctx.out_dir / "iterations.csv");
    }
  meta["iterations"] = {{"steps", steps},
                        {"tolerances", tolerances},
                        {"criterion", "||r|| <= tolerance ||b|| (Jacobi-PCG recurrence residual, from the previous "
                                      "step's velocity); the paper does not state its criterion"}};
}

void run_verschoor2012(const ExperimentContext& ctx) {
  const fs::path meta_path = ctx.out_dir / "meta.json";
  nlohmann::json meta =
      (!ctx.parts.empty() && fs::exists(meta_path)) ? read_json_file(meta_path) : nlohmann::json::object();
  const PerformanceOptions options = performance_options(ctx);  // refuses a bad option before any run
  meta["paper"] = "Verschoor & Jalba 2012, elastically deformable models with FEM on the GPU (CUDA)";
  meta["quick"] = ctx.quick;
  meta["options"] = ctx.options;
  meta["machine"] = machine_info(0);
  meta["material"] = {{"E", 5e5}, {"nu", 0.2}, {"rho", 1000}, {"dt", 1e-3}, {"model_size_m", kModelSize}};
  meta["load_note"] =
      "the paper's models move freely or are dragged by the user; here each stands on its base (nodes within 1.5 "
      "voxels of the lowest point fixed) under gravity along -y, from rest";
  meta["cg"] = {{"preconditioner", "jacobi"}, {"iterations", 18}, {"warm_start", "previous velocity"}};
  const bool gpu = ctx.cuda_available && !ctx.quick;
  meta["gpu"] = gpu;
  if (!gpu) meta["gpu_note"] = ctx.quick ? "quick mode: CPU only" : "no usable CUDA device: GPU rows not run";

  Ceilings ceilings;
  if (ctx.wants("performance")) {
    ceilings.cpu = cpu_stream_triad(triad_thread_counts(ctx.max_threads));
    write_file_atomic(ctx.out_dir / "cpu_triad.csv", ceilings.cpu.csv());
    if (gpu) {
      ceilings.gpu_fp32 = cuda_stream_triad_gbps(0, 4);
      ceilings.gpu_fp64 = cuda_stream_triad_gbps(0, 8);
    }
    meta["ceilings"] = {{"cpu_triad", ceilings.cpu.to_json()},
                        {"gpu_triad_gbps", gpu ? nlohmann::json({{"fp32", ceilings.gpu_fp32}, {"fp64", ceilings.gpu_fp64}})
                                               : nlohmann::json(nullptr)}};
    meta["bandwidth_convention"] =
        "update_gbps, spmv_gbps and step_gbps count compulsory bytes (each array once per kernel: "
        "solvers/bcsr_pcg/PERF_NOTES.md), set against the STREAM triad of the row's backend measured in this run";
    performance(ctx, options, gpu, ceilings, meta);
    write_json_atomic(meta_path, meta);
  }
  if (ctx.wants("iterations")) {
    iterations(ctx, gpu, meta);
    write_json_atomic(meta_path, meta);
  }
}

}  // namespace

void register_experiment_verschoor2012(ExperimentRegistry& r) {
  (void)kBunnyRegistered;
  r.add({"verschoor2012",
         "Verschoor & Jalba 2012: co-rotational FEM with a gather-updated BCSR matrix and Jacobi-PCG (Figs. 3-4)",
         run_verschoor2012,
         {"performance", "iterations"},
         {{"sizes", "MODEL:N,... (MODEL bunny or dragon): only these sizes in the performance part",
           [](const std::string& v) { parse_sizes(v); }},
          {"cpu", "on (default) or off: off leaves the performance part's CPU rows out",
           [](const std::string& v) { parse_cpu(v); }}}});
}

}  // namespace eb
