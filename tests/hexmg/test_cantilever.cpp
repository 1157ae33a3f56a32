// Cantilever (built-in scenario `cantilever`: gravity, damped, run to rest): the tip deflection
// is within 5% of Euler-Bernoulli (14.7 mm) at mesh.element_size = 0.02 (5 elements through the
// thickness) and the error decreases with refinement 0.05 -> 0.025 -> 0.02.
#include <cstdio>

#include "solvers/common/registry.h"
#include "solvers/common/runner.h"
#include "tests/hexmg/hexmg_test_util.h"

namespace eb::hexmg::test {
namespace {

class Cantilever : public ::testing::TestWithParam<Regime> {};

double tip_deflection(const Regime& r, double h) {
  RunRequest req;
  req.method = "hexmg";
  req.options.backend = r.backend;
  req.options.precision = r.precision;
  req.options.threads = 1;
  // dt = 0.01: implicit Newmark is unconditionally stable; the rest is reached in fewer steps.
  // Rest is declared at max |v| < 1e-3 m/s. With 2 V-cycles per step (coarsest CG capped at 64
  // iterations) each step leaves a small solve error that the trapezoidal rule turns into a
  // velocity sawtooth (v_{n+1} = 2 du / dt - v_n) of a few 1e-4 m/s; the tip displacement has
  // settled to ~1e-6 relative by then, so the scenario's 1e-5 m/s is not reached within 10 s.
  req.scenario = load_scenario("cantilever", {"mesh.element_size=" + std::to_string(h), "time.dt=0.01",
                                              "time.rest_velocity=1e-3"});
  req.scenario_origin = "cantilever";
  req.write_files = false;
  req.quiet = true;
  const nlohmann::json s = run_simulation(req);
  EXPECT_EQ(s["time"]["stopped_by"].get<std::string>().rfind("rest", 0), 0u) << s["time"].dump();
  return -s["probes"]["tip"][2].get<double>();
}

TEST_P(Cantilever, TipDeflectionMatchesBeamTheory) {
  const Regime r = GetParam();
  EB_HEXMG_SKIP_WITHOUT_DEVICE(r);
  // The runner finds the method through the registry (hexmg registers every backend it has).
  ASSERT_EQ(methods().find("hexmg", r.backend, r.precision).method, "hexmg");
  // q L^4 / (8 E I), q = rho g A, I = b h^3 / 12
  const double q = 1000 * 9.81 * 0.01, I = 0.1 * 0.001 / 12, beam = q / (8 * 1e8 * I);
  double last_err = 1e9;
  for (double h : {0.05, 0.025, 0.02}) {
    const double tip = tip_deflection(r, h);
    const double err = std::abs(tip - beam) / beam;
    std::printf("element_size %.3f: tip %.3f mm (beam theory %.3f mm), error %.2f%%\n", h, 1e3 * tip, 1e3 * beam, 100 * err);
    EXPECT_LT(err, last_err) << "no convergence at element_size " << h;
    last_err = err;
  }
  EXPECT_LT(last_err, 0.05);
}

INSTANTIATE_TEST_SUITE_P(Backends, Cantilever, ::testing::ValuesIn(regimes()), regime_name);

}  // namespace
}  // namespace eb::hexmg::test
