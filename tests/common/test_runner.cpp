// The runner's summary with a scripted method: solver statistics over the real steps only
// (one level and nested), converged only where a tolerance applies, validity from the method's
// counts and from the sampled states, a diverged run stopped with its summary kept, and the
// after-run hook.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include "meshes/errors.h"
#include "solvers/common/registry.h"
#include "solvers/common/runner.h"
#include "tests/common/common_test_util.h"

namespace eb {
namespace {

// What the scripted method does, as functions of the step that produced the state.
struct Script {
  int iterations = 2;                  // per step (0: an explicit method)
  std::optional<bool> converged;       // empty: fixed iterations
  long nan_from = -1;                  // displacement is NaN from this step on
  long inverted_from = -1;             // one inverted element per step from this step on
  double reduction = 0.25;
  double u_per_step = 1e-3;            // every displacement component grows by this per step
  // Nested solves: outer iterations per step (0: one level), alternating between outer and
  // outer + 1; outer iteration j takes iterations + j inner iterations.
  int outer = 0;
  std::optional<bool> outer_converged;
};
Script g_script;

class ScriptedSimulation final : public Simulation {
 public:
  ScriptedSimulation() {
    for (int k = 0; k < 8; ++k) nodes_.push_back({double(k & 1), double((k >> 1) & 1), double(k >> 2)});
    conn_ = {0, 1, 3, 2, 4, 5, 7, 6};
    fixed_.assign(8, 0);
  }
  const std::vector<mesh::Vec3>& nodes() const override { return nodes_; }
  mesh::CellType cell_type() const override { return mesh::CellType::Hexahedron; }
  const std::vector<int32_t>& connectivity() const override { return conn_; }
  const std::vector<uint8_t>& fixed_nodes() const override { return fixed_; }
  double dt() const override { return 0.1; }
  void advance(int steps) override {
    for (int k = 0; k < steps; ++k) {
      ++step_;
      if (g_script.inverted_from >= 0 && step_ >= g_script.inverted_from) {
        ++counts_.inverted_element_steps;
        if (counts_.first_inverted_step < 0) {
          counts_.first_inverted_step = step_;
          counts_.first_inverted_element = 0;
        }
        counts_.min_det_f = -0.1;
      }
    }
  }
  void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) override {
    const bool nan = g_script.nan_from >= 0 && step_ >= g_script.nan_from;
    u.assign(24, nan ? std::numeric_limits<double>::quiet_NaN() : g_script.u_per_step * double(step_));
    v.assign(24, 0.0);
  }
  WorkCounts work_per_step() const override { return {10.0, 100.0, BytesConvention::Compulsory}; }
  SolverStats solver_stats() const override {
    SolverStats s;
    if (step_ == 0) return s;
    s.iterations = g_script.iterations;
    s.initial_residual = 2.0;
    s.final_residual = 2.0 * g_script.reduction;
    s.converged = g_script.converged;
    if (g_script.outer > 0) {
      s.outer_iterations = g_script.outer + int(step_ % 2);
      s.iterations = 0;
      for (int j = 0; j < s.outer_iterations; ++j) {
        s.inner_per_outer.push_back(g_script.iterations + j);
        s.iterations += g_script.iterations + j;
      }
      s.outer_initial_residual = 10.0;
      s.outer_final_residual = 10.0 * std::pow(0.1, s.outer_iterations);
      s.outer_converged = g_script.outer_converged;
    }
    return s;
  }
  ValidityCounts validity() const override { return counts_; }

  long step_ = 0;

 private:
  std::vector<mesh::Vec3> nodes_;
  std::vector<int32_t> conn_;
  std::vector<uint8_t> fixed_;
  ValidityCounts counts_ = [] {
    ValidityCounts c;
    c.det_f_checked = true;
    return c;
  }();
};

const char* kMethod = "scripted-runner-test";

class Runner : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    MethodInfo info;
    info.name = kMethod;
    info.summary = "scripted method of test_runner";
    info.variants = {{"scripted", "the script", {}}};
    test::register_test_method(info, [](const Scenario&, const RunOptions&) { return std::make_unique<ScriptedSimulation>(); });
  }
  void SetUp() override {
    g_script = Script{};
    dir_ = test::fresh_test_dir("eb_test_runner");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  RunRequest request(int steps) const {
    RunRequest req;
    req.method = kMethod;
    req.options.threads = 1;
    req.scenario = load_scenario("cantilever", {"output.probe_every=1"});
    req.scenario_origin = "cantilever";
    req.out_dir = dir_;
    req.steps = steps;
    req.quiet = true;
    return req;
  }
  nlohmann::json run(int steps) const { return run_simulation(request(steps)); }
  std::filesystem::path dir_;
};

TEST_F(Runner, MeanIterationsCountsOnlyRealSteps) {
  const auto s = run(20);
  // Step 0 (the initial state) reports no solve; averaging it in gave 1.9 here.
  EXPECT_DOUBLE_EQ(s["solver"]["mean_iterations"].get<double>(), 2.0);
  EXPECT_EQ(s["solver"]["sampled_steps"], 20);
}

TEST_F(Runner, NestedSolvesReportBothLevels) {
  g_script.iterations = 3;
  g_script.outer = 2;
  g_script.outer_converged = true;
  g_script.converged = false;  // a linear solve inside Newton may stop early; the step's verdict is Newton's
  const auto s = run(10);
  const auto& sv = s["solver"];
  EXPECT_EQ(sv["levels"], 2);
  EXPECT_EQ(sv["mode"], "tolerance");
  EXPECT_TRUE(sv["all_converged"].get<bool>());
  EXPECT_TRUE(s["validity"]["valid"].get<bool>());
  // Steps 1..10: odd steps 3 outer iterations (3 + 4 + 5 = 12 inner), even steps 2 (3 + 4 = 7).
  EXPECT_EQ(sv["outer"]["iterations"], (nlohmann::json{{"min", 2.0}, {"mean", 2.5}, {"max", 3.0}}));
  EXPECT_EQ(sv["inner"]["iterations"], (nlohmann::json{{"min", 7.0}, {"mean", 9.5}, {"max", 12.0}}));
  EXPECT_DOUBLE_EQ(sv["mean_iterations"].get<double>(), 9.5);
  // Per outer iteration: 25 of them, 3 and 4 in every step (10 each), 5 in the five odd steps.
  EXPECT_EQ(sv["inner"]["iterations_per_outer"]["min"], 3.0);
  EXPECT_EQ(sv["inner"]["iterations_per_outer"]["max"], 5.0);
  EXPECT_DOUBLE_EQ(sv["inner"]["iterations_per_outer"]["mean"].get<double>(), (30.0 + 40.0 + 25.0) / 25.0);
  EXPECT_EQ(sv["outer"]["last_iterations"], 2);  // step 10
  EXPECT_DOUBLE_EQ(sv["outer"]["reduction"]["min"].get<double>(), 1e-3);
  EXPECT_DOUBLE_EQ(sv["outer"]["last_reduction"].get<double>(), 1e-2);

  std::ifstream in(dir_ / "timeseries.csv");
  std::string header, row0, row1;
  std::getline(in, header);
  std::getline(in, row0);
  std::getline(in, row1);
  EXPECT_EQ(header.rfind("step,time,max_displacement,max_velocity,iterations,residual,initial_residual,reduction,"
                         "outer_iterations,outer_initial_residual,outer_residual,inner_per_outer,tip_ux",
                         0),
            0u)
      << header;
  EXPECT_NE(row1.find(",12,0.5,2,0.25,3,10,"), std::string::npos) << row1;  // step 1
  EXPECT_NE(row1.find(",3;4;5,"), std::string::npos) << row1;

  g_script.outer_converged = false;
  const auto f = run(4);
  EXPECT_FALSE(f["solver"]["all_converged"].get<bool>());
  EXPECT_FALSE(f["validity"]["valid"].get<bool>());
}

TEST_F(Runner, OneLevelSolvesHaveNoOuterLevel) {
  const auto s = run(6);
  EXPECT_EQ(s["solver"]["levels"], 1);
  EXPECT_TRUE(s["solver"]["outer"].is_null());
  EXPECT_TRUE(s["solver"]["inner"]["iterations_per_outer"].is_null());
  EXPECT_EQ(s["solver"]["inner"]["reduction"], (nlohmann::json{{"min", 0.25}, {"mean", 0.25}, {"max", 0.25}}));
  EXPECT_EQ(s["time"]["mode"], "dynamic");
  EXPECT_EQ(s["variant"], "scripted");
}

TEST_F(Runner, FixedIterationsReportReductionNotConvergence) {
  g_script.reduction = 0.4;
  const auto s = run(10);
  EXPECT_EQ(s["solver"]["mode"], "fixed");
  EXPECT_TRUE(s["solver"]["all_converged"].is_null());
  EXPECT_DOUBLE_EQ(s["solver"]["last_reduction"].get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(s["solver"]["worst_reduction"].get<double>(), 0.4);
  EXPECT_TRUE(s["validity"]["valid"].get<bool>());
}

TEST_F(Runner, ToleranceModeReportsConvergenceAndFailures) {
  g_script.converged = true;
  auto s = run(10);
  EXPECT_EQ(s["solver"]["mode"], "tolerance");
  EXPECT_TRUE(s["solver"]["all_converged"].get<bool>());
  EXPECT_TRUE(s["validity"]["valid"].get<bool>());

  g_script.converged = false;
  s = run(10);
  EXPECT_FALSE(s["solver"]["all_converged"].get<bool>());
  EXPECT_FALSE(s["validity"]["valid"].get<bool>());
  EXPECT_EQ(s["validity"]["first_solver_failure_step"], 1);
}

TEST_F(Runner, ExplicitMethodHasNoSolverFigures) {
  g_script.iterations = 0;
  const auto s = run(5);
  EXPECT_EQ(s["solver"]["mode"], "none");
  EXPECT_TRUE(s["solver"]["all_converged"].is_null());
}

TEST_F(Runner, InvertedElementsMakeTheRunInvalidWithoutStoppingIt) {
  g_script.inverted_from = 4;
  const auto s = run(12);
  EXPECT_EQ(s["time"]["steps"], 12);
  EXPECT_FALSE(s["validity"]["valid"].get<bool>());
  EXPECT_EQ(s["validity"]["first_inverted"]["step"], 4);
  EXPECT_EQ(s["validity"]["inverted_element_steps"], 9);
  EXPECT_EQ(s["validity"]["first_invalid_step"], 4);
  // The files document the failure.
  std::ifstream in(dir_ / "summary.json");
  ASSERT_TRUE(in.good());
  const auto written = nlohmann::json::parse(in);
  EXPECT_FALSE(written["validity"]["valid"].get<bool>());
}

TEST_F(Runner, NonFiniteStateStopsTheRunAndKeepsItsSummary) {
  g_script.nan_from = 6;
  const auto s = run(50);
  EXPECT_EQ(s["time"]["steps"], 6);
  EXPECT_EQ(s["time"]["stopped_by"], "non-finite state");
  EXPECT_FALSE(s["validity"]["valid"].get<bool>());
  EXPECT_EQ(s["validity"]["nonfinite"]["first_step"], 6);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "summary.json"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "timeseries.csv"));
}

TEST_F(Runner, GrowthBeyondTheBoundIsInvalid) {
  // |u| = 1.05 sqrt(3) x step: past 10 x the unit cube's diagonal (sqrt(3)) from step 10 on.
  g_script.u_per_step = 1.05;
  auto s = run(9);
  EXPECT_TRUE(s["validity"]["valid"].get<bool>());
  s = run(15);
  EXPECT_FALSE(s["validity"]["valid"].get<bool>());
  EXPECT_EQ(s["validity"]["growth"]["exceeded_at_step"], 10);
  EXPECT_EQ(s["validity"]["first_invalid_step"], 10);
}

TEST_F(Runner, PerformanceStatesItsByteConvention) {
  const auto s = run(5);
  EXPECT_EQ(s["performance"]["bytes_convention"], "compulsory");
  EXPECT_TRUE(s["memory"]["peak_device_bytes"].is_null());  // a CPU run
}

TEST_F(Runner, AfterRunHookMeasuresTheFinishedSimulation) {
  RunRequest req = request(7);
  long seen = -1;
  req.after_run = [&](Simulation& sim, nlohmann::json& summary) {
    seen = dynamic_cast<ScriptedSimulation&>(sim).step_;
    summary["extra"] = 42;
  };
  const auto s = run_simulation(req);
  EXPECT_EQ(seen, 7);
  EXPECT_EQ(s["extra"], 42);
  std::ifstream in(dir_ / "summary.json");
  EXPECT_EQ(nlohmann::json::parse(in)["extra"], 42);
}

TEST_F(Runner, BadCountsAreInputErrors) {
  RunRequest req = request(0);
  EXPECT_THROW(run_simulation(req), InputError);
  req.steps = -3;
  EXPECT_THROW(run_simulation(req), InputError);
  req.steps = 5;
  req.vtk_every = -2;
  EXPECT_THROW(run_simulation(req), InputError);
  req.vtk_every = -1;
  req.options.threads = -1;
  EXPECT_THROW(run_simulation(req), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

}  // namespace
}  // namespace eb
