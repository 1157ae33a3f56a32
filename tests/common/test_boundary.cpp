#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "meshes/box.h"
#include "meshes/errors.h"
#include "solvers/common/boundary.h"

namespace {
const eb::Vec3 kOrigin{0, 0, 0};

// A downward traction of 3 on the x = 2 end of the 2 x 1 x 0.5 box.
eb::BoundarySpec traction_on_end() {
  eb::BoundarySpec spec;
  eb::SurfaceForce sf;
  sf.where.kind = "plane";
  sf.where.point = {2.0, 0, 0};
  sf.where.normal = {1, 0, 0};
  sf.traction = {0, 0, -3.0};
  spec.surface_forces.push_back(sf);
  return spec;
}
}  // namespace

TEST(Boundary, CubeCompressionConstraints) {
  const int n = 4;
  const auto mesh = eb::mesh::make_box_hex(kOrigin, {0.05, 0.05, 0.05}, {n, n, n});
  const auto s = eb::load_scenario("cube-compression", {"mesh.elements_per_edge=4"});
  const auto rb = eb::resolve_boundary(s.boundary, mesh.nodes, eb::boundary_faces(mesh));
  for (size_t i = 0; i < mesh.nodes.size(); ++i) {
    const auto& x = mesh.nodes[i];
    // Expected mask from the definition: z on the bottom and top faces, x on x = 0, y on y = 0.
    uint8_t want = 0;
    if (x[0] == 0.0) want |= 1;
    if (x[1] == 0.0) want |= 2;
    if (x[2] == 0.0 || std::abs(x[2] - 0.05) < 1e-12) want |= 4;
    EXPECT_EQ(rb.constrained[i], want) << "node " << i << " at " << x[0] << "," << x[1] << "," << x[2];
  }
  int prescribed = 0;
  for (const auto& p : rb.prescribed) {
    EXPECT_EQ(p.mask, 4);
    EXPECT_NEAR(mesh.nodes[p.node][2], 0.05, 1e-12);
    EXPECT_DOUBLE_EQ(p.displacement[2], -0.01);
    ++prescribed;
  }
  EXPECT_EQ(prescribed, (n + 1) * (n + 1));
  EXPECT_DOUBLE_EQ(rb.loads_complete_time(), 5.0);
  EXPECT_DOUBLE_EQ(rb.factor(rb.prescribed[0].curve, 2.5), 0.5);
}

TEST(Boundary, SurfaceTractionIntegratesToTractionTimesArea) {
  const auto mesh = eb::mesh::make_box_tet(kOrigin, {2.0, 1.0, 0.5}, {4, 3, 2}, 6);
  const eb::BoundarySpec spec = traction_on_end();
  const auto rb = eb::resolve_boundary(spec, mesh.nodes, eb::boundary_faces(mesh));
  double fz = 0.0;
  for (const auto& f : rb.forces) {
    EXPECT_NEAR(mesh.nodes[f.node][0], 2.0, 1e-12);
    fz += f.force[2];
  }
  EXPECT_NEAR(fz, -3.0 * 1.0 * 0.5, 1e-12);
}

TEST(Boundary, BoundaryFaceCounts) {
  const int nx = 3, ny = 2, nz = 4;
  const auto hex = eb::mesh::make_box_hex(kOrigin, {3, 2, 4}, {nx, ny, nz});
  EXPECT_EQ(eb::boundary_faces(hex).size(), size_t(2 * (nx * ny + ny * nz + nx * nz)));
  for (int per : {5, 6}) {
    const auto tet = eb::mesh::make_box_tet(kOrigin, {3, 2, 4}, {nx, ny, nz}, per);
    // Conforming split: every boundary square is cut into exactly two triangles.
    EXPECT_EQ(eb::boundary_faces(tet).size(), size_t(4 * (nx * ny + ny * nz + nx * nz))) << per;
  }
}

TEST(Boundary, SelectorsAndErrors) {
  const auto mesh = eb::mesh::make_box_hex(kOrigin, {1, 1, 1}, {2, 2, 2});
  eb::NodeSelector all;
  all.kind = "all";
  EXPECT_EQ(eb::select_nodes(all, mesh.nodes).size(), 27u);
  eb::NodeSelector plane;
  plane.kind = "plane";
  plane.point = {0.5, 0.5, 0.5};
  plane.normal = {1, 1, 0};  // the diagonal plane x + y = 1
  EXPECT_EQ(eb::select_nodes(plane, mesh.nodes).size(), 9u);
  eb::BoundarySpec spec;
  eb::FixedBC f;
  f.where.min = {5, 5, 5};
  f.where.max = {6, 6, 6};
  spec.fixed.push_back(f);
  try {
    eb::resolve_boundary(spec, mesh.nodes, eb::boundary_faces(mesh));
    FAIL();
  } catch (const eb::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("boundary.fixed.0 selects no node"), std::string::npos) << e.what();
  }
  const int32_t near = eb::nearest_node(mesh.nodes, {0.9, 1.2, -0.1});
  EXPECT_EQ(mesh.nodes[near], (eb::Vec3{1.0, 1.0, 0.0}));
}

namespace {
// The oracle: each element face counted in a map keyed by its sorted nodes, in key order, the face
// as its element lists it (the definition boundary_faces implements with a sorted array).
template <size_t N, size_t F, size_t K>
std::vector<std::vector<int32_t>> faces_by_map(const std::vector<std::array<int32_t, N>>& elems, const int (&table)[F][K]) {
  std::map<std::array<int32_t, K>, std::pair<int, std::vector<int32_t>>> count;
  for (const auto& e : elems)
    for (size_t f = 0; f < F; ++f) {
      std::vector<int32_t> face(K);
      std::array<int32_t, K> key{};
      for (size_t k = 0; k < K; ++k) key[k] = face[k] = e[table[f][k]];
      std::sort(key.begin(), key.end());
      auto& slot = count[key];
      if (slot.first++ == 0) slot.second = face;
    }
  std::vector<std::vector<int32_t>> out;
  for (auto& [key, slot] : count)
    if (slot.first == 1) out.push_back(slot.second);
  return out;
}
}  // namespace

TEST(Boundary, BoundaryFacesMatchTheCountingDefinitionInOrderAndOrientation) {
  static constexpr int kTet[4][3] = {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}};
  static constexpr int kHex[6][4] = {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};
  auto hex = eb::mesh::make_box_hex(kOrigin, {3, 2, 4}, {5, 3, 4});
  // Elements in a scrambled order: the result may not depend on it beyond the documented key order.
  std::reverse(hex.elems.begin(), hex.elems.end());
  EXPECT_EQ(eb::boundary_faces(hex), faces_by_map(hex.elems, kHex));
  for (int per : {5, 6}) {
    auto tet = eb::mesh::make_box_tet(kOrigin, {3, 2, 4}, {4, 3, 5}, per);
    std::rotate(tet.elems.begin(), tet.elems.begin() + long(tet.elems.size() / 3), tet.elems.end());
    EXPECT_EQ(eb::boundary_faces(tet), faces_by_map(tet.elems, kTet)) << per;
  }
}

TEST(Boundary, MeshOverloadFindsFacesOnlyForSurfaceForces) {
  const auto mesh = eb::mesh::make_box_tet(kOrigin, {2.0, 1.0, 0.5}, {4, 3, 2}, 6);
  const eb::BoundarySpec spec = traction_on_end();
  const auto a = eb::resolve_boundary(spec, mesh.nodes, mesh);
  const auto b = eb::resolve_boundary(spec, mesh.nodes, eb::boundary_faces(mesh));
  ASSERT_EQ(a.forces.size(), b.forces.size());
  for (size_t i = 0; i < a.forces.size(); ++i) {
    EXPECT_EQ(a.forces[i].node, b.forces[i].node);
    EXPECT_EQ(a.forces[i].force, b.forces[i].force);
  }
  // Without surface forces no face is needed; a fixed end still resolves.
  eb::BoundarySpec fixed;
  eb::FixedBC fs;
  fs.where.kind = "plane";
  fs.where.point = {0, 0, 0};
  fs.where.normal = {1, 0, 0};
  fs.components = "xyz";
  fixed.fixed.push_back(fs);
  EXPECT_EQ(eb::resolve_boundary(fixed, mesh.nodes, mesh).constrained,
            eb::resolve_boundary(fixed, mesh.nodes, eb::boundary_faces(mesh)).constrained);
}
