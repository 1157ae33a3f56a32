// The head-to-head reference solve (h2h_reference.h) converges on the coarsest cantilever, and
// its tip sags down by an amount between the coarse tetrahedra's stiffness and beam theory.
#include <gtest/gtest.h>

#include <array>
#include <cmath>

#include "experiments/head_to_head/h2h_reference.h"
#include "solvers/common/registry.h"

namespace eb::head_to_head {
namespace {

TEST(HeadToHeadReference, CantileverStaticSolveConverges) {
  const auto& scenes = corot_scenes();
  const Scene& s = scenes.front();
  ASSERT_EQ(s.name, "cantilever");
  const ReferenceSolution r = solve_reference(s, 0.05, Backend::Cpu, 1, {});
  EXPECT_TRUE(r.converged);
  EXPECT_GE(r.newton_iterations, 1);
  EXPECT_EQ(r.elements, 20 * 2 * 2 * 6);
  ASSERT_EQ(r.probes.size(), 1u);
  // Euler-Bernoulli: 14.7 mm; two coarse tetrahedra across the thickness are far stiffer.
  EXPECT_LT(r.probes[0][2], -1e-3);
  EXPECT_GT(r.probes[0][2], -0.0147 * 1.05);
  // One level finer sags more (the coarse mesh is stiffer), as the error estimate assumes.
  const ReferenceSolution f = solve_reference(s, 0.025, Backend::Cpu, 1, {});
  EXPECT_TRUE(f.converged);
  EXPECT_LT(f.probes[0][2], r.probes[0][2]);
}

TEST(HeadToHeadReference, ScenesSnapToCubes) {
  for (const Scene& s : corot_scenes()) {
    if (s.voxel) continue;
    for (double n : {1e4, 1e5, 1e6}) {
      const double h = resolution_for_elements(s, n, mesh::CellType::Hexahedron);
      for (double d : s.box) EXPECT_NEAR(d / h, std::round(d / h), 1e-6 * d / h) << s.name;
      EXPECT_LT(std::abs(std::log(s.box[0] * s.box[1] * s.box[2] / (h * h * h) / n)), std::log(4.0)) << s.name;
    }
  }
}

}  // namespace
}  // namespace eb::head_to_head

// Richardson extrapolation: exact for u(h) = u* + c h^p, whatever p in [1, 3] it observes; a
// difference that does not shrink gives the cautious order 1 and a non-zero error estimate.
TEST(HeadToHeadReference, RichardsonRecoversTheLimitAndItsOrder) {
  using eb::head_to_head::richardson;
  const std::vector<std::array<double, 3>> limit = {{0.0, 0.0, -0.0147}, {0.001, -0.002, 0.003}};
  for (double p : {1.0, 1.6, 2.0, 3.0}) {
    auto level = [&](double h) {
      std::vector<std::array<double, 3>> u = limit;
      for (auto& v : u)
        for (int d = 0; d < 3; ++d) v[d] += (d + 1) * 1e-3 * std::pow(h, p);
      return u;
    };
    const auto r = richardson(level(0.1), level(0.2), level(0.4));
    EXPECT_NEAR(r.order, p, 1e-9);
    for (size_t i = 0; i < limit.size(); ++i)
      for (int d = 0; d < 3; ++d) EXPECT_NEAR(r.probes[i][d], limit[i][d], 1e-12) << p;
    EXPECT_LT(r.error_estimate, 1e-9) << p;
  }
  const std::vector<std::array<double, 3>> a = {{0, 0, -1.0}}, b = {{0, 0, -0.9}}, c = {{0, 0, -1.0}};
  const auto r = richardson(a, b, c);
  EXPECT_EQ(r.order, 1.0);
  EXPECT_GT(r.error_estimate, 0.05);
}
