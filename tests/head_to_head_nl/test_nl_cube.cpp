// The cube of head-to-head's nonlinear part: each method's end state at its probes matches the
// exact homogeneous solution of its own strain energy, and the two energies' solutions differ.
#include <gtest/gtest.h>

#include <cmath>

#include "experiments/head_to_head/nl_probes.h"
#include "experiments/head_to_head/nl_runs.h"
#include "solvers/common/scenario.h"

namespace eb::head_to_head {
namespace {

TEST(NlCube, CeckaLateralStretchZeroesTheLateralStress) {
  const double mu = 30000 / 2.9, lambda = 30000 * 0.45 / (1.45 * 0.1);
  const double l = cecka_lateral_stretch(mu, lambda, 0.8);
  const double J = l * l * 0.8;
  EXPECT_NEAR(mu * l + (lambda * std::log(J) - mu) / l, 0.0, 1e-9 * mu);
  EXPECT_GT(l, 1.0);  // compressed along z, the block widens
}

TEST(NlCube, TheTwoStrainEnergiesDisagreeAtLargeStrain) {
  const NlScene cube = cube_scene();
  const double gap = max_relative_error(exact_probes(cube, "tled"), exact_probes(cube, "nr-neohookean"));
  EXPECT_GT(gap, 1e-3);
  EXPECT_LT(gap, 0.05);
}

TEST(NlCube, TledEndStateMatchesItsExactSolution) {
  const NlScene cube = cube_scene();
  const NlRun r = run_nl(cube, {"tled", 3, 0, 0, 0}, Backend::Cpu, Precision::Fp64, 1, {});
  ASSERT_TRUE(r.valid) << r.validity;
  EXPECT_LT(max_relative_error(r.probes, exact_probes(cube, "tled")), 1e-4);
}

TEST(NlCube, NrNeohookeanEndStateMatchesItsExactSolution) {
  const NlScene cube = cube_scene();
  const NlRun r = run_nl(cube, {"nr-neohookean", 2, 2, 1e-8, 0}, Backend::Cpu, Precision::Fp64, 1, {});
  ASSERT_TRUE(r.valid) << r.validity;
  EXPECT_GT(r.newton_iterations, 0);
  EXPECT_LT(max_relative_error(r.probes, exact_probes(cube, "nr-neohookean")), 1e-6);
}

TEST(NlBlock, TledRelaxationSettlesOnItsFinalState) {
  // The relaxation's error history against its own final state falls to zero, so every target
  // is met after some step count and never lost again.
  const NlScene block = block_scene();
  const NlRun whole = run_nl(block, {"tled", 3, 0, 0, 0}, Backend::Cpu, Precision::Fp64, 1, {});
  ASSERT_TRUE(whole.valid) << whole.validity;
  const RelaxHistory h = relax_history(block, {"tled", 3, 0, 0, 0}, whole.probes, {}, 1);
  ASSERT_TRUE(h.run.valid) << h.run.validity;
  EXPECT_EQ(h.steps.back(), whole.steps);
  EXPECT_LT(h.error.back(), 1e-12);
  const long s1 = h.steps_to(1e-2), s2 = h.steps_to(1e-3);
  EXPECT_GT(s1, 0);
  EXPECT_GE(s2, s1);
  EXPECT_LT(s2, whole.steps);
}

}  // namespace
}  // namespace eb::head_to_head
