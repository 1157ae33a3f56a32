#pragma once
// Method registry. A method declares itself once (MethodInfo: its variants, the options of its
// own scenario section, the run modes and optional scenario features it implements), then
// registers a factory per variant x backend x precision; the CLI looks them up by name
// (libCEED-style backend strings) and lists what is compiled in.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "solvers/common/method_options.h"
#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"

namespace eb {

using SimulationFactory = std::function<std::unique_ptr<Simulation>(const Scenario&, const RunOptions&)>;

struct MethodInfo {
  std::string name;      // also the name of its scenario section
  std::string summary;   // one line: paper and algorithm
  std::vector<VariantInfo> variants;  // at least one; the first is the default
  OptionSchema options;  // the method's section; empty: the method takes no options
  bool dynamic = true;        // time stepping (time.mode = "dynamic"): Simulation::advance
  bool static_solve = false;  // equilibrium solves (time.mode = "static"): Simulation::solve_static
  // Optional scenario features (scenario_features()) the method implements; a scenario that
  // uses another one is refused, naming its key.
  std::vector<std::string> features;
  const VariantInfo* variant(const std::string& name) const;  // nullptr when unknown
};

struct MethodEntry {
  std::string method;
  std::string variant;
  Backend backend;
  Precision precision;
  SimulationFactory factory;
  // Backends that hold device memory (CUDA): the bytes a run of the scenario (solver.variant set
  // to this entry's variant) will hold, the estimate the factory checks against
  // RunOptions::gpu_memory_limit and the device's free memory before it allocates anything. A
  // run then holds at most this and at least 1/1.25 of it (tests/contract). Null: no device memory.
  std::function<std::size_t(const Scenario&, const RunOptions&)> estimate_device_bytes;
};

// What the registry makes of one run's request: the entry to build and the method's section
// resolved (every key, defaults filled in).
struct ResolvedMethod {
  const MethodInfo* info = nullptr;
  const MethodEntry* entry = nullptr;
  nlohmann::json options = nlohmann::json::object();
};

class MethodRegistry {
 public:
  // Throws std::logic_error on a duplicate, a method without variants, an unknown feature.
  void add_method(MethodInfo info);
  // Throws std::logic_error on a duplicate or a method/variant not declared with add_method.
  void add(MethodEntry entry);

  // Throw InputError listing the valid choices when nothing matches.
  const MethodInfo& info(const std::string& method) const;
  const MethodEntry& find(const std::string& method, const std::string& variant, Backend backend,
                          Precision precision) const;
  // The default variant.
  const MethodEntry& find(const std::string& method, Backend backend, Precision precision) const;

  // Everything method-specific about running `sc` with `method`: the variant (solver.variant,
  // empty: the default), the entry for the backend and precision, the method's section read
  // strictly, the variant's keys, the run mode and the optional features the scenario uses.
  // Throws InputError naming the offending key or choice.
  ResolvedMethod resolve(const Scenario& sc, const std::string& method, Backend backend, Precision precision) const;
  // The method sections of a scenario on their own (no run): each must name a method of this
  // build and read strictly as that method's section. Throws InputError naming the key.
  void check_sections(const Scenario& sc) const;

  const std::vector<MethodEntry>& entries() const { return entries_; }
  const std::vector<MethodInfo>& infos() const { return infos_; }
  std::vector<std::string> method_names() const;  // sorted, unique
  // One object per method: summary, section defaults, variants with their backends, modes,
  // features (for `elastobench list --json`).
  nlohmann::json describe() const;

 private:
  [[noreturn]] void unknown_method(const std::string& method) const;
  nlohmann::json resolve_section(const MethodInfo& info, const Scenario& sc) const;
  std::vector<MethodInfo> infos_;
  std::vector<MethodEntry> entries_;
};

// The process-wide registry with every method compiled into this build (solvers/).
MethodRegistry& methods();

}  // namespace eb
