// Bad input through the `mesh` CLI: exit code 2, a message naming the file and the line or
// element, and no output file left behind.
#include <gtest/gtest.h>

#include "mesh_test_util.h"
#include "meshes/gmsh_tet.h"

namespace eb::mesh {
namespace {

struct BadCase {
  const char* name;
  const char* file;     // written into the test folder
  const char* content;  // file content
  const char* command;  // "convert", "info" or "voxelize"
  const char* message;  // expected substring (after the file name)
};

const BadCase kCases[] = {
    {"TruncatedMsh", "t.msh", "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n", "convert",
     "t.msh:8: unexpected end of file while reading node tag (truncated file?)"},
    {"MalformedNumber", "m.off", "OFF\n3 1 0\n0 0 0\n1 zero 0\n0 1 0\n3 0 1 2\n", "convert",
     "m.off:4: malformed vertex coordinate 'zero'"},
    {"NaNCoordinate", "n.obj", "v 0 0 0\nv 1 0 0\nv 0 nan 0\nf 1 2 3\n", "convert",
     "n.obj:3: non-finite vertex coordinate 'nan'"},
    {"InfCoordinate", "i.mesh", "MeshVersionFormatted 1\nDimension 3\nVertices\n2\n0 0 inf 0\n1 0 0 0\nEnd\n",
     "convert", "i.mesh:5: non-finite value 'inf' in vertex z"},
    {"IndexOutOfRange", "r.off", "OFF\n3 1 0\n0 0 0\n1 0 0\n0 1 0\n3 0 1 5\n", "convert",
     "r.off:6: vertex index 5 is out of range (3 vertices)"},
    {"MeditIndexOutOfRange", "r.mesh",
     "MeshVersionFormatted 1\nDimension 3\nVertices\n4\n0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\nTetrahedra\n1\n1 2 3 9 0\nEnd\n",
     "convert", "r.mesh:11: Tetrahedra entry 1 refers to vertex 9, out of range 1..4"},
    {"InvertedElement", "inv.mesh",
     "MeshVersionFormatted 1\nDimension 3\nVertices\n5\n0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 -1 0\n"
     "Tetrahedra\n2\n1 2 3 4 0\n1 2 3 5 0\nEnd\n",
     "convert", "inv.mesh: element 2 [index 1] (tetrahedron) is inverted"},
    {"ZeroVolumeElement", "z.msh",
     "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n5\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 1 1 0\n$EndNodes\n"
     "$Elements\n2\n1 4 0 1 2 3 4\n2 4 0 1 2 3 5\n$EndElements\n",
     "convert", "z.msh: element 2 [index 1] (tetrahedron) is degenerate (zero volume)"},
    {"EmptyMesh", "e.off", "OFF\n0 0 0\n", "convert", "e.off: the mesh is empty"},
    {"EmptyFile", "e.vtu", "", "info", "e.vtu: file is empty"},
    {"TruncatedVtu", "tr.vtu", "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"1.0\">\n<Unstr",
     "info", "tr.vtu"},
    {"OpenSurface", "open.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 2 3 4\n", "voxelize",
     "open.obj: the surface is not closed"},
    {"UnknownFormat", "x.xyz", "1 2 3\n", "convert", "x.xyz: unknown mesh format '.xyz'"},
};

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, ExitTwoWithMessageAndNoOutput) {
  const BadCase& c = GetParam();
  const auto dir = test::temp_dir(c.name);
  test::write_text(dir / c.file, c.content);
  const std::string in = (dir / c.file).string(), out = (dir / "out.vtu").string();
  std::string args;
  if (std::string(c.command) == "convert") args = "mesh convert '" + in + "' '" + out + "'";
  else if (std::string(c.command) == "info") args = "mesh info '" + in + "'";
  else args = "mesh voxelize '" + in + "' --resolution 10 -o '" + out + "'";
  const auto r = test::run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("elastobench: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(c.message), std::string::npos) << "expected '" << c.message << "' in: " << r.output;
  EXPECT_EQ(test::count_files(dir), 1u) << "partial output left behind";
}

INSTANTIATE_TEST_SUITE_P(Cases, BadInput, ::testing::ValuesIn(kCases), [](const auto& info) { return info.param.name; });

TEST(BadInputCli, MissingFileNamesWhereItLooked) {
  const auto dir = test::temp_dir("missing");
  const auto r = test::run_cli("mesh --data-dir '" + dir.string() + "' info no_such_mesh.msh");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("no_such_mesh.msh"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(dir.string()), std::string::npos) << r.output;
}

TEST(BadInputCli, TetrahedralizeWithoutGmshOrWithBadSize) {
  const auto dir = test::temp_dir("tet");
  ASSERT_EQ(test::run_cli("mesh generate --type sphere --refinement 0 -o '" + (dir / "s.vtu").string() + "'").exit_code, 0);
  test::write_text(dir / "cube.off",
                   "OFF\n8 12 0\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n0 0 1\n1 0 1\n1 1 1\n0 1 1\n"
                   "3 0 2 1\n3 0 3 2\n3 4 5 6\n3 4 6 7\n3 0 1 5\n3 0 5 4\n3 1 2 6\n3 1 6 5\n3 2 3 7\n3 2 7 6\n3 3 0 4\n3 3 4 7\n");
  const auto out = (dir / "t.vtu").string();
  auto r = test::run_cli("mesh tetrahedralize '" + (dir / "cube.off").string() + "' --size 0 -o '" + out + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = test::run_cli("mesh tetrahedralize '" + (dir / "cube.off").string() + "' --size 0.3 -o '" + out + "'");
  if (have_gmsh()) {
    EXPECT_EQ(r.exit_code, 0) << r.output;
  } else {
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("Gmsh support was not compiled in"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

TEST(Cli, GenerateConvertInfoJson) {
  const auto dir = test::temp_dir("cli");
  const auto hex = (dir / "h.vtu").string();
  auto r = test::run_cli("mesh generate --type hex --size 0.05 0.05 0.05 --elements-per-edge 5 -o '" + hex + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = test::run_cli("mesh convert '" + hex + "' '" + (dir / "h.msh").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  r = test::run_cli("mesh info --json '" + (dir / "h.msh").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"hexahedra\": 125"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"inverted\": 0"), std::string::npos) << r.output;
  r = test::run_cli("mesh generate --type tet --divisions 2 3 4 --tets-per-cube 5 -o '" + (dir / "t.mesh").string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("120 tetrahedra"), std::string::npos) << r.output;
  r = test::run_cli("mesh generate --type tet --tets-per-cube 4 --elements-per-edge 2 -o '" + (dir / "x.vtu").string() + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  // info counts inverted elements instead of failing.
  test::write_text(dir / "inv.mesh",
                   "MeshVersionFormatted 1\nDimension 3\nVertices\n5\n0 0 0 0\n1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 -1 0\n"
                   "Tetrahedra\n2\n1 2 3 4 0\n1 2 3 5 0\nEnd\n");
  r = test::run_cli("mesh info '" + (dir / "inv.mesh").string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("inverted elements:   1"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace eb::mesh
