// The atomic-add assembly (measured alternative) gives the same motion as the paper's
// per-element slots summed per node; only the summation order differs.
#include <cmath>

#include "tests/tled/tled_test_util.h"

namespace eb::tled::test {
namespace {

class AssemblyVariants : public ::testing::TestWithParam<Regime> {};

TEST_P(AssemblyVariants, AtomicMatchesGather) {
  const Regime r = GetParam();
  EB_TLED_SKIP_WITHOUT_DEVICE(r);
  const std::vector<std::string> o = {"boundary.prescribed.0.curve.duration=1.0", "material.damage.enabled=true",
                                      "material.damage.gamma=0.5", "material.damage.m=200", "material.damage.psi0=50"};
  auto gather = make(cube(6, with_texture(o, r.texture)), r.backend, r.precision);
  auto o2 = o;
  o2.push_back("solver.variant=atomic");
  auto atomic = make(cube(6, with_texture(o2, r.texture)), r.backend, r.precision);
  gather->advance(1000);
  atomic->advance(1000);
  double umax = 0;
  const double rel = relative_difference(*gather, *atomic, &umax);
  ASSERT_GT(umax, 1e-3);
  EXPECT_LT(rel, r.precision == Precision::Fp32 ? 1e-4 : 1e-10);
  EXPECT_EQ(atomic->details().value("assembly", ""), "atomic");
}

INSTANTIATE_TEST_SUITE_P(Tled, AssemblyVariants, ::testing::ValuesIn(regimes()), regime_name);

}  // namespace
}  // namespace eb::tled::test
