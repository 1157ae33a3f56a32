// `elastobench reproduce campo2015`: Campo 2015, SOFA-style co-rotational tetrahedra with implicit
// Euler and matrix-free CG (method corot-cg), on SOFA's raptor and SOFA's GPU benchmark beams.
// Writes under ctx.out_dir:
//   stages.csv     Tables 5.2/5.3: per configuration and stage (displacement mapping, compute
//                  forces, conjugate gradient, integration, frame), mean, sd, min, max ms per
//                  frame over the frames, frames/s; the thesis's values in thesis_stages.csv
//   series.csv     Figs. 5.1/5.3: per configuration and frame, each stage's ms, CG iterations and
//                  relative residual
//   kernels.json   Tables 5.4/5.5: per kernel grid, block, duration, registers, shared memory,
//                  theoretical occupancy (cudaFuncGetAttributes and the occupancy API)
//   sizes.csv      the raptor size sweep (8,418 / 12,580 / 19,409 tetrahedra): frame ms, fps
//   beams.csv      sofa-beam (76x16x16) and sofa-beam-40 (40x10x10): frames/s CPU 1 thread, CPU
//                  all threads, GPU fp32/fp64, beside SOFA's published figures
//   cg_iteration.csv  a CG iteration and the operator product alone: ms, compulsory bytes, GB/s,
//                  fraction of the STREAM triad measured in this run
//   meta.json      parameters, ceilings, conventions
//   runs/<part>_<config>/run.json  each run's validity (ValidityTracker) and method details
// Parts: raptor, sizes, beams, cg. --quick: CPU only, reduced frame counts, minutes.
// analysis/campo2015.py draws the figures and the tables with the thesis's values beside ours.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <numeric>
#include <sstream>

#include "experiments/experiment.h"
#include "meshes/errors.h"
#include "solvers/common/boundary.h"
#include "solvers/common/cpu_stream.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/registry.h"
#include "solvers/common/results.h"
#include "solvers/common/validity.h"
#include "solvers/corot_cg/corot_cg_simulation.h"

namespace eb {
namespace {

namespace fs = std::filesystem;
using corot_cg::CorotCgSimulation;

std::string num(double v) { return CsvTable::num(v); }

struct Config {
  std::string scenario;
  Backend backend;
  Precision precision;
  int threads = 1;
  bool graph = true;  // CUDA: a frame per graph launch; false: every stage enqueued and timed alone
  std::string label() const {
    std::string s = scenario + "_" + to_string(backend) + "_" + to_string(precision);
    if (backend == Backend::Cpu) s += "_t" + std::to_string(threads);
    if (backend == Backend::Cuda) s += graph ? "_graph" : "_stages";
    return s;
  }
};

struct Stats {
  double mean = 0, sd = 0, min = 0, max = 0;
  long count = 0;
};
Stats stats_of(const std::vector<double>& x) {
  Stats s;
  if (x.empty()) return s;
  s.count = long(x.size());
  s.mean = std::accumulate(x.begin(), x.end(), 0.0) / double(x.size());
  double v = 0;
  for (double a : x) v += (a - s.mean) * (a - s.mean);
  s.sd = x.size() > 1 ? std::sqrt(v / double(x.size() - 1)) : 0.0;
  s.min = *std::min_element(x.begin(), x.end());
  s.max = *std::max_element(x.begin(), x.end());
  return s;
}

// The stages a frame is timed in: Campo's three, the integration, and the frame.
const std::vector<std::string> kStages = {"mapping", "forces", "cg", "integrate", "frame"};

struct RunResult {
  std::string label;
  bool valid = false;
  std::string why;
  std::map<std::string, std::vector<double>> ms;  // per stage, per frame
  std::vector<int> iterations;
  std::vector<double> residual;  // final / initial of each frame's CG
  nlohmann::json details;
  int64_t elements = 0, nodes = 0;
  double product_ms = 0;
};

// Runs `frames` frames after `warmup`, one advance() per frame so that each frame's stage times
// and CG statistics are read (on the GPU a graph frame is timed by a pair of CUDA events around
// its launch). The state is checked every 10 frames and at the end (ValidityTracker, as the
// runner does).
RunResult run_frames(const ExperimentContext& ctx, const std::string& part, const Config& c, int warmup, int frames,
                     const std::vector<std::string>& overrides, bool product) {
  RunResult r;
  r.label = c.label();
  std::vector<std::string> ov = overrides;
  ov.push_back(std::string("corot-cg.graph=") + (c.graph ? "true" : "false"));
  const Scenario sc = load_scenario(c.scenario, ov);
  RunOptions o;
  o.backend = c.backend;
  o.precision = c.precision;
  o.threads = c.threads;
  o.data_dir = ctx.data_dir;
  auto sim = corot_cg::make_corot_cg(sc, o);
  r.elements = sim->setup().num_elements;
  r.nodes = sim->setup().num_nodes;
  ValidityTracker tracker(bounding_box_diagonal(sim->nodes()), sim->dt());
  std::vector<double> u, v;
  sim->advance(warmup);
  for (int f = 0; f < frames; ++f) {
    sim->timings().clear();
    sim->advance(1);
    double total = 0;
    bool has_frame = false;
    for (const PhaseStats& p : sim->timings().stats(0)) {
      r.ms[p.name].push_back(p.total_ms);
      if (p.name == "frame") has_frame = true;
      else total += p.total_ms;
    }
    if (!has_frame) r.ms["frame"].push_back(total);
    const SolverStats st = sim->solver_stats();
    r.iterations.push_back(st.iterations);
    r.residual.push_back(st.initial_residual > 0 ? st.final_residual / st.initial_residual : 0.0);
    tracker.check_solver(long(warmup + f + 1), st);
    if ((f + 1) % 10 == 0 || f + 1 == frames) {
      sim->copy_state_to_host(u, v);
      if (!tracker.check_state(long(warmup + f + 1), u, v)) break;
    }
  }
  tracker.set_method_counts(sim->validity());
  r.valid = tracker.valid();
  if (!r.valid) {
    const auto reasons = tracker.reasons();
    r.why = reasons.empty() ? "invalid" : reasons.front();
  }
  r.details = sim->details();
  if (product && r.valid) r.product_ms = sim->time_product_ms(7);
  // The run's record for the report's validity table (analysis/run_validity.py reads run.json).
  const fs::path dir = ctx.out_dir / "runs" / (part + "_" + r.label + (overrides.empty() ? "" : "_" + std::to_string(r.elements)));
  fs::create_directories(dir);
  write_json_atomic(dir / "run.json", {{"valid", r.valid},
                                       {"invalid_reason", r.why},
                                       {"scenario", c.scenario},
                                       {"overrides", overrides},
                                       {"warmup_frames", warmup},
                                       {"frames", frames},
                                       {"method_details", r.details}});
  if (!ctx.quiet)
    std::cerr << "campo2015: " << r.label << ": " << (r.valid ? "valid" : "INVALID: " + r.why) << ", frame "
              << stats_of(r.ms["frame"]).mean << " ms\n";
  return r;
}

void add_stage_rows(const RunResult& r, const Config& c, CsvTable& t) {
  for (const std::string& stage : kStages) {
    const auto it = r.ms.find(stage);
    std::vector<std::string> row = {c.scenario, r.label, to_string(c.backend), to_string(c.precision),
                                    c.backend == Backend::Cpu ? std::to_string(c.threads) : "",
                                    c.backend == Backend::Cuda ? (c.graph ? "graph" : "stages") : "", stage,
                                    r.valid ? "valid" : r.why};
    if (!r.valid || it == r.ms.end() || it->second.empty()) {
      row.resize(14);
      t.add_row(row);
      continue;
    }
    const Stats s = stats_of(it->second);
    for (double x : {s.mean, s.sd, s.min, s.max}) row.push_back(num(x));
    row.push_back(std::to_string(s.count));
    row.push_back(stage == "frame" && s.mean > 0 ? num(1000.0 / s.mean) : "");
    t.add_row(row);
  }
}

void add_series(const RunResult& r, CsvTable& t) {
  if (!r.valid) return;
  const size_t frames = r.ms.at("frame").size();
  for (size_t f = 0; f < frames; ++f) {
    std::vector<std::string> row = {r.label, std::to_string(f)};
    for (const std::string& stage : kStages) {
      const auto it = r.ms.find(stage);
      row.push_back(it != r.ms.end() && f < it->second.size() ? num(it->second[f]) : "");
    }
    row.push_back(std::to_string(r.iterations[f]));
    row.push_back(num(r.residual[f]));
    t.add_row(row);
  }
}

const std::vector<std::string> kStageColumns = {"scenario", "config", "backend", "precision", "threads", "mode",
                                                "stage", "validity", "mean_ms", "sd_ms", "min_ms", "max_ms",
                                                "frames", "fps"};

// Tables 5.2 and 5.3 as printed in the thesis (ms per frame; 800 frames of the raptor).
void write_thesis_tables(const fs::path& dir) {
  CsvTable t({"table", "architecture", "stage", "mean_ms", "sd_ms", "min_ms", "max_ms"});
  const struct {
    const char *table, *arch, *stage;
    double v[4];
  } rows[] = {{"5.2", "i7-4930K", "mapping", {3.06, 0.861, 2.7, 8.13}},
              {"5.2", "ARM A15", "mapping", {1.51, 0.329, 1.33, 8.84}},
              {"5.2", "i7-4930K", "forces", {1.47, 0.612, 1.11, 5.28}},
              {"5.2", "ARM A15", "forces", {2.8, 0.478, 2.35, 6.87}},
              {"5.2", "i7-4930K", "cg", {16.3, 4.7, 13.4, 36.6}},
              {"5.2", "ARM A15", "cg", {26.5, 2.86, 23.1, 52.4}},
              {"5.3", "GK110A", "mapping", {1.33, 0.341, 1.12, 5.12}},
              {"5.3", "GK20A", "mapping", {7.78, 0.505, 6.83, 12.5}},
              {"5.3", "GK110A", "forces", {0.386, 0.155, 0.185, 2.15}},
              {"5.3", "GK20A", "forces", {2.1, 0.811, 1.06, 15.2}},
              {"5.3", "GK110A", "cg", {4.96, 1.04, 4.25, 10.5}},
              {"5.3", "GK20A", "cg", {21.2, 4.09, 17.1, 56.9}}};
  for (const auto& r : rows)
    t.add_row({r.table, r.arch, r.stage, num(r.v[0]), num(r.v[1]), num(r.v[2]), num(r.v[3])});
  t.write(dir / "thesis_stages.csv");
}

struct Ceilings {
  CpuTriad cpu;
  double gpu_fp32 = 0, gpu_fp64 = 0;
};

void part_raptor(const ExperimentContext& ctx, bool gpu, nlohmann::json& meta) {
  const int frames = ctx.quick ? 100 : 800, warmup = ctx.quick ? 0 : 0;
  std::vector<Config> configs = {{"campo2015-raptor", Backend::Cpu, Precision::Fp32, 1, false}};
  if (!ctx.quick && ctx.max_threads > 1)
    configs.push_back({"campo2015-raptor", Backend::Cpu, Precision::Fp32, ctx.max_threads, false});
  if (gpu) {
    configs.push_back({"campo2015-raptor", Backend::Cuda, Precision::Fp32, 0, false});
    configs.push_back({"campo2015-raptor", Backend::Cuda, Precision::Fp32, 0, true});
    configs.push_back({"campo2015-raptor", Backend::Cuda, Precision::Fp64, 0, true});
  }
  CsvTable stages(kStageColumns);
  std::vector<std::string> series_cols = {"config", "frame"};
  for (const auto& s : kStages) series_cols.push_back(s + "_ms");
  series_cols.push_back("cg_iterations");
  series_cols.push_back("cg_relative_residual");
  CsvTable series(series_cols);
  for (const Config& c : configs) {
    const RunResult r = run_frames(ctx, "raptor", c, warmup, frames, {}, false);
    add_stage_rows(r, c, stages);
    add_series(r, series);
    stages.write(ctx.out_dir / "stages.csv");
    series.write(ctx.out_dir / "series.csv");
  }
  write_thesis_tables(ctx.out_dir);
  // Tables 5.4/5.5: the kernels of a frame, after 50 frames of the raptor in fp32.
  if (gpu) {
    RunOptions o;
    o.backend = Backend::Cuda;
    o.precision = Precision::Fp32;
    o.data_dir = ctx.data_dir;
    auto sim = corot_cg::make_corot_cg(load_scenario("campo2015-raptor", {}), o);
    sim->advance(50);
    nlohmann::json k = {{"scenario", "campo2015-raptor"}, {"precision", "fp32"}, {"after_frames", 50},
                        {"duration", "median of 20 batches of 10 back-to-back launches / 10 (CUDA events)"},
                        {"machine", machine_info(0)}, {"kernels", sim->kernel_table(20)}};
    write_json_atomic(ctx.out_dir / "kernels.json", k);
  }
  meta["raptor"] = {{"frames", frames},
                    {"stages", "mapping: displacement mapping (Eq. 4.6); forces: rotations, internal and external forces, "
                               "the right-hand side and the operator's diagonal (Campo's compute forces); cg: the whole "
                               "solve; integrate: v += dv, x += h v; frame: one CUDA graph launch (graph mode) or the "
                               "sum of the stages"}};
}

void part_sizes(const ExperimentContext& ctx, bool gpu, nlohmann::json& meta) {
  CsvTable t({"mesh", "elements", "nodes", "config", "validity", "frame_mean_ms", "frame_sd_ms", "fps", "cg_iterations_mean"});
  const int frames = ctx.quick ? 20 : 200;
  for (const char* file : {"raptorTetra_8418.vtu", "raptorTetra_12580.vtu", "raptorTetra_19409.vtu"}) {
    std::vector<Config> configs = {{"campo2015-raptor", Backend::Cpu, Precision::Fp32, ctx.max_threads, false}};
    if (gpu) configs = {{"campo2015-raptor", Backend::Cuda, Precision::Fp32, 0, true}};
    for (const Config& c : configs) {
      // The render surface stays raptor8k1.obj (all three meshes share the bounding box).
      const RunResult r = run_frames(ctx, "sizes", c, 0, frames, {std::string("mesh.file=") + file}, false);
      const Stats s = stats_of(r.ms.count("frame") ? r.ms.at("frame") : std::vector<double>{});
      const double it = r.iterations.empty() ? 0 : std::accumulate(r.iterations.begin(), r.iterations.end(), 0.0) / double(r.iterations.size());
      t.add_row({file, std::to_string(r.elements), std::to_string(r.nodes), r.label, r.valid ? "valid" : r.why,
                 r.valid ? num(s.mean) : "", r.valid ? num(s.sd) : "", r.valid && s.mean > 0 ? num(1000 / s.mean) : "",
                 r.valid ? num(it) : ""});
      t.write(ctx.out_dir / "sizes.csv");
    }
  }
  meta["sizes"] = {{"frames", frames}};
}

// SOFA PR 2561's figures (frames/s) for its benchmark scenes.
struct Published {
  const char* scenario;
  double gpu_fps, cpu_fps;
};
const Published kSofa[] = {{"sofa-beam", 148, 8}, {"sofa-beam-40", 158, 23.5}};

void part_beams(const ExperimentContext& ctx, bool gpu, const Ceilings& ceil, nlohmann::json& meta) {
  CsvTable t({"scenario", "elements", "nodes", "config", "backend", "precision", "threads", "validity", "frames",
              "frame_mean_ms", "frame_sd_ms", "fps", "sofa_published_fps", "cg_iterations_mean", "product_ms"});
  for (const Published& p : kSofa) {
    std::vector<Config> configs;
    const bool big = std::string(p.scenario) == "sofa-beam";
    if (!(ctx.quick && big)) {
      configs.push_back({p.scenario, Backend::Cpu, Precision::Fp32, 1, false});
      if (ctx.max_threads > 1) configs.push_back({p.scenario, Backend::Cpu, Precision::Fp32, ctx.max_threads, false});
    }
    if (gpu)
      for (Precision pr : {Precision::Fp32, Precision::Fp64}) configs.push_back({p.scenario, Backend::Cuda, pr, 0, true});
    for (const Config& c : configs) {
      const int frames = c.backend == Backend::Cuda ? 300 : (big ? 5 : (ctx.quick ? 5 : 30));
      const int warmup = c.backend == Backend::Cuda ? 10 : 1;
      const RunResult r = run_frames(ctx, "beams", c, warmup, frames, {}, true);
      const Stats s = stats_of(r.ms.count("frame") ? r.ms.at("frame") : std::vector<double>{});
      const double it = r.iterations.empty() ? 0 : std::accumulate(r.iterations.begin(), r.iterations.end(), 0.0) / double(r.iterations.size());
      t.add_row({p.scenario, std::to_string(r.elements), std::to_string(r.nodes), r.label, to_string(c.backend),
                 to_string(c.precision), c.backend == Backend::Cpu ? std::to_string(c.threads) : "",
                 r.valid ? "valid" : r.why, std::to_string(s.count), r.valid ? num(s.mean) : "", r.valid ? num(s.sd) : "",
                 r.valid && s.mean > 0 ? num(1000 / s.mean) : "", num(c.backend == Backend::Cuda ? p.gpu_fps : p.cpu_fps),
                 r.valid ? num(it) : "", r.valid ? num(r.product_ms) : ""});
      t.write(ctx.out_dir / "beams.csv");
    }
  }
  (void)ceil;
  meta["beams"] = {{"sofa_source", "SOFA pull request 2561 (frames/s of TetrahedronFEMForceField_beam16x16x76_gpu/cpu "
                                   "and _beam10x10x40: ~148 GPU / ~8 CPU, ~158 / 23.5)"},
                   {"frames", "GPU 300 after 10 warm-up; CPU 5 (76x16x16) or 30 (40x10x10) after 1"}};
}

// A CG iteration's time against the STREAM triad: an iteration must read, at least once, every
// element's R, Dm^-1 and volume (CUDA: the stiffness is rebuilt from them, never stored; the CPU
// reads its 90 stored rotated-block values instead), the
// connectivity, the node-element incidence, the per-node mass and flags, the direction p, and
// read/write the CG's vectors (corot_cg_setup.cpp states the count).
void part_cg(const ExperimentContext& ctx, bool gpu, const Ceilings& ceil, nlohmann::json& meta) {
  CsvTable t({"scenario", "elements", "nodes", "backend", "precision", "threads", "validity", "cg_ms_per_frame",
              "cg_iterations_mean", "iteration_ms", "product_ms", "iteration_compulsory_bytes", "iteration_gbps",
              "product_gbps", "triad_gbps", "iteration_of_triad", "product_of_triad"});
  for (const char* scenario : {"campo2015-raptor", "sofa-beam"}) {
    std::vector<Config> configs;
    if (gpu)
      for (Precision pr : {Precision::Fp32, Precision::Fp64}) configs.push_back({scenario, Backend::Cuda, pr, 0, false});
    else if (std::string(scenario) == "campo2015-raptor")
      configs.push_back({scenario, Backend::Cpu, Precision::Fp32, ctx.max_threads, false});
    for (const Config& c : configs) {
      const RunResult r = run_frames(ctx, "cg", c, 5, ctx.quick ? 10 : 50, {}, true);
      const Stats cg = stats_of(r.ms.count("cg") ? r.ms.at("cg") : std::vector<double>{});
      const double it = r.iterations.empty() ? 0 : std::accumulate(r.iterations.begin(), r.iterations.end(), 0.0) / double(r.iterations.size());
      // A solve runs its start (one product) and `it` iterations (one product and the vector passes each).
      const double iteration_ms = it > 0 ? cg.mean / (it + 1) : 0;
      const double bytes = r.details.value("cg_iteration_compulsory_bytes", 0.0);
      const double triad = c.backend == Backend::Cuda ? (c.precision == Precision::Fp32 ? ceil.gpu_fp32 : ceil.gpu_fp64)
                                                      : (ceil.cpu.points.empty() ? 0.0 : ceil.cpu.points.back().median_gbps);
      const double it_gbps = iteration_ms > 0 ? bytes / (iteration_ms * 1e-3) / 1e9 : 0;
      // The product alone reads all but the CG's 7 vector passes (7 n w bytes).
      const double w = c.precision == Precision::Fp32 ? 4 : 8;
      const double product_bytes = bytes - 7.0 * 3.0 * double(r.nodes) * w;
      const double pr_gbps = r.product_ms > 0 ? product_bytes / (r.product_ms * 1e-3) / 1e9 : 0;
      t.add_row({scenario, std::to_string(r.elements), std::to_string(r.nodes), to_string(c.backend), to_string(c.precision),
                 c.backend == Backend::Cpu ? std::to_string(c.threads) : "", r.valid ? "valid" : r.why,
                 r.valid ? num(cg.mean) : "", r.valid ? num(it) : "", r.valid ? num(iteration_ms) : "",
                 r.valid ? num(r.product_ms) : "", num(bytes), r.valid ? num(it_gbps) : "", r.valid ? num(pr_gbps) : "",
                 num(triad), r.valid && triad > 0 ? num(it_gbps / triad) : "", r.valid && triad > 0 ? num(pr_gbps / triad) : ""});
      t.write(ctx.out_dir / "cg_iteration.csv");
    }
  }
  meta["cg"] = {{"convention",
                 "compulsory bytes per iteration: per element R (9), Dm^-1 (9), volume (1) values (CUDA) or the "
                 "10 stored rotated 3x3 blocks (90 values, CPU) and 4 int32 node ids and 4 incidence entries; per node mass, 2 flag bytes and the incidence pointer; the "
                 "product's p and q; the standard CG's vector passes 7 n values (x, r, p, q); the stages mode "
                 "times the solve with CUDA events, iteration_ms = cg / (iterations + 1)"}};
}

void run_campo2015(const ExperimentContext& ctx) {
  const fs::path meta_path = ctx.out_dir / "meta.json";
  nlohmann::json meta = (!ctx.parts.empty() && fs::exists(meta_path)) ? read_json_file(meta_path) : nlohmann::json::object();
  meta["paper"] = "Campo 2015, co-rotational FEM on mobile and desktop CPUs and GPUs (SOFA TetrahedronFEMForceField large)";
  meta["quick"] = ctx.quick;
  meta["machine"] = machine_info(0);
  const bool gpu = ctx.cuda_available && !ctx.quick;
  meta["gpu"] = gpu;
  Ceilings ceil;
  ceil.cpu = cpu_stream_triad(triad_thread_counts(ctx.max_threads));
  write_file_atomic(ctx.out_dir / "cpu_triad.csv", ceil.cpu.csv());
  if (gpu) {
    ceil.gpu_fp32 = cuda_stream_triad_gbps(0, 4);
    ceil.gpu_fp64 = cuda_stream_triad_gbps(0, 8);
  }
  meta["ceilings"] = {{"cpu_triad", ceil.cpu.to_json()},
                      {"gpu_triad_gbps", gpu ? nlohmann::json({{"fp32", ceil.gpu_fp32}, {"fp64", ceil.gpu_fp64}})
                                             : nlohmann::json(nullptr)}};
  write_json_atomic(meta_path, meta);
  if (ctx.wants("raptor")) part_raptor(ctx, gpu, meta), write_json_atomic(meta_path, meta);
  if (ctx.wants("cg")) part_cg(ctx, gpu, ceil, meta), write_json_atomic(meta_path, meta);
  if (ctx.wants("beams")) part_beams(ctx, gpu, ceil, meta), write_json_atomic(meta_path, meta);
  if (ctx.wants("sizes")) part_sizes(ctx, gpu, meta), write_json_atomic(meta_path, meta);
}

}  // namespace

void register_experiment_campo2015(ExperimentRegistry& r) {
  r.add({"campo2015",
         "Campo 2015: SOFA-style co-rotational FEM, implicit Euler, matrix-free CG (Tables 5.2-5.5, Figs. 5.1/5.3; SOFA's beams)",
         run_campo2015,
         {"raptor", "cg", "beams", "sizes"}});
}

}  // namespace eb
