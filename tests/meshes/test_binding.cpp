// Render-surface binding: linear (tets) and trilinear (hexes) interpolation reproduce affine
// displacement fields exactly, inside the mesh and (by extrapolation) just outside it.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "mesh_test_util.h"
#include "meshes/box.h"
#include "meshes/mesh_io.h"
#include "meshes/render_binding.h"
#include "meshes/sphere.h"

namespace eb::mesh {
namespace {

Vec3 affine(const Vec3& x) {
  return {0.1 * x[0] - 0.2 * x[1] + 0.05 * x[2] + 0.01, 0.03 * x[0] + 0.2 * x[2] - 0.02,
          -0.07 * x[1] + 0.11 * x[2] + 0.3 * x[0]};
}

template <typename Mesh>
void expect_affine_reproduced(const Mesh& m, const TriSurface& s) {
  const SurfaceBinding b = bind_surface(s, m);
  std::vector<Vec3> u(m.nodes.size());
  for (size_t i = 0; i < u.size(); ++i) u[i] = affine(m.nodes[i]);
  const auto us = surface_displacement(b, u);
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const Vec3 e = affine(s.nodes[i]);
    for (size_t d = 0; d < 3; ++d) ASSERT_NEAR(us[i][d], e[d], 1e-12) << "vertex " << i;
    double wsum = 0;
    for (int k = 0; k < b.nodes_per_element; ++k) wsum += b.weights[i][size_t(k)];
    ASSERT_NEAR(wsum, 1.0, 1e-12);
  }
}

TEST(Binding, TetMeshBarycentric) {
  const TetMesh m = make_box_tet({-1, -1, -1}, {2, 2, 2}, {6, 6, 6}, 5);
  const TriSurface inside = make_icosphere(3, 0.9);
  expect_affine_reproduced(m, inside);
  const SurfaceBinding b = bind_surface(inside, m);
  for (double o : b.outside) EXPECT_LE(o, 1e-12);  // every vertex found in its containing tet
  // Vertices outside the mesh extrapolate from the nearest element.
  expect_affine_reproduced(m, make_icosphere(2, 1.03));
}

TEST(Binding, DistortedHexMeshTrilinear) {
  HexMesh m = make_box_hex({-1, -1, -1}, {2, 2, 2}, {5, 5, 5});
  for (auto& p : m.nodes) {
    const double s = 0.05 * std::sin(3 * p[0] + 2 * p[1]) * (1 - p[2] * p[2]);
    p[0] += s;
    p[1] -= 0.5 * s;
  }
  expect_affine_reproduced(m, make_icosphere(3, 0.8));
}

TEST(Binding, DeformedSurfaceSeriesIsWritten) {
  const auto dir = test::temp_dir("series");
  const TetMesh m = make_box_tet({-1, -1, -1}, {2, 2, 2}, {3, 3, 3}, 6);
  const TriSurface s = make_icosphere(2, 0.5);
  DeformedSurfaceWriter w(dir, "skin", s, bind_surface(s, m));
  std::vector<Vec3> u(m.nodes.size());
  for (int f = 0; f < 3; ++f) {
    for (size_t i = 0; i < u.size(); ++i) u[i] = {0.1 * f * m.nodes[i][0], 0, 0};
    const auto path = w.write_frame(0.1 * f, u);
    const TriSurface back = read_surface(path);
    ASSERT_EQ(back.nodes.size(), s.nodes.size());
    for (size_t i = 0; i < s.nodes.size(); ++i) ASSERT_NEAR(back.nodes[i][0], s.nodes[i][0] * (1 + 0.1 * f), 1e-12);
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "skin.pvd"));
  EXPECT_TRUE(std::filesystem::exists(dir / "skin_00002.vtp"));
}

}  // namespace
}  // namespace eb::mesh
