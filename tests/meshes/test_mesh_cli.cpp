// The `mesh` CLI's quality gate (tetrahedralize), --reorder and the info report.
#include <regex>

#include <gtest/gtest.h>

#include "mesh_test_util.h"
#include "meshes/gmsh_tet.h"
#include "meshes/mesh_io.h"
#include "meshes/reorder.h"
#include "meshes/sphere.h"

namespace eb::mesh {
namespace {

double number_after(const std::string& text, const std::string& label) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(label + " ([-0-9.e+]+)"))) return -1;
  return std::stod(m[1]);
}

TEST(MeshCli, TetrahedralizeReportsQualityAndRefusesPoorMeshes) {
  if (!have_gmsh()) GTEST_SKIP() << "Gmsh not compiled in";
  const auto dir = test::temp_dir("tq");
  write_surface(dir / "ball.obj", make_icosphere(3));
  const std::string in = (dir / "ball.obj").string(), out = (dir / "ball.vtu").string();
  auto r = test::run_cli("mesh tetrahedralize '" + in + "' --size 0.2 -o '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("optimizer gmsh in"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("min dihedral angle (deg) per tet:"), std::string::npos) << r.output;
  EXPECT_GE(number_after(r.output, "tet quality: min dihedral"), kPoorMinDihedralDeg) << r.output;
  ASSERT_TRUE(std::filesystem::exists(out));
  // A threshold no mesh meets: exit 1, the reason, nothing written; then written with a warning.
  std::filesystem::remove(out);
  r = test::run_cli("mesh tetrahedralize '" + in + "' --size 0.2 --min-dihedral 60 -o '" + out + "'");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("dihedral angle below 60 deg"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--allow-poor-quality"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  r = test::run_cli("mesh tetrahedralize '" + in + "' --size 0.2 --min-dihedral 60 --allow-poor-quality -o '" + out + "'");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("warning:"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(out));
  r = test::run_cli("mesh tetrahedralize '" + in + "' --size 0.2 --optimize bogus -o '" + out + "'");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(MeshCli, ConvertReordersAndInfoReportsBandwidth) {
  const auto dir = test::temp_dir("reorder");
  const std::string box = (dir / "box.vtu").string(), rcm = (dir / "rcm.msh").string();
  ASSERT_EQ(test::run_cli("mesh generate --type tet --divisions 6 6 6 -o '" + box + "'").exit_code, 0);
  auto r = test::run_cli("mesh convert '" + box + "' '" + rcm + "' --reorder rcm");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("bandwidth ([0-9]+) -> ([0-9]+)"))) << r.output;
  const MeshFile before = read_mesh_file(box), after = read_mesh_file(rcm);
  EXPECT_EQ(after.nodes.size(), before.nodes.size());
  EXPECT_EQ(after.tets.size(), before.tets.size());
  const size_t reported = std::stoul(m[2]);
  EXPECT_EQ(ordering_stats(node_graph(after)).bandwidth, reported);
  EXPECT_EQ(ordering_stats(node_graph(before)).bandwidth, std::stoul(m[1]));
  r = test::run_cli("mesh info --json '" + rcm + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"node_orderings\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"unused_nodes\": 0"), std::string::npos) << r.output;
  r = test::run_cli("mesh info '" + rcm + "'");
  EXPECT_NE(r.output.find("as stored " + std::to_string(reported) + " |"), std::string::npos) << r.output;
  r = test::run_cli("mesh convert '" + box + "' '" + (dir / "m.vtu").string() + "' --reorder metis");
  if (have_metis()) {
    EXPECT_EQ(r.exit_code, 0) << r.output;
  } else {
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("METIS was not compiled in"), std::string::npos) << r.output;
  }
  EXPECT_EQ(test::run_cli("mesh convert '" + box + "' '" + rcm + "' --reorder amd").exit_code, 2);
}

}  // namespace
}  // namespace eb::mesh
