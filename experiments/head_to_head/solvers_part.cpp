// Part `solvers` of `elastobench reproduce head-to-head` (issue 24): the solvers on the same
// linear systems, the question Verschoor & Jalba 2012 leave open. Each system is one implicit
// step's of a method (solver_system.h): hexmg's on hexahedra (the cantilever, the Dick 2011
// bunny), bcsr-pcg's on tetrahedra (the cantilever, the Verschoor 2012 bunny, sofa-beam); every
// solver (solver_peers.h) solves the same matrix and right-hand side from 0 to a relative residual
// of 1e-6, setup and solve timed apart (median of 5 with min and max), with its residual
// against wall time.
//
// Files (OUT/head-to-head/):
//   solvers_systems.csv  one row per system: scene, family, size, elements, unknowns, entries,
//                        assembly seconds, what was changed for the method
//   solvers.csv          one row per system and solver: times, iterations, the true relative
//                        residual, threads or device; status "ok", "not converged" or
//                        "absent: <why>" (then no numbers)
//   solvers_history.csv  residual against seconds since the solve began, per system and solver
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "experiments/head_to_head/parts.h"
#include "experiments/head_to_head/solver_peers.h"
#include "experiments/head_to_head/solver_system.h"
#include "meshes/errors.h"
#include "solvers/common/results.h"

#ifndef EB_H2H_SOURCE_DIR
#define EB_H2H_SOURCE_DIR ""
#endif

namespace eb::head_to_head {
namespace {

namespace fs = std::filesystem;

struct SystemSpec {
  std::string family;  // hex, tet
  std::string scenario;
  std::string size;    // a label: the override that sets the size
  std::vector<std::string> overrides;
  std::string note;    // what was changed for the method
  bool gpu_only = false;  // the large tier: only the device solvers (the part's time budget)
};

// bcsr-pcg takes neither sofa-beam's ground contact nor its Rayleigh stiffness damping: the tet
// system is the beam's without them (the matrix's structure and conditioning are the beam's).
const std::vector<std::string> kSofaForBcsr = {"boundary.ground.enabled=false", "time.rayleigh_stiffness=0"};
const char* kSofaNote = "ground contact and Rayleigh stiffness off (bcsr-pcg has neither)";

// --quick: one small system per scene, CPU solvers on one thread (about a minute on 2 cores).
// Otherwise (the GPU machine: about 4 minutes): 30-60K unknowns per scene for every solver, then
// a large tier of 0.3-0.9M unknowns for the device solvers alone, where the CPU solvers' 5 runs
// and histories would take the part past its budget.
std::vector<SystemSpec> systems(bool quick, bool cuda) {
  std::vector<SystemSpec> s;
  auto add = [&](std::string f, std::string sc, std::string key, std::string value, std::vector<std::string> extra = {},
                 std::string note = "", bool gpu_only = false) {
    std::vector<std::string> o = std::move(extra);
    if (!key.empty()) o.push_back(key + "=" + value);
    s.push_back({std::move(f), std::move(sc), key.empty() ? "default" : key + "=" + value, o, std::move(note), gpu_only});
  };
  if (quick) {
    add("hex", "cantilever", "mesh.element_size", "0.025");
    add("hex", "dick2011-bunny", "mesh.target_elements", "3000");
    add("tet", "cantilever", "mesh.element_size", "0.04");
    add("tet", "verschoor2012-bunny", "verschoor2012.N", "12");
    add("tet", "sofa-beam", "mesh.divisions", "[19,4,4]", kSofaForBcsr, kSofaNote);
    return s;
  }
  add("hex", "cantilever", "mesh.element_size", "0.01");
  add("hex", "dick2011-bunny", "mesh.target_elements", "11900");
  add("tet", "cantilever", "mesh.element_size", "0.01");
  add("tet", "verschoor2012-bunny", "verschoor2012.N", "32");
  add("tet", "sofa-beam", "mesh.divisions", "[39,9,9]", kSofaForBcsr, kSofaNote);
  add("tet", "sofa-beam", "", "", kSofaForBcsr, kSofaNote);
  if (cuda) {
    add("hex", "dick2011-bunny", "mesh.target_elements", "94300", {}, "", true);
    add("tet", "verschoor2012-bunny", "verschoor2012.N", "64", {}, "", true);
    add("hex", "dick2011-bunny", "mesh.target_elements", "269000", {}, "", true);
  }
  return s;
}

Scenario load_system_scenario(const SystemSpec& spec) {
  std::vector<std::string> o;
  int n = 0;
  for (const auto& kv : spec.overrides) {
    // The bunny of Verschoor 2012 is registered at N = 64 voxels along its longest side; N here
    // scales its element size (the same merged-voxel tetrahedralization at N voxels).
    if (kv.rfind("verschoor2012.N=", 0) == 0) n = std::stoi(kv.substr(16));
    else o.push_back(kv);
  }
  if (n > 0) {
    // Its fixed base is every node within 1.5 voxels of the lowest point (verschoor2012.cpp),
    // so the box grows with the voxels.
    const Scenario base = load_scenario(spec.scenario, {});
    const double h = base.mesh.element_size * 64.0 / n;
    o.push_back("mesh.element_size=" + CsvTable::num(h));
    o.push_back(R"(boundary.fixed.0.where={"kind":"box","min":[-1,-1,-1],"max":[2,)" + CsvTable::num(1.5 * h) + ",2]}");
  }
  return load_scenario(spec.scenario, o);
}

fs::path find_cupy_script() {
  for (const fs::path& p : {fs::path(EB_H2H_SOURCE_DIR) / "cupy_cg.py", fs::path("experiments/head_to_head/cupy_cg.py")})
    if (!p.empty() && fs::exists(p)) return fs::absolute(p);
  return {};
}

struct Stats {
  double median = 0, min = 0, max = 0;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v.front(), v.back()};
}

std::string num(double v) { return CsvTable::num(v); }

}  // namespace

void run_solvers_part(const ExperimentContext& ctx) {
  constexpr int kRepeats = 5;
  PeerSettings ps;
  ps.cuda_available = ctx.cuda_available;
  ps.work_dir = ctx.out_dir / "solvers_work";
  ps.cupy_script = find_cupy_script();
  // Size limits that keep the GPU machine's run within its budget (PERF_NOTES.md has the
  // factorization times they come from).
  ps.direct_max_entries = 800000;
  ps.cholmod_max_entries = 4000000;
  ps.cupy_max_entries = 8000000;
  const std::vector<Peer> peers = solver_peers(ps);
  SolveLimits lim;
  lim.tolerance = 1e-6;
  lim.max_iterations = 20000;
  lim.max_seconds = ctx.quick ? 10 : 30;

  CsvTable sys_csv({"scene", "family", "size", "elements", "unknowns", "entries", "assembly_s", "note"});
  CsvTable csv({"scene", "family", "size", "unknowns", "solver", "label", "backend", "threads", "status", "runs",
                "setup_s", "setup_s_min", "setup_s_max", "solve_s", "solve_s_min", "solve_s_max", "total_s", "iterations",
                "relative_residual", "tolerance", "history"});
  CsvTable hist({"scene", "family", "size", "solver", "kind", "point", "seconds", "relative_residual"});
  // --quick runs on one thread: on a small shared machine, OpenMP regions of systems this small
  // cost more than they save (spmv_cpu.h kParallelMin says why), and the numbers stay comparable.
  const int threads = ctx.quick ? 1 : ctx.max_threads;
  omp_set_num_threads(threads);
  RunOptions ro;
  ro.backend = Backend::Cpu;
  ro.precision = Precision::Fp64;
  ro.threads = threads;
  ro.data_dir = ctx.data_dir;

  for (const SystemSpec& spec : systems(ctx.quick, ctx.cuda_available)) {
    const Scenario sc = load_system_scenario(spec);
    const SolverSystem sys = spec.family == "hex" ? hex_system(sc, ro) : tet_system(sc, ro, 5);
    const long n = long(sys.b.size());
    const std::string family = spec.family;
    sys_csv.add_row({spec.scenario, family, spec.size, std::to_string(sys.elements), std::to_string(n),
                     std::to_string(sys.A.nnz()), num(sys.setup_seconds),
                     spec.note + (spec.gpu_only ? std::string(spec.note.empty() ? "" : "; ") + "device solvers only" : "")});
    if (!ctx.quiet)
      std::cout << "head-to-head solvers: " << spec.scenario << " (" << family << ", " << spec.size << "): " << n
                << " unknowns, " << sys.A.nnz() << " entries" << std::endl;
    for (const Peer& p : peers) {
      if (p.family != "any" && p.family != family) continue;
      const std::vector<std::string> key = {spec.scenario, family, spec.size, std::to_string(n), p.name, p.label, p.backend};
      auto absent = [&](const std::string& why) {
        std::vector<std::string> row = key;
        row.insert(row.end(), {"", "absent: " + why, "0", "", "", "", "", "", "", "", "", "", num(lim.tolerance), ""});
        csv.add_row(row);
      };
      if (!p.unavailable.empty()) {
        absent(p.unavailable);
        continue;
      }
      if (spec.gpu_only && p.backend != "cuda") {
        absent("large tier: device solvers only (the part's time budget)");
        continue;
      }
      if (p.max_entries > 0 && long(sys.A.nnz()) > p.max_entries) {
        absent("more than " + std::to_string(p.max_entries) + " entries, " + p.max_entries_reason);
        continue;
      }
      std::vector<double> setup, solve;
      SolveRun first;
      std::string status;
      try {
        std::vector<SolveRun> runs;
        SolveLimits l = lim;
        l.history = true;
        if (p.run_all) {
          runs = p.run_all(sys, l, kRepeats);
        } else {
          for (int k = 0; k < kRepeats; ++k) {
            l.history = k == 0;
            runs.push_back(p.run(sys, l));
            // A solver that missed the tolerance is reported once, as it stopped (limit or stall).
            if (!runs.back().converged) break;
          }
        }
        for (const SolveRun& r : runs) {
          if (!std::isfinite(r.relative_residual)) throw RuntimeFailure("the solution is not finite");
          setup.push_back(r.setup_seconds);
          solve.push_back(r.solve_seconds);
        }
        first = runs.at(0);
        status = first.converged ? "ok" : "not converged";
      } catch (const std::exception& e) {
        absent(std::string("failed: ") + e.what());
        continue;
      }
      const Stats su = stats(setup), so = stats(solve);
      std::vector<std::string> row = key;
      row.insert(row.end(), {p.threads(), status, std::to_string(solve.size()), num(su.median), num(su.min), num(su.max),
                             num(so.median), num(so.min), num(so.max), num(su.median + so.median),
                             std::to_string(first.iterations), num(first.relative_residual), num(lim.tolerance),
                             first.history.kind});
      csv.add_row(row);
      for (std::size_t i = 0; i < first.history.seconds.size(); ++i)
        hist.add_row({spec.scenario, family, spec.size, p.name, first.history.kind, std::to_string(i),
                      num(first.history.seconds[i]), num(first.history.relative_residual[i])});
      if (!ctx.quiet)
        std::cout << "  " << p.name << ": " << status << ", setup " << su.median << " s, solve " << so.median << " s, "
                  << first.iterations << " iterations, residual " << first.relative_residual << std::endl;
    }
    // Rows so far are kept if a later system fails.
    sys_csv.write(ctx.out_dir / "solvers_systems.csv");
    csv.write(ctx.out_dir / "solvers.csv");
    hist.write(ctx.out_dir / "solvers_history.csv");
  }
  std::error_code ec;
  fs::remove_all(ps.work_dir, ec);
}

}  // namespace eb::head_to_head
