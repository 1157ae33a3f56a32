// The probe interpolation of head-to-head's nonlinear part reproduces linear fields exactly in
// tetrahedra and in (distorted) trilinear hexahedra, and refuses a point outside the mesh.
#include <gtest/gtest.h>

#include <cmath>

#include "experiments/head_to_head/nl_probes.h"
#include "meshes/box.h"
#include "meshes/errors.h"

namespace eb::head_to_head {
namespace {

using mesh::Vec3;

Vec3 linear_field(const Vec3& x) {
  return {0.3 + 1.5 * x[0] - 0.7 * x[1] + 0.2 * x[2], -0.1 + 0.4 * x[0] + 2.0 * x[1] - 1.1 * x[2],
          0.05 - 0.9 * x[0] + 0.6 * x[1] + 1.3 * x[2]};
}

std::vector<double> nodal(const std::vector<Vec3>& nodes) {
  std::vector<double> u;
  for (const Vec3& x : nodes)
    for (double c : linear_field(x)) u.push_back(c);
  return u;
}

const std::vector<Vec3> kPoints = {{0.013, 0.021, 0.007}, {0.05, 0.05, 0.05}, {0.0, 0.0, 0.0},
                                   {0.025, 0.0125, 0.0333}, {0.049, 0.001, 0.03}};

void expect_exact(const ProbeInterpolator& p, const std::vector<double>& u) {
  const std::vector<Vec3> got = p.interpolate(u);
  ASSERT_EQ(got.size(), kPoints.size());
  for (size_t k = 0; k < kPoints.size(); ++k) {
    const Vec3 want = linear_field(kPoints[k]);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(got[k][i], want[i], 1e-13) << "point " << k << " component " << i;
  }
}

template <class Elems>
std::vector<int32_t> flat(const Elems& elems) {
  std::vector<int32_t> c;
  for (const auto& e : elems) c.insert(c.end(), e.begin(), e.end());
  return c;
}

TEST(NlProbes, LinearFieldExactInTetrahedra) {
  const mesh::TetMesh m = mesh::make_box_tet({0, 0, 0}, {0.05, 0.05, 0.05}, {3, 4, 5}, 6);
  const ProbeInterpolator p(m.nodes, mesh::CellType::Tetra, flat(m.elems), kPoints);
  expect_exact(p, nodal(m.nodes));
}

TEST(NlProbes, LinearFieldExactInDistortedHexahedra) {
  mesh::HexMesh m = mesh::make_box_hex({0, 0, 0}, {0.05, 0.05, 0.05}, {3, 4, 5});
  // Move the interior nodes (the box keeps its faces): trilinear maps that are not affine.
  for (Vec3& x : m.nodes) {
    const bool interior = x[0] > 1e-9 && x[0] < 0.05 - 1e-9 && x[1] > 1e-9 && x[1] < 0.05 - 1e-9 && x[2] > 1e-9 &&
                          x[2] < 0.05 - 1e-9;
    if (interior) {
      x[0] += 0.002 * std::sin(300 * x[1]);
      x[1] += 0.0015 * std::cos(200 * x[2]);
      x[2] += 0.001 * std::sin(250 * x[0]);
    }
  }
  const ProbeInterpolator p(m.nodes, mesh::CellType::Hexahedron, flat(m.elems), kPoints);
  expect_exact(p, nodal(m.nodes));
}

TEST(NlProbes, PointOutsideIsRefused) {
  const mesh::HexMesh m = mesh::make_box_hex({0, 0, 0}, {1, 1, 1}, {2, 2, 2});
  EXPECT_THROW(ProbeInterpolator(m.nodes, mesh::CellType::Hexahedron, flat(m.elems), {{1.2, 0.5, 0.5}}), InputError);
}

TEST(NlProbes, RelativeErrorIsTheLargestProbeOverTheLargestReference) {
  const std::vector<Vec3> ref = {{1, 0, 0}, {0, 2, 0}}, u = {{1.1, 0, 0}, {0, 2, 0.05}};
  EXPECT_NEAR(max_relative_error(u, ref), 0.1 / 2.0, 1e-15);
}

}  // namespace
}  // namespace eb::head_to_head
