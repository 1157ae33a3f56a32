// `elastobench reproduce dick2011`: Dick, Georgii & Westermann 2011 (hexahedral multigrid, CUDA).
// Writes under ctx.out_dir:
//   performance.csv  Tables 1-2 and Figs. 7-10: steps/s, GFLOP/s, GB/s for the bunny at the four
//                    model sizes on the GPU and on the CPU at 1, 4, 8 and all threads, fp32/fp64
//   kernels.csv      Table 3: FLOPs and bytes per element per step for each kernel (largest model
//                    run) and, where a GPU ran, each kernel group's share of the GPU time
//   convergence.csv  Fig. 11: residual reduction against time, multigrid V-cycles versus
//                    Jacobi-preconditioned CG on the same system (1 CPU core, two model sizes)
//   mg_factor.csv    residual reduction per V-cycle on the bunny (reported beside the cube test)
//   meta.json        parameters, machine, sizes, what was run and what was simplified
//   runs/<label>/    summary.json of every timed configuration; runs/vtk_bunny/ ParaView files
//                    (volume frames and the bound render surface, Sec. 5)
// analysis/dick2011.py turns these into the figures and tables.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "experiments/dick2011/bunny_scenario.h"
#include "experiments/experiment.h"
#include "meshes/errors.h"
#include "meshes/mesh_io.h"
#include "meshes/mesh_spec.h"
#include "meshes/render_binding.h"
#include "meshes/vtk_io.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/results.h"
#include "solvers/common/runner.h"
#include "solvers/hexmg/hexmg_simulation.h"

namespace eb {
namespace {

namespace fs = std::filesystem;
using dick2011::kBunnyScenario;

struct Config {
  Backend backend;
  Precision precision;
  int threads;  // CPU only
};

std::string label(const Config& c, int size) {
  std::string s = to_string(c.backend) + "_" + to_string(c.precision);
  if (c.backend == Backend::Cpu) s += "_t" + std::to_string(c.threads);
  return s + "_" + std::to_string(size);
}

// The bunny at `target` hexahedra, voxelized once and cached as a .vtu that later runs read as is.
std::string cached_mesh(const ExperimentContext& ctx, int target) {
  const fs::path dir = ctx.out_dir / "meshes";
  fs::create_directories(dir);
  const fs::path p = dir / ("bunny_" + std::to_string(target) + ".vtu");
  if (!fs::exists(p)) {
    Scenario sc = load_scenario(kBunnyScenario, {"mesh.target_elements=" + std::to_string(target)});
    const mesh::HexMesh m = mesh::build_hex_mesh(sc.mesh, ctx.data_dir.empty() ? mesh::default_data_dir() : ctx.data_dir);
    std::vector<int32_t> conn;
    conn.reserve(8 * m.elems.size());
    for (const auto& e : m.elems) conn.insert(conn.end(), e.begin(), e.end());
    mesh::write_vtu(p, m.nodes, mesh::CellType::Hexahedron, conn, {}, {});
  }
  return fs::absolute(p).string();
}

std::vector<std::string> bunny_overrides(const ExperimentContext& ctx, int target) {
  return {"mesh.source=file", "mesh.file=" + cached_mesh(ctx, target)};
}

// Number of timed steps: enough for a stable rate, bounded so that the whole CPU sweep of the
// full run stays within a few minutes (the count is recorded as steps_timed).
int timed_steps(const Config& c, int size) {
  if (c.backend == Backend::Cuda) return size >= 200000 ? 300 : 500;
  const double work = double(size) / double(std::max(1, c.threads));
  if (work > 150000) return 3;
  if (work > 40000) return 5;
  if (work > 12000) return 10;
  return 20;
}

void run_performance(const ExperimentContext& ctx, const std::vector<int>& sizes, const std::vector<Config>& configs,
                     nlohmann::json& meta, std::vector<nlohmann::json>& largest) {
  CsvTable t({"model", "elements", "vertices", "levels", "backend", "precision", "threads", "steps_timed",
              "steps_per_second", "ms_per_step", "gflops", "gbps", "compulsory_gbps", "flops_per_step",
              "bytes_per_step", "coarse_cg_iterations", "tip_displacement_max"});
  nlohmann::json runs = nlohmann::json::array();
  for (int size : sizes) {
    const auto over = bunny_overrides(ctx, size);
    for (const Config& c : configs) {
      RunRequest req;
      req.method = "hexmg";
      req.options.backend = c.backend;
      req.options.precision = c.precision;
      req.options.threads = c.backend == Backend::Cpu ? c.threads : 0;
      req.options.data_dir = ctx.data_dir;
      const int timed = timed_steps(c, size);
      const int warm = c.backend == Backend::Cuda ? 20 : 1;
      std::vector<std::string> o = over;
      o.push_back("output.probe_every=" + std::to_string(timed + warm));
      req.scenario = load_scenario(kBunnyScenario, o);
      req.scenario_origin = kBunnyScenario;
      req.steps = timed + warm;
      req.warmup_steps = warm;
      req.quiet = ctx.quiet;
      req.vtk_every = 0;
      req.out_dir = ctx.out_dir / "runs" / label(c, size);
      if (!ctx.quiet) std::cerr << "dick2011: " << label(c, size) << " (" << timed << " timed steps)\n";
      const nlohmann::json s = run_simulation(req);
      const auto& perf = s["performance"];
      const auto& det = s["method_details"];
      double comp = 0;
      for (const auto& k : det["kernels"]) comp += k["compulsory_bytes"].get<double>();
      const double sps = s["timing"]["steps_per_second"].get<double>();
      t.add_row({std::to_string(size), std::to_string(s["mesh"]["elements"].get<long>()),
                 std::to_string(s["mesh"]["nodes"].get<long>()), std::to_string(det["n_levels"].get<int>()),
                 to_string(c.backend), to_string(c.precision), c.backend == Backend::Cpu ? std::to_string(c.threads) : "",
                 std::to_string(s["timing"]["measured_steps"].get<long>()), CsvTable::num(sps),
                 CsvTable::num(sps > 0 ? 1000.0 / sps : 0.0), CsvTable::num(perf["gflops"].get<double>()),
                 CsvTable::num(perf["effective_gbps"].get<double>()), CsvTable::num(comp * sps / 1e9),
                 CsvTable::num(perf["flops_per_step"].get<double>()), CsvTable::num(perf["bytes_per_step"].get<double>()),
                 CsvTable::num(det["mean_coarse_cg_iterations"].get<double>()),
                 CsvTable::num(s["displacement"]["max_norm"].get<double>())});
      runs.push_back(label(c, size));
      if (size == sizes.back()) largest.push_back(s);
      t.write(ctx.out_dir / "performance.csv");  // partial results survive a later failure
    }
  }
  meta["performance_runs"] = runs;
}

// Table 3: counts per element from the largest model; GPU time shares from a profiled run
// (kernels launched one by one with events around each group instead of the graph).
void run_kernel_table(const ExperimentContext& ctx, int size, bool gpu, const std::vector<nlohmann::json>& largest) {
  CsvTable t({"precision", "kernel", "flops_per_element", "bytes_per_element", "compulsory_bytes_per_element",
              "launches_per_step", "gpu_ms_per_step", "gpu_time_share", "elements"});
  for (Precision p : {Precision::Fp32, Precision::Fp64}) {
    nlohmann::json details;
    for (const auto& s : largest)
      if (s["precision"] == to_string(p)) details = s["method_details"];
    nlohmann::json phases = nlohmann::json::object();
    if (gpu) {
      RunRequest req;
      req.method = "hexmg";
      req.options.backend = Backend::Cuda;
      req.options.precision = p;
      req.options.data_dir = ctx.data_dir;
      std::vector<std::string> o = bunny_overrides(ctx, size);
      o.push_back("solver.variant=profile");
      o.push_back("output.probe_every=60");
      req.scenario = load_scenario(kBunnyScenario, o);
      req.scenario_origin = kBunnyScenario;
      req.steps = 60;
      req.warmup_steps = 10;
      req.quiet = ctx.quiet;
      req.out_dir = ctx.out_dir / "runs" / ("profile_" + to_string(p) + "_" + std::to_string(size));
      const nlohmann::json s = run_simulation(req);
      phases = s["timing"]["phases"];
      details = s["method_details"];
    }
    if (details.is_null()) continue;
    double total_ms = 0;
    for (auto it = phases.begin(); it != phases.end(); ++it) total_ms += it.value()["mean_ms"].get<double>();
    double ne = 0;
    for (const auto& L : details["levels"]) {
      ne = L["cells"].get<double>();
      break;
    }
    for (const auto& k : details["kernels"]) {
      const std::string name = k["kernel"];
      std::string ms = "", share = "";
      if (phases.contains(name)) {
        const double m = phases[name]["mean_ms"].get<double>();
        ms = CsvTable::num(m);
        share = CsvTable::num(total_ms > 0 ? m / total_ms : 0.0);
      }
      t.add_row({to_string(p), name, CsvTable::num(k["flops_per_element"].get<double>()),
                 CsvTable::num(k["bytes_per_element"].get<double>()),
                 CsvTable::num(k["compulsory_bytes"].get<double>() / ne), CsvTable::num(k["launches"].get<double>()), ms,
                 share, CsvTable::num(ne)});
    }
  }
  t.write(ctx.out_dir / "kernels.csv");
}

// Fig. 11: one step's system solved by V-cycles and by Jacobi-PCG on one core, residual against time.
void run_convergence(const ExperimentContext& ctx, const std::vector<int>& sizes, nlohmann::json& meta) {
  CsvTable t({"model", "elements", "edge_mm", "precision", "solver", "iteration", "seconds", "residual", "reduction"});
  CsvTable f({"model", "elements", "precision", "cycle", "residual", "factor"});
  for (int size : sizes)
    for (Precision p : {Precision::Fp32, Precision::Fp64}) {
      RunOptions o;
      o.backend = Backend::Cpu;
      o.precision = p;
      o.threads = 1;
      o.data_dir = ctx.data_dir;
      const Scenario sc = load_scenario(kBunnyScenario, bunny_overrides(ctx, size));
      auto sim = hexmg::make_hexmg(sc, o);
      sim->advance(3);  // a deformed state with rotations, as in a running simulation
      sim->begin_step();
      const double target = p == Precision::Fp64 ? 1e-10 : 1e-5;
      // Multigrid: time only the V-cycles (the residual norm is for the plot).
      const double r0 = sim->system_residual();
      double seconds = 0, r = r0;
      t.add_row({std::to_string(size), std::to_string(sim->model().n_elems()), CsvTable::num(sim->model().h * 1000),
                 to_string(p), "multigrid", "0", "0", CsvTable::num(r0), "1"});
      for (int c = 1; c <= 25 && r > target * r0; ++c) {
        Stopwatch clock;
        sim->vcycle();
        seconds += clock.elapsed_ms() / 1000.0;
        const double rn = sim->system_residual();
        f.add_row({std::to_string(size), std::to_string(sim->model().n_elems()), to_string(p), std::to_string(c),
                   CsvTable::num(rn), CsvTable::num(r > 0 ? rn / r : 0.0)});
        r = rn;
        t.add_row({std::to_string(size), std::to_string(sim->model().n_elems()), CsvTable::num(sim->model().h * 1000),
                   to_string(p), "multigrid", std::to_string(c), CsvTable::num(seconds), CsvTable::num(r),
                   CsvTable::num(r / r0)});
      }
      // Jacobi-PCG on the same system from the same initial guess, for 2x the multigrid time.
      sim->restart_solve();
      const hexmg::ConvergenceTrace tr = sim->jacobi_pcg(100000, target, std::max(1.0, 2 * seconds));
      for (size_t i = 0; i < tr.residual.size(); ++i)
        t.add_row({std::to_string(size), std::to_string(sim->model().n_elems()), CsvTable::num(sim->model().h * 1000),
                   to_string(p), "jacobi_cg", std::to_string(i), CsvTable::num(tr.seconds[i]), CsvTable::num(tr.residual[i]),
                   CsvTable::num(tr.residual[i] / tr.residual[0])});
      t.write(ctx.out_dir / "convergence.csv");
      f.write(ctx.out_dir / "mg_factor.csv");
    }
  meta["convergence_models"] = sizes;
}

// ParaView output: volume frames through the runner and the bound render surface (Sec. 5).
void run_vtk(const ExperimentContext& ctx, int size) {
  RunRequest req;
  req.method = "hexmg";
  req.options.backend = Backend::Cpu;
  req.options.precision = Precision::Fp32;
  req.options.data_dir = ctx.data_dir;
  req.scenario = load_scenario(kBunnyScenario, bunny_overrides(ctx, size));
  req.scenario_origin = kBunnyScenario;
  req.steps = 60;
  req.vtk_every = 10;
  req.quiet = ctx.quiet;
  req.out_dir = ctx.out_dir / "runs" / "vtk_bunny";
  run_simulation(req);
  // The render surface: the original bunny triangles bound with trilinear weights.
  RunOptions o = req.options;
  o.threads = ctx.max_threads;
  auto sim = hexmg::make_hexmg(req.scenario, o);
  const fs::path data = ctx.data_dir.empty() ? mesh::default_data_dir() : ctx.data_dir;
  const mesh::MeshFile surf = mesh::read_mesh_file(mesh::resolve_data_file("bunny.off", data));
  mesh::TriSurface skin{surf.nodes, surf.tris};
  mesh::HexMesh hex;
  hex.nodes = sim->nodes();
  for (size_t e = 0; e < sim->connectivity().size() / 8; ++e) {
    std::array<int32_t, 8> c;
    for (int v = 0; v < 8; ++v) c[v] = sim->connectivity()[8 * e + v];
    hex.elems.push_back(c);
  }
  mesh::DeformedSurfaceWriter writer(req.out_dir / "vtk", "render_surface", skin, mesh::bind_surface(skin, hex));
  std::vector<double> u, v;
  for (int frame = 0; frame <= 6; ++frame) {
    if (frame) sim->advance(10);
    sim->copy_state_to_host(u, v);
    std::vector<mesh::Vec3> nu(u.size() / 3);
    for (size_t i = 0; i < nu.size(); ++i) nu[i] = {u[3 * i], u[3 * i + 1], u[3 * i + 2]};
    writer.write_frame(frame * 10 * sim->dt(), nu);
  }
}

void run(const ExperimentContext& ctx) {
  dick2011::register_bunny_scenario();
  nlohmann::json meta;
  meta["paper"] = "Dick, Georgii, Westermann: A real-time multigrid finite hexahedra method for elasticity simulation using CUDA. SIMPAT 19 (2011) 801-816";
  meta["quick"] = ctx.quick;
  meta["cuda_available"] = ctx.cuda_available;
  meta["max_threads"] = ctx.max_threads;
  meta["scenario"] = scenario_to_json(load_scenario(kBunnyScenario, {}));
  const GpuInfo g = cuda_device_info();
  meta["gpu"] = g.usable ? nlohmann::json(g.name) : nlohmann::json(nullptr);
  std::vector<int> sizes(std::begin(dick2011::kPaperSizes), std::end(dick2011::kPaperSizes));
  if (ctx.quick) sizes.resize(2);
  std::vector<Config> configs;
  const bool gpu = ctx.cuda_available && !ctx.quick;
  if (gpu)
    for (Precision p : {Precision::Fp32, Precision::Fp64}) configs.push_back({Backend::Cuda, p, 0});
  std::vector<int> threads = ctx.quick ? std::vector<int>{1, ctx.max_threads} : std::vector<int>{1, 4, 8, ctx.max_threads};
  std::sort(threads.begin(), threads.end());
  threads.erase(std::unique(threads.begin(), threads.end()), threads.end());
  threads.erase(std::remove_if(threads.begin(), threads.end(), [&](int t) { return t > ctx.max_threads; }), threads.end());
  for (Precision p : {Precision::Fp32, Precision::Fp64})
    for (int th : threads) configs.push_back({Backend::Cpu, p, th});
  meta["sizes"] = sizes;
  meta["cpu_threads"] = threads;
  meta["notes"] = {
      "Bytes count every byte each kernel reads or writes (Table 3 convention, cache hits included); "
      "compulsory_gbps counts each array once.",
      "Timed steps per configuration are bounded (steps_timed) so that the sweep fits the session; the "
      "rate is steps_timed / their wall time after warm-up steps.",
      "Boundary conditions of the bunny are not given in the paper: base fixed, gravity along -y.",
      "Fig. 11 models: the paper's 2.8 mm and 1.4 mm edges (8x the elements); here the two models "
      "of that ratio among the table sizes (quick: the two smallest)."};
  std::vector<nlohmann::json> largest;
  run_performance(ctx, sizes, configs, meta, largest);
  run_kernel_table(ctx, sizes.back(), gpu, largest);
  const std::vector<int> conv = ctx.quick ? std::vector<int>{sizes[0]} : std::vector<int>{33300, 269000};
  run_convergence(ctx, conv, meta);
  run_vtk(ctx, sizes[0]);
  write_json_atomic(ctx.out_dir / "meta.json", meta);
  std::error_code ec;
  fs::remove_all(ctx.out_dir / "meshes", ec);  // cached voxel meshes are rebuilt on demand
}

// The bunny scenario is a built-in of every program linking this experiment (the CLI's `run`
// and `scenario` commands, tests, benchmarks), registered before main() runs.
const bool kBunnyRegistered = (dick2011::register_bunny_scenario(), true);

}  // namespace

void register_experiment_dick2011(ExperimentRegistry& r) {
  (void)kBunnyRegistered;
  dick2011::register_bunny_scenario();
  r.add({"dick2011", "Dick, Georgii & Westermann 2011: real-time multigrid finite hexahedra (CUDA)", run});
}

}  // namespace eb
