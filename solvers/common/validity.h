#pragma once
// Run validity. A run whose state is invalid (non-finite values, inverted elements, solver
// failures, growth beyond a scenario-relative bound) still produces timings and displacements,
// and nothing in them shows that they describe a broken state; so the runner records a verdict
// in summary.json ("validity", README "Results") and experiment drivers test it with
// run_is_valid() before they tabulate any number from a run.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "solvers/common/simulation.h"

namespace eb {

// A sampled state whose largest displacement exceeds kGrowthFactor x the mesh's bounding-box
// diagonal (bounding_box_diagonal, solvers/common/boundary.h) is invalid. A body held anywhere
// cannot move ten of its own diagonals without stretching or inverting elements far beyond
// anything these methods model, and the built-in scenarios stay below 0.2 diagonals (the
// cube's 20% compression moves its top by 0.12); the bound catches runaway growth of a
// method that does not check det F itself (e.g. 24 km on a 1 m beam) without ever flagging a
// physical answer. It is not a scenario key: no scenario here needs another value.
constexpr double kGrowthFactor = 10.0;

// Combines the method's cumulative counts with the runner's checks on sampled states.
class ValidityTracker {
 public:
  // dt 0: a static run (steps are load steps).
  ValidityTracker(double mesh_diagonal, double dt) : diagonal_(mesh_diagonal), dt_(dt) {}

  // Checks a sampled state (x, y, z per node). Returns false when it holds a non-finite value:
  // the run has diverged and cannot go on (later states are all non-finite).
  bool check_state(long step, const std::vector<double>& u, const std::vector<double>& v);
  // Sampled solver statistics of the last step before `step`: a tolerance the solve missed
  // (SolverStats::step_converged) counts even when the method does not count its own failures.
  void check_solver(long step, const SolverStats& stats);
  // The method's counts, cumulative: each call replaces the previous ones.
  void set_method_counts(const ValidityCounts& counts) { method_ = counts; }

  bool valid() const;
  // Non-finite values, seen in a sampled state or by the method: the run must stop.
  bool diverged() const { return nonfinite_step_ >= 0 || method_.nonfinite_steps > 0; }
  long first_invalid_step() const;  // -1 when valid (or when the method did not say which step)
  // One sentence per kind of problem, earliest first; empty when valid.
  std::vector<std::string> reasons() const;
  // The "validity" object of summary.json.
  nlohmann::json to_json() const;

 private:
  bool det_f_checked() const;

  double diagonal_, dt_;
  ValidityCounts method_;
  long nonfinite_step_ = -1, nonfinite_node_ = -1;
  const char* nonfinite_field_ = "";
  double max_displacement_ = 0.0;
  long growth_step_ = -1;
  double growth_value_ = 0.0;
  long sampled_solver_failures_ = 0, first_sampled_solver_failure_ = -1;
};

// Whether a summary (summary.json of a run) records a valid run. When it does not, `reason`
// (if given) receives "invalid: <the earliest problem>" or, for a summary written before runs
// recorded their validity, "validity not recorded": such a run is never taken for valid.
bool run_is_valid(const nlohmann::json& summary, std::string* reason = nullptr);

}  // namespace eb
