// The shared tet model (solvers/tet_model): reference geometry of every element against its
// definition, the element order, refusals that name the element, loads merged per node and
// curve, and a model that does not depend on the node numbering.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "meshes/errors.h"
#include "solvers/common/scenario.h"
#include "solvers/tet_model/tet_model.h"

namespace eb::tet::test {
namespace {

// A 4 x 2 x 2 cm box of 1 cm cubes, 6 tetrahedra each, clamped at x = 0, with a point force and a
// surface traction on the face x = 0.04 (the point force's node carries both: merged when they
// share a curve), gravity and damping.
Scenario box(const std::vector<std::string>& overrides = {}) {
  const std::string toml = R"(name = "tet-model-box"
[mesh]
source = "box"
size = [0.04, 0.02, 0.02]
element_size = 0.01
tets_per_cube = 6
[material]
youngs_modulus = 1.0e5
poisson_ratio = 0.3
density = 1000.0
[boundary]
gravity = [0.0, 0.0, -9.81]
[[boundary.fixed]]
components = "xyz"
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }
[[boundary.point_forces]]
position = [0.04, 0.02, 0.02]
force = [0.001, -0.002, 0.003]
curve = { shape = "linear", start = 0.0, duration = 0.05 }
[[boundary.surface_forces]]
traction = [0.0, 10.0, -4.0]
where = { kind = "plane", point = [0.04, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }
curve = { shape = "linear", start = 0.0, duration = 0.05 }
[time]
dt = 0.002
end_time = 1.0
damping = 2.0
)";
  nlohmann::json doc = parse_scenario_text(toml, "toml", "tet model test");
  for (const auto& o : overrides) apply_override(doc, o);
  Scenario s = scenario_from_json(doc, "tet model test");
  validate_scenario(s);
  return s;
}

TetModelOptions options(mesh::NodeOrdering order = mesh::NodeOrdering::Rcm) {
  TetModelOptions o;
  o.method = "tet-test";
  o.node_order = order;
  return o;
}

std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(TetModel, ReferenceGeometryIsTheElementsEdgesAndVolume) {
  const TetModel m = build_tet_model(box(), RunOptions{}, options());
  ASSERT_EQ(m.num_elements, 4 * 2 * 2 * 6);
  ASSERT_EQ(m.num_nodes, 5 * 3 * 3);
  ASSERT_EQ(m.connectivity.size(), 4 * size_t(m.num_elements));
  double total = 0;
  for (int64_t e = 0; e < m.num_elements; ++e) {
    const auto X = [&](int a, int i) { return m.nodes[size_t(m.connectivity[size_t(4 * e + a)])][size_t(i)]; };
    const double* Dm = &m.Dm[size_t(9 * e)];
    const double* Dinv = &m.Dm_inv[size_t(9 * e)];
    for (int i = 0; i < 3; ++i)
      for (int a = 0; a < 3; ++a) EXPECT_EQ(Dm[3 * i + a], X(a + 1, i) - X(0, i)) << "element " << e;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double p = 0;
        for (int k = 0; k < 3; ++k) p += Dm[3 * i + k] * Dinv[3 * k + j];
        EXPECT_NEAR(p, i == j ? 1.0 : 0.0, 1e-12) << "Dm Dm^-1, element " << e;
      }
    const double det = Dm[0] * (Dm[4] * Dm[8] - Dm[5] * Dm[7]) - Dm[1] * (Dm[3] * Dm[8] - Dm[5] * Dm[6]) +
                       Dm[2] * (Dm[3] * Dm[7] - Dm[4] * Dm[6]);
    EXPECT_GT(det, 0) << "element " << e << " is positively oriented";
    EXPECT_NEAR(m.volume[size_t(e)], det / 6, 1e-12 * std::abs(det));
    total += m.volume[size_t(e)];
  }
  EXPECT_NEAR(total, 0.04 * 0.02 * 0.02, 1e-15);
  EXPECT_EQ(m.min_volume, *std::min_element(m.volume.begin(), m.volume.end()));
  EXPECT_EQ(m.max_volume, *std::max_element(m.volume.begin(), m.volume.end()));
}

TEST(TetModel, ElementsAreSortedByTheirLowestNode) {
  const TetModel m = build_tet_model(box(), RunOptions{}, options());
  int32_t previous = -1;
  for (int64_t e = 0; e < m.num_elements; ++e) {
    const int32_t* c = &m.connectivity[size_t(4 * e)];
    const int32_t lowest = *std::min_element(c, c + 4);
    EXPECT_GE(lowest, previous) << "element " << e;
    previous = lowest;
  }
}

TEST(TetModel, MaterialTimeAndBoundary) {
  const TetModel m = build_tet_model(box(), RunOptions{}, options());
  const ElasticConstants ec = elastic_constants(1.0e5, 0.3);
  EXPECT_EQ(m.youngs, 1.0e5);
  EXPECT_EQ(m.poisson, 0.3);
  EXPECT_EQ(m.lambda, ec.lambda);
  EXPECT_EQ(m.mu, ec.mu);
  EXPECT_EQ(m.density, 1000.0);
  EXPECT_EQ(m.damping, 2.0 * 1000.0);
  EXPECT_EQ(m.dt, 0.002);
  EXPECT_EQ(m.gravity[2], -9.81);
  ASSERT_EQ(m.constrained.size(), size_t(m.num_nodes));
  ASSERT_EQ(m.fixed_any.size(), size_t(m.num_nodes));
  for (int64_t n = 0; n < m.num_nodes; ++n) {
    const bool at_x0 = m.nodes[size_t(n)][0] == 0.0;
    EXPECT_EQ(m.constrained[size_t(n)], at_x0 ? 7 : 0) << "node " << n;
    EXPECT_EQ(m.fixed_any[size_t(n)], at_x0 ? 1 : 0) << "node " << n;
  }
  // time.dt unset: the method's default.
  TetModelOptions o = options();
  o.default_dt = 0.25;
  EXPECT_EQ(build_tet_model(box({"time.dt=0.0"}), RunOptions{}, o).dt, 0.25);
}

TEST(TetModel, LoadsAreMergedPerNodeAndCurveAndSortedByNode) {
  const TetModel m = build_tet_model(box(), RunOptions{}, options());
  // One curve shared by both loads (identical curves are listed once) or two: either way one
  // entry per node and curve, sorted by node, with the forces summed.
  for (size_t k = 1; k < m.loads.size(); ++k) {
    EXPECT_LE(m.loads[k - 1].node, m.loads[k].node);
    EXPECT_FALSE(m.loads[k - 1].node == m.loads[k].node && m.loads[k - 1].curve == m.loads[k].curve);
  }
  // The face x = 0.04 has 3 x 3 nodes; the traction's total is traction x area, the point force
  // adds its own.
  double sum[3] = {0, 0, 0};
  std::map<int32_t, int> entries;
  for (const NodeLoad& l : m.loads) {
    EXPECT_EQ(m.nodes[size_t(l.node)][0], 0.04) << "loaded node " << l.node;
    ++entries[l.node];
    for (int d = 0; d < 3; ++d) sum[d] += l.force[d];
  }
  EXPECT_EQ(entries.size(), 9u);
  const double area = 0.02 * 0.02;
  EXPECT_NEAR(sum[0], 0.001, 1e-15);
  EXPECT_NEAR(sum[1], 10.0 * area - 0.002, 1e-15);
  EXPECT_NEAR(sum[2], -4.0 * area + 0.003, 1e-15);

  // merge_loads itself: the same node and curve summed, another curve kept apart, sorted by node
  // and, within a node, in order of first appearance.
  const std::vector<NodalForce> forces = {
      {5, {1, 0, 0}, 0}, {2, {0, 1, 0}, 1}, {5, {0, 0, 2}, 0}, {5, {3, 0, 0}, 1}, {2, {0, 4, 0}, 1}};
  const std::vector<NodeLoad> merged = merge_loads(forces);
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].node, 2);
  EXPECT_EQ(merged[0].curve, 1);
  EXPECT_EQ(merged[0].force[1], 5.0);
  EXPECT_EQ(merged[1].node, 5);
  EXPECT_EQ(merged[1].curve, 0);
  EXPECT_EQ(merged[1].force[0], 1.0);
  EXPECT_EQ(merged[1].force[2], 2.0);
  EXPECT_EQ(merged[2].node, 5);
  EXPECT_EQ(merged[2].curve, 1);
  EXPECT_EQ(merged[2].force[0], 3.0);
}

// The model in RCM order is the model in the mesh's own order, renumbered: the same nodes, the
// same elements (as sets of node positions) with the same volumes, the same supports and loads.
TEST(TetModel, NodeOrderOnlyRenumbers) {
  const TetModel a = build_tet_model(box(), RunOptions{}, options(mesh::NodeOrdering::None));
  const TetModel b = build_tet_model(box(), RunOptions{}, options(mesh::NodeOrdering::Rcm));
  ASSERT_EQ(a.num_nodes, b.num_nodes);
  ASSERT_EQ(a.num_elements, b.num_elements);
  std::map<mesh::Vec3, int32_t> index_in_a;
  for (int64_t n = 0; n < a.num_nodes; ++n) index_in_a[a.nodes[size_t(n)]] = int32_t(n);
  ASSERT_EQ(index_in_a.size(), size_t(a.num_nodes));
  std::vector<int32_t> to_a(size_t(b.num_nodes));
  bool renumbered = false;
  for (int64_t n = 0; n < b.num_nodes; ++n) {
    const auto it = index_in_a.find(b.nodes[size_t(n)]);
    ASSERT_NE(it, index_in_a.end()) << "node " << n << " of the RCM model is not a node of the other";
    to_a[size_t(n)] = it->second;
    renumbered |= it->second != n;
    EXPECT_EQ(b.constrained[size_t(n)], a.constrained[size_t(it->second)]);
  }
  EXPECT_TRUE(renumbered) << "RCM left the box's numbering as it was: the test shows nothing";
  // Elements as sorted node sets of the first model's numbering, with their volumes.
  auto elements = [](const TetModel& m, const std::vector<int32_t>* map) {
    std::map<std::array<int32_t, 4>, double> out;
    for (int64_t e = 0; e < m.num_elements; ++e) {
      std::array<int32_t, 4> k;
      for (int j = 0; j < 4; ++j) {
        const int32_t n = m.connectivity[size_t(4 * e + j)];
        k[size_t(j)] = map ? (*map)[size_t(n)] : n;
      }
      std::sort(k.begin(), k.end());
      out[k] = m.volume[size_t(e)];
    }
    return out;
  };
  const auto ea = elements(a, nullptr), eb = elements(b, &to_a);
  ASSERT_EQ(ea.size(), eb.size());
  for (const auto& [k, v] : ea) {
    const auto it = eb.find(k);
    ASSERT_NE(it, eb.end());
    EXPECT_NEAR(it->second, v, 1e-15 * v * 1e3);
  }
  // Loads: the same force on the same node position.
  std::map<std::pair<int32_t, int>, std::array<double, 3>> la, lb;
  for (const NodeLoad& l : a.loads) la[{l.node, l.curve}] = {l.force[0], l.force[1], l.force[2]};
  for (const NodeLoad& l : b.loads) lb[{to_a[size_t(l.node)], l.curve}] = {l.force[0], l.force[1], l.force[2]};
  ASSERT_EQ(la.size(), lb.size());
  for (const auto& [k, f] : la) {
    ASSERT_TRUE(lb.count(k));
    for (int d = 0; d < 3; ++d) EXPECT_NEAR(lb[k][size_t(d)], f[size_t(d)], 1e-15);
  }
}

// Two tetrahedra sharing a face; `second` replaces the second one's corners.
TetModel two_tets(const std::array<int32_t, 4>& second, const mesh::Vec3& fifth = {0.02, 0.02, 0.02}) {
  TetModel m;
  m.nodes = {{0, 0, 0}, {0.02, 0, 0}, {0, 0.02, 0}, {0, 0, 0.02}, fifth};
  m.connectivity = {0, 1, 2, 3, second[0], second[1], second[2], second[3]};
  m.num_nodes = 5;
  m.num_elements = 2;
  return m;
}

TEST(TetModel, InvertedDegenerateAndNonFiniteReferenceElementsAreRefusedByName) {
  {
    TetModel m = two_tets({1, 2, 3, 4});
    set_reference_geometry(m, "tet-test");  // positively oriented: accepted
    EXPECT_GT(m.volume[1], 0);
  }
  {
    TetModel m = two_tets({1, 3, 2, 4});  // corners 2 and 3 swapped: negative volume
    const std::string msg = input_error([&] { set_reference_geometry(m, "tet-test"); });
    EXPECT_EQ(msg, "tet-test: element 1 (nodes 1 3 2 4) is inverted (negative volume) in the reference configuration");
  }
  {
    TetModel m = two_tets({1, 2, 0, 4}, {0.01, 0.01, 0.0});  // all four corners in the plane z = 0
    const std::string msg = input_error([&] { set_reference_geometry(m, "tet-test"); });
    EXPECT_EQ(msg, "tet-test: element 1 (nodes 1 2 0 4) is degenerate (zero volume) in the reference configuration");
  }
  {
    TetModel m = two_tets({1, 2, 3, 4}, {NAN, 0.02, 0.02});
    const std::string msg = input_error([&] { set_reference_geometry(m, "tet-test"); });
    EXPECT_NE(msg.find("element 1 (nodes 1 2 3 4) is not finite"), std::string::npos) << msg;
  }
}

TEST(TetModel, MaterialAndDampingOutOfRangeAreRefusedNamingTheMethod) {
  // validate_scenario refuses these first where it can: the model's own checks are the last line.
  Scenario s = box();
  s.material.density = 0;
  EXPECT_EQ(input_error([&] { build_tet_model(s, RunOptions{}, options()); }),
            "tet-test: material.density must be positive");
  s = box();
  s.time.damping = -1;
  EXPECT_EQ(input_error([&] { build_tet_model(s, RunOptions{}, options()); }), "tet-test: time.damping must be >= 0");
}

}  // namespace
}  // namespace eb::tet::test
