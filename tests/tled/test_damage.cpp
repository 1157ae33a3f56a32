// Damage (Eqs. 19-22) on the paper's cube with the parameters used by the strbac2015 experiment
// (gamma = 0.5, m = 200 J/m^3, psi0 = 156 J/m^3 = the deviatoric energy at half the loading):
// no damage before half-way, then every element's damage equals the closed form at the final
// stretch, and the kinematics stay exact (S_dam = (1 - d) S leaves the lateral stretch alone).
#include <cmath>

#include "solvers/tled/exact_solution.h"
#include "tests/tled/tled_test_util.h"

namespace eb::tled::test {
namespace {

class Damage : public ::testing::TestWithParam<Regime> {};

double field_max(const std::vector<mesh::Field>& f, const std::string& name, double* min_out = nullptr) {
  for (const auto& x : f)
    if (x.name == name) {
      double lo = 1e300, hi = -1e300;
      for (double v : x.values) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      if (min_out) *min_out = lo;
      return hi;
    }
  ADD_FAILURE() << "no field " << name;
  return 0;
}

TEST_P(Damage, StartsHalfWayAndMatchesClosedForm) {
  const Regime r = GetParam();
  EB_TLED_SKIP_WITHOUT_DEVICE(r);
  const Scenario sc = cube(5, with_texture({"material.damage.enabled=true", "material.damage.gamma=0.5",
                                            "material.damage.m=200", "material.damage.psi0=156"},
                                           r.texture));
  auto sim = make(sc, r.backend, r.precision);
  const int steps = int(std::ceil(sc.time.end_time / sim->dt() - 1e-9));
  const int before = int(0.45 * steps);
  sim->advance(before);
  std::vector<mesh::Field> f;
  sim->cell_fields(f);
  EXPECT_EQ(field_max(f, "damage"), 0.0) << "damage before half of the loading";
  sim->advance(int(0.1 * steps));
  f.clear();
  sim->cell_fields(f);
  EXPECT_GT(field_max(f, "damage"), 0.0) << "no damage after half of the loading";
  sim->advance(steps - before - int(0.1 * steps));

  const ElasticConstants ec = elastic_constants(sc.material);
  const UniaxialSolution ex = uniaxial_neo_hookean(ec.mu, ec.bulk, 0.8);
  const double d_exact = 0.5 * (1 - std::exp(-(ex.psi_dev - 156.0) / 200.0));
  f.clear();
  sim->cell_fields(f);
  double dmin = 0;
  const double dmax = field_max(f, "damage", &dmin);
  const double tol = r.precision == Precision::Fp32 ? 2e-3 : 5e-4;
  EXPECT_NEAR(dmin, d_exact, tol);
  EXPECT_NEAR(dmax, d_exact, tol);

  std::vector<double> u, v;
  sim->copy_state_to_host(u, v);
  double worst = 0;
  for (size_t n = 0; n < sim->nodes().size(); ++n) {
    const auto ue = uniaxial_displacement(ex, sim->nodes()[n], {0, 0, 0});
    for (int d = 0; d < 3; ++d) worst = std::max(worst, std::abs(u[3 * n + d] - ue[d]));
  }
  EXPECT_LT(worst, 3e-3 * 0.01);  // 0.3% of the 10 mm prescribed displacement
}

INSTANTIATE_TEST_SUITE_P(Tled, Damage, ::testing::ValuesIn(regimes()), regime_name);

}  // namespace
}  // namespace eb::tled::test
