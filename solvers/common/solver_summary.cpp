#include "solvers/common/solver_summary.h"

#include <algorithm>
#include <cmath>

#include "solvers/common/results.h"

namespace eb {
namespace {
nlohmann::json finite_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }
nlohmann::json optional_json(const std::optional<bool>& b) { return b ? nlohmann::json(*b) : nlohmann::json(nullptr); }
}  // namespace

void RunningStats::add(double x) {
  if (!std::isfinite(x)) return;
  min_ = std::min(min_, x);
  max_ = std::max(max_, x);
  sum_ += x;
  ++count_;
}

nlohmann::json RunningStats::to_json() const {
  if (count_ == 0) return nullptr;
  return {{"min", min_}, {"mean", sum_ / double(count_)}, {"max", max_}};
}

void SolverSummary::add(const SolverStats& st) {
  ++samples_;
  iterations_sum_ += st.iterations;
  const std::optional<bool> converged = st.step_converged();
  if (converged.has_value()) {
    ++tolerance_samples_;
    all_converged_ = all_converged_ && *converged;
  } else if (st.iterations > 0) {
    ++fixed_samples_;
  }
  inner_iterations_.add(st.iterations);
  inner_final_.add(st.final_residual);
  inner_reduction_.add(st.reduction());
  if (st.outer_iterations > 0) {
    ++outer_samples_;
    outer_iterations_.add(st.outer_iterations);
    outer_final_.add(st.outer_final_residual);
    outer_reduction_.add(st.outer_reduction());
    for (int n : st.inner_per_outer) inner_per_outer_.add(n);
  }
}

nlohmann::json SolverSummary::to_json(const SolverStats& last) const {
  const char* mode = tolerance_samples_ > 0 ? "tolerance" : (fixed_samples_ > 0 ? "fixed" : "none");
  const int levels = outer_samples_ > 0 ? 2 : (tolerance_samples_ + fixed_samples_ > 0 ? 1 : 0);
  nlohmann::json outer = nullptr;
  if (outer_samples_ > 0)
    outer = {{"last_iterations", last.outer_iterations},
             {"last_initial_residual", last.outer_initial_residual},
             {"last_final_residual", last.outer_final_residual},
             {"last_reduction", finite_or_null(last.outer_reduction())},
             {"iterations", outer_iterations_.to_json()},
             {"final_residual", outer_final_.to_json()},
             {"reduction", outer_reduction_.to_json()}};
  return {{"mode", mode},
          {"levels", levels},
          {"sampled_steps", samples_},
          {"last_iterations", last.iterations},
          {"last_initial_residual", last.initial_residual},
          {"last_final_residual", last.final_residual},
          {"last_reduction", finite_or_null(last.reduction())},
          {"mean_iterations", samples_ ? nlohmann::json(double(iterations_sum_) / double(samples_)) : nlohmann::json(nullptr)},
          {"worst_final_residual", inner_final_.count() ? inner_final_.max() : 0.0},
          {"worst_reduction", inner_reduction_.count() ? nlohmann::json(inner_reduction_.max()) : nlohmann::json(nullptr)},
          {"all_converged", tolerance_samples_ ? nlohmann::json(all_converged_) : nlohmann::json(nullptr)},
          {"inner",
           {{"iterations", inner_iterations_.to_json()},
            {"iterations_per_outer", inner_per_outer_.to_json()},
            {"final_residual", inner_final_.to_json()},
            {"reduction", inner_reduction_.to_json()}}},
          {"outer", outer}};
}

std::vector<std::string> SolverSummary::csv_columns() {
  return {"iterations",       "residual",          "initial_residual", "reduction",
          "outer_iterations", "outer_initial_residual", "outer_residual", "inner_per_outer"};
}

std::vector<std::string> SolverSummary::csv_cells(const SolverStats& st) {
  std::string per_outer;
  for (int n : st.inner_per_outer) per_outer += (per_outer.empty() ? "" : ";") + std::to_string(n);
  const double reduction = st.reduction();
  return {std::to_string(st.iterations),
          CsvTable::num(st.final_residual),
          CsvTable::num(st.initial_residual),
          std::isfinite(reduction) ? CsvTable::num(reduction) : std::string(),
          std::to_string(st.outer_iterations),
          CsvTable::num(st.outer_initial_residual),
          CsvTable::num(st.outer_final_residual),
          per_outer};
}

nlohmann::json SolverSummary::solve_json(const SolverStats& st) {
  return {{"outer_iterations", st.outer_iterations},
          {"inner_iterations", st.iterations},
          {"inner_per_outer", st.inner_per_outer},
          {"outer_initial_residual", st.outer_initial_residual},
          {"outer_final_residual", st.outer_final_residual},
          {"initial_residual", st.initial_residual},
          {"final_residual", st.final_residual},
          {"converged", optional_json(st.step_converged())}};
}

}  // namespace eb
