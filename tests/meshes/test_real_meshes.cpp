// The third-party meshes (../shared/data/meshes, SOURCES.md): counts as verified there.
#include <gtest/gtest.h>

#include "mesh_test_util.h"
#include "meshes/errors.h"
#include "meshes/geometry.h"
#include "meshes/mesh_io.h"

namespace eb::mesh {
namespace {

struct Expected {
  const char* file;
  size_t nodes, tets, tris;  // nodes: as stored in the file
};

const Expected kFiles[] = {
    {"bunny.off", 3485, 0, 6966},          {"bunny.ply", 35947, 0, 69451},
    {"hand_olivier.mesh", 20541, 78233, 29364}, {"camile_hand.mesh", 23641, 91907, 0},
    {"Armadillo13K.msh", 13230, 54985, 0}, {"armadillo.obj", 43243, 0, 86482},
    {"Dragon_50k.obj", 25007, 0, 50000},   {"liver.msh", 181, 596, 0},
    {"liver-smooth.obj", 2194, 0, 4384},   {"liver_volumetric.vtk", 98, 273, 376},
};

class RealMesh : public ::testing::TestWithParam<Expected> {};

TEST_P(RealMesh, CountsMatchSources) {
  const auto dir = test::data_dir();
  const Expected& e = GetParam();
  if (dir.empty() || !std::filesystem::exists(dir / e.file))
    GTEST_SKIP() << e.file << " not found in " << EB_MESH_DATA_DIR << " (third-party data, see SOURCES.md)";
  for (bool vtk : {false, true}) {
    ReadOptions r;
    r.prefer_vtk = vtk;
    const MeshFile m = read_mesh_file(dir / e.file, r);
    EXPECT_EQ(m.nodes.size(), e.nodes);
    EXPECT_EQ(m.tets.size(), e.tets);
    EXPECT_EQ(m.tris.size(), e.tris);
    if (!m.tets.empty()) {
      const TetMesh t = to_tet_mesh(m, e.file);
      EXPECT_NO_THROW(check_tet_mesh(t, e.file));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Data, RealMesh, ::testing::ValuesIn(kFiles), [](const auto& info) {
  std::string n = info.param.file;
  for (auto& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

TEST(RealMeshes, ClosednessAsDocumented) {
  const auto dir = test::data_dir();
  if (dir.empty()) GTEST_SKIP() << "data folder " << EB_MESH_DATA_DIR << " not found";
  EXPECT_NO_THROW(check_closed_surface(read_surface(dir / "bunny.off"), "bunny.off"));
  EXPECT_NO_THROW(check_closed_surface(read_surface(dir / "armadillo.obj"), "armadillo.obj"));
  // The raw scan has holes in its base (223 boundary edges).
  const TriSurface scan = read_surface(dir / "bunny.ply");
  EXPECT_EQ(scan.nodes.size(), 34834u);  // unused vertices dropped
  EXPECT_EQ(surface_edges(scan).boundary_edges, 223u);
  EXPECT_THROW(check_closed_surface(scan, "bunny.ply"), InputError);
}

}  // namespace
}  // namespace eb::mesh
