// Generators: boxes, voxelization, Verschoor voxel tetrahedra, Cecka spheres, Gmsh, mesh specs.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "mesh_test_util.h"
#include "meshes/box.h"
#include "meshes/errors.h"
#include "meshes/geometry.h"
#include "meshes/gmsh_tet.h"
#include "meshes/mesh_io.h"
#include "meshes/mesh_spec.h"
#include "meshes/sphere.h"
#include "meshes/voxelize.h"

namespace eb::mesh {
namespace {

double tet_volume(const TetMesh& m) {
  double v = 0;
  for (const auto& t : m.elems) v += tet_signed_volume(m.nodes[t[0]], m.nodes[t[1]], m.nodes[t[2]], m.nodes[t[3]]);
  return v;
}

// Every face is shared by at most 2 tets, and faces with one tet lie on the domain boundary
// (checked by `on_boundary`): the mesh is conforming.
template <typename OnBoundary>
void expect_conforming(const TetMesh& m, OnBoundary on_boundary) {
  std::map<std::array<int32_t, 3>, int> faces;
  for (const auto& t : m.elems)
    for (int f = 0; f < 4; ++f) {
      std::array<int32_t, 3> key{t[(f + 1) % 4], t[(f + 2) % 4], t[(f + 3) % 4]};
      std::sort(key.begin(), key.end());
      ++faces[key];
    }
  size_t interior = 0;
  for (const auto& [key, count] : faces) {
    ASSERT_LE(count, 2);
    if (count == 2) {
      ++interior;
    } else {
      const Vec3 c{(m.nodes[key[0]][0] + m.nodes[key[1]][0] + m.nodes[key[2]][0]) / 3,
                   (m.nodes[key[0]][1] + m.nodes[key[1]][1] + m.nodes[key[2]][1]) / 3,
                   (m.nodes[key[0]][2] + m.nodes[key[1]][2] + m.nodes[key[2]][2]) / 3};
      ASSERT_TRUE(on_boundary(c)) << "hanging interior face at " << c[0] << " " << c[1] << " " << c[2];
    }
  }
  EXPECT_GT(interior, 0u);
}

TEST(Box, HexBoxCountsVolumeAndQuality) {
  // Strbac 2015: 50 mm cube with 5..45 elements per edge.
  for (int n : {5, 45}) {
    const HexMesh m = make_box_hex({0, 0, 0}, {0.05, 0.05, 0.05}, {n, n, n});
    EXPECT_EQ(m.elems.size(), size_t(n) * n * n);
    EXPECT_EQ(m.nodes.size(), size_t(n + 1) * (n + 1) * (n + 1));
    double v = 0;
    for (const auto& e : m.elems) {
      v += hex_volume(gather(m.nodes, e));
      ASSERT_NEAR(hex_scaled_jacobian(gather(m.nodes, e)), 1.0, 1e-12);
    }
    EXPECT_NEAR(v, 1.25e-4, 1e-15);
  }
  EXPECT_THROW(make_box_hex({0, 0, 0}, {1, 0, 1}, {2, 2, 2}), InputError);
  EXPECT_THROW(make_box_hex({0, 0, 0}, {1, 1, 1}, {2, 0, 2}), InputError);
}

TEST(Box, TetBoxesAreConformingAndPositive) {
  for (int per : {5, 6}) {
    const TetMesh m = make_box_tet({0, 0, 0}, {1, 2, 3}, {3, 4, 5}, per);
    EXPECT_EQ(m.elems.size(), size_t(per) * 60);
    EXPECT_NO_THROW(check_tet_mesh(m, "box"));
    EXPECT_NEAR(tet_volume(m), 6.0, 1e-12);
    expect_conforming(m, [](const Vec3& c) {
      const double e = 1e-12;
      return std::abs(c[0]) < e || std::abs(c[0] - 1) < e || std::abs(c[1]) < e || std::abs(c[1] - 2) < e ||
             std::abs(c[2]) < e || std::abs(c[2] - 3) < e;
    });
  }
  EXPECT_THROW(make_box_tet({0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 4), InputError);
}

TEST(Voxelize, AxisAlignedCubeHitsEdgesAndStillCountsExactly) {
  // Rays through the cube's face diagonals are degenerate and must be re-jittered.
  const HexMesh box = make_box_hex({0, 0, 0}, {1, 1, 1}, {1, 1, 1});
  TriSurface cube;
  cube.nodes = box.nodes;
  const int quads[6][4] = {{0, 3, 2, 1}, {4, 5, 6, 7}, {0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};
  for (const auto& q : quads) {
    cube.tris.push_back({box.elems[0][q[0]], box.elems[0][q[1]], box.elems[0][q[2]]});
    cube.tris.push_back({box.elems[0][q[0]], box.elems[0][q[2]], box.elems[0][q[3]]});
  }
  EXPECT_GT(surface_volume(cube), 0);
  const VoxelMesh v = voxelize(cube, 0.3, "cube");
  EXPECT_EQ(v.cells.size(), 27u);
  // Inward-oriented copy: same voxels (non-zero winding rule).
  for (auto& t : cube.tris) std::swap(t[1], t[2]);
  EXPECT_EQ(voxelize(cube, 0.3, "cube").cells.size(), 27u);
}

TEST(Voxelize, SphereVolumeConvergesToExact) {
  const TriSurface s = make_icosphere(6, 1.0);  // surface error far below the voxel sizes used
  const double exact = 4.0 / 3.0 * M_PI;
  double previous = 1e9;
  for (int res : {8, 16, 32, 64}) {
    const VoxelMesh v = voxelize_resolution(s, res, "sphere");
    const double vol = double(v.cells.size()) * std::pow(v.spacing, 3);
    const double err = std::abs(vol - exact) / exact;
    EXPECT_LT(err, previous * 1.05 + 1e-3) << "resolution " << res;
    previous = std::min(previous, err);
    if (res == 64) {
      EXPECT_LT(err, 0.01);
    }
  }
}

TEST(Voxelize, TargetCountAndVerschoorTets) {
  const TriSurface s = make_icosphere(4, 0.5, {1, 2, 3});
  const VoxelMesh v = voxelize_target(s, 5000, "sphere");
  EXPECT_NEAR(double(v.cells.size()), 5000.0, 0.03 * 5000);
  const TetMesh t = voxel_to_tet(v, 6);
  EXPECT_EQ(t.elems.size(), 6 * v.cells.size());
  EXPECT_NO_THROW(check_tet_mesh(t, "verschoor"));
  // Equal-size tetrahedra (Verschoor 2012), and they fill the voxels exactly.
  const double expected = std::pow(v.spacing, 3) / 6.0;
  for (const auto& e : t.elems)
    ASSERT_NEAR(tet_signed_volume(t.nodes[e[0]], t.nodes[e[1]], t.nodes[e[2]], t.nodes[e[3]]), expected, 1e-9 * expected);
  EXPECT_NEAR(tet_volume(t), double(v.cells.size()) * std::pow(v.spacing, 3), 1e-9);
  // Conformity of both splits on a holed voxel model: a free face must be a voxel-model face.
  for (int per : {5, 6}) {
    const TetMesh tt = voxel_to_tet(v, per);
    expect_conforming(tt, [&](const Vec3&) { return true; });
    std::map<std::array<int32_t, 3>, int> faces;
    size_t free_faces = 0;
    for (const auto& e : tt.elems)
      for (int f = 0; f < 4; ++f) {
        std::array<int32_t, 3> key{e[(f + 1) % 4], e[(f + 2) % 4], e[(f + 3) % 4]};
        std::sort(key.begin(), key.end());
        ++faces[key];
      }
    for (const auto& [k, c] : faces) free_faces += c == 1;
    // The voxel model's surface has 2 triangles per exposed voxel face; no more free faces.
    const HexMesh hex = voxel_to_hex(v);
    std::map<std::array<int32_t, 4>, int> quads;
    const int qf[6][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};
    for (const auto& h : hex.elems)
      for (const auto& q : qf) {
        std::array<int32_t, 4> key{h[q[0]], h[q[1]], h[q[2]], h[q[3]]};
        std::sort(key.begin(), key.end());
        ++quads[key];
      }
    size_t exposed = 0;
    for (const auto& [k, c] : quads) exposed += c == 1;
    EXPECT_EQ(free_faces, 2 * exposed) << per << " tets per cube";
  }
}

TEST(Voxelize, SubdivisionKeepsTheVoxelGeometry) {
  const TriSurface s = make_icosphere(3, 0.5, {1, 2, 3});
  const VoxelMesh v = voxelize_target(s, 400, "sphere");
  const VoxelMesh v2 = subdivide_voxels(v, 2, "sphere");
  const VoxelMesh v3 = subdivide_voxels(v, 3, "sphere");
  EXPECT_EQ(v2.cells.size(), 8 * v.cells.size());
  EXPECT_EQ(v3.cells.size(), 27 * v.cells.size());
  EXPECT_DOUBLE_EQ(v3.spacing, v.spacing / 3);
  // Every sub-voxel lies in a voxel of the original, and each original voxel holds n^3 of them:
  // the same region of space.
  std::map<std::array<int32_t, 3>, int> parents;
  for (const auto& c : v.cells) parents[c] = 0;
  for (const auto& c : v3.cells) {
    const std::array<int32_t, 3> p{c[0] / 3, c[1] / 3, c[2] / 3};
    auto it = parents.find(p);
    ASSERT_NE(it, parents.end());
    ++it->second;
  }
  for (const auto& [c, n] : parents) EXPECT_EQ(n, 27);
  // The hexahedral meshes have the same volume and bounding box.
  const HexMesh h = voxel_to_hex(v), h3 = voxel_to_hex(v3);
  EXPECT_EQ(bbox_min(h.nodes), bbox_min(h3.nodes));
  const Vec3 hi = bbox_max(h.nodes), hi3 = bbox_max(h3.nodes);
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(hi[size_t(d)], hi3[size_t(d)], 1e-12);
  EXPECT_NEAR(double(h3.elems.size()) * std::pow(v3.spacing, 3), double(h.elems.size()) * std::pow(v.spacing, 3), 1e-12);
  EXPECT_EQ(subdivide_voxels(v, 1, "sphere").cells, v.cells);
  EXPECT_THROW(subdivide_voxels(v, 0, "sphere"), InputError);
}

TEST(MeshSpec, VoxelSubdivisionOnlyWhereThereAreVoxels) {
  const auto dir = test::temp_dir("subdiv");
  MeshSpec f = test::ball_file_spec(dir, 300);
  const size_t base = build_hex_mesh(f, dir).elems.size();
  f.voxel_subdivision = 2;
  EXPECT_EQ(build_hex_mesh(f, dir).elems.size(), 8 * base);
  EXPECT_EQ(build_tet_mesh(f, dir).elems.size(), 6 * 8 * base);
  f.voxel_subdivision = kMaxVoxelSubdivision + 1;
  EXPECT_THROW(build_hex_mesh(f, dir), InputError);
  MeshSpec box;
  box.elements_per_edge = 2;
  box.voxel_subdivision = 2;
  try {
    build_hex_mesh(box, {});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("voxel_subdivision"), std::string::npos) << e.what();
  }
  MeshSpec sphere;
  sphere.source = "sphere";
  sphere.voxel_subdivision = 2;
  EXPECT_THROW(build_tet_mesh(sphere, {}), InputError);  // the lattice sphere has no voxels
}

TEST(Voxelize, OpenSurfaceIsRejected) {
  TriSurface s = make_icosphere(1);
  s.tris.pop_back();
  try {
    voxelize(s, 0.1, "holed.obj");
    FAIL() << "open surface accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("holed.obj: the surface is not closed"), std::string::npos) << e.what();
  }
}

TEST(Voxelize, BunnyAtDick2011Sizes) {
  const auto dir = test::data_dir();
  if (dir.empty() || !std::filesystem::exists(dir / "bunny.off"))
    GTEST_SKIP() << "bunny.off not found in " << EB_MESH_DATA_DIR << " (third-party data, see SOURCES.md)";
  const TriSurface bunny = read_surface(dir / "bunny.off");
  for (size_t target : {11900u, 33300u, 94300u, 269000u}) {
    const VoxelMesh v = voxelize_target(bunny, target, "bunny.off");
    EXPECT_NEAR(double(v.cells.size()), double(target), 0.03 * double(target)) << "target " << target;
  }
}

TEST(Sphere, CeckaLevelsMatchTable16_1) {
  // Cecka 2011 Table 16.1: ~63/120, 305/960, 1.7K/7.1K, 3.6K/16.5K nodes/elements.
  const size_t cecka_elems[4] = {120, 960, 7100, 16500};
  double previous_err = 1;
  for (int level = 0; level < 4; ++level) {
    const TetMesh m = make_sphere_tet(level);
    EXPECT_NO_THROW(check_tet_mesh(m, "sphere"));
    const double ratio = double(m.elems.size()) / double(cecka_elems[level]);
    EXPECT_GT(ratio, 0.9) << level;
    EXPECT_LT(ratio, 1.2) << level;
    for (const auto& p : m.nodes) ASSERT_LE(std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]), 1.0 + 1e-12);
    const double err = std::abs(tet_volume(m) - 4.0 / 3.0 * M_PI) / (4.0 / 3.0 * M_PI);
    EXPECT_LT(err, previous_err) << level;
    previous_err = err;
  }
  EXPECT_LT(previous_err, 0.03);
  EXPECT_EQ(make_sphere_tet(0).nodes.size(), 64u);
  EXPECT_THROW(make_sphere_tet(4), InputError);
}

TEST(Sphere, IcosphereIsClosedAndOutward) {
  const TriSurface s = make_icosphere(3, 2.0);
  EXPECT_EQ(s.tris.size(), 20u * 64u);
  EXPECT_NO_THROW(check_closed_surface(s, "ico"));
  EXPECT_GT(surface_volume(s), 0.99 * 4.0 / 3.0 * M_PI * 8.0);
}

// mesh.source = "sphere" with mesh.tetrahedralizer = "gmsh": Table 16.1's sizes within 25%.
TEST(Gmsh, CeckaSpheresNearTable16_1) {
  MeshSpec spec;
  spec.source = "sphere";
  spec.tetrahedralizer = "gmsh";
  if (!have_gmsh()) {
    try {
      build_tet_mesh(spec, {});
      FAIL() << "Gmsh sphere built without Gmsh";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("mesh.tetrahedralizer"), std::string::npos) << e.what();
    }
    GTEST_SKIP() << "Gmsh not compiled in";
  }
  const double cecka_nodes[4] = {63, 305, 1700, 3600}, cecka_elems[4] = {120, 960, 7100, 16500};
  const double exact = 4.0 / 3.0 * M_PI;
  double previous_err = 1;
  for (int level = 0; level < 4; ++level) {
    spec.refinement = level;
    const TetMesh m = build_tet_mesh(spec, {});
    std::printf("Gmsh sphere level %d (size %.3f): %zu nodes, %zu tetrahedra\n", level, gmsh_sphere_size(level),
                m.nodes.size(), m.elems.size());
    for (const auto& t : m.elems) ASSERT_EQ(tet_state(m.nodes, t), ElementState::Ok);
    EXPECT_NEAR(double(m.nodes.size()) / cecka_nodes[level], 1.0, 0.25) << level;
    EXPECT_NEAR(double(m.elems.size()) / cecka_elems[level], 1.0, 0.25) << level;
    const double err = std::abs(tet_volume(m) - exact) / exact;
    EXPECT_LT(err, previous_err) << level;
    previous_err = err;
  }
  EXPECT_LT(previous_err, 0.03);
}

TEST(Gmsh, SphereTetrahedralization) {
  const TriSurface s = make_icosphere(5);
  TetrahedralizeOptions o;
  if (!have_gmsh()) {
    o.size = 0.2;
    try {
      tetrahedralize_surface(s, o, "sphere");
      FAIL();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("Gmsh support was not compiled in"), std::string::npos);
    }
    GTEST_SKIP() << "Gmsh not compiled in";
  }
  const double exact = 4.0 / 3.0 * M_PI;
  double finest_err = 1;
  size_t previous = 0;
  for (double size : {0.5, 0.25, 0.12}) {
    o.size = size;
    const TetMesh m = tetrahedralize_surface(s, o, "sphere");
    for (const auto& t : m.elems) ASSERT_EQ(tet_state(m.nodes, t), ElementState::Ok);
    EXPECT_GT(m.elems.size(), previous);
    previous = m.elems.size();
    finest_err = std::abs(tet_volume(m) - exact) / exact;
  }
  EXPECT_LT(finest_err, 0.01);
  // Keeping the input triangles (the fallback for surfaces Gmsh cannot reparametrize).
  o.keep_surface = true;
  o.size = 0.2;
  const TetMesh kept = tetrahedralize_surface(make_icosphere(3), o, "sphere");
  EXPECT_GT(kept.elems.size(), 100u);
  EXPECT_NEAR(tet_volume(kept), surface_volume(make_icosphere(3)), 1e-9);
}

TEST(MeshSpec, SourcesFileSphereAndTransform) {
  MeshSpec spec;
  spec.source = "sphere";
  spec.refinement = 1;
  spec.scale = 0.01;
  spec.translate = {1, 0, 0};
  const TetMesh t = build_tet_mesh(spec, {});
  const Vec3 lo = bbox_min(t.nodes), hi = bbox_max(t.nodes);
  EXPECT_NEAR(lo[0], 0.99, 1e-12);
  EXPECT_NEAR(hi[0], 1.01, 1e-12);
  spec.target_elements = 2000;
  const HexMesh h = build_hex_mesh(spec, {});
  EXPECT_NEAR(double(h.elems.size()), 2000.0, 60.0);

  const auto dir = test::temp_dir("spec");
  MeshSpec f = test::ball_file_spec(dir, 1000);
  const HexMesh hv = build_hex_mesh(f, dir);
  EXPECT_NEAR(double(hv.elems.size()), 1000.0, 30.0);
  const TetMesh tv = build_tet_mesh(f, dir);
  EXPECT_EQ(tv.elems.size(), 6 * hv.elems.size());
  write_tet_mesh(dir / "vol.vtu", tv);
  f.file = "vol.vtu";
  EXPECT_EQ(build_tet_mesh(f, dir).elems.size(), tv.elems.size());
  EXPECT_THROW(build_hex_mesh(f, dir), InputError);  // tetrahedra where hexahedra are needed
  f.file = "absent.msh";
  try {
    build_tet_mesh(f, dir);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.msh"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(dir.string()), std::string::npos) << e.what();
  }
  f.file = "ball.obj";
  f.tetrahedralizer = "gmsh";
  f.element_size = 0.3;
  if (have_gmsh()) EXPECT_GT(build_tet_mesh(f, dir).elems.size(), 100u);
  else EXPECT_THROW(build_tet_mesh(f, dir), InputError);
}

}  // namespace
}  // namespace eb::mesh
