#pragma once
// Paper experiments: each regenerates one paper's tables and figures as data files under
// OUT/<name>/ (CSV/JSON); analysis/<name>.py turns those into figures and Markdown tables.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
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
  // Parts to run (`reproduce --parts`), empty for all. A part rewrites only its own files, so a
  // results folder can combine parts run on different machines (each part's machine and build
  // are kept in the folder's manifest.json under "parts").
  std::vector<std::string> parts;
  bool wants(const std::string& part) const {
    return parts.empty() || std::find(parts.begin(), parts.end(), part) != parts.end();
  }
  // The experiment's own options (`reproduce NAME --option KEY=VALUE`), keys among those it
  // declares (Experiment::options); the experiment validates the values.
  std::map<std::string, std::string> options;
  const std::string* option(const std::string& key) const {
    const auto it = options.find(key);
    return it == options.end() ? nullptr : &it->second;
  }
};

// An option an experiment declares: `elastobench list` and `reproduce --help` show it, and
// `reproduce` checks its value before anything runs or is written.
struct ExperimentOption {
  std::string key;
  std::string help;  // the values it takes and what it changes
  std::function<void(const std::string& value)> check = {};  // throws InputError naming the option
};

struct Experiment {
  std::string name;   // e.g. "strbac2015"
  std::string title;  // paper reference
  std::function<void(const ExperimentContext&)> run;
  // Named parts that `reproduce --parts` may select (each one its own tables/figures and files);
  // empty when the experiment runs only as a whole.
  std::vector<std::string> parts = {};
  std::vector<ExperimentOption> options = {};
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
