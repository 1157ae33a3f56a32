// `elastobench reproduce dick2011`: Dick, Georgii & Westermann 2011 (hexahedral multigrid, CUDA).
// Writes under ctx.out_dir:
//   performance.csv  Tables 1-2 and Figs. 7-10: steps/s, GFLOP/s, GB/s for the bunny at the four
//                    model sizes on the GPU and on the CPU at 1, 4, 8 and all threads, fp32/fp64
//   kernels.csv      Table 3: FLOPs and bytes per element per step for each kernel (largest model
//                    run) and, where a GPU ran, each kernel group's share of the GPU time
//   convergence.csv  Fig. 11: residual reduction against time, multigrid V-cycles versus
//                    Jacobi-preconditioned CG on the same system (1 CPU core, two model sizes)
//   mg_factor.csv    residual reduction per V-cycle on the bunny (reported beside the cube test)
//   accuracy.csv     Sec. 6: each step's 2-V-cycle solution against a solve to 1e-8
//   mg_shapes.csv    residual and energy-norm factors per iteration of the paper's V-cycle and of
//                    the corrected constructions on test shapes and the bunny at the four sizes
//   meta.json        parameters, machine, sizes, what was run and what was simplified
//   runs/<label>/    summary.json of every timed configuration; runs/vtk_bunny/ ParaView files
//                    (volume frames and the bound render surface, Sec. 5)
// analysis/dick2011.py turns these into the figures and tables.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>

#include <map>

#include "experiments/dick2011/bunny_scenario.h"
#include "experiments/dick2011/mg_shapes.h"
#include "experiments/experiment.h"
#include "meshes/box.h"
#include "meshes/errors.h"
#include "meshes/mesh_io.h"
#include "meshes/mesh_spec.h"
#include "meshes/render_binding.h"
#include "meshes/vtk_io.h"
#include "solvers/common/cpu_stream.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/results.h"
#include "solvers/common/runner.h"
#include "solvers/common/timers.h"
#include "solvers/common/validity.h"
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

// Timing protocol (the same work for every column): the state after kWarmSteps steps from rest,
// computed once per model on the CPU in fp64, is loaded into every configuration; each then runs
// the same `steps` steps from it once untimed (graph capture, first touch) and kRepeats times
// timed, each time from the loaded state. The rate is the median over the repeats. Large models
// time fewer steps so that one core's sweep fits a 10-minute device call.
constexpr int kRepeats = 5;
int warm_steps(bool quick) { return quick ? 5 : 10; }
int timed_steps(bool quick, int size) { return quick || size >= 90000 ? 3 : 5; }

struct StartState {
  std::vector<double> u, v;  // per level-0 slot
};

StartState start_state(const ExperimentContext& ctx, const Scenario& sc, int steps) {
  RunOptions o;
  o.backend = Backend::Cpu;
  o.precision = Precision::Fp64;
  o.threads = ctx.max_threads;
  o.data_dir = ctx.data_dir;
  auto sim = hexmg::make_hexmg(sc, o);
  sim->advance(steps);
  std::vector<double> un, vn;
  sim->copy_state_to_host(un, vn);
  const hexmg::Model& m = sim->model();
  StartState s;
  s.u.assign(size_t(m.levels[0].n_padded) * 3, 0.0);
  s.v = s.u;
  for (size_t i = 0; i < m.slot_of_node.size(); ++i)
    for (int d = 0; d < 3; ++d) {
      s.u[3 * size_t(m.slot_of_node[i]) + d] = un[3 * i + d];
      s.v[3 * size_t(m.slot_of_node[i]) + d] = vn[3 * i + d];
    }
  return s;
}

// Whether the state a simulation reached is one a number may be published from: every value
// finite, no element at or below the method's inversion threshold in any step it took.
std::string invalid_reason(hexmg::HexmgSimulation& sim) {
  const ValidityCounts c = sim.validity();
  std::vector<double> u, v;
  sim.copy_state_to_host(u, v);
  for (size_t i = 0; i < u.size(); ++i)
    if (!std::isfinite(u[i]) || !std::isfinite(v[i])) return "non-finite state at node " + std::to_string(i / 3);
  if (c.nonfinite_steps > 0) return "non-finite values from step " + std::to_string(c.first_nonfinite_step);
  if (c.inverted_element_steps > 0)
    return std::to_string(c.inverted_element_steps) + " inverted element-steps (first: element " +
           std::to_string(c.first_inverted_element) + ", step " + std::to_string(c.first_inverted_step) + ")";
  if (c.solver_failures > 0) return std::to_string(c.solver_failures) + " solves missed their tolerance";
  return "";
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Ceilings {
  nlohmann::json cpu;                 // cpu_stream_triad at the CPU thread counts of the run
  std::map<int, double> cpu_by_threads;
  double gpu_fp32 = 0, gpu_fp64 = 0;  // STREAM triad of the GPU, same run
};

Ceilings measure_ceilings(const std::vector<int>& threads, bool gpu) {
  Ceilings c;
  const CpuTriad t = cpu_stream_triad(threads);
  c.cpu = t.to_json();
  for (const auto& p : t.points) c.cpu_by_threads[p.threads] = p.median_gbps;
  if (gpu) {
    c.gpu_fp32 = cuda_stream_triad_gbps(0, 4);
    c.gpu_fp64 = cuda_stream_triad_gbps(0, 8);
  }
  return c;
}

void run_performance(const ExperimentContext& ctx, const std::vector<int>& sizes, const std::vector<Config>& configs,
                     const Ceilings& ceil, nlohmann::json& meta, std::vector<nlohmann::json>& largest) {
  CsvTable t({"model", "elements", "vertices", "levels", "backend", "precision", "threads", "start_step", "steps_timed",
              "repeats", "steps_per_second", "steps_per_second_min", "steps_per_second_max", "ms_per_step", "gflops",
              "gbps_requested", "gbps_compulsory", "triad_gbps", "fraction_of_triad_compulsory", "flops_per_step",
              "bytes_per_step", "compulsory_bytes_per_step", "coarse_cg_iterations", "max_displacement", "valid",
              "invalid_reason"});
  nlohmann::json runs = nlohmann::json::array();
  const int warm = warm_steps(ctx.quick);
  for (int size : sizes) {
    const Scenario sc = load_scenario(kBunnyScenario, bunny_overrides(ctx, size));
    if (!ctx.quiet) std::cerr << "dick2011: start state of the " << size << " model (" << warm << " steps, CPU fp64)\n";
    const StartState st = start_state(ctx, sc, warm);
    const int steps = timed_steps(ctx.quick, size);
    for (const Config& c : configs) {
      RunOptions o;
      o.backend = c.backend;
      o.precision = c.precision;
      o.threads = c.backend == Backend::Cpu ? c.threads : 0;
      o.data_dir = ctx.data_dir;
      if (!ctx.quiet) std::cerr << "dick2011: " << label(c, size) << " (" << kRepeats << " x " << steps << " steps)\n";
      auto sim = hexmg::make_hexmg(sc, o);
      sim->set_state(st.u, st.v);
      sim->advance(steps);  // untimed: graph capture, first touch, caches
      std::vector<double> rates;
      for (int r = 0; r < kRepeats; ++r) {
        sim->set_state(st.u, st.v);
        Stopwatch clock;
        sim->advance(steps);
        rates.push_back(steps / (clock.elapsed_ms() / 1000.0));
      }
      const std::string bad = invalid_reason(*sim);
      const double sps = median_of(rates);
      const WorkCounts w = sim->work_per_step();
      double comp = 0;
      for (const auto& k : sim->kernel_work()) comp += k.compulsory_bytes;
      const double triad = c.backend == Backend::Cuda ? (c.precision == Precision::Fp32 ? ceil.gpu_fp32 : ceil.gpu_fp64)
                                                      : (ceil.cpu_by_threads.count(c.threads) ? ceil.cpu_by_threads.at(c.threads) : 0.0);
      std::vector<double> u, v;
      sim->copy_state_to_host(u, v);
      double umax = 0;
      for (size_t i = 0; i + 2 < u.size(); i += 3) umax = std::max(umax, std::sqrt(u[i] * u[i] + u[i + 1] * u[i + 1] + u[i + 2] * u[i + 2]));
      const nlohmann::json det = sim->details();
      auto num_or_invalid = [&](double x) { return bad.empty() ? CsvTable::num(x) : std::string(""); };
      t.add_row({std::to_string(size), std::to_string(sim->model().n_elems()), std::to_string(sim->nodes().size()),
                 std::to_string(sim->model().n_levels()), to_string(c.backend), to_string(c.precision),
                 c.backend == Backend::Cpu ? std::to_string(c.threads) : "", std::to_string(warm), std::to_string(steps),
                 std::to_string(kRepeats), num_or_invalid(sps), num_or_invalid(*std::min_element(rates.begin(), rates.end())),
                 num_or_invalid(*std::max_element(rates.begin(), rates.end())), num_or_invalid(1000.0 / sps),
                 num_or_invalid(w.flops * sps / 1e9), num_or_invalid(w.bytes * sps / 1e9), num_or_invalid(comp * sps / 1e9),
                 triad > 0 ? CsvTable::num(triad) : "", triad > 0 ? num_or_invalid(comp * sps / 1e9 / triad) : "",
                 CsvTable::num(w.flops), CsvTable::num(w.bytes), CsvTable::num(comp),
                 CsvTable::num(sim->mean_coarse_iterations()), CsvTable::num(umax), bad.empty() ? "true" : "false", bad});
      nlohmann::json rec = {{"label", label(c, size)},
                            {"backend", to_string(c.backend)},
                            {"precision", to_string(c.precision)},
                            {"threads", c.backend == Backend::Cpu ? nlohmann::json(c.threads) : nlohmann::json(nullptr)},
                            {"model", size},
                            {"protocol", {{"start_step", warm}, {"steps", steps}, {"repeats", kRepeats}}},
                            {"steps_per_second", rates},
                            {"valid", bad.empty()},
                            {"invalid_reason", bad},
                            {"validity", {{"inverted_element_steps", sim->validity().inverted_element_steps},
                                          {"min_det_f", sim->validity().min_det_f},
                                          {"inverted_threshold", sim->validity().inverted_threshold}}},
                            {"method_details", det},
                            {"machine", machine_info()},
                            {"build", build_json()}};
      fs::create_directories(ctx.out_dir / "runs" / label(c, size));
      write_json_atomic(ctx.out_dir / "runs" / label(c, size) / "run.json", rec);
      runs.push_back(label(c, size));
      if (size == sizes.back()) largest.push_back(rec);
      t.write(ctx.out_dir / "performance.csv");  // partial results survive a later failure
    }
  }
  meta["performance_runs"] = runs;
  meta["timing_protocol"] = "state after " + std::to_string(warm) + " steps from rest (CPU fp64), loaded into every " +
                            "configuration; one untimed pass of the timed steps (steps_timed: " +
                            std::to_string(timed_steps(ctx.quick, 90000)) + " on models of 90K hexahedra or more, else " +
                            std::to_string(timed_steps(ctx.quick, 0)) + "), then " + std::to_string(kRepeats) +
                            " timed passes of the same steps from the same state; median";
}

// Table 3: counts per element from the largest model; GPU time shares from a profiled run
// (kernels launched one by one with events around each group instead of the graph).
void run_kernel_table(const ExperimentContext& ctx, int size, bool gpu, const std::vector<nlohmann::json>& largest) {
  CsvTable t({"precision", "kernel", "flops_per_element", "bytes_per_element", "compulsory_bytes_per_element",
              "launches_per_step", "gpu_ms_per_step", "gpu_time_share", "elements", "gpu_ms_min", "gpu_ms_max",
              "profiled_steps"});
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
      o.push_back("hexmg.profile=true");
      o.push_back("output.probe_every=60");
      req.scenario = load_scenario(kBunnyScenario, o);
      req.scenario_origin = kBunnyScenario;
      req.steps = 60;
      req.warmup_steps = 10;
      req.quiet = ctx.quiet;
      req.out_dir = ctx.out_dir / "runs" / ("profile_" + to_string(p) + "_" + std::to_string(size));
      const nlohmann::json s = run_simulation(req);
      std::string why;
      details = s["method_details"];
      if (run_is_valid(s, &why)) phases = s["timing"]["phases"];
      else if (!ctx.quiet) std::cerr << "dick2011: profile run " << to_string(p) << " " << why << "; no GPU time shares\n";
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
      std::string ms = "", share = "", lo = "", hi = "", steps = "";
      if (phases.contains(name)) {
        // Shares of the mean (they add up to the step); the range of one step's time beside it.
        const auto& ph = phases[name];
        const double m = ph["mean_ms"].get<double>();
        ms = CsvTable::num(m);
        share = CsvTable::num(total_ms > 0 ? m / total_ms : 0.0);
        lo = CsvTable::num(ph["min_ms"].get<double>());
        hi = CsvTable::num(ph["max_ms"].get<double>());
        steps = std::to_string(ph["steps"].get<long>());
      }
      t.add_row({to_string(p), name, CsvTable::num(k["flops_per_element"].get<double>()),
                 CsvTable::num(k["bytes_per_element"].get<double>()),
                 CsvTable::num(k["compulsory_bytes"].get<double>() / ne), CsvTable::num(k["launches"].get<double>()), ms,
                 share, CsvTable::num(ne), lo, hi, steps});
    }
  }
  t.write(ctx.out_dir / "kernels.csv");
}

// Fig. 11: one step's system solved by V-cycles and by Jacobi-PCG on one core, residual against
// time. The V-cycles go on until the residual fell by 1e-6 or 30 cycles, and every cycle's
// factor is kept (mg_factor.csv): the paper's claim is a constant rate.
void run_convergence(const ExperimentContext& ctx, const std::vector<int>& sizes, nlohmann::json& meta) {
  CsvTable t({"model", "elements", "edge_mm", "precision", "solver", "iteration", "seconds", "residual", "reduction"});
  CsvTable f({"model", "elements", "precision", "cycle", "residual", "factor"});
  constexpr double kTarget = 1e-6;
  constexpr int kMaxCycles = 30;
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
      const std::string elems = std::to_string(sim->model().n_elems()), edge = CsvTable::num(sim->model().h * 1000);
      // Multigrid: time only the V-cycles (the residual norm is for the plot).
      const double r0 = sim->system_residual();
      double seconds = 0, r = r0;
      t.add_row({std::to_string(size), elems, edge, to_string(p), "multigrid", "0", "0", CsvTable::num(r0), "1"});
      for (int c = 1; c <= kMaxCycles && r > kTarget * r0; ++c) {
        Stopwatch clock;
        sim->vcycle();
        seconds += clock.elapsed_ms() / 1000.0;
        const double rn = sim->system_residual();
        f.add_row({std::to_string(size), elems, to_string(p), std::to_string(c), CsvTable::num(rn), CsvTable::num(r > 0 ? rn / r : 0.0)});
        r = rn;
        t.add_row({std::to_string(size), elems, edge, to_string(p), "multigrid", std::to_string(c), CsvTable::num(seconds),
                   CsvTable::num(r), CsvTable::num(r / r0)});
      }
      // Jacobi-PCG on the same system from the same initial guess, for 2x the multigrid time.
      sim->restart_solve();
      const hexmg::ConvergenceTrace tr = sim->jacobi_pcg(100000, kTarget, std::max(1.0, 2 * seconds));
      for (size_t i = 0; i < tr.residual.size(); ++i)
        t.add_row({std::to_string(size), elems, edge, to_string(p), "jacobi_cg", std::to_string(i), CsvTable::num(tr.seconds[i]),
                   CsvTable::num(tr.residual[i]), CsvTable::num(tr.residual[i] / tr.residual[0])});
      t.write(ctx.out_dir / "convergence.csv");
      f.write(ctx.out_dir / "mg_factor.csv");
    }
  meta["convergence_models"] = sizes;
  meta["convergence_stop"] = "residual reduced 1e-6 or 30 V-cycles";
}

// Sec. 6: "we achieve high simulation accuracy using only 2 V-cycles per time step". Every step
// of a run is solved twice from the same assembled system: with the method's 2 V-cycles, and to
// a relative residual of 1e-8 (the reference); the run continues with the 2-cycle solution, as
// the simulation does. Errors are relative to the reference, for the total displacement and for
// the step's increment (which is what the solver computes).
void run_accuracy(const ExperimentContext& ctx, const std::vector<int>& sizes, int steps, nlohmann::json& meta) {
  CsvTable t({"model", "elements", "step", "time", "cycles_reference", "reference_reduction", "two_cycle_reduction",
              "error_displacement", "error_increment", "max_displacement"});
  constexpr double kReference = 1e-8;
  for (int size : sizes) {
    RunOptions o;
    o.backend = Backend::Cpu;
    o.precision = Precision::Fp64;
    o.threads = ctx.max_threads;
    o.data_dir = ctx.data_dir;
    const Scenario sc = load_scenario(kBunnyScenario, bunny_overrides(ctx, size));
    auto sim = hexmg::make_hexmg(sc, o);
    const int cycles = sim->model().solver.cycles;
    for (int step = 1; step <= steps; ++step) {
      sim->begin_step();
      const std::vector<double> u_old = sim->slot_displacement();
      const double r0 = sim->system_residual();
      for (int c = 0; c < cycles; ++c) sim->vcycle();
      const double r2 = sim->system_residual();
      const std::vector<double> u2 = sim->slot_displacement();
      sim->restart_solve();
      int n = 0;
      double r = r0;
      while (n < 500 && r > kReference * r0) {
        sim->vcycle();
        r = sim->system_residual();
        ++n;
      }
      const std::vector<double> ur = sim->slot_displacement();
      double du = 0, dr = 0, ir = 0, ii = 0, umax = 0;
      for (size_t i = 0; i < ur.size(); ++i) {
        du += (u2[i] - ur[i]) * (u2[i] - ur[i]);
        dr += ur[i] * ur[i];
        ii += (ur[i] - u_old[i]) * (ur[i] - u_old[i]);
      }
      ir = du;  // u2 - ur is the difference of the increments too (same u_old)
      for (size_t i = 0; i + 2 < ur.size(); i += 3) umax = std::max(umax, std::sqrt(ur[i] * ur[i] + ur[i + 1] * ur[i + 1] + ur[i + 2] * ur[i + 2]));
      t.add_row({std::to_string(size), std::to_string(sim->model().n_elems()), std::to_string(step),
                 CsvTable::num(step * sim->dt()), std::to_string(n), CsvTable::num(r0 > 0 ? r / r0 : 0.0),
                 CsvTable::num(r0 > 0 ? r2 / r0 : 0.0), CsvTable::num(dr > 0 ? std::sqrt(du / dr) : 0.0),
                 CsvTable::num(ii > 0 ? std::sqrt(ir / ii) : 0.0), CsvTable::num(umax)});
      // Continue with the 2-cycle solution (the cycles are deterministic: the same u2 again).
      sim->restart_solve();
      for (int c = 0; c < cycles; ++c) sim->vcycle();
      sim->end_step();
      if (!ctx.quiet && step % 20 == 0) std::cerr << "dick2011: accuracy " << size << " step " << step << "/" << steps << "\n";
    }
    const std::string bad = invalid_reason(*sim);
    if (!bad.empty()) throw RuntimeFailure("dick2011 accuracy study on the " + std::to_string(size) + " model: invalid run: " + bad);
    t.write(ctx.out_dir / "accuracy.csv");
  }
  meta["accuracy_models"] = sizes;
  meta["accuracy_steps"] = steps;
}

// Per-iteration factors on shapes built to expose the V-cycle's behaviour on thin features and on
// the bunny at the paper's sizes (dick2011::measure_factors): the paper's V-cycle and the corrected
// constructions of dick2011::factor_variants(), the first step from rest, CPU fp64, each until the
// residual fell 1e-10 or 30 iterations; residual and energy-norm error factors. The energy error
// is measured against a direct solve (sparse LDL^T, one refinement step) up to kDirectMaxElements
// hexahedra, where the MG-PCG reference (recurrence residual kPcgReferenceTolerance) is solved
// too and every row measured against both (energy_factor_pcg_reference); above, against the
// MG-PCG reference only (the direct solve of the 269K bunny would need hours and ~55 GB).
constexpr int64_t kDirectMaxElements = 50000;
// --quick: the sparse direct solve dominates the part's time from a few thousand hexahedra on, so
// the quick run keeps it (and the direct-vs-MG-PCG cross-check) for the smallest shapes only.
constexpr int64_t kQuickDirectMaxElements = 2048;
constexpr double kPcgReferenceTolerance = 1e-13;

void run_shapes(const ExperimentContext& ctx, const std::vector<int>& bunny_sizes, nlohmann::json& meta) {
  CsvTable t({"shape", "variant", "description", "elements", "levels", "cycle", "residual_factor", "energy_factor",
              "energy_error", "relative_residual", "reference", "energy_factor_pcg_reference", "operator_complexity",
              "work_per_cycle"});
  struct Case {
    std::string name, description;
    Scenario sc;
  };
  std::vector<Case> cases;
  const fs::path dir = ctx.out_dir / "meshes";
  fs::create_directories(dir);
  for (const auto& s : dick2011::mg_shapes(0.002)) {
    const fs::path p = dir / (s.name + ".vtu");
    const mesh::HexMesh m = mesh::voxel_to_hex(s.voxels);
    std::vector<int32_t> conn;
    for (const auto& e : m.elems) conn.insert(conn.end(), e.begin(), e.end());
    mesh::write_vtu(p, m.nodes, mesh::CellType::Hexahedron, conn, {}, {});
    cases.push_back({s.name, s.description, load_scenario(kBunnyScenario, dick2011::mg_shape_overrides(fs::absolute(p).string()))});
  }
  for (int size : bunny_sizes)
    cases.push_back({"bunny_" + std::to_string(size), "the dick2011 bunny", load_scenario(kBunnyScenario, bunny_overrides(ctx, size))});
  nlohmann::json names = nlohmann::json::array(), studies = nlohmann::json::object();
  const int64_t direct_max = ctx.quick ? kQuickDirectMaxElements : kDirectMaxElements;
  for (const Case& c : cases) {
    dick2011::FactorStudyOptions o;
    o.threads = ctx.max_threads;
    o.data_dir = ctx.data_dir;
    o.pcg_tolerance = kPcgReferenceTolerance;
    o.direct_max_elements = direct_max;
    if (!ctx.quiet) std::cerr << "dick2011: shape " << c.name << "\n";
    const dick2011::FactorStudy st = dick2011::measure_factors(c.sc, o);
    const std::string elements = std::to_string(st.elements), levels = std::to_string(st.levels);
    const bool direct = st.reference == dick2011::FactorReference::Direct;
    const std::string ref = dick2011::to_string(st.reference);
    auto num_or_empty = [](double v) { return std::isnan(v) ? std::string("") : CsvTable::num(v); };
    for (const auto& r : st.rows)
      t.add_row({c.name, r.variant, c.description, elements, levels, std::to_string(r.iteration), CsvTable::num(r.residual_factor),
                 num_or_empty(r.energy_factor), CsvTable::num(r.energy_error), CsvTable::num(r.relative_residual), ref,
                 num_or_empty(r.energy_factor_check), CsvTable::num(r.operator_complexity), CsvTable::num(r.work_per_cycle)});
    nlohmann::json reached = nlohmann::json::object();
    for (const auto& r : st.rows) reached[r.variant] = {{"iterations", r.iteration}, {"relative_residual", r.relative_residual},
                                                        {"energy_error", r.energy_error}};
    studies[c.name] = {{"elements", st.elements},
                       {"system_size", st.system_size},
                       {"levels", st.levels},
                       {"reference", ref},
                       {"reference_relative_residual", st.reference_residual},
                       {"pcg_reference_iterations", st.pcg_iterations},
                       {"pcg_reference_relative_residual", st.pcg_residual},
                       {"max_energy_factor_difference_direct_vs_pcg_reference",
                        direct ? nlohmann::json(st.max_check_difference) : nlohmann::json(nullptr)},
                       {"reached", reached},
                       {"reference_seconds", st.reference_seconds},
                       {"seconds", st.seconds}};
    names.push_back(c.name);
    t.write(ctx.out_dir / "mg_shapes.csv");
    meta["mg_shapes"] = names;
    meta["mg_shapes_studies"] = studies;
    if (!ctx.quiet)
      std::cerr << "dick2011: shape " << c.name << " done (" << st.elements << " hexahedra, " << st.seconds << " s"
                << (direct ? ", max |energy factor difference| direct vs MG-PCG reference " + CsvTable::num(st.max_check_difference) : "")
                << ")\n";
  }
  meta["mg_shapes"] = names;
  meta["mg_shapes_studies"] = studies;
  meta["mg_shapes_protocol"] = {
      {"step", "the first step from rest, CPU fp64, initial guess 0"},
      {"stop", "relative residual |r_k|/|r_0| <= 1e-10 or 30 iterations, per construction"},
      {"reference_direct", "Eigen SimplicialLDLT (fp64) with one step of iterative refinement, models up to " +
                               std::to_string(direct_max) + " hexahedra; there every row is also measured "
                               "against the MG-PCG reference (energy_factor_pcg_reference)"},
      {"reference_mg_pcg", "CG preconditioned by the symmetric smoothed-P V-cycle (the smoothed_p_pcg hierarchy) "
                           "from 0 until its recurrence residual fell to " + CsvTable::num(kPcgReferenceTolerance) +
                           " |b| (the true |b - A x|/|b| reached: pcg_reference_relative_residual in mg_shapes_studies), "
                           "models above " + std::to_string(direct_max) + " hexahedra"},
      {"energy_floor", "energy factors only while ||e_k||_A > 1e-11 ||e_0||_A (= ||x||_A): below, the references' "
                       "own errors (a few 1e-14 of ||x||_A) would show; energy_factor is empty there, energy_error "
                       "is as measured"},
      {"pcg_reference_tolerance", kPcgReferenceTolerance},
      {"energy_floor_relative", dick2011::FactorStudyOptions().energy_floor},
      {"direct_max_elements", direct_max}};
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
  // A run of some parts extends the meta.json of the run that made the others; meta.json is
  // rewritten after every part, so a run cut short (a device call's time limit) still describes
  // the files it finished.
  const fs::path meta_path = ctx.out_dir / "meta.json";
  nlohmann::json meta = (!ctx.parts.empty() && fs::exists(meta_path)) ? read_json_file(meta_path) : nlohmann::json::object();
  const auto done = [&](const std::string& part) {
    meta["parts_done"][part] = true;
    write_json_atomic(meta_path, meta);
  };
  meta["paper"] = "Dick, Georgii, Westermann: A real-time multigrid finite hexahedra method for elasticity simulation using CUDA. SIMPAT 19 (2011) 801-816";
  meta["quick"] = ctx.quick;
  if (ctx.wants("performance")) {
    meta["cuda_available"] = ctx.cuda_available;
    meta["max_threads"] = ctx.max_threads;
  }
  meta["scenario"] = scenario_to_json(load_scenario(kBunnyScenario, {}));
  const GpuInfo g = cuda_device_info();
  if (ctx.wants("performance")) meta["gpu"] = g.usable ? nlohmann::json(g.name) : nlohmann::json(nullptr);
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
  if (ctx.wants("performance")) {
    meta["sizes"] = sizes;
    meta["cpu_threads"] = threads;
  }
  meta["notes"] = {
      "gbps_requested counts every byte each kernel requests (the paper's Table 3 convention, cache hits "
      "included); gbps_compulsory counts each array once per kernel; fraction_of_triad_compulsory sets the "
      "compulsory rate against the STREAM triad of the same device measured in the same run (CPU rows: the "
      "CPU triad at the same thread count).",
      "Every configuration times the same steps from the same state (timing_protocol); a configuration "
      "whose state is not valid (non-finite, inverted elements) has its numbers left out (invalid_reason).",
      "Boundary conditions of the bunny are not given in the paper: base fixed, and a gravity-like load "
      "along -y of 0.0981 m/s^2 on the Fig. 11 material (rho = 1e5 kg/m^3): full gravity on that density "
      "inverts elements from step 7 and collapses the bunny; this load is the weight of a rho = 1000 kg/m^3 "
      "bunny under gravity (static sag 1.37 mm).",
      "Fig. 11 models: the paper's 2.8 mm and 1.4 mm edges (8x the elements); here the two models "
      "of that ratio among the table sizes (quick: the two smallest)."};
  meta["parts_done"] = meta.contains("parts_done") ? meta["parts_done"] : nlohmann::json::object();
  if (ctx.wants("performance")) {
    // Tables 1-3 and the kernel table (which reads the performance runs of the largest model).
    if (!ctx.quiet) std::cerr << "dick2011: STREAM triad ceilings (CPU at the timed thread counts" << (gpu ? ", GPU" : "") << ")\n";
    const Ceilings ceil = measure_ceilings(threads, gpu);
    meta["ceilings"] = {{"cpu_triad", ceil.cpu},
                        {"gpu_triad_fp32_gbps", gpu ? nlohmann::json(ceil.gpu_fp32) : nlohmann::json(nullptr)},
                        {"gpu_triad_fp64_gbps", gpu ? nlohmann::json(ceil.gpu_fp64) : nlohmann::json(nullptr)}};
    std::vector<nlohmann::json> largest;
    run_performance(ctx, sizes, configs, ceil, meta, largest);
    run_kernel_table(ctx, sizes.back(), gpu, largest);
    done("performance");
  }
  if (ctx.wants("convergence")) {
    const std::vector<int> conv = ctx.quick ? std::vector<int>{sizes[0]} : std::vector<int>{33300, 269000};
    run_convergence(ctx, conv, meta);
    done("convergence");
  }
  if (ctx.wants("accuracy")) {
    run_accuracy(ctx, {sizes[0]}, ctx.quick ? 10 : 100, meta);
    done("accuracy");
  }
  if (ctx.wants("shapes")) {
    run_shapes(ctx, ctx.quick ? std::vector<int>{sizes[0]} : sizes, meta);
    done("shapes");
  }
  if (ctx.wants("vtk")) {
    run_vtk(ctx, sizes[0]);
    done("vtk");
  }
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
  r.add({"dick2011", "Dick, Georgii & Westermann 2011: real-time multigrid finite hexahedra (CUDA)", run,
         {"performance", "convergence", "accuracy", "shapes", "vtk"}});
}

}  // namespace eb
