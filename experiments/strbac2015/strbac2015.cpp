// `elastobench reproduce strbac2015`: Strbac, Vander Sloten & Famaey 2015 (TLED on GPUs).
// Writes under ctx.out_dir:
//   scaling.csv   Table 3 / Figs. 3-4: time per step and total time against mesh size for the
//                 GPU (fp32/fp64, texture on/off), the CPU (1 thread, all threads) and CalculiX,
//                 5 runs each (median, min-max)
//   regimes.csv   Fig. 2 / Table 4: the eight regimes at the densest mesh, 5 runs each (median, min-max)
//   roundoff.csv  Fig. 5: fp32 against fp64 displacement difference over the steps
//   calculix.csv  CalculiX (ccx) static accuracy and explicit time per increment
//   cpu_triad.csv the CPU's STREAM triad at 1..N threads, measured in this run (the ceiling the
//                 CPU rows are set against; the GPU's triad is in meta.json "ceilings")
//   meta.json     parameters, machine, ceilings, and every simplification (truncated runs,
//                 extrapolation)
//   runs/<label>/summary.json for every run_simulation call
// No number from an invalid run (summary "validity") is tabulated: such a row keeps what
// identifies it and says "invalid: <reason>" in its validity column. Bandwidths count
// compulsory bytes (solvers/tled/PERF_NOTES.md); the bytes_convention column says so per row.
// analysis/strbac2015.py turns these into the figures and tables.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "experiments/experiment.h"
#include "meshes/errors.h"
#include "meshes/mesh_spec.h"
#include "solvers/common/boundary.h"
#include "solvers/common/cpu_stream.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/registry.h"
#include "solvers/common/results.h"
#include "solvers/common/runner.h"
#include "solvers/common/validity.h"
#include "solvers/tled/exact_solution.h"
#include "solvers/tled/paper_cube.h"
#include "solvers/tled/tled_simulation.h"

namespace eb {
namespace {

namespace fs = std::filesystem;

// Damage parameters (issue #4: damage starts about half-way through the loading): psi0 is the
// deviatoric energy of the exact solution at half the compression (lambda = 0.9, 156 J/m^3);
// m = 200 J/m^3 and gamma = 0.5 give d = 0.46 at the end of loading.
const std::vector<std::string> kDamage = {"material.damage.enabled=true", "material.damage.gamma=0.5",
                                          "material.damage.m=200", "material.damage.psi0=156"};
// Mass damping from the convergence rate (Eqs. 4-5). The paper gives no value; Cr = 0.999 is
// light (q = 2.7 1/s at 5 per edge, 24 1/s at 45) and leaves the quasi-static answer unchanged.
const char* kConvergenceRate = "tled.convergence_rate=0.999";

struct Config {
  Backend backend;
  Precision precision;
  int threads;  // CPU
  bool texture;
  bool damage;
  int per_edge;
};

std::string label(const Config& c) {
  std::string s = to_string(c.backend) + "_" + to_string(c.precision);
  if (c.backend == Backend::Cpu) s += "_t" + std::to_string(c.threads);
  s += c.texture ? "_tex" : "_notex";
  s += c.damage ? "_dmg" : "_nodmg";
  return s + "_n" + std::to_string(c.per_edge);
}

Scenario cube_scenario(const Config& c) {
  std::vector<std::string> o = tled::paper_cube_overrides(c.per_edge);
  o.push_back(kConvergenceRate);
  o.push_back(std::string("tled.texture=") + (c.texture ? "true" : "false"));
  o.push_back("output.probe_every=0");  // ~200 samples per run, not one download per step
  if (c.damage) o.insert(o.end(), kDamage.begin(), kDamage.end());
  return load_scenario("cube-compression", o);
}

double exact_corner_error(const Scenario& sc, const nlohmann::json& corner) {
  const ElasticConstants ec = elastic_constants(sc.material);
  const tled::UniaxialSolution ex = tled::uniaxial_neo_hookean(ec.mu, ec.bulk, 0.8);
  const auto ue = tled::uniaxial_displacement(ex, {0.05, 0.05, 0.05}, {0, 0, 0});
  double err = 0, len = 0;
  for (int d = 0; d < 3; ++d) {
    err += (corner[d].get<double>() - ue[d]) * (corner[d].get<double>() - ue[d]);
    len += ue[d] * ue[d];
  }
  return std::sqrt(err / len);
}

struct RunResult {
  nlohmann::json summary;
  long steps_total = 0, steps_timed = 0;
  double ms_per_step = 0;
  bool valid = false;
  std::string validity;  // "valid" or "invalid: <reason>"
};

// Bandwidth ceilings measured in this session: what each row is set against.
struct Ceilings {
  CpuTriad cpu;
  double gpu_fp32 = 0, gpu_fp64 = 0;  // 0: not measured

  // STREAM triad GB/s for a row's backend, precision and threads (0 when not measured).
  double triad_for(const Config& c) const {
    if (c.backend == Backend::Cuda) return c.precision == Precision::Fp32 ? gpu_fp32 : gpu_fp64;
    for (const auto& p : cpu.points)
      if (p.threads == c.threads) return p.median_gbps;
    return 0;
  }
};

// The kernel profile of a valid CUDA run, measured on its final state after the timed steps
// (TledSimulationBase::kernel_profile): kept out of the run's own figures and memory peak.
void add_kernel_profile(Simulation& sim, nlohmann::json& summary) {
  auto* tled = dynamic_cast<tled::TledSimulationBase*>(&sim);
  if (!tled || !run_is_valid(summary)) return;
  nlohmann::json profile = tled->kernel_profile();
  if (!profile.is_null()) summary["kernel_profile"] = std::move(profile);
}

// Runs one configuration: the full 5 s when `max_steps` allows, else the first `max_steps`
// steps (time per step measured on those, total extrapolated; the CSV says which).
RunRequest cube_request(const ExperimentContext& ctx, const Config& c, const std::filesystem::path& out_dir) {
  RunRequest req;
  req.method = "tled";
  req.options.backend = c.backend;
  req.options.precision = c.precision;
  req.options.threads = c.threads;
  req.options.data_dir = ctx.data_dir;
  req.scenario = cube_scenario(c);
  req.scenario_origin = "cube-compression (strbac2015 overrides)";
  req.out_dir = out_dir;
  req.quiet = ctx.quiet;
  req.after_run = add_kernel_profile;
  return req;
}

RunResult run_config(const ExperimentContext& ctx, const Config& c, long max_steps) {
  RunRequest req = cube_request(ctx, c, ctx.out_dir / "runs" / label(c));
  RunResult r;
  // dt from the same setup as the method: a short probe is cheaper than duplicating Eq. 15.
  r.summary = nlohmann::json();
  {
    RunOptions o = req.options;
    auto sim = methods().find("tled", c.backend, c.precision).factory(req.scenario, o);
    r.steps_total = long(std::ceil(req.scenario.time.end_time / sim->dt() - 1e-9));
  }
  r.steps_timed = std::min(r.steps_total, max_steps);
  if (r.steps_timed < r.steps_total) req.steps = int(r.steps_timed);
  r.summary = run_simulation(req);
  std::string why;
  r.valid = run_is_valid(r.summary, &why);
  r.validity = r.valid ? "valid" : why;
  const auto& t = r.summary["timing"];
  r.ms_per_step = t["measured_steps"].get<double>() > 0 ? t["measured_ms"].get<double>() / t["measured_steps"].get<double>()
                                                         : 0.0;
  return r;
}

std::string num(double v) { return CsvTable::num(v); }

// effective_gbps = bytes_per_step / time per step in the row's bytes_convention; stream_triad_gbps
// is the triad of the row's own backend (GPU: same precision; CPU: same thread count) measured
// in this session, and fraction_of_triad their ratio (compulsory bytes only: requested bytes
// would count cache re-reads as memory traffic). element_gbps is the element kernel alone
// (kernel profile, compulsory-byte model).
// Runs per configuration, scaling and Fig. 2's regimes alike: every timing is a median with the
// runs' min-max (the regimes' effects are a few percent; one run cannot say whether such a
// difference is noise).
constexpr int kRepeats = 5;

const std::vector<std::string> kRunColumns = {
    "backend", "precision", "threads", "texture", "damage", "per_edge", "elements", "nodes", "dt", "steps_total",
    "steps_timed", "extrapolated", "validity", "ms_per_step", "total_s", "corner_ux", "corner_uy", "corner_uz",
    "corner_rel_error", "element_us", "node_us", "element_registers", "element_gbps", "stream_triad_gbps",
    "bytes_per_step", "bytes_convention", "effective_gbps", "fraction_of_triad", "flops_per_step", "element_us_min",
    "element_us_max", "node_us_min", "node_us_max"};

std::vector<std::string> run_row(const Config& c, const RunResult& r, const Scenario& sc, const Ceilings& ceilings) {
  const auto& s = r.summary;
  const bool full = r.steps_timed == r.steps_total;
  std::vector<std::string> row = {
      to_string(c.backend), to_string(c.precision), c.backend == Backend::Cpu ? std::to_string(c.threads) : "",
      c.texture ? "1" : "0", c.damage ? "1" : "0", std::to_string(c.per_edge),
      std::to_string(s["mesh"]["elements"].get<long>()), std::to_string(s["mesh"]["nodes"].get<long>()),
      num(s["time"]["dt"].get<double>()), std::to_string(r.steps_total), std::to_string(r.steps_timed),
      full ? "0" : "1", r.validity};
  if (!r.valid) {  // identification only: no figure of an invalid run is tabulated
    row.resize(kRunColumns.size());
    return row;
  }
  const auto prof = s.contains("kernel_profile") ? s["kernel_profile"] : nlohmann::json::object();
  auto pf = [&](const char* k) { return prof.contains(k) ? num(prof[k].get<double>()) : std::string(); };
  const auto& corner = s["probes"]["corner"];
  const auto& perf = s["performance"];
  const double bytes = perf["bytes_per_step"].is_null() ? 0.0 : perf["bytes_per_step"].get<double>();
  const std::string convention = perf["bytes_convention"].is_string() ? perf["bytes_convention"].get<std::string>() : "";
  const double gbps = bytes > 0 && r.ms_per_step > 0 ? bytes / (r.ms_per_step * 1e-3) / 1e9 : 0.0;
  const double triad = ceilings.triad_for(c);
  const std::vector<std::string> figures = {
      num(r.ms_per_step), num(r.ms_per_step * double(r.steps_total) / 1000.0), num(corner[0].get<double>()),
      num(corner[1].get<double>()), num(corner[2].get<double>()),
      full && !c.damage ? num(exact_corner_error(sc, corner)) : "", pf("element_us"), pf("node_us"),
      pf("element_registers"), pf("element_effective_gbps"), triad > 0 ? num(triad) : "", bytes > 0 ? num(bytes) : "",
      convention, gbps > 0 ? num(gbps) : "",
      gbps > 0 && triad > 0 && convention == "compulsory" ? num(gbps / triad) : "",
      perf["flops_per_step"].is_null() ? "" : num(perf["flops_per_step"].get<double>()), pf("element_us_min"),
      pf("element_us_max"), pf("node_us_min"), pf("node_us_max")};
  row.insert(row.end(), figures.begin(), figures.end());
  return row;
}

// ---- Fig. 5: fp32 against fp64 over the run ---------------------------------------------------
void roundoff(const ExperimentContext& ctx, Backend backend, int per_edge, long max_steps, nlohmann::json& meta) {
  const Config c32{backend, Precision::Fp32, ctx.max_threads, false, false, per_edge};
  Config c64 = c32;
  c64.precision = Precision::Fp64;
  const Scenario sc = cube_scenario(c32);
  RunOptions o;
  o.backend = backend;
  o.threads = ctx.max_threads;
  o.data_dir = ctx.data_dir;
  o.precision = Precision::Fp32;
  auto s32 = methods().find("tled", backend, Precision::Fp32).factory(sc, o);
  o.precision = Precision::Fp64;
  auto s64 = methods().find("tled", backend, Precision::Fp64).factory(sc, o);
  const long total = long(std::ceil(sc.time.end_time / s64->dt() - 1e-9));
  const long steps = std::min(total, max_steps);
  const long every = std::max(1L, steps / 200);
  CsvTable t({"step", "time", "max_abs_diff", "max_rel_diff", "rms_rel_diff", "max_u_fp64"});
  std::vector<double> u32, v32, u64, v64;
  // These runs bypass the runner, so they are judged here as the runner would.
  ValidityTracker valid32(bounding_box_diagonal(s32->nodes()), s32->dt()), valid64(bounding_box_diagonal(s64->nodes()), s64->dt());
  for (long k = 0; k <= steps;) {
    s32->copy_state_to_host(u32, v32);
    s64->copy_state_to_host(u64, v64);
    valid32.check_state(k, u32, v32);
    valid64.check_state(k, u64, v64);
    double umax = 0, dmax = 0, sq = 0, usq = 0;
    for (size_t i = 0; i < u64.size(); ++i) {
      const double d = std::abs(u32[i] - u64[i]);
      umax = std::max(umax, std::abs(u64[i]));
      dmax = std::max(dmax, d);
      sq += d * d;
      usq += u64[i] * u64[i];
    }
    t.add_row({std::to_string(k), num(double(k) * s64->dt()), num(dmax), num(umax > 0 ? dmax / umax : 0.0),
               num(usq > 0 ? std::sqrt(sq / usq) : 0.0), num(umax)});
    if (k == steps) break;
    const long n = std::min(every, steps - k);
    s32->advance(int(n));
    s64->advance(int(n));
    k += n;
    valid32.set_method_counts(s32->validity());
    valid64.set_method_counts(s64->validity());
    if (valid32.diverged() || valid64.diverged()) break;
  }
  // An invalid pair is recorded with its reason and without its numbers.
  std::string validity = "valid";
  for (const auto* v : {&valid32, &valid64})
    if (!v->valid() && validity == "valid") validity = std::string("invalid: ") + (v == &valid32 ? "fp32: " : "fp64: ") + v->reasons()[0];
  if (validity == "valid") t.write(ctx.out_dir / "roundoff.csv");
  meta["roundoff"] = {{"backend", to_string(backend)}, {"per_edge", per_edge}, {"steps_total", total},
                      {"steps_run", steps}, {"truncated", steps < total}, {"validity", validity}};
}

// ---- CalculiX ---------------------------------------------------------------------------------
bool have_ccx() { return std::system("command -v ccx > /dev/null 2>&1") == 0; }

// The same cube as a CalculiX deck: C3D8R, neo-Hookean C10 = mu/2, D1 = 2/kappa, the same
// boundary conditions (bottom z, symmetry planes x = 0 and y = 0), top z prescribed along the
// quintic smooth step (tabulated). `kind` is "static" (NLGEOM static, every node printed) or
// "explicit" (fixed increment dt, `increments` of them, no output).
void write_ccx_deck(const fs::path& path, const Scenario& sc, const mesh::HexMesh& hex, const std::string& kind,
                    double dt, long increments) {
  const ElasticConstants ec = elastic_constants(sc.material);
  std::ostringstream o;
  o.precision(12);
  o << "** strbac2015 cube, " << hex.elems.size() << " elements, written by elastobench\n*NODE, NSET=NALL\n";
  for (size_t n = 0; n < hex.nodes.size(); ++n)
    o << n + 1 << ", " << hex.nodes[n][0] << ", " << hex.nodes[n][1] << ", " << hex.nodes[n][2] << "\n";
  o << "*ELEMENT, TYPE=C3D8R, ELSET=EALL\n";
  for (size_t e = 0; e < hex.elems.size(); ++e) {  // VTK and CalculiX share the C3D8 node order
    o << e + 1;
    for (int a = 0; a < 8; ++a) o << ", " << hex.elems[e][a] + 1;
    o << "\n";
  }
  auto nset = [&](const char* name, int axis, double value) {
    o << "*NSET, NSET=" << name << "\n";
    int k = 0;
    for (size_t n = 0; n < hex.nodes.size(); ++n)
      if (std::abs(hex.nodes[n][axis] - value) < 1e-9) o << n + 1 << (++k % 16 ? ", " : ",\n");
    o << "\n";
  };
  nset("NBOT", 2, 0.0);
  nset("NTOP", 2, 0.05);
  nset("NX0", 0, 0.0);
  nset("NY0", 1, 0.0);
  o << "*MATERIAL, NAME=TISSUE\n*HYPERELASTIC, NEO HOOKE\n" << ec.mu / 2 << ", " << 2.0 / ec.bulk << "\n*DENSITY\n"
    << sc.material.density << "\n*SOLID SECTION, ELSET=EALL, MATERIAL=TISSUE\n";
  o << "*AMPLITUDE, NAME=SMOOTH, TIME=TOTAL TIME\n";
  for (int k = 0; k <= 50; ++k) {
    const double s = k / 50.0;
    o << 5.0 * s << ", " << s * s * s * (10 + s * (-15 + 6 * s)) << (k % 4 == 3 || k == 50 ? "\n" : ", ");
  }
  if (kind == "static")
    o << "*STEP, NLGEOM, INC=1000\n*STATIC\n0.25, 5.0, 1e-6, 0.5\n";
  else
    // CalculiX picks its own stable increment (it ignores a larger or smaller request without
    // DIRECT, and DIRECT stalled here): the run lasts `increments` of our dt; the increment it
    // chose is read back from its log.
    o << "*STEP, NLGEOM, INC=100000000\n*DYNAMIC, EXPLICIT\n" << dt << ", " << dt * double(increments) << "\n";
  o << "*BOUNDARY\nNBOT, 3, 3, 0.\nNX0, 1, 1, 0.\nNY0, 2, 2, 0.\n*BOUNDARY, AMPLITUDE=SMOOTH\nNTOP, 3, 3, -0.01\n";
  if (kind == "static") o << "*NODE PRINT, NSET=NALL\nU\n";
  o << "*END STEP\n";
  std::ofstream(path) << o.str();
}

// Runs ccx on DIR/JOB.inp single-threaded; returns wall seconds (negative on failure).
double run_ccx(const fs::path& dir, const std::string& job) {
  const std::string cmd = "cd '" + dir.string() + "' && OMP_NUM_THREADS=1 CCX_NPROC_EQUATION_SOLVER=1 " +
                          "CCX_NPROC_RESULTS=1 timeout 300 ccx -i " + job + " > " + job + ".log 2>&1";
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = std::system(cmd.c_str());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rc == 0 ? s : -1.0;
}

// The explicit increment CalculiX selected ("SELECTED time increment:1.0e-02" in its log).
double ccx_selected_increment(const fs::path& log) {
  std::ifstream in(log);
  std::string line;
  double inc = 0;
  while (std::getline(in, line)) {
    const auto k = line.find("SELECTED time increment:");
    if (k != std::string::npos) inc = std::atof(line.c_str() + k + 24);
  }
  return inc;
}

// Last displacement block of a .dat file: node -> (ux, uy, uz).
std::vector<std::array<double, 3>> parse_ccx_displacements(const fs::path& dat, size_t nodes) {
  std::ifstream in(dat);
  std::vector<std::array<double, 3>> u(nodes, {NAN, NAN, NAN});
  std::string line;
  bool in_block = false;
  while (std::getline(in, line)) {
    if (line.find("displacements") != std::string::npos) {
      in_block = true;
      continue;
    }
    if (!in_block) continue;
    std::istringstream ls(line);
    long n;
    double x, y, z;
    if (ls >> n >> x >> y >> z) {
      if (n >= 1 && size_t(n) <= nodes) u[n - 1] = {x, y, z};
    } else if (!line.empty() && line.find_first_not_of(" \t\r") != std::string::npos) {
      in_block = false;
    }
  }
  return u;
}

void calculix(const ExperimentContext& ctx, const std::vector<int>& static_sizes, const std::vector<int>& timing_sizes,
              nlohmann::json& meta) {
  CsvTable t({"per_edge", "elements", "kind", "status", "dt", "increments", "wall_s", "ms_per_increment",
              "corner_rel_error_exact", "max_node_error_rel"});
  if (!have_ccx()) {
    meta["calculix"] = {{"run", false}, {"reason", "ccx not found on PATH (Debian package calculix-ccx)"}};
    t.write(ctx.out_dir / "calculix.csv");
    return;
  }
  const fs::path dir = ctx.out_dir / "calculix";
  fs::create_directories(dir);
  for (int n : static_sizes) {
    const Config c{Backend::Cpu, Precision::Fp64, 1, false, false, n};
    const Scenario sc = cube_scenario(c);
    const mesh::HexMesh hex = mesh::build_hex_mesh(sc.mesh, ctx.data_dir);
    const std::string job = "static_n" + std::to_string(n);
    write_ccx_deck(dir / (job + ".inp"), sc, hex, "static", 0, 0);
    const double wall = run_ccx(dir, job);
    std::string status = wall < 0 ? "failed" : "ok";
    std::string corner_err, max_err;
    if (wall >= 0) {
      const auto u = parse_ccx_displacements(dir / (job + ".dat"), hex.nodes.size());
      const ElasticConstants ec = elastic_constants(sc.material);
      const tled::UniaxialSolution ex = tled::uniaxial_neo_hookean(ec.mu, ec.bulk, 0.8);
      double worst = 0, umax = 0;
      const int32_t corner = nearest_node(hex.nodes, {0.05, 0.05, 0.05});
      for (size_t k = 0; k < hex.nodes.size(); ++k) {
        const auto ue = tled::uniaxial_displacement(ex, hex.nodes[k], {0, 0, 0});
        umax = std::max(umax, std::sqrt(ue[0] * ue[0] + ue[1] * ue[1] + ue[2] * ue[2]));
        double e2 = 0;
        for (int d = 0; d < 3; ++d) e2 += (u[k][d] - ue[d]) * (u[k][d] - ue[d]);
        worst = std::max(worst, std::sqrt(e2));
        if (int32_t(k) == corner) {
          double l2 = 0;
          for (int d = 0; d < 3; ++d) l2 += ue[d] * ue[d];
          corner_err = num(std::sqrt(e2 / l2));
        }
      }
      if (std::isnan(worst)) status = "unparsed";
      max_err = num(worst / umax);
    }
    t.add_row({std::to_string(n), std::to_string(hex.elems.size()), "static", status, "", "", num(wall), "", corner_err,
               max_err});
    t.write(ctx.out_dir / "calculix.csv");
  }
  for (int n : timing_sizes) {
    const Config c{Backend::Cpu, Precision::Fp64, 1, false, false, n};
    const Scenario sc = cube_scenario(c);
    const mesh::HexMesh hex = mesh::build_hex_mesh(sc.mesh, ctx.data_dir);
    RunOptions o;
    o.threads = 1;
    const double tled_dt = methods().find("tled", Backend::Cpu, Precision::Fp64).factory(sc, o)->dt();
    const double dt = tled_dt;
    // Time per increment from two runs (periods of k1 and k2 of our steps): the wall-time
    // difference over the difference in CalculiX increments removes start-up.
    // Fewer increments on the large meshes keep the whole CalculiX part within a few minutes;
    // the difference still spans tens of increments.
    const long k1 = 10, k2 = n <= 15 ? 310 : (n <= 30 ? 90 : 40);
    double walls[2] = {0, 0}, incs[2] = {0, 0};
    long ks[2] = {k1, k2};
    for (int r = 0; r < 2; ++r) {
      const std::string job = "explicit_n" + std::to_string(n) + "_k" + std::to_string(ks[r]);
      write_ccx_deck(dir / (job + ".inp"), sc, hex, "explicit", dt, ks[r]);
      walls[r] = run_ccx(dir, job);
      const double inc = ccx_selected_increment(dir / (job + ".log"));
      incs[r] = inc > 0 ? std::ceil(dt * double(ks[r]) / inc - 1e-9) : 0;
    }
    const bool ok = walls[0] >= 0 && walls[1] >= 0 && incs[1] > incs[0];
    const double ccx_dt = ok ? dt * double(k2) / incs[1] : 0.0;
    const double ms = ok ? (walls[1] - walls[0]) * 1000.0 / (incs[1] - incs[0]) : 0.0;
    t.add_row({std::to_string(n), std::to_string(hex.elems.size()), "explicit", ok ? "ok" : "failed",
               ok ? num(ccx_dt) : "", ok ? num(incs[1] - incs[0]) : "", num(walls[1]), ok ? num(ms) : "", "", ""});
    t.write(ctx.out_dir / "calculix.csv");
  }
  meta["calculix"] = {
      {"run", true},
      {"element", "C3D8R (reduced integration with CalculiX's hourglass control)"},
      {"material", "*HYPERELASTIC, NEO HOOKE with C10 = mu/2, D1 = 2/kappa"},
      {"static", "NLGEOM static solution, every node compared with the exact solution (accuracy only)"},
      {"explicit",
       "*DYNAMIC, EXPLICIT with CalculiX's own stable increment (column dt; the paper's Abaqus used 2/3 of TLED's "
       "step); time per increment from the wall-time difference of two runs over their increment difference, one "
       "thread; the full 5 s total is extrapolated as ms_per_increment * 5 s / dt"},
      {"threads", 1}};
}

void run_strbac2015(const ExperimentContext& ctx) {
  nlohmann::json meta;
  meta["paper"] = "Strbac, Vander Sloten, Famaey 2015, TLED on GPGPUs (CUDA)";
  meta["quick"] = ctx.quick;
  meta["machine"] = machine_info(0);
  meta["damage_parameters"] = {{"gamma", 0.5}, {"m_J_per_m3", 200}, {"psi0_J_per_m3", 156},
                               {"reason", "psi0 = deviatoric energy of the exact solution at half the compression"}};
  meta["convergence_rate"] = 0.999;
  meta["material"] = {{"rho", 1000}, {"E", 30000}, {"nu", 0.45}, {"mu", 30000 / 2.9}, {"kappa", 1e5},
                      {"note", "Table 2 is missing from our copy; these reproduce the paper's step counts"}};
  meta["boundary_note"] =
      "in-plane rigid motion removed by u_x = 0 on x = 0 and u_y = 0 on y = 0 (the built-in scenario): pinning "
      "single corner nodes instead lets one-point hexahedra without hourglass control (as the paper) slide past the "
      "pins through zero-energy modes";
  meta["hourglass_control"] = "none (as the paper)";

  const bool gpu = ctx.cuda_available && !ctx.quick;
  std::vector<int> sizes = ctx.quick ? std::vector<int>{5, 10, 15} : std::vector<int>{5, 10, 15, 20, 25, 30, 35, 40, 45};
  const int densest = sizes.back();
  meta["sizes"] = sizes;
  meta["gpu"] = gpu;
  if (!gpu)
    meta["gpu_note"] = ctx.quick ? "quick mode: CPU only" : "no usable CUDA device: GPU rows not run";

  // The ceilings every row is set against, measured here and now: the CPU's triad at 1..N
  // threads (the same machine and load as the CPU rows) and the GPU's per precision.
  Ceilings ceilings;
  ceilings.cpu = cpu_stream_triad(triad_thread_counts(ctx.max_threads));
  write_file_atomic(ctx.out_dir / "cpu_triad.csv", ceilings.cpu.csv());
  if (gpu) {
    ceilings.gpu_fp32 = cuda_stream_triad_gbps(0, 4);
    ceilings.gpu_fp64 = cuda_stream_triad_gbps(0, 8);
  }
  meta["ceilings"] = {
      {"cpu_triad", ceilings.cpu.to_json()},
      {"gpu_triad_gbps", gpu ? nlohmann::json({{"fp32", ceilings.gpu_fp32}, {"fp64", ceilings.gpu_fp64}})
                             : nlohmann::json(nullptr)},
      {"gpu_triad", "cuda_stream_triad_gbps: median of 10 event-timed passes over 3 x 256 MiB, bytes = 3 x array"}};
  meta["bandwidth_convention"] =
      "effective_gbps, element_gbps and fraction_of_triad count compulsory bytes (each array once per kernel, "
      "u once per node: solvers/tled/PERF_NOTES.md), not the bytes the kernels request; STREAM triad counts "
      "3 arrays per pass (write-allocate not counted)";

  std::vector<std::string> columns = kRunColumns;
  columns.insert(columns.end(), {"repeats", "ms_per_step_min", "ms_per_step_max"});
  // A configuration's row from its repeats: the median run's (every column), the repeats' range
  // beside it; an invalid repeat makes the row invalid (its reason), as one invalid run would.
  auto median_row = [&](const Config& c, std::vector<RunResult> runs) {
    const auto bad = std::find_if(runs.begin(), runs.end(), [](const RunResult& r) { return !r.valid; });
    std::vector<std::string> row;
    if (bad != runs.end()) {
      row = run_row(c, *bad, cube_scenario(c), ceilings);
      row.resize(columns.size());
      return row;
    }
    std::sort(runs.begin(), runs.end(), [](const RunResult& a, const RunResult& b) { return a.ms_per_step < b.ms_per_step; });
    row = run_row(c, runs[runs.size() / 2], cube_scenario(c), ceilings);
    row.insert(row.end(), {std::to_string(runs.size()), num(runs.front().ms_per_step), num(runs.back().ms_per_step)});
    return row;
  };
  CsvTable scaling(columns);
  auto add = [&](CsvTable& table, const Config& c, long max_steps, const char* file) {
    std::vector<RunResult> runs;
    for (int k = 0; k < kRepeats; ++k) {
      runs.push_back(run_config(ctx, c, max_steps));
      if (!runs.back().valid) break;  // the row is invalid whatever the other repeats give
    }
    table.add_row(median_row(c, runs));
    table.write(ctx.out_dir / file);
    if (!ctx.quiet)
      std::cerr << "strbac2015: " << label(c) << ": "
                << (runs.back().valid ? std::to_string(runs[runs.size() / 2].ms_per_step) + " ms/step (median)"
                                      : runs.back().validity)
                << " over " << runs.back().steps_timed << " of " << runs.back().steps_total << " steps, " << runs.size()
                << " runs\n";
  };

  // CPU: full runs where cheap, otherwise about `budget` seconds of steps, split over the repeats.
  const double cpu_budget_s = (ctx.quick ? 1.0 : 1.5) / kRepeats;
  std::vector<int> threads = {1};
  if (ctx.max_threads > 1) threads.push_back(ctx.max_threads);
  for (int n : sizes)
    for (Precision p : {Precision::Fp32, Precision::Fp64})
      for (int th : threads) {
        const double est_us_per_elem = 0.5 / th;  // rough, only to size the timed window
        const long steps = std::max(50L, long(cpu_budget_s * 1e6 / (est_us_per_elem * n * n * n)));
        add(scaling, {Backend::Cpu, p, th, false, false, n}, steps, "scaling.csv");
      }
  if (gpu)
    for (int n : sizes)
      for (Precision p : {Precision::Fp32, Precision::Fp64})
        for (bool tex : {true, false}) add(scaling, {Backend::Cuda, p, 0, tex, false, n}, 1L << 40, "scaling.csv");

  // Fig. 2: the eight regimes at the densest mesh (GPU; CPU in quick mode, texture no-op there).
  // The effects compared here are a few percent, so each regime runs kRegimeRepeats times, the
  // regimes taking turns (a drift of the machine then touches all of them alike); the row is the
  // median run's, with the repeats' min-max beside it.
  std::vector<Config> regime_configs;
  const Backend rb = gpu ? Backend::Cuda : Backend::Cpu;
  for (Precision p : {Precision::Fp32, Precision::Fp64})
    for (bool tex : {false, true})
      for (bool dmg : {false, true}) {
        if (rb == Backend::Cpu && tex) continue;
        regime_configs.push_back({rb, p, ctx.max_threads, tex, dmg, densest});
      }
  std::vector<std::vector<RunResult>> regime_runs(regime_configs.size());
  for (int k = 0; k < kRepeats; ++k)
    for (size_t i = 0; i < regime_configs.size(); ++i) {
      regime_runs[i].push_back(run_config(ctx, regime_configs[i], gpu ? (1L << 40) : 300));
      if (!ctx.quiet)
        std::cerr << "strbac2015: regime " << label(regime_configs[i]) << " repeat " << k + 1 << "/" << kRepeats
                  << ": " << (regime_runs[i].back().valid ? std::to_string(regime_runs[i].back().ms_per_step) + " ms/step"
                                                          : regime_runs[i].back().validity) << "\n";
    }
  CsvTable regimes(columns);
  for (size_t i = 0; i < regime_configs.size(); ++i) regimes.add_row(median_row(regime_configs[i], regime_runs[i]));
  regimes.write(ctx.out_dir / "regimes.csv");

  // ParaView output of one complete run with damage (GPU when available, else the CPU at
  // 10 per edge): 25 frames of the 5 s loading with the damage field, under runs/<label>/vtk/.
  {
    const Config c{rb, Precision::Fp64, ctx.max_threads, false, true, gpu ? densest : 10};
    RunRequest req = cube_request(ctx, c, ctx.out_dir / "vtk_run");
    auto sim = methods().find("tled", c.backend, c.precision).factory(req.scenario, req.options);
    req.vtk_every = std::max(1, int(std::ceil(req.scenario.time.end_time / sim->dt() / 25.0)));
    sim.reset();
    req.after_run = nullptr;
    std::string why;
    const bool valid = run_is_valid(run_simulation(req), &why);
    meta["vtk_run"] = {{"folder", "vtk_run"}, {"pvd", "vtk_run/vtk/series.pvd"}, {"config", label(c)},
                       {"validity", valid ? "valid" : why}};
  }

  // Fig. 5.
  roundoff(ctx, rb, gpu ? densest : 10, gpu ? (1L << 40) : 4000, meta);

  // CalculiX: accuracy (static) on small meshes, time per explicit increment on all sizes.
  // Static accuracy up to 10 per edge (15 per edge takes ccx ~40 s and adds nothing: the
  // solution is homogeneous); explicit timing on every other size up to the densest.
  calculix(ctx, ctx.quick ? std::vector<int>{5} : std::vector<int>{5, 10},
           ctx.quick ? std::vector<int>{5, 10} : std::vector<int>{5, 15, 25, 35, 45}, meta);

  meta["notes"] = {
      "scaling.csv/regimes.csv: extrapolated = 1 means only steps_timed of steps_total steps were run; ms_per_step is "
      "measured over those (after warm-up) and total_s = ms_per_step * steps_total",
      "scaling.csv/regimes.csv: each configuration ran `repeats` times (scaling: one after another, the CPU's "
      "timed window split over them; regimes: the regimes taking turns); its row is the median run's "
      "(ms_per_step and every other column), ms_per_step_min/max the repeats' range; runs/<label>/ holds the last "
      "repeat's summary",
      "corner_rel_error is |u - u_exact| / |u_exact| at the top corner (0.05, 0.05, 0.05), full runs without damage",
      "GPU element_us/node_us/element_registers/element_gbps come from individually event-timed kernels on the final "
      "state (measured after the timed run, outside it); ms_per_step is the CUDA-graph time loop",
      "validity: rows of invalid runs carry only what identifies them and \"invalid: <reason>\"; the report shows "
      "that reason in place of their numbers"};
  write_json_atomic(ctx.out_dir / "meta.json", meta);
}

}  // namespace

void register_experiment_strbac2015(ExperimentRegistry& r) {
  r.add({"strbac2015", "Strbac, Vander Sloten & Famaey 2015: TLED on GPUs (Tables 3-4, Figs. 2-5)", run_strbac2015});
}

}  // namespace eb
