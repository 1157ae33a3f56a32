#pragma once
// Runs one scenario with one method/backend/precision and writes its results directory:
//   DIR/summary.json     (atomic; schema in README.md "Results")
//   DIR/timeseries.csv   (probe displacements and solver statistics over time)
//   DIR/vtk/*.vtu + DIR/vtk/series.pvd  (when vtk_every > 0; the last step is always written)
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"

namespace eb {

struct RunRequest {
  std::string method;
  std::string variant;            // non-empty: overrides the scenario's solver.variant (run --variant)
  RunOptions options;
  Scenario scenario;
  std::string scenario_origin;    // what the user named: built-in name or file path
  std::filesystem::path out_dir;  // created if missing
  int steps = -1;                 // > 0 overrides the scenario's stopping rule with a step count (time stepping)
  int vtk_every = -1;             // >= 0 overrides scenario.output.vtk_every
  int warmup_steps = -1;          // < 0: min(10, steps / 10) (time stepping)
  bool quiet = false;             // no progress line
  bool write_files = true;        // false: only return the summary (benchmarks)
  // Called with the finished simulation once the summary is complete and before it is written,
  // for measurements that must not disturb the run (a kernel profile on the final state); what
  // it adds to the summary is written with it. Device memory it allocates is not the run's.
  std::function<void(Simulation&, nlohmann::json& summary)> after_run;
};

// A scenario with time.mode = "static" is solved to equilibrium in static.load_steps load steps
// (Simulation::solve_static), each timed and recorded with its solver statistics; otherwise
// the method steps in time. The method, its variant, its scenario section and the mode are
// resolved by the registry first (MethodRegistry::resolve), so a choice or key the method does
// not support is an InputError naming it.
//
// Returns the summary written to DIR/summary.json. An invalid run (summary "validity", see
// solvers/common/validity.h) is not an exception: it returns and writes its files like any
// other, so that they document the failure; a run whose state becomes non-finite stops there
// (time.stopped_by = "non-finite state"). The caller decides what an invalid run means (`run`
// exits 1 unless --allow-invalid; experiment drivers tabulate "invalid: <reason>"), and prints
// nothing more: the runner writes a one-line warning naming the first problem to stderr.
// Throws InputError (exit 2) for bad input and RuntimeFailure (exit 1) for device errors and
// other failures; then no summary.json is left.
nlohmann::json run_simulation(const RunRequest& request);

}  // namespace eb
