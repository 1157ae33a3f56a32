// Time stepping: runs are valid (no inverted element, finite, the CG's residual reported) with
// every term on, including the raptor falling against the ground; two runs give the same bits, and
// on the CPU one and two threads do;
// the impulses applied are the schedule's; the displacement mapping equals the meshes layer's
// binding evaluated on the host; the stages are timed.
#include "corot_cg_test_util.h"
#include "meshes/render_binding.h"
#include "solvers/common/random_impulse.h"

namespace eb::corot_cg::test {
namespace {

class Dynamics : public ::testing::TestWithParam<Regime> {};

TEST_P(Dynamics, BoxRunIsValidDeterministicAndFollowsTheSchedule) {
  const Regime r = GetParam();
  EB_COROT_CG_SKIP_WITHOUT_DEVICE(r.backend);
  const Scenario sc = scenario_from_toml(box_toml());
  std::vector<double> u[2], v[2];
  for (int run = 0; run < 2; ++run) {
    auto sim = make_corot_cg(sc, run_options(r.backend, r.precision));
    sim->advance(25);
    sim->advance(25);
    const ValidityCounts c = sim->validity();
    EXPECT_EQ(c.inverted_element_steps, 0);
    EXPECT_EQ(c.nonfinite_steps, 0);
    EXPECT_EQ(c.solver_failures, 0);
    EXPECT_GT(c.min_det_f, 0.5);
    const SolverStats st = sim->solver_stats();
    EXPECT_GT(st.iterations, 0);
    EXPECT_LE(st.iterations, sim->setup().options.cg_iterations);
    EXPECT_TRUE(std::isfinite(st.final_residual));
    sim->copy_state_to_host(u[run], v[run]);
    // The free end has come down onto the ground (the plane is 4 mm below the box; without it the
    // tip would sag ~3 cm under gravity): below the plane by the penalty's small penetration only.
    double lowest = 0;
    for (size_t n = 0; n < sim->nodes().size(); ++n) lowest = std::min(lowest, u[run][3 * n + 2]);
    EXPECT_LT(lowest, -0.004);
    EXPECT_GT(lowest, -0.006);
    // Impulses at frames 7, 14, ..., 49: the schedule's, on every backend.
    const nlohmann::json applied = sim->details()["impulses_applied"];
    ASSERT_EQ(applied.size(), 7u);
    for (const auto& a : applied) {
      const auto imp = impulse_at(sc.boundary.random_impulses, a["frame"].get<int64_t>(), sim->setup().num_nodes);
      ASSERT_TRUE(imp);
      EXPECT_EQ(a["node"].get<int>(), imp->node);
      EXPECT_EQ(a["force"][0].get<double>(), imp->force[0]);
    }
    const nlohmann::json t = sim->timings().to_json(0);
    const std::string dump = t.dump();
    EXPECT_TRUE(dump.find(r.backend == Backend::Cuda ? "frame" : "cg") != std::string::npos) << dump;
  }
  EXPECT_EQ(u[0], u[1]);
  EXPECT_EQ(v[0], v[1]);
}

#if !defined(EB_COROT_CG_TEST_CUDA)
// The CPU's loops (element loops writing their own element's values, node loops gathering in the
// incidence order) give the same bits on any thread count. The box's CG vectors are below linalg's
// parallel threshold (kParallelMin), so its dot products are serial and only corot-cg's loops are
// split between the threads.
TEST_P(Dynamics, OneAndTwoThreadsGiveTheSameBits) {
  const Regime r = GetParam();
  const Scenario sc = scenario_from_toml(box_toml());
  std::vector<double> u[2], v[2];
  for (int threads = 1; threads <= 2; ++threads) {
    auto sim = make_corot_cg(sc, run_options(r.backend, r.precision, threads));
    sim->advance(10);
    sim->copy_state_to_host(u[threads - 1], v[threads - 1]);
  }
  EXPECT_EQ(u[0], u[1]);
  EXPECT_EQ(v[0], v[1]);
}
#endif

INSTANTIATE_TEST_SUITE_P(CorotCg, Dynamics, ::testing::ValuesIn(regimes()), regime_name);

// The raptor of Campo 2015 against the ground with impulses every 10 frames: 30 frames, valid; the
// render surface's mapped positions equal mesh::surface_displacement of the same binding.
TEST(Raptor, RunAgainstTheGroundIsValidAndTheMappingMatchesTheBinding) {
#if defined(EB_COROT_CG_TEST_CUDA)
  const Backend backend = Backend::Cuda;
#else
  const Backend backend = Backend::Cpu;
#endif
  EB_COROT_CG_SKIP_WITHOUT_DEVICE(backend);
  if (data_dir().empty()) GTEST_SKIP() << "mesh data folder absent";
  // The ground raised to the feet's tops so that the body's lowest nodes touch it.
  Scenario sc = load_scenario("campo2015-raptor", {"boundary.random_impulses.every=10", "boundary.ground.height=0.2",
                                                   "boundary.ground.stiffness=1e5"});
  auto sim = make_corot_cg(sc, run_options(backend, Precision::Fp32));
  sim->advance(30);
  const ValidityCounts c = sim->validity();
  EXPECT_EQ(c.inverted_element_steps, 0);
  EXPECT_EQ(c.nonfinite_steps, 0);
  EXPECT_EQ(c.solver_failures, 0);
  EXPECT_EQ(sim->details()["impulses_applied"].size(), 2u);
  std::vector<double> u, v;
  sim->copy_state_to_host(u, v);
  const std::vector<double> mapped = sim->get_array(StageArray::render);
  const CorotCgSetup& s = sim->setup();
  ASSERT_EQ(mapped.size(), 3 * size_t(s.render_vertices));
  std::vector<mesh::Vec3> un(size_t(s.num_nodes));
  for (size_t n = 0; n < un.size(); ++n) un[n] = {u[3 * n], u[3 * n + 1], u[3 * n + 2]};
  const std::vector<mesh::Vec3> d = mesh::surface_displacement(s.binding, un);
  // Rest positions of the render vertices: the binding's weights applied to the rest nodes.
  std::vector<mesh::Vec3> zero(un.size(), {0, 0, 0}), rest_nodes = s.nodes;
  double worst = 0;
  for (size_t k = 0; k < d.size(); ++k) {
    double rest[3] = {0, 0, 0};
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) rest[i] += s.binding.weights[k][size_t(a)] * s.nodes[size_t(s.binding.nodes[k][size_t(a)])][size_t(i)];
    for (int i = 0; i < 3; ++i) worst = std::max(worst, std::abs(mapped[3 * k + size_t(i)] - (rest[i] + d[k][size_t(i)])));
  }
  EXPECT_LT(worst, 1e-4);  // fp32 positions of magnitude ~10
}

}  // namespace
}  // namespace eb::corot_cg::test
