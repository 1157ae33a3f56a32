// Round trips through every writer and reader, and our readers against VTK's.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "mesh_test_util.h"
#include "meshes/box.h"
#include "meshes/errors.h"
#include "meshes/geometry.h"
#include "meshes/mesh_io.h"
#include "meshes/sphere.h"
#include "meshes/vtk_io.h"

namespace eb::mesh {
namespace {

MeshFile sample_tets() {
  TetMesh t = make_box_tet({0.1, -0.2, 0.3}, {1.0, 2.0, 0.5}, {3, 2, 2}, 5);
  // Irregular coordinates so that printing/parsing must be exact.
  for (auto& p : t.nodes)
    for (auto& x : p) x += 1e-3 * std::sin(7.3 * x + 1.1);
  for (size_t i = 0; i < t.material.size(); ++i) t.material[i] = int32_t(i % 3);
  return to_mesh_file(t);
}

MeshFile sample_hexes() {
  HexMesh h = make_box_hex({0, 0, 0}, {0.05, 0.05, 0.05}, {4, 3, 2});
  for (auto& p : h.nodes) p[0] += 1e-4 * p[1] / 0.05 + 1.0 / 3.0;
  for (size_t i = 0; i < h.material.size(); ++i) h.material[i] = int32_t(i % 2) + 1;
  return to_mesh_file(h);
}

void expect_same(const MeshFile& a, const MeshFile& b, double tol = 0.0) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i)
    for (size_t d = 0; d < 3; ++d) ASSERT_NEAR(a.nodes[i][d], b.nodes[i][d], tol) << "node " << i;
  EXPECT_EQ(a.tets, b.tets);
  EXPECT_EQ(a.hexes, b.hexes);
  EXPECT_EQ(a.tris, b.tris);
  auto mat = [](const std::vector<int32_t>& m, size_t n) { return m.empty() ? std::vector<int32_t>(n, 0) : m; };
  EXPECT_EQ(mat(a.tet_material, a.tets.size()), mat(b.tet_material, b.tets.size()));
  EXPECT_EQ(mat(a.hex_material, a.hexes.size()), mat(b.hex_material, b.hexes.size()));
}

class VolumeRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(VolumeRoundTrip, TetsAndHexesSurviveWriteAndRead) {
  const auto dir = test::temp_dir("rt");
  const std::string ext = GetParam();
  for (const auto& mesh : {sample_tets(), sample_hexes()}) {
    if ((ext == ".node") && !mesh.hexes.empty()) continue;  // TetGen holds tetrahedra only
    for (bool compress : {true, false}) {
      const auto path = dir / ("m" + ext);
      WriteOptions w;
      w.compress = compress;
      w.msh_version = MshVersion::V4;
      write_mesh_file(path, mesh, w);
      for (bool prefer_vtk : {false, true}) {
        ReadOptions r;
        r.prefer_vtk = prefer_vtk;
        SCOPED_TRACE(ext + (compress ? " compressed" : " raw") + (prefer_vtk ? " via VTK" : " built-in"));
        expect_same(mesh, read_mesh_file(path, r));
      }
      if (ext == ".msh") {
        w.msh_version = MshVersion::V2;
        write_mesh_file(path, mesh, w);
        expect_same(mesh, read_mesh_file(path));
      }
    }
  }
  // Nothing but the outputs: no temporaries left behind.
  for (const auto& e : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string()[0], 'm') << e.path();
}

INSTANTIATE_TEST_SUITE_P(Formats, VolumeRoundTrip, ::testing::Values(".vtu", ".vtk", ".msh", ".mesh", ".node"),
                         [](const auto& info) { return info.param.substr(1); });

class SurfaceRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(SurfaceRoundTrip, SurfaceSurvivesWriteAndRead) {
  const auto dir = test::temp_dir("rt");
  TriSurface s = make_icosphere(2, 0.7, {0.1, 0.2, 0.3});
  const auto path = dir / ("s" + GetParam());
  write_surface(path, s);
  const TriSurface back = read_surface(path);
  if (GetParam() != ".stl") {
    expect_same(to_mesh_file(s), to_mesh_file(back));
    return;
  }
  // STL stores float32 corners per triangle and is re-welded (nodes in order of first use).
  ASSERT_EQ(back.nodes.size(), s.nodes.size());
  ASSERT_EQ(back.tris.size(), s.tris.size());
  for (size_t t = 0; t < s.tris.size(); ++t)
    for (size_t c = 0; c < 3; ++c)
      for (size_t d = 0; d < 3; ++d)
        ASSERT_NEAR(back.nodes[back.tris[t][c]][d], s.nodes[s.tris[t][c]][d], 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Formats, SurfaceRoundTrip, ::testing::Values(".obj", ".off", ".stl", ".ply", ".vtp"),
                         [](const auto& info) { return info.param.substr(1); });

TEST(MeshIo, MixedTrianglesAndTetsInMedit) {
  const auto dir = test::temp_dir("mixed");
  MeshFile m = sample_tets();
  m.tris = {{0, 1, 2}, {2, 3, 4}};
  write_mesh_file(dir / "x.mesh", m);
  expect_same(m, read_mesh_file(dir / "x.mesh"));
  write_mesh_file(dir / "x.vtu", m);
  expect_same(m, read_mesh_file(dir / "x.vtu"));
}

TEST(MeshIo, AsciiInputVariantsParse) {
  const auto dir = test::temp_dir("ascii");
  // Gmsh v1 (as SOFA's liver.msh), with a 1-based node numbering and a gap in the node tags.
  test::write_text(dir / "v1.msh",
                   "$NOD\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n7 0 0 1\n$ENDNOD\n$ELM\n2\n1 4 5 1 4 1 2 3 7\n"
                   "2 15 1 1 1 1\n$ENDELM\n");
  MeshFile v1 = read_mesh_file(dir / "v1.msh");
  ASSERT_EQ(v1.tets.size(), 1u);
  EXPECT_EQ(v1.tets[0], (std::array<int32_t, 4>{0, 1, 2, 3}));
  EXPECT_EQ(v1.tet_material[0], 5);
  // OBJ with v//vn faces, a quad (fanned) and negative indices.
  test::write_text(dir / "q.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//1 3//1 4//1\nf -4 -2 -1\n");
  MeshFile q = read_mesh_file(dir / "q.obj");
  EXPECT_EQ(q.tris.size(), 3u);
  EXPECT_EQ(q.tris[2], (std::array<int32_t, 3>{0, 2, 3}));
  // ASCII STL and ASCII PLY.
  test::write_text(dir / "a.stl",
                   "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\n"
                   "facet normal 0 0 1\nouter loop\nvertex 1 0 0\nvertex 1 1 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n");
  MeshFile stl = read_mesh_file(dir / "a.stl");
  EXPECT_EQ(stl.nodes.size(), 4u);
  EXPECT_EQ(stl.tris.size(), 2u);
  test::write_text(dir / "a.ply",
                   "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
                   "property uchar red\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n"
                   "0 0 0 255\n1 0 0 255\n0 1 0 255\n3 0 1 2\n");
  EXPECT_EQ(read_mesh_file(dir / "a.ply").tris.size(), 1u);
  // Legacy ASCII VTK in the 5.1 OFFSETS/CONNECTIVITY layout.
  test::write_text(dir / "n.vtk",
                   "# vtk DataFile Version 5.1\nx\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 4 float\n0 0 0 1 0 0 0 1 0 0 0 1\n"
                   "CELLS 2 4\nOFFSETS vtktypeint64\n0 4\nCONNECTIVITY vtktypeint64\n0 1 2 3\nCELL_TYPES 1\n10\n");
  for (bool vtk : {false, true}) {
    ReadOptions r;
    r.prefer_vtk = vtk;
    EXPECT_EQ(read_mesh_file(dir / "n.vtk", r).tets.size(), 1u);
  }
}

TEST(MeshIo, WholeMeshWithOppositeOrientationIsReordered) {
  const auto dir = test::temp_dir("orient");
  MeshFile m = sample_tets();
  for (auto& t : m.tets) std::swap(t[0], t[1]);
  write_mesh_file(dir / "neg.mesh", m);
  const MeshFile back = read_mesh_file(dir / "neg.mesh");
  EXPECT_EQ(back.tets.size(), m.tets.size());
  for (const auto& t : back.tets) EXPECT_EQ(tet_state(back.nodes, t), ElementState::Ok);
  // One inverted tetrahedron among positive ones is a tangled mesh, not a convention.
  MeshFile one = sample_tets();
  std::swap(one.tets[3][0], one.tets[3][1]);
  write_mesh_file(dir / "one.mesh", one);
  try {
    read_mesh_file(dir / "one.mesh");
    ADD_FAILURE() << "inverted element accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("element 4 [index 3]"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("inverted"), std::string::npos) << e.what();
  }
}

TEST(VtkIo, WriteVtuChecksFieldSizesAndLeavesNoFile) {
  const auto dir = test::temp_dir("fields");
  const HexMesh h = make_box_hex({0, 0, 0}, {1, 1, 1}, {2, 2, 2});
  std::vector<int32_t> conn;
  for (const auto& e : h.elems) conn.insert(conn.end(), e.begin(), e.end());
  Field bad{field::kDisplacement, 3, std::vector<double>(5, 0.0)};
  EXPECT_THROW(write_vtu(dir / "x.vtu", h.nodes, CellType::Hexahedron, conn, {bad}, {}), InputError);
  EXPECT_EQ(test::count_files(dir), 0u);
}

std::vector<std::string> pvd_files(const std::filesystem::path& pvd) {
  std::ifstream in(pvd);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> files;
  const std::string key = " file=\"";
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    const size_t begin = at + key.size();
    files.push_back(text.substr(begin, text.find('"', begin) - begin));
  }
  return files;
}

// The runner names frames by their file name alone while --out may be relative, absolute or hold
// `.` and `..`; each entry must lead from the .pvd's folder to its frame.
TEST(VtkIo, PvdStoresPathsRelativeToItsFolder) {
  namespace fs = std::filesystem;
  const auto dir = test::temp_dir("pvd");
  fs::create_directories(dir / "vtk" / "frames");
  fs::create_directories(dir / "other");
  for (const char* f : {"vtk/step_0.vtu", "vtk/frames/f1.vtu", "vtk/step_2.vtu", "other/f3.vtu"})
    test::write_text(dir / f, "");
  const fs::path relative_pvd = fs::relative(dir) / "." / "other" / ".." / "vtk" / "series.pvd";
  ASSERT_TRUE(relative_pvd.is_relative());
  PvdWriter pvd(relative_pvd);
  pvd.add(0.0, "step_0.vtu");
  pvd.add(0.25, fs::path("frames") / "f1.vtu");
  pvd.add(0.5, dir / "other" / ".." / "vtk" / "step_2.vtu");
  pvd.add(0.75, dir / "other" / "f3.vtu");
  pvd.write();
  EXPECT_EQ(pvd_files(dir / "vtk" / "series.pvd"),
            (std::vector<std::string>{"step_0.vtu", "frames/f1.vtu", "step_2.vtu", "../other/f3.vtu"}));
}

TEST(VtkIo, PvdRejectsAFrameThatIsNotThere) {
  const auto dir = test::temp_dir("pvd");
  test::write_text(dir / "step_0.vtu", "");
  PvdWriter pvd(dir / "vtk" / "series.pvd");
  // The frame sits one folder above the .pvd, not beside it.
  EXPECT_THROW(pvd.add(0.0, "step_0.vtu"), InputError);
  EXPECT_THROW(pvd.add(0.0, dir / "missing.vtu"), InputError);
}

TEST(VtkIo, PvdEscapesFolderNames) {
  const auto dir = test::temp_dir("pvd");
  std::filesystem::create_directories(dir / "a&b\"c" / "vtk");
  test::write_text(dir / "a&b\"c" / "f.vtu", "");
  PvdWriter pvd(dir / "a&b\"c" / "vtk" / "s.pvd");
  pvd.add(0.0, "../f.vtu");
  pvd.write();
  PvdWriter other(dir / "s.pvd");
  other.add(1.0, dir / "a&b\"c" / "f.vtu");
  other.write();
  EXPECT_EQ(pvd_files(dir / "a&b\"c" / "vtk" / "s.pvd"), std::vector<std::string>{"../f.vtu"});
  EXPECT_EQ(pvd_files(dir / "s.pvd"), std::vector<std::string>{"a&amp;b&quot;c/f.vtu"});
}

}  // namespace
}  // namespace eb::mesh
