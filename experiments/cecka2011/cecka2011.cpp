// `elastobench reproduce cecka2011`: Cecka, Lew & Darve 2011, GPU assembly (GlobalNZ, SharedNZ)
// for neo-Hookean elastodynamics with Newton-Raphson and (D)CG. Writes under ctx.out_dir:
//   table16_1.csv   Table 16.1: relative L2 error of the fp32 tangent of every strategy x format
//                   against the fp64 host assembly on the four unit spheres, published beside ours,
//                   and each row's largest difference to the fp32 AssemblyCPU_Opt (agreement), and
//                   the mesher that made the spheres (option spheres=generator|gmsh)
//   stages.csv      Figs. 16.10-16.11: per configuration (all-CPU one thread: NR_CPU,
//                   AssemblyCPU_Opt, DCSR, DCG_CPU; CPU assembly + GPU CG: DHYB, DCG_GPU; all-GPU:
//                   NR_GPU, GlobalNZ, DHYB, DCG_GPU) the time per step of each stage (NR,
//                   assembly, SpMV = CG iterations x one product timed alone, the rest of CG,
//                   transfers), its share, NR and CG iterations, and the speed-up over all-CPU
//   assembly.csv    Fig. 16.12: one assembly per strategy x format x precision x hardware:
//                   median/min/max of the timed repeats, non-zeros/s, the strategy's bytes and
//                   flops, the compulsory-bytes bound at the run's triad, the ratio to it
//   realtime.csv    the real-time setting on the hand (dt 0.01, NR 2e-5, CG 1e-4, fp32): steps/s,
//                   NR iterations per step (min/median/mean/max), per all-GPU strategy
//   newton.csv      the Newton residual of every iteration of a few steps of the cecka-sphere
//                   (CPU, cpu-opt): the paper's strict setting in fp64 and in fp32, and fp64 with
//                   CG and Newton tight enough that the linear solve does not cap the order; per
//                   iteration r_k, r_k / r_0, the observed order log(r_{k+1}/r_0) / log(r_k/r_0) (2 for
//                   r_{k+1}/r_0 = (r_k/r_0)^2) and C = (r_{k+1}/r_0) / (r_k/r_0)^2
//   comparison.csv  published | ours | ratio | verdict for the paper's claims
//   meta.json       parameters, meshes (counts), ceilings, machine, what was not run and why
// Parts: table16_1, stages, assembly, realtime, newton. --quick: CPU only, the sphere instead of the hand,
// fewer repeats. No number from an invalid run is tabulated (the row says why).
// Option spheres=generator|gmsh: the mesher of Table 16.1's spheres (default generator).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "experiments/experiment.h"
#include "meshes/errors.h"
#include "meshes/gmsh_tet.h"
#include "solvers/common/cpu_stream.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/results.h"
#include "solvers/nr_neohookean/assembly_strategy.h"
#include "solvers/nr_neohookean/nr_neohookean_engine.h"
#include "solvers/nr_neohookean/nr_neohookean_simulation.h"

namespace eb {
namespace {

namespace fs = std::filesystem;
using nr_neohookean::NrSetup;
using nr_neohookean::StrategyRun;

const std::vector<double> kPublishedTable = {9.15e-8, 1.05e-8, 1.45e-7, 1.77e-7};  // CPU (float) COO row
const std::vector<std::string> kPublishedSizes = {"63/120", "305/960", "1.7K/7.1K", "3.6K/16.5K"};

std::string num(double v) { return CsvTable::num(v); }

// STREAM triads measured in this run (0: not measured).
struct Ceilings {
  CpuTriad cpu;
  double gpu_fp32 = 0, gpu_fp64 = 0;
  double cpu_gbps(int threads) const {
    for (const auto& p : cpu.points)
      if (p.threads == threads) return p.median_gbps;
    return 0;
  }
};

// The compulsory bytes of one assembly of `s` in precision p (assembly_strategy.h).
double compulsory_bytes(const NrSetup& s, Precision p) {
  auto of = [&](auto zero) {
    using T = decltype(zero);
    nr_neohookean::AssemblyProblem<T> a;
    a.nodes = s.num_nodes;
    a.elements = s.num_elements;
    a.form = s.form;
    a.map = &s.map;
    return nr_neohookean::compulsory_assembly_bytes(a);
  };
  return p == Precision::Fp32 ? of(0.0f) : of(0.0);
}

RunOptions run_options(Backend b, Precision p, int threads) {
  RunOptions o;
  o.backend = b;
  o.precision = p;
  o.threads = threads;
  return o;
}

// A smooth deformation of the reference (stretch 10% along x, twist 0.2 rad per unit along z,
// shear 5%): the state at which Table 16.1's tangents are assembled.
std::vector<double> deformed(const NrSetup& s) {
  std::vector<double> x(size_t(3 * s.num_nodes));
  for (size_t n = 0; n < size_t(s.num_nodes); ++n) {
    const auto& X = s.nodes[n];
    const double a = 0.2 * X[2], c = std::cos(a), sn = std::sin(a);
    const double px = 1.1 * X[0] + 0.05 * X[1], py = X[1];
    x[3 * n] = c * px - sn * py;
    x[3 * n + 1] = sn * px + c * py;
    x[3 * n + 2] = X[2];
  }
  return x;
}

double relative_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, n = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    d += (a[k] - b[k]) * (a[k] - b[k]);
    n += b[k] * b[k];
  }
  return std::sqrt(d / n);
}

std::vector<std::string> strategies(bool gpu) {
  std::vector<std::string> out;
  for (const auto& s : nr_neohookean::assembly_strategies())
    if (s.location == linalg::Location::Host || gpu) out.push_back(s.name);
  return out;
}

StrategyRun run_strategy(const std::string& name, const NrSetup& s, const std::vector<double>& x, Precision p,
                         int repeats, int threads) {
  return p == Precision::Fp32 ? nr_neohookean::run_strategy<float>(name, s, x, repeats, threads)
                              : nr_neohookean::run_strategy<double>(name, s, x, repeats, threads);
}

NrSetup setup_of(const Scenario& sc, Backend b, Precision p, const fs::path& data_dir) {
  RunOptions o = run_options(b, p, 1);
  o.data_dir = data_dir;
  return nr_neohookean::build_nr_setup(sc, o);
}

// ---- Table 16.1 ----
// The option spheres=generator|gmsh (default generator: the lattice spheres of meshes/sphere.h,
// as the committed H100 results; gmsh: mesh.tetrahedralizer = "gmsh", the Gmsh spheres).
std::string sphere_mesher(const ExperimentContext& ctx) {
  const std::string* v = ctx.option("spheres");
  return v ? *v : "generator";
}

void check_spheres_option(const std::string& v) {
  if (v != "generator" && v != "gmsh")
    throw InputError("cecka2011 option spheres='" + v + "' is unknown (valid: generator, gmsh)");
  if (v == "gmsh" && !mesh::have_gmsh())
    throw InputError("cecka2011 option spheres=gmsh needs Gmsh, which this build lacks (configured without "
                     "ELASTOBENCH_GMSH or libgmsh-dev); use spheres=generator");
}

void table16_1(const ExperimentContext& ctx, bool gpu, nlohmann::json& meta) {
  CsvTable t({"strategy", "format", "sphere", "nodes", "elements", "rel_l2_error_fp32", "published_cpu_coo",
              "max_rel_diff_to_cpu_opt_fp32", "mesher"});
  const std::string mesher = sphere_mesher(ctx);
  std::vector<std::string> mesh_keys;
  if (mesher == "gmsh") mesh_keys.push_back("mesh.tetrahedralizer=\"gmsh\"");
  nlohmann::json spheres = nlohmann::json::array();
  const std::vector<linalg::Format> formats = {linalg::Format::Coo,  linalg::Format::Csr,  linalg::Format::Hyb,
                                               linalg::Format::Dcoo, linalg::Format::Dcsr, linalg::Format::Dhyb};
  for (int level = 0; level < 4; ++level) {
    for (linalg::Format f : formats) {
      std::vector<std::string> set = mesh_keys;
      set.push_back("mesh.refinement=" + std::to_string(level));
      set.push_back("nr-neohookean.format=" + linalg::to_string(f));
      const Scenario sc = load_scenario("cecka-sphere", set);
      const NrSetup s = setup_of(sc, gpu ? Backend::Cuda : Backend::Cpu, Precision::Fp64, ctx.data_dir);
      if (f == formats.front())
        spheres.push_back({{"level", level}, {"nodes", s.num_nodes}, {"elements", s.num_elements},
                           {"published", kPublishedSizes[size_t(level)]}});
      const std::vector<double> x = deformed(s);
      const StrategyRun ref = run_strategy("cpu-opt", s, x, Precision::Fp64, 0, 1);
      const StrategyRun cpu32 = run_strategy("cpu-opt", s, x, Precision::Fp32, 0, 1);
      for (const std::string& name : strategies(gpu)) {
        const StrategyRun r = run_strategy(name, s, x, Precision::Fp32, 0, 1);
        double agree = 0, scale = 0;
        for (double v : ref.values) scale = std::max(scale, std::abs(v));
        for (size_t k = 0; k < r.values.size(); ++k) agree = std::max(agree, std::abs(r.values[k] - cpu32.values[k]));
        agree /= scale;  // max |K_strategy - K_cpu-opt| / max |K|, both fp32
        const bool valid = r.checks.inverted == 0 && r.checks.first_nonfinite < 0;
        t.add_row({name, linalg::to_string(f), std::to_string(level), std::to_string(s.num_nodes),
                   std::to_string(s.num_elements), valid ? num(relative_l2(r.values, ref.values)) : "invalid: inverted",
                   num(kPublishedTable[size_t(level)]), num(agree), mesher});
      }
    }
  }
  t.write(ctx.out_dir / "table16_1.csv");
  meta["table16_1"] = {{"spheres", spheres},
                       {"mesher", mesher == "gmsh" ? "Gmsh (meshes/sphere.h make_sphere_tet_gmsh)"
                                                   : "lattice generator (meshes/sphere.h make_sphere_tet)"},
                       {"state", "x = twist(0.2 z) of (1.1 X + 0.05 Y, Y, Z): a smooth deformation, no inverted element"},
                       {"reference", "fp64 AssemblyCPU_Opt (host); error = ||K32 - K64||_2 / ||K64||_2 over the entries"}};
}

// ---- Figs. 16.10-16.12 and the real-time hand: the model ----
Scenario stage_scenario(const ExperimentContext& ctx, const std::string& variant, const std::string& format,
                        bool realtime) {
  std::vector<std::string> o = {"nr-neohookean.format=" + format};
  Scenario sc = ctx.quick ? load_scenario("cecka-sphere", o) : load_scenario("cecka-hand", o);
  if (!realtime && !ctx.quick) {  // Figs. 16.10-16.11: the paper's strict setting on the hand
    // The strict setting's 0.2 steps under the real-time setting's gravity (5) swing the hand
    // through a large sag within a few steps, where fp32 cannot meet 1e-5; 0.1 keeps it moderate.
    sc = load_scenario("cecka-hand", {"nr-neohookean.format=" + format, "time.dt=0.2", "nr-neohookean.nr_tolerance=1e-5",
                                      "nr-neohookean.cg_tolerance=1e-6", "boundary.gravity=[0.0, 0.0, -0.1]"});
  }
  if (realtime && ctx.quick)
    sc = load_scenario("cecka-sphere", {"nr-neohookean.format=" + format, "time.dt=0.01",
                                        "nr-neohookean.nr_tolerance=2e-5", "nr-neohookean.cg_tolerance=1e-4"});
  sc.solver.variant = variant;
  return sc;
}

struct StepStats {
  bool valid = true;
  std::string reason;
  std::map<std::string, double> stage_ms;  // median per step
  double step_ms = 0;                      // median of the per-step sums
  double step_ms_min = 0, step_ms_max = 0;  // their range over the timed steps
  double newton_mean = 0, cg_per_step = 0;
  int newton_min = 0, newton_median = 0, newton_max = 0;
  double spmv_ms = 0;
  std::string cg_name;
  int64_t nodes = 0, elements = 0, nnz = 0;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

StepStats run_steps(const ExperimentContext& ctx, const std::string& label, const Scenario& sc, Backend b, Precision p,
                    int threads, int warmup, int timed) {
  StepStats st;
  RunOptions o = run_options(b, p, threads);
  o.data_dir = ctx.data_dir;
  auto sim = nr_neohookean::make_nr_simulation(sc, o);
  st.nodes = sim->setup().num_nodes;
  st.elements = sim->setup().num_elements;
  st.nnz = int64_t(sim->setup().pattern.nnz());
  sim->advance(warmup);
  sim->timings().clear();
  std::vector<double> steps;
  std::map<std::string, std::vector<double>> per_stage;
  std::vector<int> newton;
  double cg = 0;
  for (int k = 0; k < timed; ++k) {
    sim->timings().clear();
    sim->advance(1);
    double sum = 0;
    for (const PhaseStats& ps : sim->timings().stats(0)) {
      per_stage[ps.name].push_back(ps.total_ms);
      sum += ps.total_ms;
    }
    steps.push_back(sum);
    const auto& r = sim->history().back();
    newton.push_back(int(r.cg_iterations.size()));
    for (int c : r.cg_iterations) cg += c;
  }
  const ValidityCounts v = sim->validity();
  if (v.solver_failures > 0 || v.inverted_element_steps > 0 || v.nonfinite_steps > 0) {
    st.valid = false;
    std::ostringstream m;
    m << "invalid: " << v.solver_failures << " failed Newton steps, " << v.inverted_element_steps
      << " inverted element-steps";
    for (const auto& r : sim->history())
      if (!r.converged) {
        m << " (step " << r.step << ": " << r.failure << ")";
        break;
      }
    st.reason = m.str();
  }
  for (auto& [k, vals] : per_stage) st.stage_ms[k] = median(vals);
  st.step_ms = median(steps);
  st.step_ms_min = *std::min_element(steps.begin(), steps.end());
  st.step_ms_max = *std::max_element(steps.begin(), steps.end());
  st.newton_min = *std::min_element(newton.begin(), newton.end());
  st.newton_max = *std::max_element(newton.begin(), newton.end());
  st.newton_median = int(median(std::vector<double>(newton.begin(), newton.end())));
  double s = 0;
  for (int n : newton) s += n;
  st.newton_mean = s / double(newton.size());
  st.cg_per_step = cg / double(timed);
  st.spmv_ms = sim->time_spmv_ms(ctx.quick ? 5 : 11);
  st.cg_name = sim->cg_name();
  // The run's record (analysis/run_validity.py reads runs/*/run.json): validity of the timed steps.
  const fs::path dir = ctx.out_dir / "runs" / label;
  fs::create_directories(dir);
  write_json_atomic(dir / "run.json", {{"valid", st.valid},
                                       {"invalid_reason", st.reason},
                                       {"scenario", sc.name},
                                       {"variant", sc.solver.variant},
                                       {"backend", to_string(b)},
                                       {"precision", to_string(p)},
                                       {"threads", threads},
                                       {"warmup_steps", warmup},
                                       {"timed_steps", timed},
                                       {"details", sim->details()}});
  return st;
}

struct Config {
  std::string name, variant, format;
  Backend backend;
  int threads;
  std::string paper;
};

void stages(const ExperimentContext& ctx, bool gpu, nlohmann::json& meta, nlohmann::json& claims) {
  std::vector<Config> configs = {{"all-cpu", "cpu-opt", "dcsr", Backend::Cpu, 1,
                                  "NR_CPU, AssemblyCPU_Opt, DCSR_Matrix, DCG_CPU (one core)"}};
  if (gpu) {
    configs.push_back({"cpu-assembly-gpu-cg", "cpu-opt", "dhyb", Backend::Cuda, 1,
                       "NR_CPU, AssemblyCPU_Opt, DHYB_Matrix, DCG_GPU"});
    configs.push_back({"all-gpu", "globalnz", "dhyb", Backend::Cuda, 1, "NR_GPU, AssemblyGlobalNZ, DHYB_Matrix, DCG_GPU"});
  }
  CsvTable t({"configuration", "paper_configuration", "precision", "nodes", "elements", "nonzeros", "stage", "ms_per_step",
              "share", "step_ms", "step_ms_min", "step_ms_max", "timed_steps", "newton_per_step", "cg_per_step",
              "speedup_vs_all_cpu", "validity"});
  double cpu_step = 0;
  // Stage times are medians over the timed steps, the step's min-max beside them (the all-CPU step
  // takes about 2 s on the hand).
  const int warmup = 1, timed = ctx.quick ? 3 : 5;
  for (const Config& c : configs) {
    const Scenario sc = stage_scenario(ctx, c.variant, c.format, false);
    const StepStats st = run_steps(ctx, "stages_" + c.name, sc, c.backend, Precision::Fp32, c.threads, warmup, timed);
    if (c.name == "all-cpu" && st.valid) cpu_step = st.step_ms;
    // SpMV: the CG's products timed alone x the CG iterations (+1 per solve); the rest of CG.
    std::map<std::string, double> shown = st.stage_ms;
    const double spmv = st.spmv_ms * (st.cg_per_step + st.newton_mean);
    shown["spmv"] = std::min(spmv, shown["cg"]);
    shown["cg"] -= shown["spmv"];
    for (const auto& [stage, ms] : shown)
      t.add_row({c.name, c.paper, "fp32", std::to_string(st.nodes), std::to_string(st.elements), std::to_string(st.nnz),
                 stage == "cg" ? "cg (without spmv)" : stage, st.valid ? num(ms) : st.reason,
                 st.valid ? num(ms / st.step_ms) : "", st.valid ? num(st.step_ms) : "",
                 st.valid ? num(st.step_ms_min) : "", st.valid ? num(st.step_ms_max) : "", std::to_string(timed),
                 num(st.newton_mean),
                 num(st.cg_per_step), st.valid && cpu_step > 0 ? num(cpu_step / st.step_ms) : "",
                 st.valid ? "valid" : st.reason});
    if (c.name == "all-cpu" && st.valid)
      claims.push_back({{"claim", "all-CPU: SpMV share of the step (Fig. 16.10 left)"}, {"published", 0.70},
                        {"ours", shown["spmv"] / st.step_ms}});
    if (c.name == "cpu-assembly-gpu-cg" && st.valid)
      claims.push_back({{"claim", "CPU assembly + GPU CG: assembly + transfer share (Fig. 16.10 right)"},
                        {"published", 0.76},
                        {"ours", (shown["assembly"] + shown["transfer"]) / st.step_ms}});
    if (c.name == "all-gpu" && st.valid && cpu_step > 0)
      claims.push_back({{"claim", "all-GPU step speed-up over all-CPU one core (Fig. 16.11; target >= 50x)"},
                        {"published", 16.0},
                        {"ours", cpu_step / st.step_ms}});
  }
  t.write(ctx.out_dir / "stages.csv");
  meta["stages"] = {{"model", ctx.quick ? "cecka-sphere (refinement 3), quick" : "cecka-hand"},
                    {"setting", "dt = 0.2, NR 1e-5 absolute, CG 1e-6 relative, fp32, mu 5, lambda 2, rho 1; hand: gravity 0.1"},
                    {"warmup_steps", warmup},
                    {"timed_steps", timed},
                    {"spmv_note", "SpMV = (CG iterations + one product per solve) x the median of one product timed "
                                  "alone (CUDA events over batches of 10 on the GPU); cg = the rest of the solves"}};
}

void assembly(const ExperimentContext& ctx, bool gpu, const Ceilings& ceil, nlohmann::json& meta) {
  CsvTable t({"strategy", "hardware", "threads", "format", "precision", "elements", "nonzeros", "median_ms", "min_ms",
              "max_ms", "nonzeros_per_s", "work_bytes", "work_flops", "compulsory_bytes", "bytes_bound_ms",
              "flop_bound_ms", "bound_ms", "ratio_to_bound"});
  // The GPU's FP32 peak: SMs x 128 lanes x 2 (FMA) x the SM clock (sm_90: 1.98 GHz, the H100 SXM5
  // boost clock nvidia-smi reports as clocks.max.sm); FP64 half of it. 0 where not known.
  const GpuInfo g = cuda_device_info(0);
  const double peak32 = g.usable && g.compute_major == 9 ? double(g.multiprocessors) * 128 * 2 * 1.98e9 : 0;
  const int repeats = ctx.quick ? 5 : 11;
  for (const std::string f : {"dcsr", "dhyb"}) {
    Scenario sc = ctx.quick ? load_scenario("cecka-sphere", {"nr-neohookean.format=" + f})
                            : load_scenario("cecka-hand", {"nr-neohookean.format=" + f});
    for (Precision p : {Precision::Fp32, Precision::Fp64}) {
      const NrSetup s = setup_of(sc, gpu ? Backend::Cuda : Backend::Cpu, p, ctx.data_dir);
      const std::vector<double> x = deformed(s);
      for (const std::string& name : strategies(gpu)) {
        const bool device = nr_neohookean::find_strategy(name).location == linalg::Location::Device;
        std::vector<int> thread_counts = {1};
        if (!device && ctx.max_threads > 1) thread_counts.push_back(ctx.max_threads);
        if (device) thread_counts = {0};
        if (name == "cpu" && !ctx.quick) thread_counts = {1};
        for (int th : thread_counts) {
          const StrategyRun r = run_strategy(name, s, x, p, repeats, std::max(1, th));
          std::vector<double> ms = r.ms;
          std::sort(ms.begin(), ms.end());
          const double med = ms[ms.size() / 2];
          const double compulsory = compulsory_bytes(s, p);
          const double triad = device ? (p == Precision::Fp32 ? ceil.gpu_fp32 : ceil.gpu_fp64)
                                      : ceil.cpu_gbps(std::max(1, th));
          const double bytes_bound = triad > 0 ? compulsory / (triad * 1e9) * 1e3 : 0;
          const double peak = device ? (p == Precision::Fp32 ? peak32 : peak32 / 2) : 0;
          const double flop_bound = peak > 0 ? r.work.flops / peak * 1e3 : 0;
          const double bound = std::max(bytes_bound, flop_bound);
          t.add_row({name, device ? "gpu" : "cpu", std::to_string(std::max(1, th)), f, to_string(p),
                     std::to_string(s.num_elements), std::to_string(s.pattern.nnz()), num(med), num(ms.front()),
                     num(ms.back()), num(double(s.pattern.nnz()) / (med * 1e-3)), num(r.work.bytes), num(r.work.flops),
                     num(compulsory), num(bytes_bound), num(flop_bound), num(bound), bound > 0 ? num(med / bound) : ""});
        }
      }
    }
  }
  t.write(ctx.out_dir / "assembly.csv");
  meta["assembly"] = {{"repeats", repeats},
                      {"model", ctx.quick ? "cecka-sphere (refinement 3)" : "cecka-hand"},
                      {"bound", "the larger of: compulsory bytes (positions, S(e), connectivity, the values and the force, "
                                "each once) at the run's STREAM triad of that hardware (CPU: at the row's threads); the "
                                "strategy's flops at the GPU's FP32/FP64 peak (SMs x 128 x 2 x 1.98 GHz on sm_90; FP64 "
                                "half)"}};
}

void realtime(const ExperimentContext& ctx, bool gpu, nlohmann::json& meta, nlohmann::json& claims) {
  CsvTable t({"strategy", "backend", "precision", "nodes", "elements", "step_ms", "step_ms_min", "step_ms_max",
              "steps_per_s", "newton_min",
              "newton_median", "newton_mean", "newton_max", "cg_per_step", "validity"});
  std::vector<std::pair<std::string, Backend>> runs;
  if (gpu)
    for (const std::string& s : strategies(true))
      if (nr_neohookean::find_strategy(s).location == linalg::Location::Device) runs.push_back({s, Backend::Cuda});
  if (!gpu || ctx.quick) runs.push_back({"cpu-opt", Backend::Cpu});
  const int timed = ctx.quick ? 3 : 20;
  for (const auto& [name, b] : runs) {
    const Scenario sc = stage_scenario(ctx, name, b == Backend::Cuda ? "dhyb" : "dcsr", true);
    const StepStats st = run_steps(ctx, "realtime_" + name + "_" + to_string(b), sc, b, Precision::Fp32,
                                   b == Backend::Cpu ? ctx.max_threads : 1, 2, timed);
    t.add_row({name, to_string(b), "fp32", std::to_string(st.nodes), std::to_string(st.elements),
               st.valid ? num(st.step_ms) : st.reason, st.valid ? num(st.step_ms_min) : "",
               st.valid ? num(st.step_ms_max) : "", st.valid ? num(1000.0 / st.step_ms) : "",
               std::to_string(st.newton_min), std::to_string(st.newton_median), num(st.newton_mean), std::to_string(st.newton_max), num(st.cg_per_step),
               st.valid ? "valid" : st.reason});
    if (b == Backend::Cuda && name == "globalnz" && st.valid)
      claims.push_back({{"claim", "real-time hand: frames per second (paper 7-14 on 125K tets; target >= 200)"},
                        {"published", 7.0},
                        {"ours", 1000.0 / st.step_ms}});
    // NR iterations are the load's and the tolerance's, not the hardware's: from the GPU's GlobalNZ
    // run, or the CPU's where there is no GPU (the quick run's sphere is not the paper's hand).
    if (!ctx.quick && st.valid && ((b == Backend::Cuda && name == "globalnz") || !gpu)) {
      // The paper gives a range, not a value: ours (the median over the timed steps, min-max beside it)
      // is judged against 3-6 itself, not against a midpoint within 2x.
      claims.push_back({{"claim", "real-time hand: NR iterations per step, median (min-max " +
                                      std::to_string(st.newton_min) + "-" + std::to_string(st.newton_max) +
                                      " over the timed steps; paper 3-6)"},
                        {"published", 4.5},
                        {"published_range", {3.0, 6.0}},
                        {"ours", double(st.newton_median)}});
    }
  }
  t.write(ctx.out_dir / "realtime.csv");
  meta["realtime"] = {{"setting", "dt = 0.01, NR 2e-5 absolute, CG 1e-4 relative, fp32"},
                      {"model", ctx.quick ? "cecka-sphere (refinement 3), quick" : "cecka-hand"},
                      {"timed_steps", timed},
                      {"fps", "1 / (median step time): simulation only, no rendering"},
                      {"load_note",
                       "gravity 5 only: Newton meets 2e-5 in 1 iteration per step. The momentum residual scales with "
                       "length^4, so the paper's absolute 2e-5 on its unscaled hand is far stricter than ours at unit "
                       "length; fingertip drags (surface/point forces switching, rotating or ramping each step, "
                       "prescribed grabs) that push Newton past 1 iteration in fp32 invert elements or stall CG"}};
}

void write_comparison(const ExperimentContext& ctx, const nlohmann::json& claims) {
  CsvTable t({"claim", "published", "ours", "ratio", "verdict"});
  for (const auto& c : claims) {
    const double pub = c["published"].get<double>(), ours = c["ours"].get<double>();
    const double ratio = ours / pub;
    std::string verdict = ratio >= 0.5 && ratio <= 2 ? "reproduced (within 2x)" : (ratio > 2 ? "ours higher" : "ours lower");
    if (c.contains("published_range")) {
      const double lo = c["published_range"][0].get<double>(), hi = c["published_range"][1].get<double>();
      const std::string range = num(lo) + "-" + num(hi);
      verdict = ours < lo ? "below the paper's " + range : (ours > hi ? "above the paper's " + range : "within the paper's " + range);
    }
    t.add_row({c["claim"].get<std::string>(), num(pub), num(ours), num(ratio), verdict});
  }
  t.write(ctx.out_dir / "comparison.csv");
}

// ---- Newton's convergence order ----
// Iterations whose order is judged: r_k / r_0 < 1e-2 (near the solution) and r_{k+1} / r_0 > 1e-12
// (above rounding), as tests/nr_neohookean/test_tangent.cpp's Newton test.
bool order_judged(const std::vector<double>& r, size_t k) {
  return k >= 1 && k + 1 < r.size() && r[k] / r[0] < 1e-2 && r[k + 1] / r[0] > 1e-12;
}

double observed_order(const std::vector<double>& r, size_t k) {
  return std::log(r[k + 1] / r[0]) / std::log(r[k] / r[0]);
}

void newton(const ExperimentContext& ctx, nlohmann::json& meta) {
  struct Case {
    std::string name;
    Precision precision;
    std::vector<std::string> set;
    int steps;
  };
  const std::vector<Case> cases = {
      {"strict fp64 (paper: NR 1e-5, CG 1e-6)", Precision::Fp64, {"nr-neohookean.nr_tolerance=1e-5"}, 3},
      {"strict fp32 (paper: NR 1e-5, CG 1e-6)", Precision::Fp32, {"nr-neohookean.nr_tolerance=1e-5"}, 1},
      {"tight fp64 (NR 1e-11, CG 1e-13)", Precision::Fp64,
       {"nr-neohookean.nr_tolerance=1e-11", "nr-neohookean.cg_tolerance=1e-13", "nr-neohookean.cg_max_iterations=50000"},
       3},
  };
  CsvTable t({"case", "precision", "step", "iteration", "residual", "relative", "cg_iterations", "order",
              "quadratic_constant", "order_judged", "converged"});
  nlohmann::json summary = nlohmann::json::array();
  double tight_min_order = 0;
  int tight_judged = 0;
  bool tight_converged = true;
  for (const Case& c : cases) {
    std::vector<std::string> set = c.set;
    set.push_back("nr-neohookean.format=csr");
    Scenario sc = load_scenario("cecka-sphere", set);
    sc.solver.variant = "cpu-opt";
    RunOptions o = run_options(Backend::Cpu, c.precision, ctx.max_threads);
    o.data_dir = ctx.data_dir;
    auto sim = nr_neohookean::make_nr_simulation(sc, o);
    sim->advance(c.steps);
    double min_order = 1e300;
    int judged = 0;
    for (const auto& rec : sim->history()) {
      const std::vector<double>& r = rec.residuals;
      for (size_t k = 0; k < r.size(); ++k) {
        const bool j = order_judged(r, k);
        const bool has_order = k >= 1 && k + 1 < r.size() && r[k + 1] > 0 && r[k] < r[0];
        const double a = r[k] / r[0], b = has_order ? r[k + 1] / r[0] : 0;
        if (j) {
          min_order = std::min(min_order, observed_order(r, k));
          ++judged;
        }
        t.add_row({c.name, to_string(c.precision), std::to_string(rec.step), std::to_string(k), num(r[k]),
                   num(r[k] / r[0]), k < rec.cg_iterations.size() ? std::to_string(rec.cg_iterations[k]) : "",
                   has_order ? num(observed_order(r, k)) : "", has_order ? num(b / (a * a)) : "", j ? "yes" : "no", rec.converged ? "yes" : rec.failure});
      }
      if (c.name.rfind("tight", 0) == 0) tight_converged = tight_converged && rec.converged;
    }
    if (c.name.rfind("tight", 0) == 0) {
      tight_min_order = min_order;
      tight_judged = judged;
    }
    summary.push_back({{"case", c.name}, {"steps", c.steps}, {"nodes", sim->setup().num_nodes},
                       {"elements", sim->setup().num_elements}, {"judged_iterations", judged},
                       {"min_observed_order", judged ? min_order : 0.0}});
  }
  t.write(ctx.out_dir / "newton.csv");
  // Quadratic: every judged iteration of the tight case has an observed order of at least 1.8.
  std::string verdict;
  if (!tight_converged || tight_judged == 0)
    verdict = "not judged: the tight fp64 case " +
              std::string(tight_converged ? "has no iteration between 1e-2 and 1e-12 of r_0" : "did not converge");
  else {
    char order[32];
    std::snprintf(order, sizeof order, "%.2f", tight_min_order);
    verdict = std::string(tight_min_order >= 1.8 ? "quadratic" : "not quadratic") + ": smallest observed order " +
              order + " over " + std::to_string(tight_judged) +
              " iterations near the solution (fp64, tight CG); fp32 stops at its rounding floor";
  }
  meta["newton"] = {{"model", "cecka-sphere (refinement 3), CPU cpu-opt, CSR"},
                    {"cases", summary},
                    {"order", "log(r_{k+1}/r_0) / log(r_k/r_0); judged where r_k/r_0 < 1e-2 and r_{k+1}/r_0 > 1e-12"},
                    {"verdict", verdict}};
}

void run_cecka2011(const ExperimentContext& ctx) {
  const fs::path meta_path = ctx.out_dir / "meta.json";
  nlohmann::json meta =
      (!ctx.parts.empty() && fs::exists(meta_path)) ? read_json_file(meta_path) : nlohmann::json::object();
  meta["paper"] = "Cecka, Lew & Darve 2011, Introduction to assembly of finite element methods on graphics processors";
  meta["quick"] = ctx.quick;
  meta["machine"] = machine_info(0);
  const bool gpu = ctx.cuda_available && !ctx.quick;
  meta["gpu"] = gpu;
  if (!gpu) meta["gpu_note"] = ctx.quick ? "quick mode: CPU only" : "no usable CUDA device: GPU rows not run";
  meta["substitutions"] = {
      {"hand", "camile_hand.mesh (23,641 nodes, 91,907 tets) for the paper's aim@shape hand (28,796 / 125,127), "
               "scaled to unit length (fp32 positions resolve Newton updates there); wrist end held; gravity 5 in the "
               "real-time setting, 0.1 in the strict dt = 0.2 setting (the paper's interactive loads are not stated)"},
      {"spheres", sphere_mesher(ctx) == "gmsh"
                      ? "Gmsh unit spheres (mesh.refinement 0..3: 63/137, 273/957, 1541/7006, 3358/16427)"
                      : "generated unit spheres (mesh.refinement 0..3: 64/135, 343/1080, 1728/6655, 4096/16875)"}};
  nlohmann::json claims = nlohmann::json::array();
  if (ctx.wants("table16_1")) {
    table16_1(ctx, gpu, meta);
    write_json_atomic(meta_path, meta);
  }
  if (ctx.wants("stages")) {
    stages(ctx, gpu, meta, claims);
    write_json_atomic(meta_path, meta);
  }
  if (ctx.wants("assembly")) {
    Ceilings ceil;
    ceil.cpu = cpu_stream_triad(triad_thread_counts(ctx.max_threads));
    if (gpu) {
      ceil.gpu_fp32 = cuda_stream_triad_gbps(0, 4);
      ceil.gpu_fp64 = cuda_stream_triad_gbps(0, 8);
    }
    meta["ceilings"] = {{"cpu_triad", ceil.cpu.to_json()},
                        {"gpu_triad_gbps", {{"fp32", ceil.gpu_fp32}, {"fp64", ceil.gpu_fp64}}}};
    assembly(ctx, gpu, ceil, meta);
    write_json_atomic(meta_path, meta);
  }
  if (ctx.wants("realtime")) {
    realtime(ctx, gpu, meta, claims);
    write_json_atomic(meta_path, meta);
  }
  if (ctx.wants("newton")) {
    newton(ctx, meta);
    write_json_atomic(meta_path, meta);
  }
  if (!claims.empty()) write_comparison(ctx, claims);
  meta["claims"] = claims;
  write_json_atomic(meta_path, meta);
}

}  // namespace

void register_experiment_cecka2011(ExperimentRegistry& r) {
  r.add({"cecka2011",
         "Cecka, Lew & Darve 2011: GPU assembly (GlobalNZ, SharedNZ) for neo-Hookean Newton-Raphson + DCG (Table 16.1, "
         "Figs. 16.10-16.12, real-time hand)",
         run_cecka2011,
         {"table16_1", "stages", "assembly", "realtime", "newton"},
         {{"spheres",
           "Table 16.1's unit spheres: generator (default; the lattice spheres of meshes/sphere.h) or gmsh "
           "(mesh.tetrahedralizer = \"gmsh\", needs Gmsh)",
           check_spheres_option}}});
}

}  // namespace eb
