// Patch test: with the boundary vertices of a box prescribed to a uniform strain field
// u = eps x + c, the solved interior reproduces that field exactly (to round-off and the solver
// tolerance): the assembled 27-point operator is consistent for every constant strain.
#include <sstream>

#include "tests/hexmg/hexmg_test_util.h"

namespace eb::hexmg::test {
namespace {

class Patch : public ::testing::TestWithParam<Regime> {};

TEST_P(Patch, UniformStrainReproducedInInterior) {
  const Regime r = GetParam();
  EB_HEXMG_SKIP_WITHOUT_DEVICE(r);
  const int n = 8;  // 9^3 = 729 vertices: two multigrid levels
  const double L = 0.08, h = L / n;
  const double eps[3][3] = {{1.0e-3, 2.0e-4, -1.0e-4}, {2.0e-4, -5.0e-4, 3.0e-4}, {-1.0e-4, 3.0e-4, 8.0e-4}};
  const double c[3] = {1e-4, -2e-4, 5e-5};
  auto field = [&](const mesh::Vec3& x, int d) { return c[d] + eps[d][0] * x[0] + eps[d][1] * x[1] + eps[d][2] * x[2]; };
  std::ostringstream t;
  t << "name = \"patch\"\n[mesh]\nsource = \"box\"\nsize = [" << L << ", " << L << ", " << L << "]\nelements_per_edge = " << n
    << "\n[material]\nyoungs_modulus = 1.0e8\npoisson_ratio = 0.3\ndensity = 1000.0\n"
    << "[time]\ndt = 1.0e4\nsteps = 1\n[solver]\nvariant = \"tolerance\"\n[hexmg]\nmax_iterations = 60\ntolerance = "
    << (r.precision == Precision::Fp64 ? 1e-13 : 1e-6) << "\n";
  for (int i = 0; i <= n; ++i)
    for (int j = 0; j <= n; ++j)
      for (int k = 0; k <= n; ++k) {
        if (i > 0 && i < n && j > 0 && j < n && k > 0 && k < n) continue;
        const mesh::Vec3 x = {i * h, j * h, k * h};
        t << "[[boundary.prescribed]]\ncomponents = \"xyz\"\ndisplacement = [" << field(x, 0) << ", " << field(x, 1)
          << ", " << field(x, 2) << "]\nwhere = { kind = \"box\", min = [" << x[0] << ", " << x[1] << ", " << x[2]
          << "], max = [" << x[0] << ", " << x[1] << ", " << x[2] << "] }\ncurve = { shape = \"step\", start = 0.0, duration = 0.0 }\n";
      }
  const Scenario sc = from_toml(t.str());
  auto sim = make(sc, r);
  ASSERT_EQ(sim->model().n_levels(), 2);
  sim->advance(1);
  std::vector<double> u, v;
  sim->copy_state_to_host(u, v);
  double worst = 0, umax = 0;
  int interior = 0;
  for (size_t i = 0; i < sim->nodes().size(); ++i) {
    const auto& x = sim->nodes()[i];
    for (int d = 0; d < 3; ++d) umax = std::max(umax, std::abs(field(x, d)));
    if (sim->fixed_nodes()[i]) continue;
    ++interior;
    for (int d = 0; d < 3; ++d) worst = std::max(worst, std::abs(u[3 * i + d] - field(x, d)));
  }
  EXPECT_EQ(interior, (n - 1) * (n - 1) * (n - 1));
  const double tol = r.precision == Precision::Fp64 ? 1e-9 : 2e-4;
  EXPECT_LT(worst / umax, tol) << "max interior error " << worst << " of max |u| " << umax;
}

INSTANTIATE_TEST_SUITE_P(Backends, Patch, ::testing::ValuesIn(regimes()), regime_name);

}  // namespace
}  // namespace eb::hexmg::test
