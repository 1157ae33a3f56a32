// Tetrahedron quality measures (meshes/tet_quality.h) against hand-computed values, sliver
// peeling, and Gmsh tetrahedralization quality on a small surface.
#include <cmath>

#include <gtest/gtest.h>

#include "meshes/errors.h"
#include "meshes/geometry.h"
#include "meshes/gmsh_tet.h"
#include "meshes/sphere.h"
#include "meshes/tet_quality.h"

namespace eb::mesh {
namespace {

constexpr double kDeg = 180.0 / M_PI;

TEST(TetQuality, RegularTetrahedron) {
  // Alternate corners of a cube: edge sqrt(2), positively oriented.
  const TetQuality q = tet_quality({1, 1, 1}, {1, -1, -1}, {-1, -1, 1}, {-1, 1, -1});
  ASSERT_GT(tet_signed_volume({1, 1, 1}, {1, -1, -1}, {-1, -1, 1}, {-1, 1, -1}), 0);
  EXPECT_NEAR(q.min_dihedral_deg, std::acos(1.0 / 3.0) * kDeg, 1e-9);
  EXPECT_NEAR(q.max_dihedral_deg, 70.52877936550931, 1e-9);
  EXPECT_NEAR(q.scaled_jacobian, 1.0, 1e-12);
  EXPECT_NEAR(q.radius_ratio, 1.0, 1e-12);
  EXPECT_NEAR(q.aspect_ratio, 1.0, 1e-12);
}

TEST(TetQuality, RightCornerTetrahedron) {
  // Corner of the unit cube: three right dihedral angles at the edges through the origin and
  // acos(1/sqrt(3)) = 54.74 deg at the slanted face's edges. Scaled Jacobian: det = 1 at every
  // corner; the edge-length product is 1 at the origin and 1*sqrt(2)*sqrt(2) = 2 at the others,
  // so min = 1/2, times sqrt(2). Inradius 3V/area = 0.5/(1.5 + sqrt(3)/2) = 1/(3 + sqrt(3));
  // circumradius sqrt(3)/2; longest edge sqrt(2).
  const TetQuality q = tet_quality({0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1});
  EXPECT_NEAR(q.min_dihedral_deg, std::acos(1.0 / std::sqrt(3.0)) * kDeg, 1e-9);
  EXPECT_NEAR(q.max_dihedral_deg, 90.0, 1e-9);
  EXPECT_NEAR(q.scaled_jacobian, std::sqrt(2.0) / 2.0, 1e-12);
  const double r_in = 1.0 / (3.0 + std::sqrt(3.0)), r_circ = std::sqrt(3.0) / 2.0;
  EXPECT_NEAR(q.radius_ratio, 3.0 * r_in / r_circ, 1e-12);
  EXPECT_NEAR(q.aspect_ratio, std::sqrt(2.0) / (2.0 * std::sqrt(6.0) * r_in), 1e-12);
}

TEST(TetQuality, FlattenedSliverAndInvertedTetrahedron) {
  // Four corners of a unit square, two lifted by h: a sliver with no short edge.
  const double h = 1e-3;
  const Vec3 a{0, 0, 0}, b{1, 1, 0}, c{1, 0, h}, d{0, 1, h};
  const bool positive = tet_signed_volume(a, b, c, d) > 0;
  const TetQuality q = positive ? tet_quality(a, b, c, d) : tet_quality(a, b, d, c);
  EXPECT_LT(q.min_dihedral_deg, 0.2);
  EXPECT_GT(q.max_dihedral_deg, 179.8);
  EXPECT_GT(q.scaled_jacobian, 0.0);
  EXPECT_LT(q.scaled_jacobian, 0.005);
  EXPECT_LT(q.radius_ratio, 0.005);
  EXPECT_GT(q.aspect_ratio, 100.0);
  // The same corners in the other order: inverted, negative scaled Jacobian and radius ratio.
  const TetQuality inv = positive ? tet_quality(a, b, d, c) : tet_quality(a, b, c, d);
  EXPECT_LT(inv.scaled_jacobian, 0.0);
  EXPECT_LT(inv.radius_ratio, 0.0);
  EXPECT_TRUE(std::isinf(inv.aspect_ratio));
}

TEST(TetQuality, HistogramBinsAndSummary) {
  Histogram h({0, 1, 2});
  for (double v : {-1.0, 0.0, 0.5, 1.0, 1.999, 2.0, 5.0}) h.add(v);
  EXPECT_EQ(h.counts, (std::vector<size_t>{1, 2, 2, 2}));
  // One regular tetrahedron and one sliver.
  const double h3 = 1e-3;
  std::vector<Vec3> nodes{{1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}, {0, 0, 0}, {1, 1, 0}, {1, 0, h3}, {0, 1, h3}};
  std::vector<std::array<int32_t, 4>> tets{{0, 1, 3, 2}, {4, 5, 6, 7}};
  if (tet_signed_volume(nodes[4], nodes[5], nodes[6], nodes[7]) < 0) std::swap(tets[1][2], tets[1][3]);
  const TetQualitySummary s = summarize_tet_quality(nodes, tets);
  EXPECT_EQ(s.tets, 2u);
  EXPECT_EQ(s.poor, 1u);
  EXPECT_EQ(s.worst_element, 1u);
  EXPECT_NEAR(s.max_scaled_jacobian, 1.0, 1e-12);
  EXPECT_EQ(s.min_dihedral_hist.counts.front(), 1u);  // the sliver, below 1 deg
  EXPECT_EQ(s.min_dihedral_hist.counts.back(), 1u);   // the regular one, >= 60 deg
  EXPECT_NE(to_text(s).find("1 of 2 tetrahedra below 5 deg"), std::string::npos) << to_text(s);
  EXPECT_EQ(to_json(s)["poor"], 1);
}

// Corners in an order that gives positive volume.
std::array<int32_t, 4> positive(const std::vector<Vec3>& x, std::array<int32_t, 4> t) {
  if (tet_signed_volume(x[size_t(t[0])], x[size_t(t[1])], x[size_t(t[2])], x[size_t(t[3])]) < 0) std::swap(t[2], t[3]);
  return t;
}

TEST(TetQuality, PeelsABoundarySliverWithTwoSurfaceFaces) {
  // Sliver S = (p q r s) over a nearly flat rhombus (p, q at z = 0; r, s at z = 0.01) and two
  // good tetrahedra on its upper faces (p r s) and (q r s), meeting at apex t. S has the two
  // boundary faces p q r and p q s; r-s is interior. Peeling S leaves a closed two-tet mesh.
  TetMesh m;
  m.nodes = {{0, 0, 0}, {1, 0, 0}, {0.5, 0.5, 0.01}, {0.5, -0.5, 0.01}, {0.5, 0, 1}};
  enum { p, q, r, s, t };
  m.elems = {positive(m.nodes, {p, q, r, s}), positive(m.nodes, {p, r, s, t}), positive(m.nodes, {q, r, s, t})};
  m.material = {7, 8, 9};
  const auto x = gather(m.nodes, m.elems[0]);
  const double sliver_volume = tet_signed_volume(x[0], x[1], x[2], x[3]);
  ASSERT_LT(tet_quality(x[0], x[1], x[2], x[3]).min_dihedral_deg, kPoorMinDihedralDeg);
  const PeelResult r0 = peel_boundary_slivers(m, kPoorMinDihedralDeg);
  EXPECT_EQ(r0.removed, 1u);
  EXPECT_NEAR(r0.volume_removed, sliver_volume, 1e-15);
  ASSERT_EQ(m.elems.size(), 2u);
  EXPECT_EQ(m.nodes.size(), 5u);
  EXPECT_EQ(m.material, (std::vector<int32_t>{8, 9}));
  // Below a smaller threshold nothing is removed.
  TetMesh again = m;
  EXPECT_EQ(peel_boundary_slivers(again, 1e-3).removed, 0u);
}

TEST(TetQuality, PeelsAFlatCapAndKeepsGoodTetrahedra) {
  // Regular tet G and a flat cap C on its face (0 1 2) whose apex (node 4) only C uses.
  TetMesh m;
  m.nodes = {{1, 1, 1}, {1, -1, -1}, {-1, 1, -1}, {-1, -1, 1}};
  const Vec3 centroid{(1.0 + 1 - 1) / 3, (1.0 - 1 + 1) / 3, (1.0 - 1 - 1) / 3};
  // Outward from face (0 1 2): away from node 3.
  const Vec3 out = sub(centroid, m.nodes[3]);
  m.nodes.push_back({centroid[0] + 0.01 * out[0], centroid[1] + 0.01 * out[1], centroid[2] + 0.01 * out[2]});
  m.elems = {positive(m.nodes, {0, 1, 2, 3}), positive(m.nodes, {0, 1, 2, 4})};
  m.material.assign(2, 0);
  const PeelResult r = peel_boundary_slivers(m, kPoorMinDihedralDeg);
  EXPECT_EQ(r.removed, 1u);
  ASSERT_EQ(m.elems.size(), 1u);
  EXPECT_EQ(m.nodes.size(), 4u);  // the cap's apex is dropped
  // A mesh of good tetrahedra is left alone.
  TetMesh good = m;
  EXPECT_EQ(peel_boundary_slivers(good, kPoorMinDihedralDeg).removed, 0u);
  EXPECT_EQ(good.elems, m.elems);
}

TEST(Gmsh, TetrahedralizationOfASmallSurfaceMeetsTheQualityThreshold) {
  if (!have_gmsh()) GTEST_SKIP() << "Gmsh not compiled in";
  TetrahedralizeOptions o;
  o.size = 0.2;
  TetrahedralizeReport r;
  const TetMesh m = tetrahedralize_surface(make_icosphere(3), o, "sphere", &r);
  const TetQualitySummary q = summarize_tet_quality(m.nodes, m.elems);
  EXPECT_TRUE(r.surface_remeshed) << r.remesh_error;
  ASSERT_EQ(r.passes.size(), 1u);
  EXPECT_EQ(r.passes[0].optimizer, "gmsh");
  EXPECT_EQ(r.final_quality.tets, m.elems.size());
  EXPECT_GT(m.elems.size(), 500u);
  EXPECT_GE(q.min_dihedral_deg, kPoorMinDihedralDeg) << to_text(q);
  EXPECT_GT(q.min_scaled_jacobian, 0.05) << to_text(q);
  EXPECT_DOUBLE_EQ(r.final_quality.min_dihedral_deg, q.min_dihedral_deg);
  o.optimizers = {"no-such-pass"};
  EXPECT_THROW(tetrahedralize_surface(make_icosphere(2), o, "sphere"), InputError);
}

}  // namespace
}  // namespace eb::mesh
