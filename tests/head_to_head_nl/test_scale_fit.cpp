// The scale part's extrapolation on a synthetic table (scale_fit.h).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "experiments/head_to_head/scale_fit.h"
#include "meshes/errors.h"

namespace eb::head_to_head {
namespace {

TEST(ScaleFit, LineThroughExactPoints) {
  const LinearFit f = fit_line({1e4, 5e4, 2e5}, {1e6 + 200 * 1e4, 1e6 + 200 * 5e4, 1e6 + 200 * 2e5});
  EXPECT_NEAR(f.slope, 200, 1e-9);
  EXPECT_NEAR(f.intercept, 1e6, 1e-3);
  EXPECT_THROW(fit_line({1, 1}, {2, 3}), std::invalid_argument);
  EXPECT_THROW(fit_line({1}, {2}), std::invalid_argument);
}

// bytes = 1 MB + 200 B per element, set-up = 0.1 s + 1 us per element, a step 1 ms + 10 ns per
// element, 80 GB free.
std::vector<ScaleSample> table() {
  return {{1e5, 1e6 + 200 * 1e5, 0.2, 0.002}, {8e5, 1e6 + 200 * 8e5, 0.9, 0.009}};
}

TEST(ScaleFit, SetupTimeBoundsTheSize) {
  const ScalePlan p = plan_scale(table(), 80e9, 0.8, 45.0, 4.0);
  EXPECT_NEAR(p.memory_elements, (0.8 * 80e9 - 1e6) / 200, 1.0);
  EXPECT_NEAR(p.step_elements, (4.0 - 0.001) / 1e-8, 1e3);
  EXPECT_NEAR(p.time_elements, (45.0 - 0.1) / 1e-6, 1.0);
  EXPECT_EQ(p.limited_by, "setup time");
  EXPECT_NEAR(p.elements, p.time_elements, 1e-6);
}

TEST(ScaleFit, MemoryBoundsTheSize) {
  const ScalePlan p = plan_scale(table(), 4e9, 0.8, 45.0, 4.0);
  EXPECT_EQ(p.limited_by, "memory");
  EXPECT_NEAR(p.elements, (0.8 * 4e9 - 1e6) / 200, 1.0);
  EXPECT_LE(p.bytes.at(p.elements), 0.8 * 4e9 * (1 + 1e-12));
}

TEST(ScaleFit, NoGrowthIsRefused) {
  EXPECT_THROW(plan_scale({{1e5, 1e6, 0.1, 0.01}, {2e5, 1e6, 0.1, 0.01}}, 80e9, 0.8, 45.0, 4.0),
               std::invalid_argument);
}

TEST(ScaleFit, StepTimeBoundsTheSize) {
  const ScalePlan p = plan_scale(table(), 80e9, 0.8, 45.0, 0.2);
  EXPECT_EQ(p.limited_by, "step time");
  EXPECT_NEAR(p.elements, (0.2 - 0.001) / 1e-8, 1e3);
}

TEST(ScaleFit, BeamDivisionsStayWithinTheCount) {
  const std::vector<int> hex = beam_divisions(1.0e7, 1);
  EXPECT_EQ(hex[0], 10 * hex[1]);
  EXPECT_LE(double(hex[0]) * hex[1] * hex[2], 1.0e7);
  EXPECT_GT(double(hex[0]) * (hex[1] + 1) * (hex[2] + 1), 1.0e7);  // m is the largest that fits
  const std::vector<int> tet = beam_divisions(6.0e7, 6);
  EXPECT_EQ(tet, (std::vector<int>{1000, 100, 100}));
  EXPECT_EQ(beam_divisions(0, 6), (std::vector<int>{10, 1, 1}));
}

TEST(ScaleFit, AMethodsIndexLimitCapsThePlan) {
  ScalePlan p = plan_scale(table(), 80e9, 0.8, 45.0, 4.0);
  const double planned = p.elements;
  const std::string bound = p.limited_by;
  cap_scale(p, 0, "none");  // no limit
  EXPECT_EQ(p.elements, planned);
  cap_scale(p, planned * 2, "far");  // a limit above the plan changes nothing
  EXPECT_EQ(p.limited_by, bound);
  cap_scale(p, planned / 3, "32-bit gather offsets");
  EXPECT_EQ(p.elements, planned / 3);
  EXPECT_EQ(p.limited_by, "32-bit gather offsets");
}

TEST(ScaleFit, HostMemoryCapsThePlan) {
  // 200 B per element on the device (80 GB free: about 320M elements), 600 B per element on the
  // host plus 50 MB: a 100 GB host holds (0.8 x 100e9 - 50e6) / 600 elements, fewer.
  std::vector<ScaleSample> t = table();
  t[0].host_bytes = 50e6 + 600 * t[0].elements;
  t[1].host_bytes = 50e6 + 600 * t[1].elements;
  ScalePlan p = plan_scale(t, 80e9, 0.8, 1e9, 1e9);
  ASSERT_EQ(p.limited_by, "memory");
  cap_scale_host(p, t, 100e9, 0.8);
  EXPECT_NEAR(p.host.slope, 600, 1e-6);
  EXPECT_NEAR(p.host_elements, (0.8 * 100e9 - 50e6) / 600, 1.0);
  EXPECT_EQ(p.limited_by, "host memory");
  EXPECT_NEAR(p.elements, p.host_elements, 1.0);
  // A host with room to spare, an unknown host, or samples without host bytes change nothing.
  for (const auto& [samples, available] : std::vector<std::pair<std::vector<ScaleSample>, double>>{
           {t, 1e15}, {t, 0.0}, {table(), 100e9}}) {
    ScalePlan q = plan_scale(t, 80e9, 0.8, 1e9, 1e9);
    const double planned = q.elements;
    cap_scale_host(q, samples, available, 0.8);
    EXPECT_EQ(q.limited_by, "memory");
    EXPECT_EQ(q.elements, planned);
  }
}

TEST(ScaleFit, MethodListKeepsOrderAndRefusesUnknownNames) {
  EXPECT_EQ(scale_method_list("tled,hexmg,tled"), (std::vector<std::string>{"tled", "hexmg"}));
  try {
    scale_method_list("hexmg,tledd");
    FAIL() << "an unknown method was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'tledd'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(scale_method_list(""), InputError);
}

// Each fraction option refuses values outside (0, 0.95] under its own name: a host-memory share of
// 1.5 would let jobs sharing a host plan past it.
TEST(ScaleFit, FractionOptionsNameThemselvesWhenRefused) {
  for (const char* key : {"scale_memory_fraction", "scale_host_fraction"}) {
    const ExperimentOption* found = nullptr;
    const std::vector<ExperimentOption> options = scale_part_options();
    for (const ExperimentOption& o : options)
      if (o.key == key) found = &o;
    ASSERT_NE(found, nullptr) << key;
    EXPECT_NO_THROW(found->check("0.25")) << key;
    for (const char* bad : {"1.5", "0", "x", "0.3x"}) {
      try {
        found->check(bad);
        ADD_FAILURE() << key << "=" << bad << " was accepted";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find(std::string(key) + "='" + bad + "'"), std::string::npos) << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace eb::head_to_head
