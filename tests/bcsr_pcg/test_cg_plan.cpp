// The CG engine's choice (linalg::choose_cg_plan) reaches summary.json's method details, and the
// [bcsr-pcg] keys cg_single_reduction / cg_l2_residency force it. By default the host runs the
// standard iteration and the device, on a problem this small (well under the next-kernel rule's
// ~0.13M unknowns), the single reduction; the L2 is used in fp64 only. A forced single reduction
// follows the same iterates in exact arithmetic, so five steps agree with the default to rounding.
#include "tests/bcsr_pcg/bcsr_pcg_test_util.h"

namespace eb::bcsr_pcg::test {
namespace {

class CgPlanChoice : public ::testing::TestWithParam<Regime> {};

TEST_P(CgPlanChoice, SummaryStatesTheChoiceAndTheKeysForceIt) {
  const Regime r = GetParam();
  if (r.backend == Backend::Cuda && cuda_device_count() == 0)
    GTEST_SKIP() << "no usable CUDA device: " << cuda_device_info(0).reason;
  const bool device = r.backend == Backend::Cuda;
  auto automatic = make(test_box(), r);
  const nlohmann::json d = automatic->details();
  ASSERT_TRUE(d.contains("cg_dynamic")) << d.dump();
  ASSERT_TRUE(d.contains("cg_static")) << d.dump();
  EXPECT_EQ(d["cg_dynamic"]["iteration"], device ? "single-reduction" : "standard") << d["cg_dynamic"].dump();
  EXPECT_EQ(d["cg_dynamic"]["l2_resident"], device && r.precision == Precision::Fp64) << d["cg_dynamic"].dump();
  EXPECT_FALSE(d["cg_dynamic"]["iteration_reason"].get<std::string>().empty());

  const std::string flip = device ? "off" : "on";
  auto forced = make(test_box({"bcsr-pcg.cg_single_reduction=\"" + flip + "\"", "bcsr-pcg.cg_l2_residency=\"off\""}), r);
  const nlohmann::json f = forced->details();
  EXPECT_EQ(f["cg_dynamic"]["iteration"], device ? "standard" : "single-reduction") << f["cg_dynamic"].dump();
  EXPECT_EQ(f["cg_static"]["iteration"], device ? "standard" : "single-reduction") << f["cg_static"].dump();
  EXPECT_EQ(f["cg_dynamic"]["l2_resident"], false);

  automatic->advance(5);
  forced->advance(5);
  std::vector<double> ua, va, uf, vf;
  automatic->copy_state_to_host(ua, va);
  forced->copy_state_to_host(uf, vf);
  ASSERT_GT(max_abs(ua), 0.0);
  EXPECT_LE(max_relative_difference(uf, ua), r.precision == Precision::Fp32 ? 1e-4 : 1e-9);
}

INSTANTIATE_TEST_SUITE_P(BcsrPcg, CgPlanChoice, ::testing::ValuesIn(regimes()), regime_name);

}  // namespace
}  // namespace eb::bcsr_pcg::test
