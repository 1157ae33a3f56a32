#include "solvers/tled/tled_simulation.h"

#include <algorithm>
#include <cmath>

namespace eb::tled {

nlohmann::json TledSimulationBase::details() const {
  nlohmann::json j = s_.describe();
  j["backend"] = to_string(backend_);
  j["precision"] = to_string(precision_);
  j["regime"] = to_string(precision_) + (s_.texture ? "/texture" : "/no-texture") +
                (s_.damage_enabled ? "/damage" : "/no-damage");
  j["steps_done"] = step_;
  add_details(j);
  return j;
}

void TledSimulationBase::record_checks(int64_t step, int64_t inverted, int64_t first_inverted, double min_det_f,
                                       int64_t first_nonfinite) {
  if (inverted > 0) {
    counts_.inverted_element_steps += inverted;
    if (counts_.first_inverted_step < 0) {
      counts_.first_inverted_step = step;
      counts_.first_inverted_element = first_inverted;
    }
  }
  if (std::isfinite(min_det_f)) counts_.min_det_f = std::min(counts_.min_det_f, min_det_f);
  if (first_nonfinite >= 0) {
    ++counts_.nonfinite_steps;
    if (counts_.first_nonfinite_step < 0) {
      counts_.first_nonfinite_step = step;
      counts_.first_nonfinite_element = first_nonfinite;
    }
  }
}

}  // namespace eb::tled
