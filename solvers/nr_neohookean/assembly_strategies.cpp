#include <algorithm>

#include "meshes/errors.h"
#include "solvers/nr_neohookean/assembly_strategy.h"

namespace eb::nr_neohookean {

#define EB_NR_STRATEGY(fn, cli, where, det, summary)                          \
  template <class T>                                                           \
  std::unique_ptr<AssemblyStrategy<T>> make_##fn(const AssemblyProblem<T>&);   \
  template <class T>                                                           \
  std::size_t estimate_##fn(const AssemblyProblem<T>&);
#include "solvers/nr_neohookean/assembly_strategy_list.h"
#undef EB_NR_STRATEGY

const std::vector<StrategyInfo>& assembly_strategies() {
  static const std::vector<StrategyInfo> table = {
#define EB_NR_STRATEGY(fn, cli, where, det, summary) \
  StrategyInfo{cli,               linalg::Location::where, det,  summary, &make_##fn<float>, &make_##fn<double>, \
               &estimate_##fn<float>, &estimate_##fn<double>},
#include "solvers/nr_neohookean/assembly_strategy_list.h"
#undef EB_NR_STRATEGY
  };
  return table;
}

const StrategyInfo& find_strategy(const std::string& name) {
  const auto& t = assembly_strategies();
  auto it = std::find_if(t.begin(), t.end(), [&](const StrategyInfo& s) { return s.name == name; });
  if (it != t.end()) return *it;
  std::string names;
  for (const auto& s : t) names += (names.empty() ? "" : ", ") + s.name;
  throw InputError("nr-neohookean: unknown assembly strategy '" + name + "' (this build has: " + names + ")");
}

template <class T>
std::unique_ptr<AssemblyStrategy<T>> make_strategy(const std::string& name, const AssemblyProblem<T>& problem) {
  const StrategyInfo& s = find_strategy(name);
  if constexpr (std::is_same_v<T, float>)
    return s.make_f32(problem);
  else
    return s.make_f64(problem);
}

template <class T>
std::size_t estimate_strategy_bytes(const std::string& name, const AssemblyProblem<T>& problem) {
  const StrategyInfo& s = find_strategy(name);
  if constexpr (std::is_same_v<T, float>)
    return s.estimate_f32(problem);
  else
    return s.estimate_f64(problem);
}

template <class T>
double compulsory_assembly_bytes(const AssemblyProblem<T>& p) {
  const double E = double(p.elements), N = double(p.nodes);
  const double values = double(p.map->value_count);
  return sizeof(T) * (3 * N            // positions
                      + E * tet::supplemental_size(p.form)  // S(e)
                      + values         // tangent values, written once
                      + 3 * N)         // force, written once
         + sizeof(int32_t) * 4 * E;    // connectivity
}

// Counted from neo_hookean.h: F (27 mul-add = 54), det + cofactor inverse (~40), log 1 (~20),
// P (27), forces (4 x 9 mul-add x 2 + 12 = 84), dP/dF (81 x 5 = 405), tangent (4 x 3 x (9 x 6 +
// 4 x 3 x 6) = 1512).
double element_routine_flops() { return 54 + 40 + 20 + 27 + 84 + 405 + 1512; }

template std::unique_ptr<AssemblyStrategy<float>> make_strategy(const std::string&, const AssemblyProblem<float>&);
template std::unique_ptr<AssemblyStrategy<double>> make_strategy(const std::string&, const AssemblyProblem<double>&);
template std::size_t estimate_strategy_bytes(const std::string&, const AssemblyProblem<float>&);
template std::size_t estimate_strategy_bytes(const std::string&, const AssemblyProblem<double>&);
template double compulsory_assembly_bytes(const AssemblyProblem<float>&);
template double compulsory_assembly_bytes(const AssemblyProblem<double>&);

}  // namespace eb::nr_neohookean
