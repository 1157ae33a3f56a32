// What TLED reports about its own run besides the state: clean validity counts on a valid load
// (det F checked every step, its minimum the compression reached), and details() without side
// effects (no allocation, the same answer every time).
#include "solvers/common/cuda_info.h"
#include "tests/tled/tled_test_util.h"

namespace eb::tled::test {
namespace {

class Validity : public ::testing::TestWithParam<Regime> {};

TEST_P(Validity, ValidLoadHasCleanCounts) {
  const Regime r = GetParam();
  EB_TLED_SKIP_WITHOUT_DEVICE(r);
  // 1 s of the 20% compression: well into the loading, nothing near inversion.
  auto sim = make(cube(4, with_texture({"boundary.prescribed.0.curve.duration=1.0"}, r.texture)), r.backend, r.precision);
  const ValidityCounts before = sim->validity();
  EXPECT_TRUE(before.det_f_checked);
  EXPECT_FALSE(std::isfinite(before.min_det_f));  // no det F computed yet
  sim->advance(400);
  const ValidityCounts c = sim->validity();
  EXPECT_EQ(c.inverted_element_steps, 0);
  EXPECT_EQ(c.first_inverted_step, -1);
  EXPECT_EQ(c.nonfinite_steps, 0);
  EXPECT_EQ(c.solver_failures, 0);
  EXPECT_GT(c.min_det_f, 0.8);
  EXPECT_LT(c.min_det_f, 1.0);  // compressed
}

TEST_P(Validity, DetailsHaveNoSideEffects) {
  const Regime r = GetParam();
  EB_TLED_SKIP_WITHOUT_DEVICE(r);
  auto sim = make(cube(3, with_texture({}, r.texture)), r.backend, r.precision);
  sim->advance(60);
  const std::size_t held = cuda_tracked_bytes();
  cuda_reset_peak_tracked_bytes();
  const nlohmann::json first = sim->details();
  EXPECT_EQ(cuda_tracked_bytes(), held);
  EXPECT_EQ(cuda_peak_tracked_bytes(), held);  // nothing allocated, not even briefly
  EXPECT_EQ(sim->details(), first);
  EXPECT_FALSE(first.contains("kernel_profile"));
  EXPECT_EQ(first["steps_done"], 60);
}

INSTANTIATE_TEST_SUITE_P(Tled, Validity, ::testing::ValuesIn(regimes()), regime_name);

}  // namespace
}  // namespace eb::tled::test
