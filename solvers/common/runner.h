#pragma once
// Runs one scenario with one method/backend/precision and writes its results directory:
//   DIR/summary.json     (atomic; schema in README.md "Results")
//   DIR/timeseries.csv   (probe displacements and solver statistics over time)
//   DIR/vtk/*.vtu + DIR/vtk/series.pvd  (when vtk_every > 0; the last step is always written)
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"

namespace eb {

struct RunRequest {
  std::string method;
  RunOptions options;
  Scenario scenario;
  std::string scenario_origin;    // what the user named: built-in name or file path
  std::filesystem::path out_dir;  // created if missing
  int steps = -1;                 // > 0 overrides the scenario's stopping rule with a step count
  int vtk_every = -1;             // >= 0 overrides scenario.output.vtk_every
  int warmup_steps = -1;          // < 0: min(10, steps / 10)
  bool quiet = false;             // no progress line
  bool write_files = true;        // false: only return the summary (benchmarks)
};

// Returns the summary written to DIR/summary.json. Throws InputError (exit 2) for bad input and
// RuntimeFailure (exit 1) for divergence or device errors; on failure no summary.json is left.
nlohmann::json run_simulation(const RunRequest& request);

}  // namespace eb
