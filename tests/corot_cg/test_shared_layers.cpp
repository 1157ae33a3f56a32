// The shared layers corot-cg added: the ground plane's penalty force and its differential
// (assembly/ground_plane.h), the random-impulse schedule (solvers/common/random_impulse.h), the
// masked matrix-free operator (solvers/linalg/function_operator.h), the Rayleigh coefficients,
// SOFA's cube split (meshes/box.h).
#include <array>

#include "assembly/ground_plane.h"
#include "assembly/tet/tet4.h"
#include "corot_cg_test_util.h"
#include "meshes/box.h"
#include "meshes/errors.h"
#include "solvers/common/random_impulse.h"
#include "solvers/linalg/cg.h"
#include "solvers/linalg/function_operator.h"

namespace eb::corot_cg::test {
namespace {

TEST(GroundPlane, DifferentialEqualsFiniteDifferenceOfTheForce) {
  ground::Plane<double> p{{0.0, 0.6, 0.8}, -0.1, 250.0};
  std::mt19937 g(4);
  std::uniform_real_distribution<double> d(-1, 1);
  for (int trial = 0; trial < 50; ++trial) {
    // A point below the plane (depth at least 0.05, so the perturbation keeps the contact).
    double x[3] = {d(g), d(g), d(g)};
    const double depth = p.normal[0] * x[0] + p.normal[1] * x[1] + p.normal[2] * x[2] - p.height;
    for (int i = 0; i < 3; ++i) x[i] -= (depth + 0.05 + 0.2 * std::abs(d(g))) * p.normal[i];
    const double dx[3] = {d(g), d(g), d(g)};
    const double h = 1e-6;
    double fp[3] = {0, 0, 0}, fm[3] = {0, 0, 0}, xp[3], xm[3];
    for (int i = 0; i < 3; ++i) {
      xp[i] = x[i] + h * dx[i];
      xm[i] = x[i] - h * dx[i];
    }
    ASSERT_TRUE(ground::plane_add_force(p, xp, fp));
    ASSERT_TRUE(ground::plane_add_force(p, xm, fm));
    double df[3] = {0, 0, 0};
    ground::plane_add_dforce(p, true, dx, df);
    for (int i = 0; i < 3; ++i) {
      // The differential is of the internal force, minus the pushing force's derivative.
      const double fd = -(fp[i] - fm[i]) / (2 * h);
      EXPECT_NEAR(df[i], fd, 1e-6 * (1 + std::abs(fd)));
    }
    double diag[3] = {0, 0, 0};
    ground::plane_add_diagonal(p, true, diag);
    for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(diag[i], p.stiffness * p.normal[i] * p.normal[i]);
  }
  // Above the plane: no force, no contact.
  const double above[3] = {0.0, 1.0, 1.0};
  double f[3] = {0, 0, 0};
  EXPECT_FALSE(ground::plane_add_force(p, above, f));
  EXPECT_EQ(f[0] + f[1] + f[2], 0.0);
}

TEST(RandomImpulses, ScheduleIsAFunctionOfSeedAndFrameOnly) {
  RandomImpulseSpec spec;
  spec.enabled = true;
  spec.every = 200;
  spec.min_force = 10;
  spec.max_force = 50;
  spec.seed = 7;
  std::vector<Impulse> first;
  for (int64_t f = 0; f <= 2000; ++f) {
    const auto imp = impulse_at(spec, f, 3000);
    EXPECT_EQ(imp.has_value(), f > 0 && f % 200 == 0) << f;
    if (!imp) continue;
    first.push_back(*imp);
    EXPECT_GE(imp->node, 0);
    EXPECT_LT(imp->node, 3000);
    const double m = std::sqrt(imp->force[0] * imp->force[0] + imp->force[1] * imp->force[1] + imp->force[2] * imp->force[2]);
    EXPECT_GE(m, 10 - 1e-9);
    EXPECT_LE(m, 50 + 1e-9);
  }
  ASSERT_EQ(first.size(), 10u);
  // Asked in another order (backwards): the same bits.
  for (auto it = first.rbegin(); it != first.rend(); ++it) {
    const auto again = impulse_at(spec, it->frame, 3000);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->node, it->node);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(again->force[i], it->force[i]);
  }
  // Another seed: another schedule; the draws are spread over the nodes.
  spec.seed = 8;
  int same = 0;
  for (const Impulse& i : first) same += impulse_at(spec, i.frame, 3000)->node == i.node;
  EXPECT_LT(same, 3);
  spec.enabled = false;
  EXPECT_FALSE(impulse_at(spec, 200, 3000));
}

TEST(RandomImpulses, ScenarioKeysAreValidated) {
  EXPECT_THROW(scenario_from_toml(box_toml(), {"boundary.random_impulses.every=0"}), InputError);
  EXPECT_THROW(scenario_from_toml(box_toml(), {"boundary.random_impulses.min_force=3"}), InputError);
  EXPECT_THROW(scenario_from_toml(box_toml(), {"boundary.ground.normal=[0,0,0]"}), InputError);
  EXPECT_THROW(scenario_from_toml(box_toml(), {"time.rayleigh_stiffness=-1"}), InputError);
}

TEST(Rayleigh, CoefficientsOfTheImplicitEulerStep) {
  const RayleighEuler<double> k = rayleigh_euler<double>(0.04, 0.1, 0.2);
  EXPECT_DOUBLE_EQ(k.mass, 1 + 0.04 * 0.1);
  EXPECT_DOUBLE_EQ(k.stiffness, 0.04 * (0.04 + 0.2));
  EXPECT_DOUBLE_EQ(k.rhs_v, 0.04 + 0.2);
  EXPECT_DOUBLE_EQ(k.rhs_mass, 0.1);
  EXPECT_DOUBLE_EQ(k.h, 0.04);
}

// A masked operator solves with the fixed rows held at 0: CG on P A P + (I - P) for A = tridiag
// (-1, 3, -1) equals the dense solve of the free block.
TEST(FunctionOperator, MaskedRowsStayFixedAndTheDiagonalIsUpdatable) {
  for (linalg::Location where : {linalg::Location::Host, linalg::Location::Device}) {
    if (where == linalg::Location::Device && cuda_device_count() == 0) continue;
    const int n = 40;
    std::vector<uint8_t> fixed(n, 0);
    fixed[0] = fixed[17] = 1;
    // The product reads x only at free rows (FunctionOperator's contract), on the host.
    auto host_product = [fixed, n](const double* x, double* y) {
      for (int i = 0; i < n; ++i) {
        auto xv = [&](int j) { return j < 0 || j >= n || fixed[size_t(j)] ? 0.0 : x[j]; };
        y[i] = 3 * xv(i) - xv(i - 1) - xv(i + 1);
      }
    };
    std::unique_ptr<linalg::FunctionOperator<double>> A;
    if (where == linalg::Location::Host) {
      A = linalg::make_function_operator<double>(where, n, [&](const double* x, double* y, linalg::StreamHandle) {
        host_product(x, y);
      }, fixed, "tridiagonal");
    } else {
      // Device: the product on the host through copies is enough to check the masking and the
      // diagonal (apply_from_host synchronizes); the kernels' path is tested with corot-cg's.
      A = linalg::make_function_operator<double>(where, n, [](const double*, double*, linalg::StreamHandle) {}, fixed,
                                                 "no-op");
      const std::vector<double> x = random_vector(size_t(n), 1.0, 3);
      const std::vector<double> y = linalg::apply_from_host(*A, x);
      EXPECT_EQ(y[0], x[0]);
      EXPECT_EQ(y[17], x[17]);
      const std::vector<double> d = linalg::diagonal_from_host(*A);
      EXPECT_EQ(d[0], 1.0);
      EXPECT_EQ(d[5], 1.0);  // the initial diagonal
      continue;
    }
    for (int i = 0; i < n; ++i) A->diagonal_data()[i] = 3.0;
    const std::vector<double> d = linalg::diagonal_from_host(*A);
    EXPECT_EQ(d[0], 1.0);
    EXPECT_EQ(d[17], 1.0);
    EXPECT_EQ(d[3], 3.0);
    std::vector<double> b = random_vector(size_t(n), 1.0, 9), x(size_t(n), 0.0);
    b[0] = b[17] = 0;
    linalg::CgOptions o;
    o.tolerance = 1e-13;
    const linalg::CgResult r = linalg::cg_solve_from_host(*A, b, x, o);
    EXPECT_TRUE(r.converged());
    EXPECT_EQ(x[0], 0.0);
    EXPECT_EQ(x[17], 0.0);
    std::vector<double> y(static_cast<size_t>(n));
    host_product(x.data(), y.data());
    for (int i = 0; i < n; ++i)
      if (!fixed[size_t(i)]) EXPECT_NEAR(y[size_t(i)], b[size_t(i)], 1e-10);
  }
}

// SOFA's Hexa2TetraTopologicalMapping: six positive tetrahedra with its node order, filling the
// cube, the first node of each as SOFA lists it (the edge frame starts there).
TEST(CubeSplit, SofaTetrahedraFillTheCubeInSofasOrder) {
  const mesh::TetMesh m = mesh::make_box_tet({0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 6, mesh::CubeSplit::Sofa);
  ASSERT_EQ(m.elems.size(), 6u);
  double total = 0;
  for (const auto& t : m.elems) {
    double X[4][3];
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) X[a][i] = m.nodes[size_t(t[size_t(a)])][size_t(i)];
    const double v = tet::tet4_signed_volume(X);
    EXPECT_NEAR(v, 1.0 / 6, 1e-15);
    total += v;
  }
  EXPECT_NEAR(total, 1.0, 1e-14);
  // Lattice ids of the cube's VTK corners are 0 1 3 2 4 5 7 6; SOFA's first tetrahedron is
  // (c0, c5, c1, c6).
  const std::array<int32_t, 8> corner = {0, 1, 3, 2, 4, 5, 7, 6};
  EXPECT_EQ(m.elems[0][0], corner[0]);
  EXPECT_EQ(m.elems[0][1], corner[5]);
  EXPECT_EQ(m.elems[0][2], corner[1]);
  EXPECT_EQ(m.elems[0][3], corner[6]);
  EXPECT_EQ(m.elems[5][0], corner[7]);
  EXPECT_EQ(m.elems[5][2], corner[4]);
  EXPECT_THROW(mesh::make_box_tet({0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 5, mesh::CubeSplit::Sofa), InputError);
}

TEST(SofaBeam, ScenarioHasSofasSizes) {
  const Scenario sc = load_scenario("sofa-beam", {});
  const CorotCgSetup s = build_corot_cg_setup(sc, run_options(Backend::Cpu, Precision::Fp32));
  EXPECT_EQ(s.num_nodes, 76 * 16 * 16);
  EXPECT_EQ(s.num_elements, 75 * 15 * 15 * 6);
  double total = 0;
  for (double m : s.mass) total += m;
  EXPECT_NEAR(total, 50.0, 1e-9);
  int fixed = 0;
  for (uint8_t f : s.fixed_any) fixed += f;
  EXPECT_EQ(fixed, 16 * 16);
}

}  // namespace
}  // namespace eb::corot_cg::test
