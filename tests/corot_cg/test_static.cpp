// Static equilibrium: at a small load the co-rotational model is linear elasticity, so corot-cg's
// equilibrium under gravity equals bcsr-pcg's on the same tet mesh (a different solver: matrix-free
// CG on the element-by-element product against a Jacobi-PCG on an assembled BCSR matrix) within
// 1e-6 relative; and a tet cantilever's tip deflection approaches the converged value as the mesh
// is refined.
#include "corot_cg_test_util.h"

namespace eb::corot_cg::test {
namespace {

const char* kBeam = R"(name = "static-beam"
[mesh]
source = "box"
origin = [0.0, 0.0, 0.0]
size = [1.0, 0.2, 0.2]
divisions = [10, 2, 2]
[material]
youngs_modulus = 1.0e7
poisson_ratio = 0.3
density = 1000.0
[boundary]
gravity = [0.0, 0.0, -9.81]
[[boundary.fixed]]
components = "xyz"
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }
[time]
mode = "static"
[static]
# The force residual's floor is about eps |K X| (the internal force is R K (R^T x - X) with
# coordinates of order 1): 7e-8 of the initial residual at the small load below.
tolerance = 1.0e-7
max_iterations = 40
)";

std::vector<double> static_displacement(const std::string& method, const Scenario& sc, Backend b, double load) {
  const auto& entry = sc.solver.variant.empty() ? methods().find(method, b, Precision::Fp64)
                                                : methods().find(method, sc.solver.variant, b, Precision::Fp64);
  auto sim = entry.factory(sc, run_options(b, Precision::Fp64));
  sim->solve_static(load);
  const SolverStats st = sim->solver_stats();
  EXPECT_TRUE(st.outer_converged.value_or(false)) << method << " " << st.outer_iterations << " " << st.outer_initial_residual << " " << st.outer_final_residual;
  std::vector<double> u, v;
  sim->copy_state_to_host(u, v);
  return u;
}

class Static : public ::testing::TestWithParam<Backend> {};

TEST_P(Static, EquilibriumUnderGravityEqualsBcsrPcgAtSmallLoad) {
  EB_COROT_CG_SKIP_WITHOUT_DEVICE(GetParam());
  // The polar variant is bcsr-pcg's rotation: the same model. The edge frame's rotation differs
  // from the polar one by the order of the strain, which changes the force only at second order
  // (K annihilates infinitesimal rotations): relative differences of the order of the strain,
  // 3e-6 at this load.
  const std::vector<std::string> bcsr_keys = {"bcsr-pcg.static_cg_tolerance=1e-13"};
  Scenario bc = scenario_from_toml(kBeam, bcsr_keys);
  const std::vector<double> ref = static_displacement("bcsr-pcg", bc, GetParam(), 1e-4);
  for (const char* variant : {"polar", "edge"}) {
    const Scenario sc = scenario_from_toml(kBeam, {std::string("solver.variant=") + variant,
                                                   "corot-cg.static_cg_tolerance=1e-13"});
    const std::vector<double> u = static_displacement("corot-cg", sc, GetParam(), 1e-4);
    EXPECT_LT(rel_diff(u, ref), 1e-6) << variant;
  }
}

// Linear tetrahedra are too stiff on coarse meshes (shear locking): the tip deflection grows
// toward the converged value with refinement, each level closer than the one before to Timoshenko's
// beam theory (the converged reference of a slender beam; 3D effects at the clamp are below 1%).
TEST_P(Static, CantileverConvergesWithRefinement) {
  EB_COROT_CG_SKIP_WITHOUT_DEVICE(GetParam());
  std::vector<double> tip;
  for (int level : {1, 2, 3}) {
    const std::string div = "mesh.divisions=[" + std::to_string(10 * level) + "," + std::to_string(2 * level) + "," +
                            std::to_string(2 * level) + "]";
    const Scenario sc = scenario_from_toml(kBeam, {div, "corot-cg.static_cg_tolerance=1e-10"});
    const auto& entry = methods().find("corot-cg", GetParam(), Precision::Fp64);
    auto sim = entry.factory(sc, run_options(GetParam(), Precision::Fp64));
    sim->solve_static(1.0);
    std::vector<double> u, v;
    sim->copy_state_to_host(u, v);
    double w = 0;  // the mean z deflection of the nodes on the free end x = 1
    int count = 0;
    for (size_t n = 0; n < sim->nodes().size(); ++n)
      if (std::abs(sim->nodes()[n][0] - 1.0) < 1e-9) {
        w += u[3 * n + 2];
        ++count;
      }
    tip.push_back(-w / count);
  }
  // q = rho g A, I = a^4 / 12; Euler-Bernoulli q L^4 / (8 E I) plus Timoshenko's shear term
  // q L^2 / (2 kappa G A), kappa = 5/6.
  const double a = 0.2, q = 1000 * 9.81 * a * a, E = 1e7, G = E / 2.6, I = a * a * a * a / 12;
  const double timoshenko = q / (8 * E * I) + q / (2 * (5.0 / 6.0) * G * a * a);
  EXPECT_LT(tip[0], tip[1]);
  EXPECT_LT(tip[1], tip[2]);
  const double e0 = std::abs(timoshenko - tip[0]), e1 = std::abs(timoshenko - tip[1]), e2 = std::abs(timoshenko - tip[2]);
  EXPECT_LT(e1, e0);
  EXPECT_LT(e2, e1);
  EXPECT_LT(e2 / timoshenko, 0.15) << "finest " << tip[2] << " Timoshenko " << timoshenko;
  RecordProperty("tip_deflections", std::to_string(tip[0]) + " " + std::to_string(tip[1]) + " " + std::to_string(tip[2]) + " timoshenko " + std::to_string(timoshenko));
}

INSTANTIATE_TEST_SUITE_P(CorotCg, Static,
#if defined(EB_COROT_CG_TEST_CUDA)
                         ::testing::Values(Backend::Cuda),
#else
                         ::testing::Values(Backend::Cpu),
#endif
                         [](const ::testing::TestParamInfo<Backend>& i) { return to_string(i.param); });

}  // namespace
}  // namespace eb::corot_cg::test
