#include "solvers/tled/tled_simulation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace eb::tled {

nlohmann::json TledSimulationBase::details() const {
  nlohmann::json j = setup_.describe();
  j["backend"] = to_string(backend_);
  j["precision"] = to_string(precision_);
  j["regime"] = to_string(precision_) + (setup_.texture ? "/texture" : "/no-texture") +
                (setup_.damage_enabled ? "/damage" : "/no-damage");
  j["steps_done"] = step_;
  add_details(j);
  return j;
}

std::string to_string(Phase p) {
  switch (p) {
    case Phase::Element: return "element";
    case Phase::Node: return "node";
    case Phase::Boundary: return "boundary";
  }
  return "?";
}

std::string to_string(PhaseArray a) {
  switch (a) {
    case PhaseArray::u: return "u";
    case PhaseArray::u_prev: return "u_prev";
    case PhaseArray::fe: return "fe";
    case PhaseArray::fnode: return "fnode";
    case PhaseArray::beta: return "beta";
  }
  return "?";
}

bool TledSimulationBase::has_array(PhaseArray a) const {
  switch (a) {
    case PhaseArray::u:
    case PhaseArray::u_prev: return true;
    case PhaseArray::fe: return gathers(setup_.assembly);
    case PhaseArray::fnode: return setup_.assembly == Assembly::Atomic;
    case PhaseArray::beta: return setup_.damage_enabled;
  }
  return false;
}

size_t TledSimulationBase::array_size(PhaseArray a) const {
  if (!has_array(a))
    throw std::invalid_argument("tled: no array " + to_string(a) + " in this configuration (assembly " +
                                to_string(setup_.assembly) + ", damage " + (setup_.damage_enabled ? "on" : "off") + ")");
  const size_t N = size_t(setup_.num_nodes), E = size_t(setup_.num_elements);
  switch (a) {
    case PhaseArray::u:
    case PhaseArray::u_prev:
    case PhaseArray::fnode: return 3 * N;
    case PhaseArray::fe: return 3 * size_t(slots_per_element(setup_.assembly)) * E;
    case PhaseArray::beta: return E;
  }
  return 0;
}

std::vector<double> TledSimulationBase::get_array(PhaseArray a) {
  array_size(a);  // checks that it exists
  return read_array(a);
}

void TledSimulationBase::set_array(PhaseArray a, const std::vector<double>& values) {
  const size_t n = array_size(a);
  if (values.size() != n)
    throw std::invalid_argument("tled: set_array(" + to_string(a) + ") needs " + std::to_string(n) + " values, got " +
                                std::to_string(values.size()));
  write_array(a, values);
}

void TledSimulationBase::run_phase(Phase p) {
  if (p != Phase::Element && p != Phase::Node && p != Phase::Boundary)
    throw std::invalid_argument("tled: phase " + std::to_string(int(p)) + " does not exist (element, node, boundary)");
  run_phase_impl(p);
}

}  // namespace eb::tled
