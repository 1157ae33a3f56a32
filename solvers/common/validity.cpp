#include "solvers/common/validity.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <utility>

namespace eb {
namespace {

nlohmann::json step_or_null(long step) { return step >= 0 ? nlohmann::json(step) : nlohmann::json(nullptr); }

// The earliest of several first-occurrence steps (-1 = never).
long earliest(std::initializer_list<long> steps) {
  long best = -1;
  for (long s : steps)
    if (s >= 0 && (best < 0 || s < best)) best = s;
  return best;
}

}  // namespace

void ValidityCounts::add(int64_t step, const ElementChecks& c) {
  if (c.inverted > 0) {
    inverted_element_steps += c.inverted;
    if (first_inverted_step < 0) {
      first_inverted_step = step;
      first_inverted_element = c.first_inverted;
    }
  }
  if (std::isfinite(c.min_det_f)) min_det_f = std::min(min_det_f, c.min_det_f);
  if (c.first_nonfinite >= 0) {
    ++nonfinite_steps;
    if (first_nonfinite_step < 0) {
      first_nonfinite_step = step;
      first_nonfinite_element = c.first_nonfinite;
    }
  }
}

bool ValidityTracker::check_state(long step, const std::vector<double>& u, const std::vector<double>& v) {
  double max_u = 0.0;
  for (size_t i = 0; i + 2 < u.size(); i += 3) {
    const double nu = std::sqrt(u[i] * u[i] + u[i + 1] * u[i + 1] + u[i + 2] * u[i + 2]);
    const double nv = i + 2 < v.size() ? std::sqrt(v[i] * v[i] + v[i + 1] * v[i + 1] + v[i + 2] * v[i + 2]) : 0.0;
    if (!std::isfinite(nu) || !std::isfinite(nv)) {
      if (nonfinite_step_ < 0) {
        nonfinite_step_ = step;
        nonfinite_node_ = long(i / 3);
        nonfinite_field_ = std::isfinite(nu) ? "velocity" : "displacement";
      }
      return false;
    }
    max_u = std::max(max_u, nu);
  }
  max_displacement_ = std::max(max_displacement_, max_u);
  if (growth_step_ < 0 && max_u > kGrowthFactor * diagonal_) {
    growth_step_ = step;
    growth_value_ = max_u;
  }
  return true;
}

void ValidityTracker::check_solver(long step, const SolverStats& stats) {
  const std::optional<bool> converged = stats.step_converged();
  if (converged.has_value() && !*converged) {
    ++sampled_solver_failures_;
    if (first_sampled_solver_failure_ < 0) first_sampled_solver_failure_ = step;
  }
}

bool ValidityTracker::det_f_checked() const {
  // A method that fills the counts without setting the flag still has them reported.
  return method_.det_f_checked || method_.inverted_element_steps > 0 || std::isfinite(method_.min_det_f);
}

bool ValidityTracker::valid() const {
  return method_.inverted_element_steps == 0 && method_.solver_failures == 0 && method_.nonfinite_steps == 0 &&
         sampled_solver_failures_ == 0 && nonfinite_step_ < 0 && growth_step_ < 0;
}

long ValidityTracker::first_invalid_step() const {
  return earliest({method_.inverted_element_steps > 0 ? long(method_.first_inverted_step) : -1,
                   method_.solver_failures > 0 ? long(method_.first_solver_failure_step) : -1,
                   method_.nonfinite_steps > 0 ? long(method_.first_nonfinite_step) : -1,
                   first_sampled_solver_failure_, nonfinite_step_, growth_step_});
}

std::vector<std::string> ValidityTracker::reasons() const {
  std::vector<std::pair<long, std::string>> r;
  if (nonfinite_step_ >= 0) {
    std::ostringstream m;
    m << "non-finite " << nonfinite_field_ << " at node " << nonfinite_node_ << " at step " << nonfinite_step_;
    if (dt_ > 0)
      m << " (t = " << double(nonfinite_step_) * dt_ << " s): the run diverged; try a smaller time.dt or time.courant";
    else
      m << ": the solve diverged; try more static.load_steps";
    r.emplace_back(nonfinite_step_, m.str());
  }
  if (method_.nonfinite_steps > 0) {
    std::ostringstream m;
    m << "non-finite values";
    if (method_.first_nonfinite_element >= 0) m << " in element " << method_.first_nonfinite_element;
    m << " at step " << method_.first_nonfinite_step << " (" << method_.nonfinite_steps
      << (method_.nonfinite_steps == 1 ? " step" : " steps") << " with non-finite values)";
    r.emplace_back(method_.first_nonfinite_step, m.str());
  }
  if (method_.inverted_element_steps > 0) {
    std::ostringstream m;
    // A positive threshold also catches elements too compressed for the method's formula.
    m << "element " << method_.first_inverted_element
      << (method_.inverted_threshold > 0 ? " inverted or degenerate (det F <= " : " inverted (det F <= ")
      << method_.inverted_threshold
      << ") at step " << method_.first_inverted_step << ", the first of " << method_.inverted_element_steps
      << " inverted element-steps (min det F = " << method_.min_det_f << ")";
    r.emplace_back(method_.first_inverted_step, m.str());
  }
  const long failures = std::max<long>(long(method_.solver_failures), sampled_solver_failures_);
  if (failures > 0) {
    const long first = earliest({method_.solver_failures > 0 ? long(method_.first_solver_failure_step) : -1,
                                 first_sampled_solver_failure_});
    std::ostringstream m;
    m << failures << (failures == 1 ? " solve" : " solves") << " missed the solver tolerance, the first at step "
      << first;
    r.emplace_back(first, m.str());
  }
  if (growth_step_ >= 0) {
    std::ostringstream m;
    m << "max |u| = " << growth_value_ << " m at step " << growth_step_ << " exceeds " << kGrowthFactor
      << " x the mesh diagonal (" << diagonal_ << " m)";
    r.emplace_back(growth_step_, m.str());
  }
  std::stable_sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& x : r) out.push_back(std::move(x.second));
  return out;
}

nlohmann::json ValidityTracker::to_json() const {
  const bool checked = det_f_checked();
  const bool inverted = method_.inverted_element_steps > 0;
  const long failures = std::max<long>(long(method_.solver_failures), sampled_solver_failures_);
  const long first_failure = earliest(
      {method_.solver_failures > 0 ? long(method_.first_solver_failure_step) : -1, first_sampled_solver_failure_});
  const long first_nonfinite =
      earliest({method_.nonfinite_steps > 0 ? long(method_.first_nonfinite_step) : -1, nonfinite_step_});
  nlohmann::json j = {
      {"valid", valid()},
      {"reasons", reasons()},
      {"first_invalid_step", step_or_null(first_invalid_step())},
      {"det_f_checked", checked},
      {"inverted_threshold", checked ? nlohmann::json(method_.inverted_threshold) : nlohmann::json(nullptr)},
      {"inverted_element_steps", checked ? nlohmann::json(method_.inverted_element_steps) : nlohmann::json(nullptr)},
      {"first_inverted", inverted ? nlohmann::json({{"element", method_.first_inverted_element},
                                                    {"step", method_.first_inverted_step}})
                                  : nlohmann::json(nullptr)},
      {"min_det_f", std::isfinite(method_.min_det_f) ? nlohmann::json(method_.min_det_f) : nlohmann::json(nullptr)},
      {"solver_failures", failures},
      {"first_solver_failure_step", step_or_null(first_failure)},
      {"nonfinite",
       {{"first_step", step_or_null(first_nonfinite)},
        {"method_steps", method_.nonfinite_steps},
        {"element", method_.first_nonfinite_element >= 0 ? nlohmann::json(method_.first_nonfinite_element)
                                                         : nlohmann::json(nullptr)},
        {"node", nonfinite_node_ >= 0 ? nlohmann::json(nonfinite_node_) : nlohmann::json(nullptr)},
        {"field", nonfinite_step_ >= 0 ? nlohmann::json(nonfinite_field_) : nlohmann::json(nullptr)}}},
      {"growth",
       {{"factor", kGrowthFactor},
        {"bound_m", kGrowthFactor * diagonal_},
        {"max_displacement_m", max_displacement_},
        {"exceeded_at_step", step_or_null(growth_step_)}}},
  };
  return j;
}

bool run_is_valid(const nlohmann::json& summary, std::string* reason) {
  const auto v = summary.find("validity");
  if (v == summary.end() || !v->is_object() || !v->contains("valid") || !(*v)["valid"].is_boolean()) {
    if (reason) *reason = "validity not recorded";
    return false;
  }
  if ((*v)["valid"].get<bool>()) {
    if (reason) reason->clear();
    return true;
  }
  if (reason) {
    const auto& r = (*v)["reasons"];
    *reason = "invalid: " + (r.is_array() && !r.empty() && r[0].is_string() ? r[0].get<std::string>() : "no reason recorded");
    if (r.is_array() && r.size() > 1) *reason += " (+" + std::to_string(r.size() - 1) + " more)";
  }
  return false;
}

}  // namespace eb
