// The CUDA backend equals the CPU backend (same precision) after 20 dynamic steps of a small
// cantilever under gravity (the loaded box of bcsr_pcg_test_util.h: a point force on a smooth
// curve and a traction on a linear one, whose factors come from the host here), for both
// variants (gather, scatter) with the step as separate launches (bcsr-pcg.graph = false), and
// the validity counts agree. The default, one CUDA graph per step, is the contract's (tests/
// contract/test_cpu_vs_cuda.cpp, whose scene has loads on curves too). GPU binary only.
//
// Tolerance, relative to the largest displacement: 1e-4 in fp32, 1e-10 in fp64. The two backends
// compute the same formulas with other summation orders (the CG's reductions, the scatter's
// atomics) and other contractions (FMA on the device); 18 CG iterations per step carry each
// step's rounding into the next state. Measured on an H100: fp32 u 2.2e-6, v 1.4e-5 (relative to
// the largest |v|); fp64 4e-15 and 2.5e-14. A wrong load factor
// (one step off in the graph), a missing term or a wrong layout fail by orders of magnitude.
#include <cstdio>

#include "tests/bcsr_pcg/bcsr_pcg_test_util.h"

namespace eb::bcsr_pcg::test {
namespace {

struct CrossCase {
  Precision precision;
  std::string variant;
  bool graph;
};
std::string case_name(const ::testing::TestParamInfo<CrossCase>& i) {
  return to_string(i.param.precision) + "_" + i.param.variant + (i.param.graph ? "_graph" : "_launches");
}
std::vector<CrossCase> cases() {
  std::vector<CrossCase> out;
  for (Precision p : {Precision::Fp32, Precision::Fp64})
    for (const char* v : {"gather", "scatter"})
      out.push_back({p, v, false});
  return out;
}

class CpuVsCuda : public ::testing::TestWithParam<CrossCase> {};

TEST_P(CpuVsCuda, TwentyStepsAgree) {
  const CrossCase c = GetParam();
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: " << cuda_device_info(0).reason;
  const Scenario sc = test_box({std::string("bcsr-pcg.graph=") + (c.graph ? "true" : "false")});
  auto cpu = make(sc, Backend::Cpu, c.precision, 2, c.variant);
  auto gpu = make(sc, Backend::Cuda, c.precision, 1, c.variant);
  cpu->advance(20);
  gpu->advance(13);  // two batches: the graph's step counter carries over
  gpu->advance(7);
  std::vector<double> uc, vc, ug, vg;
  cpu->copy_state_to_host(uc, vc);
  gpu->copy_state_to_host(ug, vg);
  const double du = max_relative_difference(ug, uc), dv = max_relative_difference(vg, vc);
  std::printf("%s: largest displacement %.3e m; CUDA against CPU: u %.2e, v %.2e relative\n", case_name({c, 0}).c_str(),
              max_abs(uc), du, dv);
  ASSERT_GT(max_abs(uc), 0.0);
  const double tol = c.precision == Precision::Fp32 ? 1e-4 : 1e-10;
  EXPECT_LE(du, tol);
  EXPECT_LE(dv, tol);
  EXPECT_EQ(gpu->steps_done(), 20);
  const ValidityCounts a = cpu->validity(), b = gpu->validity();
  EXPECT_EQ(a.inverted_element_steps, 0);
  EXPECT_EQ(b.inverted_element_steps, 0);
  EXPECT_EQ(b.nonfinite_steps, 0);
  EXPECT_EQ(b.solver_failures, 0);
  EXPECT_NEAR(b.min_det_f, a.min_det_f, c.precision == Precision::Fp32 ? 1e-5 : 1e-12);
}

INSTANTIATE_TEST_SUITE_P(BcsrPcg, CpuVsCuda, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace eb::bcsr_pcg::test
