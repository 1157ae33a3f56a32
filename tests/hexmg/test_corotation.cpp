// Co-rotation: (1) a rigid 90-degree rotation of a free cube produces no elastic force, through
// both the element formula and the assembled per-vertex equations, while plain linear
// elasticity produces large forces; (2) a large bending load inflates the volume with linear
// elasticity but much less with co-rotation (the two volume changes are printed).
#include <cstdio>

#include "assembly/hexmg/hex_element.h"
#include "tests/hexmg/hexmg_test_util.h"

namespace eb::hexmg::test {
namespace {

class Corotation : public ::testing::TestWithParam<Regime> {};

// Volume of the deformed trilinear hexahedra (2x2x2 Gauss on det J: exact for trilinear maps).
double deformed_volume(const Model& m, const std::vector<double>& u) {
  const double g = 1.0 / std::sqrt(3.0);
  double vol = 0;
  for (int64_t e = 0; e < m.n_elems(); ++e) {
    double x[8][3];
    for (int c = 0; c < 8; ++c)
      for (int d = 0; d < 3; ++d) x[c][d] = corner_bit(c, d) * m.h + u[3 * m.ev[e][c] + d];
    for (int q = 0; q < 8; ++q) {
      const double xi[3] = {corner_bit(q, 0) ? g : -g, corner_bit(q, 1) ? g : -g, corner_bit(q, 2) ? g : -g};
      double J[9] = {};
      for (int c = 0; c < 8; ++c)
        for (int a = 0; a < 3; ++a) {
          double dn = (corner_bit(c, a) ? 1.0 : -1.0) / 8.0;
          for (int b = 0; b < 3; ++b)
            if (b != a) dn *= 1.0 + (corner_bit(c, b) ? 1.0 : -1.0) * xi[b];
          for (int d = 0; d < 3; ++d) J[3 * d + a] += x[c][d] * dn;
        }
      vol += det3(J);
    }
  }
  return vol;
}

TEST_P(Corotation, RigidRotationHasNoElasticForce) {
  const Regime r = GetParam();
  EB_HEXMG_SKIP_WITHOUT_DEVICE(r);
  const std::string toml = R"(name = "free-cube"
[mesh]
source = "box"
size = [0.1, 0.1, 0.1]
elements_per_edge = 8
[material]
youngs_modulus = 1.0e6
poisson_ratio = 0.3
density = 1000.0
[time]
dt = 0.01
steps = 1
)";
  double force_corot = 0, force_linear = 0, res_corot = 0, res_linear = 0, bnorm = 0;
  for (const bool linear : {false, true}) {
    auto sim = make(from_toml(toml, {linear ? "hexmg.corotated=false" : "solver.variant=vcycle"}), r);
    const Model& m = sim->model();
    // 90 degrees about the axis (1, 1, 1)/sqrt(3) through the cube centre.
    const double a = std::acos(-1.0) / 2, c = std::cos(a), s = std::sin(a), t = 1 - c, k = 1 / std::sqrt(3.0);
    const double Q[9] = {t * k * k + c, t * k * k - s * k, t * k * k + s * k, t * k * k + s * k, t * k * k + c,
                         t * k * k - s * k, t * k * k - s * k, t * k * k + s * k, t * k * k + c};
    std::vector<double> u(size_t(m.levels[0].n_padded) * 3, 0.0);
    for (size_t i = 0; i < m.nodes.size(); ++i) {
      const int32_t sl = m.slot_of_node[i];
      double x[3];
      for (int d = 0; d < 3; ++d) x[d] = m.nodes[i][d] - 0.05;
      for (int d = 0; d < 3; ++d) u[3 * sl + d] = Q[3 * d] * x[0] + Q[3 * d + 1] * x[1] + Q[3 * d + 2] * x[2] - x[d];
    }
    sim->set_state(u, {});
    sim->begin_step();
    const std::vector<double> f = sim->elastic_forces(u, sim->rotations());
    double fmax = 0;
    for (double v : f) fmax = std::max(fmax, std::abs(v));
    std::vector<HexmgSimulation::Triplet> A;
    std::vector<double> b, uu;
    sim->export_system(A, b, uu);
    double bn = 0;
    for (double v : b) bn += v * v;
    (linear ? force_linear : force_corot) = fmax;
    (linear ? res_linear : res_corot) = sim->system_residual();
    bnorm = std::sqrt(bn);
  }
  // force scale: E h |u| with |u| ~ 0.07 m
  const double scale = 1.0e6 * (0.1 / 8) * 0.07;
  const double tol = r.precision == Precision::Fp64 ? 1e-9 : 1e-4;
  std::printf("rigid 90 deg rotation: max |f| co-rotated %.3e, linear %.3e (scale %.3e); |b - A u| %.3e vs %.3e (|b| %.3e)\n",
              force_corot, force_linear, scale, res_corot, res_linear, bnorm);
  EXPECT_LT(force_corot, tol * scale);
  EXPECT_GT(force_linear, 0.1 * scale);
  EXPECT_LT(res_corot, tol * 10 * bnorm);
  EXPECT_GT(res_linear, 1e-3 * bnorm);
}

TEST_P(Corotation, LargeBendingKeepsVolume) {
  const Regime r = GetParam();
  EB_HEXMG_SKIP_WITHOUT_DEVICE(r);
  double dv[2], tip[2];
  for (const bool linear : {false, true}) {
    // The cantilever at 40 x 4 x 4 under 40 g, solved quasi-statically: a long step (inertia
    // negligible) per iteration, rotations lagged by one step, until the tip settles.
    const std::vector<std::string> o = {"mesh.element_size=0.025", "boundary.gravity=[0,0,-392.4]", "time.dt=1000",
                                        "time.damping=0", "time.until_rest=false",
                                        "solver.variant=tolerance", linear ? "hexmg.corotated=false" : "hexmg.corotated=true",
                                        "hexmg.tolerance=1e-6", "hexmg.max_iterations=40"};
    auto sim = make(load_scenario("cantilever", o), r);
    const double v0 = deformed_volume(sim->model(), std::vector<double>(sim->model().levels[0].n_padded * 3, 0.0));
    sim->advance(linear ? 1 : 30);
    const auto u = sim->slot_displacement();
    dv[linear] = deformed_volume(sim->model(), u) / v0 - 1;
    std::vector<double> uh, vh;
    sim->copy_state_to_host(uh, vh);
    double zmin = 0;
    for (size_t i = 0; i < uh.size() / 3; ++i) zmin = std::min(zmin, uh[3 * i + 2]);
    tip[linear] = zmin;
  }
  std::printf("cantilever at 40 g: volume change co-rotated %+.4f%%, linear %+.4f%%; tip z %.4f m vs %.4f m\n",
              100 * dv[0], 100 * dv[1], tip[0], tip[1]);
  EXPECT_GT(dv[1], 0.01);                   // linear elasticity inflates by more than 1%
  EXPECT_LT(std::abs(dv[0]), 0.2 * dv[1]);  // co-rotation: at most a fifth of that
  EXPECT_GT(tip[0], tip[1]);                // and the beam does not stretch downwards as far
}

INSTANTIATE_TEST_SUITE_P(Backends, Corotation, ::testing::ValuesIn(regimes()), regime_name);

}  // namespace
}  // namespace eb::hexmg::test
