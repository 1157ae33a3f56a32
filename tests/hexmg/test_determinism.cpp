// Repeated runs of the CUDA backend are bit for bit identical. Each launch sequence the
// hierarchy and the solver variant produce is run three times in one process, from fresh
// simulations, and every repetition must equal the first exactly: a kernel that reads data its
// predecessor has not finished writing (programmatic dependent launch lets a kernel start while
// its predecessor runs) gives results that depend on timing, which no tolerance would show.
// This is the test that would have caught issue 9's race (a one-level hierarchy, where the
// coarsest CG follows the assembly directly: 8 runs on the H100 gave 8 tip displacements).
//
// Cases: a three-level hierarchy (a 15^3 cube) with the graph (fixed cycles), the directly
// launched profile variant and tolerance mode (V-cycles until the residual falls 1e-6, with
// residual norms in between), and the one-level hierarchy (the cantilever at 0.05 m, 189
// vertices: the coarsest CG runs on the assembled matrix, twice per step) with the profile
// variant; fp32 and fp64; PDL on and off (EB_HEXMG_PDL). The one-level graph and tolerance runs
// with default launches are the contract's (tests/contract/test_determinism.cpp, the same scene).
// Runs with PDL on and off must agree with each other bit for bit as well (PDL only changes
// when a kernel starts, never its arithmetic), which a separate test checks per case.
#include <cstring>

#include "tests/hexmg/hexmg_test_util.h"

namespace eb::hexmg::test {
namespace {

struct DeterminismCase {
  std::string model;    // cantilever (one level) or cube (three levels)
  std::string variant;  // graph, profile or tolerance
  Precision precision;
};

std::string label(const DeterminismCase& c) { return c.model + "_" + c.variant + "_" + to_string(c.precision); }
std::string case_name(const ::testing::TestParamInfo<DeterminismCase>& i) { return label(i.param); }
void PrintTo(const DeterminismCase& c, std::ostream* os) { *os << label(c); }

std::vector<DeterminismCase> cases() {
  std::vector<DeterminismCase> out;
  for (const char* m : {"cantilever", "cube"})
    for (const char* v : {"graph", "profile", "tolerance"})
      for (Precision p : {Precision::Fp32, Precision::Fp64})
        if (std::string(m) == "cube" || std::string(v) == "profile") out.push_back({m, v, p});
  return out;
}

Scenario scenario_of(const DeterminismCase& c) {
  std::vector<std::string> set;
  if (c.variant == "profile") set.push_back("hexmg.profile=true");
  if (c.variant == "tolerance") {
    set.push_back("solver.variant=tolerance");
    set.push_back("hexmg.tolerance=1e-6");
    set.push_back("hexmg.max_iterations=20");
  }
  if (c.model == "cantilever") {
    set.push_back("mesh.element_size=0.05");
    return load_scenario("cantilever", set);
  }
  return clamped_cube(15, set);
}

struct RunResult {
  std::vector<double> u, v;
  double coarse_iterations = 0, cycles = 0;
  int levels = 0;
};

constexpr int kSteps = 40;

RunResult run_once(const DeterminismCase& c, bool pdl) {
  Scenario sc = scenario_of(c);
  sc.method_options["hexmg"]["programmatic_dependent_launch"] = pdl;
  const std::unique_ptr<HexmgSimulation> sim = make(sc, {Backend::Cuda, c.precision});
  const nlohmann::json d = sim->details();
  EXPECT_EQ(d.value("programmatic_dependent_launch", !pdl), pdl)
      << "hexmg.programmatic_dependent_launch did not take effect";
  for (int chunk : {1, 7, kSteps - 8}) sim->advance(chunk);  // single steps and batches
  RunResult r;
  sim->copy_state_to_host(r.u, r.v);
  r.coarse_iterations = sim->mean_coarse_iterations();
  r.cycles = sim->mean_cycles();
  r.levels = sim->model().n_levels();
  return r;
}

// Bitwise comparison with a description of the first difference.
::testing::AssertionResult same_bits(const RunResult& a, const RunResult& b) {
  if (a.u.size() != b.u.size()) return ::testing::AssertionFailure() << "sizes differ";
  size_t differing = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < a.u.size(); ++i) {
    const bool du = std::memcmp(&a.u[i], &b.u[i], sizeof(double)) != 0;
    const bool dv = std::memcmp(&a.v[i], &b.v[i], sizeof(double)) != 0;
    if (du || dv) {
      if (differing++ == 0) first = i;
      worst = std::max(worst, std::abs(a.u[i] - b.u[i]));
    }
  }
  if (differing == 0 && a.coarse_iterations == b.coarse_iterations && a.cycles == b.cycles)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << differing << " of " << a.u.size() << " components differ (first: node "
                                       << first / 3 << " component " << first % 3 << ", u " << a.u[first] << " vs "
                                       << b.u[first] << ", largest |du| " << worst << "); mean coarse CG iterations "
                                       << a.coarse_iterations << " vs " << b.coarse_iterations << ", mean cycles "
                                       << a.cycles << " vs " << b.cycles;
}

double max_norm(const RunResult& r) {
  double m = 0;
  for (size_t i = 0; i < r.u.size(); i += 3)
    m = std::max(m, std::sqrt(r.u[i] * r.u[i] + r.u[i + 1] * r.u[i + 1] + r.u[i + 2] * r.u[i + 2]));
  return m;
}

class Determinism : public ::testing::TestWithParam<DeterminismCase> {
 protected:
  void check_repeats(bool pdl) {
    const DeterminismCase& c = GetParam();
    const RunResult first = run_once(c, pdl);
    // The case is what it claims, and the state moved (equal zeros would prove nothing).
    EXPECT_EQ(first.levels, c.model == "cantilever" ? 1 : 3);
    const double umax = max_norm(first);
    ASSERT_TRUE(std::isfinite(umax));
    ASSERT_GT(umax, 0.0);
    std::printf("%s, PDL %s: %d levels, max |u| %.9e m after %d steps, %.2f cycles and %.2f coarse CG iterations per solve\n",
                label(c).c_str(), pdl ? "on" : "off", first.levels, umax, kSteps, first.cycles,
                first.coarse_iterations);
    for (int rep = 1; rep < 3; ++rep) EXPECT_TRUE(same_bits(first, run_once(c, pdl))) << "repetition " << rep;
  }
};

TEST_P(Determinism, RepeatedRunsBitwiseEqualPdlOn) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device";
  check_repeats(true);
}

TEST_P(Determinism, RepeatedRunsBitwiseEqualPdlOff) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device";
  check_repeats(false);
}

TEST_P(Determinism, PdlOnEqualsPdlOff) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device";
  const DeterminismCase& c = GetParam();
  EXPECT_TRUE(same_bits(run_once(c, true), run_once(c, false)));
}

INSTANTIATE_TEST_SUITE_P(Cases, Determinism, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace eb::hexmg::test
