#include "solvers/tled/tled_simulation.h"

#include <sstream>

#include "meshes/errors.h"

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

void TledSimulationBase::report_inverted(int64_t element, int64_t step, double J) const {
  std::ostringstream msg;
  msg << "tled: element " << element << " inverted or non-finite (det F = " << J << ") at step " << step
      << " (t = " << double(step) * s_.dt << " s); the time step " << s_.dt
      << " s may be too large or the loading too fast";
  throw RuntimeFailure(msg.str());
}

}  // namespace eb::tled
