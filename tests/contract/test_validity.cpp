// Every implementation judges the runs that must not count (solvers/common/validity.h), through
// the runner as `elastobench run` does (summary.json's "validity"):
//  - a load that inverts elements (a million g on the contract scene, 20 steps) makes the run
//    invalid, naming the first invalid step and, where the method checks det F, the first
//    inverted element (an index in connectivity() order) and its step;
//  - an unconstrained body (no boundary.fixed) under gravity falls freely in time stepping: no
//    inverted element, no non-finite value, no runaway growth, and every node has moved down. (The
//    verdict itself may still be "invalid" where a variant's default solver tolerance is out of
//    reach of its precision on this scene, hexmg's tolerance and jacobi-pcg variants in fp32:
//    that is the solver's statement about the scene, clamped or not, not about the support.)
//  - a static solve of an unconstrained body (methods with static solves) is singular: invalid,
//    naming the step.
// tests/bad_input/method_faults.py checks the same through the CLI's exit codes, CPU only.
#include "solvers/common/runner.h"
#include "tests/contract/contract_util.h"

namespace eb::contract {
namespace {

nlohmann::json run(const Impl& i, const Scenario& sc, int steps) {
  RunRequest req;
  req.method = i.method;
  req.variant = i.variant;
  req.options = run_options(i);
  req.scenario = sc;
  req.scenario_origin = "contract test";
  req.steps = steps;
  req.quiet = true;
  req.write_files = false;
  return run_simulation(req);
}

class DynamicValidity : public ::testing::TestWithParam<Impl> {};

TEST_P(DynamicValidity, InvertingLoadIsJudgedInvalid) {
  const Impl i = GetParam();
  EB_CONTRACT_SKIP_WITHOUT_DEVICE(i);
  const nlohmann::json s = run(i, scene({"boundary.gravity=[0.0, 0.0, -1.0e7]"}), 20);
  const nlohmann::json& v = s["validity"];
  ASSERT_FALSE(v["valid"].get<bool>()) << v.dump();
  EXPECT_GE(v["first_invalid_step"].get<long>(), 1) << v.dump();
  EXPECT_LE(v["first_invalid_step"].get<long>(), 20) << v.dump();
  ASSERT_FALSE(v["reasons"].empty());
  if (v["det_f_checked"].get<bool>()) {
    EXPECT_GT(v["inverted_element_steps"].get<long>(), 0) << v.dump();
    const long element = v["first_inverted"]["element"].get<long>(), step = v["first_inverted"]["step"].get<long>();
    EXPECT_GE(element, 0);
    EXPECT_LT(element, s["mesh"]["elements"].get<long>()) << "not an element index";
    EXPECT_GE(step, 1);
    EXPECT_LE(step, 20);
    EXPECT_NE(v["reasons"][0].get<std::string>().find("element " + std::to_string(element) + " inverted"),
              std::string::npos)
        << v.dump();
  }
}

TEST_P(DynamicValidity, UnconstrainedBodyFallsFreely) {
  const Impl i = GetParam();
  EB_CONTRACT_SKIP_WITHOUT_DEVICE(i);
  const nlohmann::json s = run(i, scene({"boundary.fixed=[]"}), 10);
  const nlohmann::json& v = s["validity"];
  EXPECT_EQ(v["inverted_element_steps"], 0) << v.dump();
  EXPECT_TRUE(v["nonfinite"]["first_step"].is_null()) << v.dump();
  EXPECT_EQ(v["nonfinite"]["method_steps"], 0) << v.dump();
  EXPECT_TRUE(v["growth"]["exceeded_at_step"].is_null()) << v.dump();
  EXPECT_LT(s["displacement"]["max"][2].get<double>(), 0.0) << "a node did not fall: " << s["displacement"].dump();
}

EB_CONTRACT_INSTANTIATE(DynamicValidity, [](const Impl& i) { return i.info().dynamic; });

class StaticValidity : public ::testing::TestWithParam<Impl> {};

TEST_P(StaticValidity, UnconstrainedBodyIsInvalid) {
  const Impl i = GetParam();
  EB_CONTRACT_SKIP_WITHOUT_DEVICE(i);
  const nlohmann::json s = run(i, scene({"boundary.fixed=[]", "time.mode=static"}), -1);
  const nlohmann::json& v = s["validity"];
  EXPECT_FALSE(v["valid"].get<bool>()) << v.dump();
  EXPECT_EQ(v["first_invalid_step"], 1) << v.dump();
}

EB_CONTRACT_INSTANTIATE(StaticValidity, [](const Impl& i) { return i.info().static_solve; });

}  // namespace
}  // namespace eb::contract
