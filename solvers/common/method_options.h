#pragma once
// Method-owned scenario sections. A method keeps what only it understands in a section named
// after it ([hexmg] cycles = 1 in TOML, --set hexmg.cycles=1), described once by a struct with
// a visit() function (solvers/common/visit_io.h) and checked by the method's own validate
// function. The method reads its section with read_method_options(); the registry resolves the
// section of a run's method through the same struct (OptionSchema), so an unknown key, or a key
// of another method, is an error naming it before anything is built.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "solvers/common/scenario.h"
#include "solvers/common/visit_io.h"

namespace eb {

// Reads `table` (a method section, or null for none) strictly into T: an unknown or ill-typed
// key is an InputError naming `section.key`; then `validate` (may be null) checks the values.
template <class T>
T read_options(const nlohmann::json& table, const std::string& section, void (*validate)(const T&)) {
  T options{};
  if (!table.is_null()) {
    const std::string origin = "scenario";
    const nlohmann::json no_parent = nlohmann::json::object();
    StrictReader(no_parent, "", origin).read(table, options, section);
  }
  if (validate) validate(options);
  return options;
}

// The section of `method` in a scenario, read as above (defaults when the scenario has none).
template <class T>
T read_method_options(const Scenario& sc, const std::string& method, void (*validate)(const T&)) {
  const auto it = sc.method_options.find(method);
  return read_options<T>(it == sc.method_options.end() ? nlohmann::json() : *it, method, validate);
}

// A named way of running a method (an assembly strategy, a solver...), chosen with
// solver.variant or `run --variant`. The factory receives the scenario with solver.variant set
// to the variant's name.
struct VariantInfo {
  std::string name;
  std::string summary;
  // Keys of the method's section that apply to this variant; empty: all of them. A key the
  // scenario sets for a variant it does not apply to is an error naming the key.
  std::vector<std::string> keys;
  // Whether two runs of the same scenario end in the same bits, on every backend and with any
  // thread count: true when the variant fixes every summation order; false when it adds in the
  // order threads arrive (floating-point atomics). The contract tests (tests/contract) check
  // bit-identical repeats of every deterministic variant.
  bool deterministic = true;
};

// A method's section, type-erased for the registry and the CLI.
struct OptionSchema {
  // Reads a section strictly, validates it and returns it with every key (defaults filled in).
  std::function<nlohmann::json(const nlohmann::json& table, const std::string& section)> resolve;
  bool empty() const { return !resolve; }
};

template <class T> OptionSchema option_schema(void (*validate)(const T&)) {
  return {[validate](const nlohmann::json& table, const std::string& section) {
    T options = read_options<T>(table, section, validate);
    return FieldWriter::write(options);
  }};
}

}  // namespace eb
