#pragma once
// What every method promises, checked once for all of them (issue 21, item 4). The parameters of
// each test are generated from the method registry (methods().entries(), MethodInfo), so a method
// is covered the moment it registers. Test instances are named <Backend>/<Suite>.<Test>/<method>_
// <variant>_<backend>_<precision>: the Cpu/ ones carry the ctest label `contract`, the Cuda/ ones
// the label `gpu` and skip themselves without a usable device (tests/contract/CMakeLists.txt).
//
// The scene: the built-in cantilever (1 m beam clamped at x = 0, sagging under gravity) at
// 0.05 m (20 x 2 x 2 cubes; 80 hexahedra, 480 tetrahedra: every method meshes the box its own
// way), each method's own time step (time.dt = 0) and few steps: small enough for 2 CPU cores.
// Besides gravity it carries a point force at the tip on a linear curve and a traction on the
// top face on a smooth one, both on for 0.05 s, so that the first steps of every method (time
// steps from 1e-4 s to 0.01 s) see load factors inside (0, 1), computed on the host or, inside a
// CUDA graph, on the device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "meshes/errors.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/registry.h"
#include "solvers/common/scenario.h"

namespace eb::contract {

// One registered implementation (a MethodEntry without its functions, printable as a parameter).
struct Impl {
  std::string method, variant;
  Backend backend;
  Precision precision;
  const MethodEntry& entry() const { return methods().find(method, variant, backend, precision); }
  const MethodInfo& info() const { return methods().info(method); }
  const VariantInfo& variant_info() const { return *info().variant(variant); }
};

inline std::string identifier(std::string s) {  // gtest names: letters, digits, underscores
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}
inline std::string label(const Impl& i) {
  return i.method + "/" + i.variant + "/" + to_string(i.backend) + "/" + to_string(i.precision);
}
inline std::string impl_name(const ::testing::TestParamInfo<Impl>& i) {
  return identifier(i.param.method + "_" + i.param.variant + "_" + to_string(i.param.backend) + "_" +
                    to_string(i.param.precision));
}
inline void PrintTo(const Impl& i, std::ostream* os) { *os << label(i); }

// Every entry of `backend` for which `keep` holds, in registration order.
inline std::vector<Impl> impls(Backend backend, const std::function<bool(const Impl&)>& keep = nullptr) {
  std::vector<Impl> out;
  for (const MethodEntry& e : methods().entries()) {
    const Impl i{e.method, e.variant, e.backend, e.precision};
    if (e.backend == backend && (!keep || keep(i))) out.push_back(i);
  }
  return out;
}

// Instantiates the value-parameterised suite `suite` once per backend over impls(backend, keep):
// Cpu/... and Cuda/... (the latter empty, and allowed to be, in a build without CUDA).
#define EB_CONTRACT_INSTANTIATE(suite, keep)                                                                    \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(suite);                                                         \
  INSTANTIATE_TEST_SUITE_P(Cpu, suite, ::testing::ValuesIn(::eb::contract::impls(::eb::Backend::Cpu, keep)),   \
                           ::eb::contract::impl_name);                                                          \
  INSTANTIATE_TEST_SUITE_P(Cuda, suite, ::testing::ValuesIn(::eb::contract::impls(::eb::Backend::Cuda, keep)), \
                           ::eb::contract::impl_name)

#define EB_CONTRACT_SKIP_WITHOUT_DEVICE(impl)                                                    \
  do {                                                                                           \
    if ((impl).backend == ::eb::Backend::Cuda && ::eb::cuda_device_count() == 0)                 \
      GTEST_SKIP() << "no usable CUDA device: " << ::eb::cuda_device_info(0).reason;             \
  } while (0)

// The contract scene (see the top of this file) with `overrides` (--set syntax) applied.
inline Scenario scene(const std::vector<std::string>& overrides = {}) {
  std::vector<std::string> o = {
      "mesh.element_size=0.05", "time.dt=0",
      R"(boundary.point_forces=[{"position": [1.0, 0.05, 0.05], "force": [0.0, 0.0, -50.0],
                                 "curve": {"shape": "linear", "duration": 0.05}}])",
      R"(boundary.surface_forces=[{"where": {"kind": "plane", "point": [0.0, 0.0, 0.1], "normal": [0.0, 0.0, 1.0]},
                                   "traction": [0.0, 0.0, -500.0], "curve": {"shape": "smooth", "duration": 0.05}}])"};
  o.insert(o.end(), overrides.begin(), overrides.end());
  return load_scenario("cantilever", o);
}

inline RunOptions run_options(const Impl& i, int threads = 1, std::size_t gpu_memory_limit = 0) {
  RunOptions o;
  o.backend = i.backend;
  o.precision = i.precision;
  o.threads = threads;
  o.gpu_memory_limit = gpu_memory_limit;
  return o;
}

// The scenario as the runner hands it to the factory: solver.variant set to the entry's.
inline Scenario for_impl(Scenario sc, const Impl& i) {
  sc.solver.variant = i.variant;
  return sc;
}

// Builds `i` as the runner does (the registry resolves the scenario first, refusing what the
// method does not take), without running it.
inline std::unique_ptr<Simulation> make(const Impl& i, const Scenario& sc, const RunOptions& o) {
  const Scenario s = for_impl(sc, i);
  methods().resolve(s, i.method, i.backend, i.precision);
  return i.entry().factory(s, o);
}
inline std::unique_ptr<Simulation> make(const Impl& i, const Scenario& sc, int threads = 1) {
  return make(i, sc, run_options(i, threads));
}

struct State {
  std::vector<double> u, v;
};
inline State state_of(Simulation& sim) {
  State s;
  sim.copy_state_to_host(s.u, s.v);
  return s;
}

inline double max_abs(const std::vector<double>& x) {
  double m = 0;
  for (double a : x) m = std::max(m, std::abs(a));
  return m;
}

// max |a - b| / max |b|.
inline double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double d = 0;
  for (size_t k = 0; k < a.size(); ++k) d = std::max(d, std::abs(a[k] - b[k]));
  const double m = max_abs(b);
  return m > 0 ? d / m : d;
}

// "" when `a` and `b` hold the same bits, else where they first differ and how many do.
inline std::string first_bitwise_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return "sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size());
  size_t first = a.size(), count = 0;
  for (size_t k = 0; k < a.size(); ++k)
    if (std::memcmp(&a[k], &b[k], sizeof(double)) != 0 && count++ == 0) first = k;
  if (count == 0) return "";
  return std::to_string(count) + " of " + std::to_string(a.size()) + " entries differ, the first at " +
         std::to_string(first) + ": " + std::to_string(a[first]) + " vs " + std::to_string(b[first]);
}

// The InputError's message, or "" when `f` throws none.
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace eb::contract
