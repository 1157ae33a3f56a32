#pragma once
// Solver statistics of a run: what the runner records of each sampled step's SolverStats, as
// timeseries.csv columns and as the "solver" object of summary.json (README "Results"), with
// min/mean/max over the steps that solved (the initial state, step 0, has no solve).
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "solvers/common/simulation.h"

namespace eb {

// Running min, mean and max of one quantity; non-finite values are not counted.
class RunningStats {
 public:
  void add(double x);
  long count() const { return count_; }
  double max() const { return max_; }
  // {"min", "mean", "max"}, or null when nothing was counted.
  nlohmann::json to_json() const;

 private:
  double min_ = std::numeric_limits<double>::infinity(), max_ = -std::numeric_limits<double>::infinity();
  double sum_ = 0.0;
  long count_ = 0;
};

class SolverSummary {
 public:
  // One step's solve (never the initial state's).
  void add(const SolverStats& st);
  // The "solver" object of summary.json; `last` is the last step's statistics.
  nlohmann::json to_json(const SolverStats& last) const;

  // timeseries.csv: the solver columns and one step's cells in their order.
  static std::vector<std::string> csv_columns();
  static std::vector<std::string> csv_cells(const SolverStats& st);
  // One solve as a JSON record (a static run's load steps).
  static nlohmann::json solve_json(const SolverStats& st);

 private:
  long samples_ = 0, tolerance_samples_ = 0, fixed_samples_ = 0, outer_samples_ = 0;
  long iterations_sum_ = 0;
  bool all_converged_ = true;
  RunningStats inner_iterations_, inner_per_outer_, inner_final_, inner_reduction_;
  RunningStats outer_iterations_, outer_final_, outer_reduction_;
};

}  // namespace eb
