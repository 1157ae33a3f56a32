#include "solvers/common/registry.h"

#include <algorithm>
#include <limits>
#include <set>

#include "meshes/errors.h"

namespace eb {

std::string to_string(Backend b) { return b == Backend::Cpu ? "cpu" : "cuda"; }
std::string to_string(Precision p) { return p == Precision::Fp32 ? "fp32" : "fp64"; }
std::string to_string(BytesConvention c) {
  switch (c) {
    case BytesConvention::Compulsory: return "compulsory";
    case BytesConvention::Requested: return "requested";
    case BytesConvention::Unstated: break;
  }
  return "unstated";
}

double SolverStats::reduction() const {
  return initial_residual > 0 ? final_residual / initial_residual : std::numeric_limits<double>::quiet_NaN();
}

Backend parse_backend(const std::string& s) {
  if (s == "cpu") return Backend::Cpu;
  if (s == "cuda") return Backend::Cuda;
  throw InputError("unknown backend '" + s + "' (valid: cpu, cuda)");
}

Precision parse_precision(const std::string& s) {
  if (s == "fp32" || s == "float") return Precision::Fp32;
  if (s == "fp64" || s == "double") return Precision::Fp64;
  throw InputError("unknown precision '" + s + "' (valid: fp32, fp64)");
}

void MethodRegistry::add(MethodEntry entry) {
  for (const auto& e : entries_)
    if (e.method == entry.method && e.backend == entry.backend && e.precision == entry.precision)
      throw std::logic_error("method registered twice: " + e.method + "/" + to_string(e.backend) + "/" +
                             to_string(e.precision));
  entries_.push_back(std::move(entry));
}

std::vector<std::string> MethodRegistry::method_names() const {
  std::set<std::string> names;
  for (const auto& e : entries_) names.insert(e.method);
  return {names.begin(), names.end()};
}

const MethodEntry& MethodRegistry::find(const std::string& method, Backend backend, Precision precision) const {
  for (const auto& e : entries_)
    if (e.method == method && e.backend == backend && e.precision == precision) return e;
  std::string msg;
  const auto names = method_names();
  if (std::find(names.begin(), names.end(), method) == names.end()) {
    msg = "unknown method '" + method + "'";
  } else {
    msg = "method '" + method + "' has no " + to_string(backend) + "/" + to_string(precision) +
          " implementation in this build";
  }
  msg += "; available (method backend precision):";
  if (entries_.empty()) msg += " none";
  for (const auto& e : entries_) msg += "\n  " + e.method + " " + to_string(e.backend) + " " + to_string(e.precision);
  throw InputError(msg);
}

}  // namespace eb
