#pragma once
// Method registry: each method x backend x precision registers a factory; the CLI looks them up
// by name (libCEED-style backend strings) and lists what is compiled in.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"

namespace eb {

using SimulationFactory = std::function<std::unique_ptr<Simulation>(const Scenario&, const RunOptions&)>;

struct MethodEntry {
  std::string method;   // e.g. "tled"
  Backend backend;
  Precision precision;
  std::string summary;  // one line: paper and algorithm
  SimulationFactory factory;
};

class MethodRegistry {
 public:
  void add(MethodEntry entry);  // throws std::logic_error on a duplicate
  // Throws InputError listing the valid choices when nothing matches.
  const MethodEntry& find(const std::string& method, Backend backend, Precision precision) const;
  const std::vector<MethodEntry>& entries() const { return entries_; }
  std::vector<std::string> method_names() const;  // sorted, unique

 private:
  std::vector<MethodEntry> entries_;
};

// The process-wide registry with every method compiled into this build (solvers/).
MethodRegistry& methods();

}  // namespace eb
