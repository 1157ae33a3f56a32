// The validity verdict: the method's counts and the runner's checks on sampled states combine
// into summary.json's "validity", and run_is_valid never takes an unrecorded run for valid.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "solvers/common/boundary.h"
#include "solvers/common/validity.h"

namespace eb {
namespace {

std::vector<double> state(double ux) { return {ux, 0.0, 0.0, 0.0, 0.0, 0.0}; }  // two nodes

ValidityCounts inverted(int64_t element_steps, int64_t first_step, int64_t first_element) {
  ValidityCounts c;
  c.det_f_checked = true;
  c.inverted_element_steps = element_steps;
  c.first_inverted_step = first_step;
  c.first_inverted_element = first_element;
  return c;
}

bool mentions(const std::vector<std::string>& reasons, const std::string& text) {
  for (const auto& r : reasons)
    if (r.find(text) != std::string::npos) return true;
  return false;
}

TEST(Validity, CleanRunIsValid) {
  ValidityTracker t(1.0, 0.01);
  ValidityCounts c;
  c.det_f_checked = true;
  c.min_det_f = 0.8;
  t.set_method_counts(c);
  EXPECT_TRUE(t.check_state(10, state(0.1), state(0.0)));
  const auto j = t.to_json();
  EXPECT_TRUE(j["valid"].get<bool>());
  EXPECT_TRUE(j["reasons"].empty());
  EXPECT_TRUE(j["first_invalid_step"].is_null());
  EXPECT_EQ(j["inverted_element_steps"], 0);
  EXPECT_DOUBLE_EQ(j["min_det_f"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(j["growth"]["max_displacement_m"].get<double>(), 0.1);
}

TEST(Validity, InvertedElementsNameElementAndStep) {
  ValidityTracker t(1.0, 0.01);
  ValidityCounts c = inverted(29488, 7, 1234);
  c.min_det_f = -0.5;
  t.set_method_counts(c);
  EXPECT_FALSE(t.valid());
  EXPECT_FALSE(t.diverged());
  EXPECT_EQ(t.first_invalid_step(), 7);
  ASSERT_EQ(t.reasons().size(), 1u);
  EXPECT_NE(t.reasons()[0].find("element 1234"), std::string::npos) << t.reasons()[0];
  EXPECT_NE(t.reasons()[0].find("step 7"), std::string::npos) << t.reasons()[0];
  const auto j = t.to_json();
  EXPECT_EQ(j["first_inverted"]["element"], 1234);
  EXPECT_EQ(j["first_inverted"]["step"], 7);
  EXPECT_EQ(j["inverted_element_steps"], 29488);
  EXPECT_EQ(j["first_invalid_step"], 7);
}

TEST(Validity, PositiveThresholdIsNamedAsSuch) {
  ValidityTracker t(1.0, 0.01);
  ValidityCounts c = inverted(5, 3, 8);
  c.inverted_threshold = 0.05;
  t.set_method_counts(c);
  EXPECT_TRUE(mentions(t.reasons(), "element 8 inverted or degenerate (det F <= 0.05) at step 3")) << t.reasons()[0];
}

TEST(Validity, NonFiniteStateDivergesAndNamesTheNode) {
  ValidityTracker t(1.0, 0.5);
  std::vector<double> u = {0.0, 0.0, 0.0, 0.0, std::numeric_limits<double>::quiet_NaN(), 0.0};
  EXPECT_FALSE(t.check_state(12, u, state(0.0)));
  EXPECT_TRUE(t.diverged());
  EXPECT_EQ(t.first_invalid_step(), 12);
  EXPECT_TRUE(mentions(t.reasons(), "non-finite displacement at node 1 at step 12 (t = 6 s)"));
  const auto j = t.to_json();
  EXPECT_EQ(j["nonfinite"]["node"], 1);
  EXPECT_EQ(j["nonfinite"]["field"], "displacement");
  // A velocity that overflowed is named as such.
  ValidityTracker tv(1.0, 0.5);
  EXPECT_FALSE(tv.check_state(3, state(0.0), state(std::numeric_limits<double>::infinity())));
  EXPECT_EQ(tv.to_json()["nonfinite"]["field"], "velocity");
}

TEST(Validity, MethodNonFiniteCountsDiverge) {
  ValidityTracker t(1.0, 0.01);
  ValidityCounts c;
  c.nonfinite_steps = 2;
  c.first_nonfinite_step = 40;
  c.first_nonfinite_element = 3;
  t.set_method_counts(c);
  EXPECT_TRUE(t.diverged());
  EXPECT_TRUE(mentions(t.reasons(), "element 3 at step 40"));
}

TEST(Validity, GrowthBeyondTheBoundIsInvalid) {
  ValidityTracker t(2.0, 0.01);
  EXPECT_TRUE(t.check_state(5, state(kGrowthFactor * 2.0 * 0.99), state(0.0)));
  EXPECT_TRUE(t.valid());
  EXPECT_TRUE(t.check_state(6, state(kGrowthFactor * 2.0 * 1.01), state(0.0)));
  EXPECT_FALSE(t.valid());
  EXPECT_FALSE(t.diverged());
  EXPECT_EQ(t.first_invalid_step(), 6);
  EXPECT_EQ(t.to_json()["growth"]["exceeded_at_step"], 6);
  EXPECT_DOUBLE_EQ(t.to_json()["growth"]["bound_m"].get<double>(), kGrowthFactor * 2.0);
}

TEST(Validity, SolverFailuresCountFromMethodOrSamples) {
  ValidityTracker t(1.0, 0.01);
  SolverStats fixed;
  fixed.iterations = 2;  // fixed cycles: nothing to fail
  t.check_solver(3, fixed);
  EXPECT_TRUE(t.valid());
  SolverStats missed;
  missed.iterations = 100;
  missed.converged = false;
  t.check_solver(9, missed);
  EXPECT_FALSE(t.valid());
  EXPECT_EQ(t.first_invalid_step(), 9);
  ValidityCounts c;
  c.solver_failures = 4;
  c.first_solver_failure_step = 2;
  t.set_method_counts(c);
  EXPECT_EQ(t.first_invalid_step(), 2);
  EXPECT_EQ(t.to_json()["solver_failures"], 4);  // the larger of the two counts, not their sum
}

TEST(Validity, ReasonsComeEarliestFirst) {
  ValidityTracker t(1.0, 0.01);
  EXPECT_TRUE(t.check_state(20, state(100.0), state(0.0)));
  t.set_method_counts(inverted(1, 4, 0));
  const auto r = t.reasons();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_NE(r[0].find("inverted"), std::string::npos);
  EXPECT_NE(r[1].find("max |u|"), std::string::npos);
}

TEST(Validity, UncheckedDetFIsReportedAsNull) {
  ValidityTracker t(1.0, 0.01);
  const auto j = t.to_json();
  EXPECT_FALSE(j["det_f_checked"].get<bool>());
  EXPECT_TRUE(j["inverted_element_steps"].is_null());
  EXPECT_TRUE(j["min_det_f"].is_null());
}

TEST(Validity, RunIsValidReadsTheSummary) {
  std::string why;
  ValidityTracker ok(1.0, 0.01);
  EXPECT_TRUE(run_is_valid({{"validity", ok.to_json()}}, &why));
  EXPECT_TRUE(why.empty());

  ValidityTracker bad(1.0, 0.01);
  bad.set_method_counts(inverted(3, 8, 77));
  bad.check_state(9, state(50.0), state(0.0));
  EXPECT_FALSE(run_is_valid({{"validity", bad.to_json()}}, &why));
  EXPECT_EQ(why.rfind("invalid: element 77", 0), 0u) << why;
  EXPECT_NE(why.find("(+1 more)"), std::string::npos) << why;

  // Summaries written before validity was recorded are never taken for valid.
  EXPECT_FALSE(run_is_valid({{"schema", "elastobench.summary/1"}}, &why));
  EXPECT_EQ(why, "validity not recorded");
  EXPECT_FALSE(run_is_valid({{"validity", {{"valid", nullptr}}}}, &why));
  EXPECT_EQ(why, "validity not recorded");
}

TEST(Validity, BoundingBoxDiagonal) {
  EXPECT_DOUBLE_EQ(bounding_box_diagonal({{0, 0, 0}, {3, 0, 0}, {0, 4, 0}, {1, 1, 0}}), 5.0);
  EXPECT_DOUBLE_EQ(bounding_box_diagonal({}), 0.0);
}

}  // namespace
}  // namespace eb
