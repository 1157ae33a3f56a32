// Probe interpolation (experiments/head_to_head/h2h_probe.h) reproduces linear displacement
// fields exactly in hexahedra (trilinear) and tetrahedra (barycentric), inside and on the boundary.
#include <gtest/gtest.h>

#include <random>

#include "experiments/head_to_head/h2h_probe.h"
#include "experiments/head_to_head/h2h_scenes.h"
#include "meshes/box.h"
#include "meshes/geometry.h"
#include "meshes/mesh_spec.h"

namespace eb::head_to_head {
namespace {

Vec3 linear_field(const Vec3& x) {
  return {0.3 + 1.5 * x[0] - 0.2 * x[1] + 0.7 * x[2], -0.1 + 0.4 * x[0] + 2.0 * x[1] - 0.5 * x[2],
          0.05 - 0.9 * x[0] + 0.3 * x[1] + 1.1 * x[2]};
}

template <class Mesh>
void check_exact(const Mesh& m, mesh::CellType cell, size_t per_element) {
  std::vector<int32_t> conn;
  for (const auto& e : m.elems)
    for (size_t k = 0; k < per_element; ++k) conn.push_back(e[k]);
  std::vector<double> u;
  for (const Vec3& x : m.nodes)
    for (double c : linear_field(x)) u.push_back(c);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> ux(0.0, 1.0), uyz(0.0, 0.1);
  std::vector<ProbeSpec> probes = {{"tip", {1.0, 0.05, 0.05}}, {"corner", {0.0, 0.0, 0.0}}};
  for (int i = 0; i < 20; ++i) probes.push_back({"p" + std::to_string(i), {ux(rng), uyz(rng), uyz(rng)}});
  const ProbeBinding b = bind_probes(probes, m.nodes, cell, conn);
  ASSERT_EQ(b.names.size(), probes.size());
  const std::vector<Vec3> got = probe_displacements(b, u);
  for (size_t p = 0; p < probes.size(); ++p) {
    const Vec3 want = linear_field(probes[p].position);
    for (size_t d = 0; d < 3; ++d) EXPECT_NEAR(got[p][d], want[d], 1e-12) << probes[p].name << " component " << d;
  }
  EXPECT_DOUBLE_EQ(probe_error(got, got), 0.0);
}

TEST(HeadToHeadProbe, LinearFieldIsExactInHexahedra) {
  check_exact(mesh::make_box_hex({0, 0, 0}, {1.0, 0.1, 0.1}, {10, 2, 3}), mesh::CellType::Hexahedron, 8);
}

TEST(HeadToHeadProbe, LinearFieldIsExactInTetrahedra) {
  check_exact(mesh::make_box_tet({0, 0, 0}, {1.0, 0.1, 0.1}, {10, 2, 3}, 6), mesh::CellType::Tetra, 4);
  check_exact(mesh::make_box_tet({0, 0, 0}, {1.0, 0.1, 0.1}, {7, 3, 2}, 5), mesh::CellType::Tetra, 4);
}

TEST(HeadToHeadProbe, ErrorIsTheWorstRelativeProbeError) {
  const std::vector<Vec3> ref = {{0, 0, -2}, {1, 0, 0}};
  EXPECT_NEAR(probe_error({{0, 0, -2.02}, {1.005, 0, 0}}, ref), 0.01, 1e-14);
  EXPECT_THROW(probe_error({{0, 0, 0}}, {{0, 0, 0}}), std::exception);
}

// The bunny's probes lie inside a voxel at both --quick levels (4,000 voxels, x8) and the two
// coarser full levels (11,900, x8), and a subdivided level keeps its base's geometry (the same
// bounding box); the finest level (x64) shares the base's geometry by the same construction.
TEST(HeadToHeadProbe, BunnyProbesAreInsideEveryQuickLevel) {
  const Scene* bunny = nullptr;
  for (const Scene& s : corot_scenes())
    if (s.name == "bunny") bunny = &s;
  ASSERT_NE(bunny, nullptr);
  if (!std::filesystem::exists(mesh::default_data_dir() / "bunny.off"))
    GTEST_SKIP() << "bunny.off not found in " << mesh::default_data_dir() << " (third-party data, see SOURCES.md)";
  std::vector<Vec3> box;
  std::vector<double> levels = bunny->quick_levels;
  levels.insert(levels.end(), bunny->levels.begin(), bunny->levels.begin() + 2);
  for (double level : levels) {
    const Scenario sc = scene_scenario(*bunny, mesh_overrides(*bunny, level));
    const mesh::HexMesh m = mesh::build_hex_mesh(sc.mesh, mesh::default_data_dir());
    std::vector<int32_t> conn;
    for (const auto& e : m.elems) conn.insert(conn.end(), e.begin(), e.end());
    const ProbeBinding b = bind_probes(sc.output.probes, m.nodes, mesh::CellType::Hexahedron, conn);
    ASSERT_EQ(b.names.size(), 2u);
    for (size_t p = 0; p < b.names.size(); ++p) EXPECT_EQ(b.binding.outside[p], 0.0) << b.names[p] << " at " << level;
    box.push_back(mesh::bbox_min(m.nodes));
  }
  ASSERT_EQ(box.size(), 4u);
  for (int d = 0; d < 3; ++d) {
    EXPECT_NEAR(box[0][size_t(d)], box[1][size_t(d)], 1e-12);
    EXPECT_NEAR(box[2][size_t(d)], box[3][size_t(d)], 1e-12);
  }
}

}  // namespace
}  // namespace eb::head_to_head
