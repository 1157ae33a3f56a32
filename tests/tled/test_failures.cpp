// Bad input and failed runs give clear answers: an unstable step inverts elements, which the
// method counts with the element and the step (the runner turns them into an invalid run,
// tests/common/cli_contract.sh); unsupported options are InputErrors.
#include <cstdint>
#include <limits>

#include "meshes/errors.h"
#include "solvers/tled/tled_setup.h"
#include "tests/tled/tled_test_util.h"

namespace eb::tled::test {
namespace {

class Failures : public ::testing::TestWithParam<Regime> {};

TEST_P(Failures, UnstableStepIsCountedWithElementAndStep) {
  const Regime r = GetParam();
  EB_TLED_SKIP_WITHOUT_DEVICE(r);
  // Ten times the stable step with a fast load: the explicit scheme blows up.
  const Scenario sc = cube(4, with_texture({"time.dt=0.01", "boundary.prescribed.0.curve.duration=0.2"}, r.texture));
  auto sim = make(sc, r.backend, r.precision);
  ValidityCounts c;
  int steps = 0;
  while (steps < 2000 && sim->validity().inverted_element_steps == 0) {
    EXPECT_NO_THROW(sim->advance(10));
    steps += 10;
  }
  c = sim->validity();
  EXPECT_TRUE(c.det_f_checked);
  EXPECT_EQ(c.inverted_threshold, 0.0);
  ASSERT_GT(c.inverted_element_steps, 0) << "no inversion in " << steps << " steps";
  EXPECT_GE(c.first_inverted_step, 0);
  EXPECT_LT(c.first_inverted_step, steps);
  EXPECT_GE(c.first_inverted_element, 0);
  EXPECT_LT(c.first_inverted_element, int64_t(sim->connectivity().size() / 8));
  EXPECT_LE(c.min_det_f, 0.0);
  // Counts are cumulative: going on never forgets the first inversion.
  sim->advance(20);
  const ValidityCounts later = sim->validity();
  EXPECT_EQ(later.first_inverted_step, c.first_inverted_step);
  EXPECT_EQ(later.first_inverted_element, c.first_inverted_element);
  EXPECT_GE(later.inverted_element_steps, c.inverted_element_steps);
}

TEST_P(Failures, UnsupportedInputIsRejected) {
  const Regime r = GetParam();
  EB_TLED_SKIP_WITHOUT_DEVICE(r);
  EXPECT_THROW(make(cube(3, {"solver.variant=colouring"}), r.backend, r.precision), InputError);
  EXPECT_THROW(make(cube(3, {"material.damage.enabled=true", "material.damage.gamma=0"}), r.backend, r.precision),
               InputError);
  EXPECT_THROW(make(cube(3, {"boundary.ground.enabled=true"}), r.backend, r.precision), InputError);
}

INSTANTIATE_TEST_SUITE_P(Tled, Failures, ::testing::ValuesIn(regimes()), regime_name);

// The limit the set-up checks and the scale part plans with: the largest slot-list entry,
// 2 * (8 E - 1) + 1, must be an int32 at tled_max_elements() hexahedra.
TEST(TledLimits, LargestSlotEntryFitsInt32) {
  const int64_t E = tled_max_elements();
  EXPECT_LE(2 * (8 * E - 1) + 1, int64_t(std::numeric_limits<int32_t>::max()));
  EXPECT_EQ(E, 134217727);
}

}  // namespace
}  // namespace eb::tled::test
