#include "experiments/experiment.h"

#include "meshes/errors.h"

namespace eb {

void ExperimentRegistry::add(Experiment e) {
  for (const auto& x : entries_)
    if (x.name == e.name) throw std::logic_error("experiment registered twice: " + e.name);
  entries_.push_back(std::move(e));
}

const Experiment& ExperimentRegistry::find(const std::string& name) const {
  for (const auto& e : entries_)
    if (e.name == name) return e;
  std::string names;
  for (const auto& e : entries_) names += (names.empty() ? "" : ", ") + e.name;
  throw InputError("unknown experiment '" + name + "' (valid: all" + (names.empty() ? "" : ", " + names) + ")");
}

}  // namespace eb
