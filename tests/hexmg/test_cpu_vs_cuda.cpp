// CUDA equals CPU (same precision) after 20 steps of the bunny scenario (dick2011-bunny at about
// 11.9K hexahedra): relative displacement difference below whole_run_tolerance (1e-3 fp32, 1e-10
// fp64; hexmg_test_util.h says why), and in fp32 CUDA is as close to CPU fp64 as CPU fp32 is.
// Both run the same EB_HD formulas; the differences are summation order in the coarsest CG's
// dot products, FMA contraction and, in Gauss-Seidel, the 13-way split of each row sum.
#include <cstdio>

#include "experiments/dick2011/bunny_scenario.h"
#include "tests/hexmg/hexmg_test_util.h"

namespace eb::hexmg::test {
namespace {

class CpuVsCuda : public ::testing::TestWithParam<Precision> {};

TEST_P(CpuVsCuda, BunnyTwentyStepsAgree) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device";
  const Precision p = GetParam();
  dick2011::register_bunny_scenario();
  const Scenario sc = load_scenario(dick2011::kBunnyScenario, {});
  auto cpu = make(sc, {Backend::Cpu, p}, 4);
  auto gpu = make(sc, {Backend::Cuda, p});
  ASSERT_EQ(cpu->nodes().size(), gpu->nodes().size());
  advance_twenty(*cpu);
  advance_twenty(*gpu);
  const double rel = relative_difference(*gpu, *cpu);
  std::printf("bunny, 20 steps, %s: |u_cuda - u_cpu| / |u_cpu| = %.3e\n", to_string(p).c_str(), rel);
  EXPECT_LT(rel, whole_run_tolerance(p));
  if (p == Precision::Fp32) fp32_accuracy_check(sc, *gpu, *cpu);
  // The same step's statistics agree too.
  EXPECT_NEAR(cpu->solver_stats().reduction(), gpu->solver_stats().reduction(), p == Precision::Fp32 ? 0.05 : 1e-6);
}

INSTANTIATE_TEST_SUITE_P(Precisions, CpuVsCuda, ::testing::Values(Precision::Fp32, Precision::Fp64),
                         [](const ::testing::TestParamInfo<Precision>& i) { return to_string(i.param); });

}  // namespace
}  // namespace eb::hexmg::test
