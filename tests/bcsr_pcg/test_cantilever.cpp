// Cantilever toward beam theory: the built-in `cantilever` scenario (1 m x 0.1 m x 0.1 m, E =
// 100 MPa, clamped at x = 0, gravity; Euler-Bernoulli tip deflection q L^4 / (8 E I) = 14.7 mm)
// solved statically (time.mode = "static", through the runner as `elastobench run` does) with
// bcsr-pcg at element_size 0.05, 0.025 and 0.01 (6 tetrahedra per cube), and hexmg on the same
// beam run to rest at 0.025 and 0.01 (hexmg is dynamic only; tests/hexmg/test_cantilever.cpp's
// settings: dt = 0.01, rest at max |v| < 1e-3 m/s, which the tip has settled to ~1e-6 by).
//
// Measured (CPU fp64; the test prints them):
//   bcsr-pcg  0.05: 7.485 mm (49.1 % below beam theory), 0.025: 11.672 mm (20.6 %),
//             0.0125: 13.783 mm (6.2 %), 0.01: 14.103 mm (4.1 %)
//   hexmg     0.025: 14.195 mm (3.4 %), 0.0125: 14.588 mm (0.8 %), 0.01: 14.638 mm (0.5 %)
// Linear tetrahedra lock in bending (2, 4 and 10 elements through the thickness here), so at an
// equal element size the tetrahedral beam is much stiffer than hexmg's trilinear hexahedra: 18 %
// apart at 0.025 and 5.5 % at 0.0125. The test therefore asserts, per the issue:
//   - the error against beam theory falls at every refinement, and the finest (0.01) is within
//     5 % (measured 4.1 %; 0.025 alone would need a bound of 21 %);
//   - at element_size 0.01 the two methods agree within 5 % (measured 3.7 %), and the gap shrinks
//     from 0.025 to 0.01 (both converge to the same beam).
// The two runs at 0.01 dominate this test's time (8 s on one core of the 2-core CI machine,
// single-threaded runs); no coarser pair of equal sizes agrees within 5 %, so it is the cheapest
// comparison that is honest.
// Also at 0.025: the static tip equals the direct solve of the linear system on the same mesh to
// within the co-rotational effect, which changes the vertical tip deflection at second order in
// the rotation (1.6e-2 rad at the tip: ~2.4e-4); measured 1e-4, bound 2e-3. This shows that the
// gap to beam theory is the discretization, not an unconverged solve.
// fp64 only: a static fp32 solve cannot reach static.tolerance (at 0.025 its co-rotational
// residual stalls at 12 % of the initial one, rounding noise; the tip is right to 1e-5), see
// test_static.cpp.
#include <cstdio>

#include "solvers/common/runner.h"
#include "tests/bcsr_pcg/bcsr_pcg_test_util.h"

namespace eb::bcsr_pcg::test {
namespace {

class Cantilever : public ::testing::TestWithParam<Regime> {};

const double kBeam = [] {
  const double q = 1000 * 9.81 * 0.01, I = 0.1 * 0.001 / 12;  // q = rho g A, I = b h^3 / 12
  return q / (8 * 1e8 * I);
}();

struct TipRun {
  double tip = 0;                  // -u_z at the probe (1, 0.05, 0.05)
  std::vector<double> u;           // the final state (bcsr-pcg)
  std::vector<mesh::Vec3> nodes;   // and its mesh
  std::vector<int32_t> conn;
};

TipRun run(const std::string& method, const Regime& r, double h) {
  RunRequest req;
  req.method = method;
  req.options = run_options(r.backend, r.precision);
  std::vector<std::string> o = {"mesh.element_size=" + std::to_string(h)};
  if (method == "bcsr-pcg") {
    o.push_back("time.mode=static");
    o.push_back("bcsr-pcg.cg_max_iterations=5000");  // inner solves converge (1000 is reached at 0.0125)
  } else {
    o.push_back("time.dt=0.01");
    o.push_back("time.rest_velocity=1e-3");
  }
  req.scenario = load_scenario("cantilever", o);
  req.scenario_origin = "cantilever";
  req.write_files = false;
  req.quiet = true;
  TipRun out;
  req.after_run = [&](Simulation& sim, nlohmann::json&) {
    std::vector<double> v;
    sim.copy_state_to_host(out.u, v);
    out.nodes = sim.nodes();
    out.conn = sim.connectivity();
  };
  const nlohmann::json s = run_simulation(req);
  EXPECT_TRUE(s["validity"]["valid"].get<bool>()) << method << " " << h << ": " << s["validity"].dump();
  if (method == "hexmg")
    EXPECT_EQ(s["time"]["stopped_by"].get<std::string>().rfind("rest", 0), 0u) << s["time"].dump();
  else
    EXPECT_TRUE(s["static"]["load_steps"][0]["converged"].get<bool>()) << s["static"].dump();
  out.tip = -s["probes"]["tip"][2].get<double>();
  return out;
}

// -u_z at the node at (1, 0.05, 0.05) of the direct solve of K u = f on the run's own mesh.
double linear_tip(const TipRun& run) {
  const std::vector<double> u = linear_elastic_solve(run.nodes, run.conn, 1e8, 0.3, 1000.0, {0.0, 0.0, -9.81},
                                                     [](const mesh::Vec3& X) { return X[0] <= 1e-9; });
  for (size_t n = 0; n < run.nodes.size() && !u.empty(); ++n) {
    const auto& x = run.nodes[n];
    if (std::abs(x[0] - 1.0) < 1e-9 && std::abs(x[1] - 0.05) < 1e-9 && std::abs(x[2] - 0.05) < 1e-9)
      return -u[3 * n + 2];
  }
  return std::nan("");
}

TEST_P(Cantilever, StaticTipConvergesTowardBeamTheoryAndAgreesWithHexmg) {
  const Regime r = GetParam();
  EB_BCSR_PCG_SKIP_WITHOUT_DEVICE(r);
  double last_err = 1e9, tip_025 = 0, tip_01 = 0;
  for (double h : {0.05, 0.025, 0.01}) {
    const TipRun t = run("bcsr-pcg", r, h);
    const double err = std::abs(t.tip - kBeam) / kBeam;
    std::printf("bcsr-pcg element_size %.3f: tip %.3f mm (beam theory %.3f mm), error %.2f%%\n", h, 1e3 * t.tip,
                1e3 * kBeam, 100 * err);
    EXPECT_LT(err, last_err) << "no convergence at element_size " << h;
    last_err = err;
    if (h == 0.025) {
      tip_025 = t.tip;
      const double lin = linear_tip(t);
      const double d = std::abs(t.tip - lin) / lin;
      std::printf("  element_size 0.025: direct linear solve on the same mesh %.3f mm, static co-rotational %.3f mm "
                  "(%.4f%% apart)\n",
                  1e3 * lin, 1e3 * t.tip, 100 * d);
      EXPECT_LT(d, 2e-3);
    }
    if (h == 0.01) tip_01 = t.tip;
  }
  EXPECT_LT(last_err, 0.05);

  const double hex_025 = run("hexmg", r, 0.025).tip, hex_01 = run("hexmg", r, 0.01).tip;
  const double gap_025 = std::abs(tip_025 - hex_025) / hex_025, gap_01 = std::abs(tip_01 - hex_01) / hex_01;
  std::printf("hexmg to rest: 0.025 %.3f mm, 0.010 %.3f mm; bcsr-pcg against hexmg at equal size: %.2f%% (0.025), "
              "%.2f%% (0.010)\n",
              1e3 * hex_025, 1e3 * hex_01, 100 * gap_025, 100 * gap_01);
  EXPECT_LT(gap_01, 0.05);
  EXPECT_LT(gap_01, gap_025);
}

INSTANTIATE_TEST_SUITE_P(BcsrPcg, Cantilever, ::testing::ValuesIn(fp64_regimes()), regime_name);

}  // namespace
}  // namespace eb::bcsr_pcg::test
