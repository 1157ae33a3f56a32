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

namespace {
double ratio_or_nan(double final_residual, double initial_residual) {
  return initial_residual > 0 ? final_residual / initial_residual : std::numeric_limits<double>::quiet_NaN();
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

bool contains(const std::vector<std::string>& list, const std::string& x) {
  return std::find(list.begin(), list.end(), x) != list.end();
}
}  // namespace

double SolverStats::reduction() const { return ratio_or_nan(final_residual, initial_residual); }
double SolverStats::outer_reduction() const {
  return outer_iterations > 0 ? ratio_or_nan(outer_final_residual, outer_initial_residual)
                              : std::numeric_limits<double>::quiet_NaN();
}

void Simulation::advance(int) { throw std::logic_error("this method has no time stepping (MethodInfo::dynamic)"); }
void Simulation::solve_static(double) {
  throw std::logic_error("this method has no static solve (MethodInfo::static_solve)");
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

const VariantInfo* MethodInfo::variant(const std::string& name) const {
  for (const auto& v : variants)
    if (v.name == name) return &v;
  return nullptr;
}

void MethodRegistry::add_method(MethodInfo info) {
  for (const auto& m : infos_)
    if (m.name == info.name) throw std::logic_error("method declared twice: " + info.name);
  if (info.variants.empty()) throw std::logic_error("method " + info.name + " declares no variant");
  for (const auto& f : info.features)
    if (!contains(scenario_features(), f)) throw std::logic_error("method " + info.name + ": unknown scenario feature " + f);
  infos_.push_back(std::move(info));
}

void MethodRegistry::add(MethodEntry entry) {
  const MethodInfo* m = nullptr;
  for (const auto& i : infos_)
    if (i.name == entry.method) m = &i;
  if (!m) throw std::logic_error("method " + entry.method + " registered before add_method declared it");
  if (!m->variant(entry.variant))
    throw std::logic_error("method " + entry.method + " has no declared variant '" + entry.variant + "'");
  for (const auto& e : entries_)
    if (e.method == entry.method && e.variant == entry.variant && e.backend == entry.backend &&
        e.precision == entry.precision)
      throw std::logic_error("method registered twice: " + e.method + "/" + e.variant + "/" + to_string(e.backend) +
                             "/" + to_string(e.precision));
  entries_.push_back(std::move(entry));
}

std::vector<std::string> MethodRegistry::method_names() const {
  std::set<std::string> names;
  for (const auto& m : infos_) names.insert(m.name);
  return {names.begin(), names.end()};
}

void MethodRegistry::unknown_method(const std::string& method) const {
  std::string msg = "unknown method '" + method + "'; available (method variant backend precision):";
  if (entries_.empty()) msg += " none";
  for (const auto& e : entries_)
    msg += "\n  " + e.method + " " + e.variant + " " + to_string(e.backend) + " " + to_string(e.precision);
  throw InputError(msg);
}

const MethodInfo& MethodRegistry::info(const std::string& method) const {
  for (const auto& m : infos_)
    if (m.name == method) return m;
  unknown_method(method);
}

const MethodEntry& MethodRegistry::find(const std::string& method, const std::string& variant, Backend backend,
                                        Precision precision) const {
  const MethodInfo& m = info(method);
  if (!m.variant(variant)) {
    std::vector<std::string> names;
    for (const auto& v : m.variants) names.push_back(v.name);
    throw InputError("method '" + method + "' has no variant '" + variant + "' (solver.variant or --variant; variants: " +
                     joined(names) + ")");
  }
  std::vector<std::string> have;
  for (const auto& e : entries_) {
    if (e.method != method || e.variant != variant) continue;
    if (e.backend == backend && e.precision == precision) return e;
    have.push_back(to_string(e.backend) + "/" + to_string(e.precision));
  }
  throw InputError("method '" + method + "' variant '" + variant + "' has no " + to_string(backend) + "/" +
                   to_string(precision) + " implementation in this build (it has: " + joined(have) + ")");
}

const MethodEntry& MethodRegistry::find(const std::string& method, Backend backend, Precision precision) const {
  return find(method, info(method).variants.front().name, backend, precision);
}

nlohmann::json MethodRegistry::resolve_section(const MethodInfo& m, const Scenario& sc) const {
  const auto it = sc.method_options.find(m.name);
  const nlohmann::json table = it == sc.method_options.end() ? nlohmann::json() : *it;
  if (m.options.empty()) {
    if (table.is_object() && !table.empty())
      throw InputError("unknown scenario key '" + m.name + "." + table.begin().key() + "': method '" + m.name +
                       "' takes no options");
    return nlohmann::json::object();
  }
  return m.options.resolve(table, m.name);
}

void MethodRegistry::check_sections(const Scenario& sc) const {
  for (auto it = sc.method_options.begin(); it != sc.method_options.end(); ++it) {
    const MethodInfo* m = nullptr;
    for (const auto& i : infos_)
      if (i.name == it.key()) m = &i;
    if (!m)
      throw InputError("unknown scenario key '" + it.key() + "': not a section of the scenario, nor a method of this build (" +
                       joined(method_names()) + ")");
    resolve_section(*m, sc);
  }
}

ResolvedMethod MethodRegistry::resolve(const Scenario& sc, const std::string& method, Backend backend,
                                       Precision precision) const {
  ResolvedMethod r;
  r.info = &info(method);
  const MethodInfo& m = *r.info;
  const std::string variant = sc.solver.variant.empty() ? m.variants.front().name : sc.solver.variant;
  r.entry = &find(method, variant, backend, precision);

  check_sections(sc);
  for (auto it = sc.method_options.begin(); it != sc.method_options.end(); ++it) {
    if (it.key() == method) continue;
    const std::string key = it.value().empty() ? it.key() : it.key() + "." + it.value().begin().key();
    throw InputError("scenario key '" + key + "' belongs to method '" + it.key() + "', not to '" + method +
                     "' (the method of this run)");
  }
  r.options = resolve_section(m, sc);
  const VariantInfo& v = *m.variant(variant);
  if (const auto it = sc.method_options.find(method); it != sc.method_options.end() && !v.keys.empty())
    for (auto k = it->begin(); k != it->end(); ++k)
      if (!contains(v.keys, k.key()))
        throw InputError("scenario key '" + method + "." + k.key() + "' does not apply to variant '" + variant +
                         "' of method '" + method + "' (its keys: " + joined(v.keys) + ")");

  const bool static_run = is_static(sc);
  if (static_run ? !m.static_solve : !m.dynamic) {
    std::vector<std::string> able;
    for (const auto& i : infos_)
      if (static_run ? i.static_solve : i.dynamic) able.push_back(i.name);
    throw InputError(std::string("method '") + method + "' has no " +
                     (static_run ? "static solve (time.mode = \"static\")" : "time stepping (time.mode = \"dynamic\")") +
                     "; methods of this build that have: " + joined(able));
  }
  for (const auto& f : features_used(sc))
    if (!contains(m.features, f)) {
      std::vector<std::string> able;
      for (const auto& i : infos_)
        if (contains(i.features, f)) able.push_back(i.name);
      throw InputError("method '" + method + "' does not implement scenario key '" + f +
                       "', which the scenario turns on; methods of this build that do: " + joined(able));
    }
  return r;
}

nlohmann::json MethodRegistry::describe() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& m : infos_) {
    nlohmann::json variants = nlohmann::json::array();
    for (const auto& v : m.variants) {
      nlohmann::json impl = nlohmann::json::array();
      for (const auto& e : entries_)
        if (e.method == m.name && e.variant == v.name) impl.push_back(to_string(e.backend) + " " + to_string(e.precision));
      variants.push_back({{"name", v.name}, {"summary", v.summary}, {"default", &v == &m.variants.front()},
                          {"deterministic", v.deterministic},
                          {"keys", v.keys.empty() ? nlohmann::json("all") : nlohmann::json(v.keys)},
                          {"implementations", impl}});
    }
    nlohmann::json modes = nlohmann::json::array();
    if (m.dynamic) modes.push_back("dynamic");
    if (m.static_solve) modes.push_back("static");
    out[m.name] = {{"summary", m.summary},
                   {"options", m.options.empty() ? nlohmann::json::object() : m.options.resolve(nullptr, m.name)},
                   {"variants", variants},
                   {"modes", modes},
                   {"features", m.features}};
  }
  return out;
}

}  // namespace eb
