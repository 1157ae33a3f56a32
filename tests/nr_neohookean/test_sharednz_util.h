#pragma once
// Cases for the SharedNZ and coloured strategy tests: a mesh, its supplemental data, a seeded
// random deformed state (no inverted element), some constrained components, a pattern in one
// format and its value map, the AssemblyProblem over them; the CPU assembly of the same pattern
// (cpu-opt on one thread) as the reference, and the comparison.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "meshes/errors.h"
#include "meshes/mesh_io.h"
#include "meshes/sphere.h"
#include "solvers/linalg/element_value_map.h"
#include "solvers/nr_neohookean/assembly_strategy.h"

namespace eb::nr_neohookean::test {

inline std::filesystem::path data_dir() {
  std::filesystem::path d = EB_MESH_DATA_DIR;
  if (const char* env = std::getenv("ELASTOBENCH_DATA"); env && *env) d = env;
  return std::filesystem::is_directory(d) ? d : std::filesystem::path();
}

// Every value-addressed format (BCSR is addressed per block, not by the value map).
inline std::vector<linalg::Format> value_formats() {
  std::vector<linalg::Format> f;
  for (linalg::Format x : linalg::all_formats())
    if (x != linalg::Format::Bcsr) f.push_back(x);
  return f;
}

template <class T>
struct StrategyCase {
  std::string label;
  int64_t nodes = 0;
  std::vector<int32_t> conn;
  std::vector<T> supp;
  std::vector<T> x;
  linalg::AnyMatrix<T> pattern;
  linalg::ElementValueMap map;
  AssemblyProblem<T> problem;
};

// The mesh's case in format `f`: x = X + G X + noise (G entries up to 0.1; each node moved by up
// to 5% of the smallest height of its elements, so that no element inverts), nodes below
// z = -0.7 (of the bounding box, scaled to [-1, 1]) fully constrained and those above y = 0.8 in
// y only, so that dropped entries and zero force rows are exercised.
template <class T>
std::unique_ptr<StrategyCase<T>> make_case(const mesh::TetMesh& m, linalg::Format f, unsigned seed,
                                           tet::SupplementalForm form = tet::SupplementalForm::Full9) {
  auto c = std::make_unique<StrategyCase<T>>();
  c->label = linalg::to_string(f);
  c->nodes = int64_t(m.nodes.size());
  for (const auto& e : m.elems) c->conn.insert(c->conn.end(), e.begin(), e.end());
  const std::size_t E = m.elems.size(), ns = std::size_t(tet::supplemental_size(form));
  c->supp.resize(E * ns);
  std::vector<double> height(m.nodes.size(), 1e300);
  for (std::size_t e = 0; e < E; ++e) {
    double Dm[9], S[9];
    const auto& X0 = m.nodes[std::size_t(m.elems[e][0])];
    for (int k = 0; k < 3; ++k) {
      const auto& Xk = m.nodes[std::size_t(m.elems[e][std::size_t(k) + 1])];
      for (int i = 0; i < 3; ++i) Dm[3 * i + k] = Xk[std::size_t(i)] - X0[std::size_t(i)];
    }
    tet::supplemental_from_dm(Dm, form, S);
    for (std::size_t q = 0; q < ns; ++q) c->supp[e * ns + q] = T(S[q]);
    // Smallest height 3 V / (largest face area) = 1 / (largest row norm of Dm^{-1}, or of grad N_0).
    double Dinv[9];
    tet::supplemental_from_dm(Dm, tet::SupplementalForm::Full9, Dinv);
    double g = 0, g0[3] = {0, 0, 0};
    for (int a = 0; a < 3; ++a) {
      g = std::max(g, std::sqrt(Dinv[3 * a] * Dinv[3 * a] + Dinv[3 * a + 1] * Dinv[3 * a + 1] + Dinv[3 * a + 2] * Dinv[3 * a + 2]));
      for (int i = 0; i < 3; ++i) g0[i] -= Dinv[3 * a + i];
    }
    g = std::max(g, std::sqrt(g0[0] * g0[0] + g0[1] * g0[1] + g0[2] * g0[2]));
    for (int32_t v : m.elems[e]) height[std::size_t(v)] = std::min(height[std::size_t(v)], 1.0 / g);
  }
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  for (const auto& X : m.nodes)
    for (int i = 0; i < 3; ++i) lo[i] = std::min(lo[i], X[std::size_t(i)]), hi[i] = std::max(hi[i], X[std::size_t(i)]);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double G[9];
  for (double& g : G) g = 0.1 * u(rng);
  std::vector<uint8_t> constrained(m.nodes.size(), 0);
  c->x.resize(3 * m.nodes.size());
  for (std::size_t n = 0; n < m.nodes.size(); ++n) {
    const auto& X = m.nodes[n];
    for (int i = 0; i < 3; ++i)
      c->x[3 * n + std::size_t(i)] = T(X[std::size_t(i)] + G[3 * i] * X[0] + G[3 * i + 1] * X[1] + G[3 * i + 2] * X[2] +
                                       0.05 * height[n] * u(rng));
    const double zs = 2 * (X[2] - lo[2]) / (hi[2] - lo[2]) - 1, ys = 2 * (X[1] - lo[1]) / (hi[1] - lo[1]) - 1;
    if (zs < -0.7) constrained[n] = 7;
    else if (ys > 0.8) constrained[n] = 2;
  }
  const auto a = linalg::element_pattern<T>(linalg::Index(c->nodes), 4, c->conn);
  c->pattern = linalg::make_format(a, f);
  c->map = linalg::make_element_value_map(c->pattern, 4, c->conn, constrained);
  c->problem.nodes = c->nodes;
  c->problem.elements = int64_t(E);
  c->problem.connectivity = &c->conn;
  c->problem.form = form;
  c->problem.supplemental = &c->supp;
  c->problem.lame = {T(5), T(2)};
  c->problem.map = &c->map;
  c->problem.threads = 1;
  return c;
}

// Values (flat, value_count) and force of one assembly, with the element checks.
template <class T>
struct Assembled {
  std::vector<T> values, force;
  ElementCheckSlot checks;
};

// A sentinel in every value and force entry before an assembly: what a strategy must not write
// stays so, what it must write shows if it does not.
template <class T>
constexpr T kSentinel = T(-7.25);

// The host targets of flat value storage laid out as the map's segments.
template <class T>
AssemblyTargets<T> host_targets(const linalg::ElementValueMap& map, Assembled<T>& a) {
  AssemblyTargets<T> t;
  int64_t start = 0;
  for (int64_t n : map.segment_sizes) {
    t.values.push(a.values.data() + start, n);
    start += n;
  }
  t.force = a.force.data();
  t.checks = &a.checks;
  t.tangent_scale = T(0.5);  // the scales are applied (Eq. 6 uses dt/2)
  t.force_scale = T(2);
  return t;
}

template <class T>
Assembled<T> fresh(const StrategyCase<T>& c) {
  Assembled<T> a;
  a.values.assign(std::size_t(c.map.value_count), kSentinel<T>);
  a.force.assign(std::size_t(3 * c.nodes), kSentinel<T>);
  return a;
}

// The CPU assembly of the same pattern (cpu-opt, one thread), from the sentinel state.
template <class T>
Assembled<T> cpu_reference(const StrategyCase<T>& c) {
  Assembled<T> a = fresh(c);
  auto s = make_strategy<T>("cpu-opt", c.problem);
  s->assemble(c.x.data(), host_targets(c.map, a));
  return a;
}

// Positions the map addresses (the ones an assembly writes; the rest, ELL padding and dropped
// entries, it must leave alone).
inline std::vector<char> addressed(const linalg::ElementValueMap& map) {
  std::vector<char> a(std::size_t(map.value_count), 0);
  for (int32_t p : map.entry)
    if (p >= 0) a[std::size_t(p)] = 1;
  return a;
}

// Every addressed value and every force entry within tol of the reference, relative to the
// largest reference entry (of the matrix, of the force); the sentinel kept everywhere else; the
// same element checks (the smallest det F within tol).
template <class T>
void expect_close(const Assembled<T>& ref, const Assembled<T>& got, const std::vector<char>& written, double tol,
                  const std::string& what) {
  auto check = [&](const std::vector<T>& r, const std::vector<T>& g, const std::vector<char>* mask, const char* name) {
    ASSERT_EQ(r.size(), g.size());
    double scale = 0;
    for (std::size_t i = 0; i < r.size(); ++i)
      if (!mask || (*mask)[i]) scale = std::max(scale, std::abs(double(r[i])));
    double worst = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (mask && !(*mask)[i]) {
        ASSERT_EQ(g[i], kSentinel<T>) << what << ": " << name << " " << i << " is not addressed but was written";
        continue;
      }
      ASSERT_TRUE(std::isfinite(double(g[i])) && g[i] != kSentinel<T>) << what << ": " << name << " " << i << " not written";
      const double d = std::abs(double(g[i]) - double(r[i]));
      if (d > worst) worst = d, at = i;
    }
    EXPECT_LE(worst, tol * scale) << what << ": " << name << " " << at << " is " << g[at] << ", reference " << r[at];
  };
  check(ref.values, got.values, &written, "value");
  check(ref.force, got.force, nullptr, "force");
  EXPECT_EQ(got.checks.inverted, ref.checks.inverted) << what;
  EXPECT_EQ(got.checks.first_inverted, ref.checks.first_inverted) << what;
  EXPECT_EQ(got.checks.first_nonfinite, ref.checks.first_nonfinite) << what;
  const double dr = det_from_key(ref.checks.min_det_key), dg = det_from_key(got.checks.min_det_key);
  EXPECT_NEAR(dg, dr, tol * std::abs(dr)) << what << ": smallest det F";
}

// fp64: rounding of a sum of ~40 terms; fp32: its precision, a few ulps of the largest entry.
template <class T>
constexpr double tolerance() {
  return std::is_same_v<T, double> ? 1e-12 : 2e-5;
}

}  // namespace eb::nr_neohookean::test
