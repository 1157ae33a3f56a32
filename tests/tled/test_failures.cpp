// Bad input and failed runs give clear errors: an unstable step inverts elements and is reported
// as RuntimeFailure naming the element and the step; unsupported options are InputErrors.
#include "meshes/errors.h"
#include "tests/tled/tled_test_util.h"

namespace eb::tled::test {
namespace {

class Failures : public ::testing::TestWithParam<Regime> {};

TEST_P(Failures, UnstableStepIsReportedWithElementAndStep) {
  const Regime r = GetParam();
  EB_TLED_SKIP_WITHOUT_DEVICE(r);
  // Ten times the stable step with a fast load: the explicit scheme blows up.
  const Scenario sc = cube(4, with_texture({"time.dt=0.01", "boundary.prescribed.0.curve.duration=0.2"}, r.texture));
  auto sim = make(sc, r.backend, r.precision);
  try {
    sim->advance(2000);
    FAIL() << "expected a RuntimeFailure";
  } catch (const RuntimeFailure& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("element"), std::string::npos) << msg;
    EXPECT_NE(msg.find("step"), std::string::npos) << msg;
  }
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

}  // namespace
}  // namespace eb::tled::test
