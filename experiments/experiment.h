#pragma once
// Paper experiments: each regenerates one paper's tables and figures as data files under
// OUT/<name>/ (CSV/JSON); analysis/<name>.py turns those into figures and Markdown tables.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "solvers/common/simulation.h"

namespace eb {

struct ExperimentContext {
  std::filesystem::path out_dir;  // OUT/<experiment name>/, created before run() is called
  bool quick = false;             // reduced sizes on the CPU within a few minutes
  bool cuda_available = false;    // a CUDA device is usable in this process
  int max_threads = 1;            // CPU threads the machine has
  std::filesystem::path data_dir;
  bool quiet = false;
};

struct Experiment {
  std::string name;   // e.g. "strbac2015"
  std::string title;  // paper reference
  std::function<void(const ExperimentContext&)> run;
};

class ExperimentRegistry {
 public:
  void add(Experiment e);
  const Experiment& find(const std::string& name) const;  // InputError listing names
  const std::vector<Experiment>& entries() const { return entries_; }

 private:
  std::vector<Experiment> entries_;
};

// Every experiment compiled in (folders under experiments/ with a CMakeLists.txt defining
// eb_experiment_<folder> and `void register_experiment_<folder>(ExperimentRegistry&)`).
ExperimentRegistry& experiments();

}  // namespace eb
