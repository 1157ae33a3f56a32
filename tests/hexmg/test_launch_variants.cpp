// The CUDA backend's launch variants compute the same step bit for bit: programmatic dependent
// launch (kernels overlap their predecessor's tail and load their matrix blocks before waiting)
// and the lattice-order mapping of the coarse-grid assembly and restriction only change when and
// by which thread each vertex is computed, never the arithmetic. The default (PDL, lattice order)
// is compared with plain stream-ordered launches in colour order (hexmg.programmatic_dependent_launch
// = false, hexmg.lattice_order = false) after 20 bunny steps, single steps and graph batches. Any difference
// means a kernel read data before its producer had finished (a race across launches), which a
// tolerance would hide.
#include <cstring>

#include "experiments/dick2011/bunny_scenario.h"
#include "tests/hexmg/hexmg_test_util.h"

namespace eb::hexmg::test {
namespace {

class LaunchVariants : public ::testing::TestWithParam<Precision> {};

std::unique_ptr<HexmgSimulation> make_variant(Scenario sc, Precision p, bool pdl, bool lattice_order) {
  sc.method_options["hexmg"]["programmatic_dependent_launch"] = pdl;
  sc.method_options["hexmg"]["lattice_order"] = lattice_order;
  return make(sc, {Backend::Cuda, p});
}

TEST_P(LaunchVariants, BunnyTwentyStepsBitwiseEqual) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device";
  const Precision p = GetParam();
  dick2011::register_bunny_scenario();
  const Scenario sc = load_scenario(dick2011::kBunnyScenario, {});
  auto fast = make_variant(sc, p, true, true);
  auto plain = make_variant(sc, p, false, false);
  // The options really took effect (otherwise both would run the same variant).
  const nlohmann::json df = fast->details(), dp = plain->details();
  ASSERT_TRUE(df.contains("programmatic_dependent_launch")) << df.dump();
  EXPECT_TRUE(df["programmatic_dependent_launch"].get<bool>());
  EXPECT_FALSE(dp["programmatic_dependent_launch"].get<bool>());
  EXPECT_EQ(df["gather_kernels_order"], "lattice");
  EXPECT_EQ(dp["gather_kernels_order"], "colour subsets");
  for (int chunk : {1, 7, 12}) {
    fast->advance(chunk);
    plain->advance(chunk);
  }
  std::vector<double> uf, vf, up, vp;
  fast->copy_state_to_host(uf, vf);
  plain->copy_state_to_host(up, vp);
  ASSERT_EQ(uf.size(), up.size());
  ASSERT_EQ(vf.size(), vp.size());
  size_t differing = 0, first = 0;
  double norm = 0;
  for (size_t i = 0; i < uf.size(); ++i) {
    norm += up[i] * up[i];
    if (std::memcmp(&uf[i], &up[i], sizeof(double)) != 0 || std::memcmp(&vf[i], &vp[i], sizeof(double)) != 0) {
      if (differing++ == 0) first = i;
    }
  }
  EXPECT_GT(norm, 0.0);  // the bunny moved: equality of zeros would prove nothing
  EXPECT_EQ(differing, 0u) << "first differing component " << first << ": u " << uf[first] << " vs " << up[first];
  EXPECT_EQ(fast->mean_coarse_iterations(), plain->mean_coarse_iterations());
}

INSTANTIATE_TEST_SUITE_P(Precisions, LaunchVariants, ::testing::Values(Precision::Fp32, Precision::Fp64),
                         [](const ::testing::TestParamInfo<Precision>& i) { return to_string(i.param); });

}  // namespace
}  // namespace eb::hexmg::test
