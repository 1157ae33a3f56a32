// The runner's static path (time.mode = "static") with a real solve: a chain of hardening springs
// along x, clamped at x = 0 and pulled at the tip, solved for equilibrium by Newton iterations
// with conjugate gradients on the tangent. The chain is statically determinate (every spring
// carries the tip force), so each load step has a closed form to check the run against.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "meshes/errors.h"
#include "solvers/common/method_options.h"
#include "solvers/common/registry.h"
#include "solvers/common/runner.h"
#include "tests/common/common_test_util.h"

namespace eb {

// The test method's section: spring force k e (1 + hardening (e / h)^2) for extension e.
struct ChainOptions {
  double hardening = 0.0;
};
template <class V> void visit(V& v, ChainOptions& o) { v("hardening", o.hardening); }
void validate_chain(const ChainOptions& o) {
  if (o.hardening < 0) throw InputError("scenario key 'spring-chain-test.hardening' must be >= 0");
}

namespace {

const char* kChain = "spring-chain-test";

// N springs of length h = L / N and stiffness k = E A / h between the cross-sections of a row of
// N hexahedra (the mesh.size box, mesh.elements_per_edge along x); the four nodes of a section move
// together along x. Section 0 is clamped; the x component of the first point force pulls the tip.
class SpringChain final : public Simulation {
 public:
  explicit SpringChain(const Scenario& sc)
      : n_(sc.mesh.elements_per_edge),
        h_(sc.mesh.size[0] / n_),
        k_(*sc.material.youngs_modulus * sc.mesh.size[1] * sc.mesh.size[2] / h_),
        beta_(read_method_options<ChainOptions>(sc, kChain, validate_chain).hardening),
        force_(sc.boundary.point_forces.at(0).force[0]),
        tolerance_(sc.static_solve.tolerance),
        max_iterations_(sc.static_solve.max_iterations),
        u_(n_ + 1, 0.0) {
    const double w = sc.mesh.size[1], t = sc.mesh.size[2];
    const double corners[4][2] = {{0.0, 0.0}, {w, 0.0}, {w, t}, {0.0, t}};
    for (int i = 0; i <= n_; ++i)
      for (const auto& c : corners) nodes_.push_back({i * h_, c[0], c[1]});
    for (int e = 0; e < n_; ++e)
      for (int c : {0, 4, 5, 1, 3, 7, 6, 2}) conn_.push_back(4 * e + c);  // VTK hexahedron order
    fixed_.assign(nodes_.size(), 0);
    for (int c = 0; c < 4; ++c) fixed_[c] = 1;
  }
  const std::vector<mesh::Vec3>& nodes() const override { return nodes_; }
  mesh::CellType cell_type() const override { return mesh::CellType::Hexahedron; }
  const std::vector<int32_t>& connectivity() const override { return conn_; }
  const std::vector<uint8_t>& fixed_nodes() const override { return fixed_; }
  void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) override {
    u.assign(3 * nodes_.size(), 0.0);
    v.assign(3 * nodes_.size(), 0.0);
    for (size_t a = 0; a < nodes_.size(); ++a) u[3 * a] = u_[a / 4];
  }
  SolverStats solver_stats() const override { return stats_; }

  void solve_static(double load_factor) override {
    stats_ = SolverStats{};
    std::vector<double> r = residual(load_factor), du(n_ + 1);
    const double r0 = norm(r);
    stats_.outer_initial_residual = r0;
    double rn = r0;
    while (rn > tolerance_ * r0 && stats_.outer_iterations < max_iterations_) {
      const int inner = solve_tangent(r, du);
      for (int i = 1; i <= n_; ++i) u_[i] += du[i];
      ++stats_.outer_iterations;
      stats_.inner_per_outer.push_back(inner);
      stats_.iterations += inner;
      r = residual(load_factor);
      rn = norm(r);
    }
    stats_.outer_final_residual = rn;
    stats_.outer_converged = rn <= tolerance_ * r0;
  }

 private:
  double spring_force(double e) const { return k_ * e * (1.0 + beta_ * (e / h_) * (e / h_)); }
  double spring_tangent(double e) const { return k_ * (1.0 + 3.0 * beta_ * (e / h_) * (e / h_)); }
  // External minus internal force on the free sections 1..N (entry 0, the clamp, stays 0).
  std::vector<double> residual(double load_factor) const {
    std::vector<double> r(n_ + 1, 0.0);
    r[n_] = load_factor * force_;
    for (int s = 0; s < n_; ++s) {
      const double f = spring_force(u_[s + 1] - u_[s]);
      r[s + 1] -= f;
      if (s > 0) r[s] += f;
    }
    return r;
  }
  // Tangent stiffness times x on the free sections (tridiagonal; x[0] = 0 is the clamp).
  std::vector<double> apply_tangent(const std::vector<double>& x) const {
    std::vector<double> y(n_ + 1, 0.0);
    for (int s = 0; s < n_; ++s) {
      const double kt = spring_tangent(u_[s + 1] - u_[s]), d = kt * (x[s + 1] - x[s]);
      y[s + 1] += d;
      if (s > 0) y[s] -= d;
    }
    return y;
  }
  static double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0.0;
    for (size_t i = 1; i < a.size(); ++i) s += a[i] * b[i];
    return s;
  }
  static double norm(const std::vector<double>& a) { return std::sqrt(dot(a, a)); }
  // Conjugate gradients on K_T x = b to a relative residual far below the Newton tolerance;
  // records the last solve's residuals and returns its iteration count.
  int solve_tangent(const std::vector<double>& b, std::vector<double>& x) {
    std::fill(x.begin(), x.end(), 0.0);
    std::vector<double> r = b, p = b;
    double rr = dot(r, r);
    const double b_norm = std::sqrt(rr);
    stats_.initial_residual = b_norm;
    int it = 0;
    while (std::sqrt(rr) > 1e-12 * b_norm && it < 4 * n_) {
      const std::vector<double> q = apply_tangent(p);
      const double alpha = rr / dot(p, q);
      for (int i = 1; i <= n_; ++i) {
        x[i] += alpha * p[i];
        r[i] -= alpha * q[i];
      }
      const double rr_new = dot(r, r);
      for (int i = 1; i <= n_; ++i) p[i] = r[i] + (rr_new / rr) * p[i];
      rr = rr_new;
      ++it;
    }
    stats_.final_residual = std::sqrt(rr);
    stats_.converged = std::sqrt(rr) <= 1e-12 * b_norm;
    return it;
  }

  int n_;
  double h_, k_, beta_, force_, tolerance_;
  int max_iterations_;
  std::vector<double> u_;  // per section
  SolverStats stats_;
  std::vector<mesh::Vec3> nodes_;
  std::vector<int32_t> conn_;
  std::vector<uint8_t> fixed_;
};

// The closed form: each spring carries load_factor x F, so its strain s = e / h solves
// hardening s^3 + s = load_factor F / (k h) (one real root, Cardano); the tip moves L s.
double tip_displacement(double load_factor, double force, double ea, double length, double hardening) {
  const double q = load_factor * force / ea;
  if (hardening == 0) return length * q;
  const double p = 1.0 / hardening, c = q / hardening;
  const double d = std::sqrt(c * c / 4.0 + p * p * p / 27.0);
  return length * (std::cbrt(c / 2.0 + d) + std::cbrt(c / 2.0 - d));
}

const char* kScenario = R"(name = "spring-chain"
[mesh]
source = "box"
size = [1.0, 0.1, 0.1]
elements_per_edge = 8
[material]
youngs_modulus = 1.0e6
poisson_ratio = 0.3
[[boundary.fixed]]
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }
[[boundary.point_forces]]
position = [1.0, 0.0, 0.0]
force = [2000.0, 0.0, 0.0]
[time]
mode = "static"
[static]
load_steps = 4
tolerance = 1e-10
max_iterations = 30
[spring-chain-test]
hardening = 50.0
[output]
probes = [ { name = "tip", position = [1.0, 0.0, 0.0] } ]
)";

class StaticRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    MethodInfo info;
    info.name = kChain;
    info.summary = "hardening spring chain of test_static (Newton + CG)";
    info.variants = {{"newton-cg", "Newton iterations, conjugate gradients on the tangent", {}}};
    info.options = option_schema<ChainOptions>(validate_chain);
    info.dynamic = false;
    info.static_solve = true;
    test::register_test_method(info, [](const Scenario& sc, const RunOptions&) { return std::make_unique<SpringChain>(sc); });
  }
  void SetUp() override { dir_ = test::fresh_test_dir("eb_test_static"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  RunRequest request(const std::vector<std::string>& overrides) const {
    nlohmann::json doc = parse_scenario_text(kScenario, "toml", "test_static");
    for (const auto& o : overrides) apply_override(doc, o);
    RunRequest req;
    req.method = kChain;
    req.options.threads = 1;
    req.scenario = scenario_from_json(doc, "test_static");
    req.scenario_origin = "test_static";
    req.out_dir = dir_;
    req.quiet = true;
    return req;
  }
  std::filesystem::path dir_;
};

TEST_F(StaticRun, LoadStepsReachTheClosedForm) {
  RunRequest req = request({});
  req.vtk_every = 2;
  const auto s = run_simulation(req);
  EXPECT_EQ(s["time"]["mode"], "static");
  EXPECT_EQ(s["time"]["steps"], 4);
  EXPECT_EQ(s["time"]["stopped_by"], "static.load_steps");
  EXPECT_TRUE(s["time"]["dt"].is_null());
  EXPECT_TRUE(s["validity"]["valid"].get<bool>()) << s["validity"].dump();
  EXPECT_EQ(s["method_options"], (nlohmann::json{{"hardening", 50.0}}));
  const double ea = 1e6 * 0.01;
  const double tip = tip_displacement(1.0, 2000.0, ea, 1.0, 50.0);
  ASSERT_GT(tip, 0.1);
  EXPECT_LT(tip, 0.9 * 2000.0 / ea);  // hardening: well short of the linear answer
  EXPECT_NEAR(s["probes"]["tip"][0].get<double>(), tip, 1e-10 * tip);

  // One record per load step, each converged with several Newton iterations of CG solves.
  const auto& steps = s["static"]["load_steps"];
  ASSERT_EQ(steps.size(), 4u);
  long outer_total = 0;
  for (int k = 0; k < 4; ++k) {
    SCOPED_TRACE(k);
    const auto& rec = steps[k];
    EXPECT_EQ(rec["load_step"], k + 1);
    EXPECT_DOUBLE_EQ(rec["load_factor"].get<double>(), (k + 1) / 4.0);
    EXPECT_TRUE(rec["converged"].get<bool>());
    EXPECT_GE(rec["outer_iterations"].get<int>(), 2);
    EXPECT_LE(rec["outer_final_residual"].get<double>(), 1e-10 * rec["outer_initial_residual"].get<double>());
    int inner = 0;
    for (const auto& n : rec["inner_per_outer"]) {
      EXPECT_GE(n.get<int>(), 1);
      EXPECT_LE(n.get<int>(), 8);  // CG on 8 unknowns
      inner += n.get<int>();
    }
    EXPECT_EQ(inner, rec["inner_iterations"].get<int>());
    EXPECT_GE(rec["solve_ms"].get<double>(), 0.0);
    outer_total += rec["outer_iterations"].get<long>();
  }
  const auto& sv = s["solver"];
  EXPECT_EQ(sv["levels"], 2);
  EXPECT_TRUE(sv["all_converged"].get<bool>());
  EXPECT_DOUBLE_EQ(sv["outer"]["iterations"]["mean"].get<double>(), outer_total / 4.0);
  EXPECT_EQ(s["timing"]["measured_steps"], 4);
  EXPECT_TRUE(s["timing"]["steps_per_second"].is_null());

  // timeseries.csv: the initial state and each load step, with the closed form at each factor.
  std::ifstream in(dir_ / "timeseries.csv");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("load_step,load_factor,solve_ms,max_displacement,iterations,residual,", 0), 0u) << line;
  std::vector<std::vector<std::string>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    rows.push_back(cells);
  }
  ASSERT_EQ(rows.size(), 5u);
  for (int k = 1; k <= 4; ++k) {
    const double expected = tip_displacement(k / 4.0, 2000.0, ea, 1.0, 50.0);
    EXPECT_NEAR(std::stod(rows[k][12]), expected, 1e-10 * expected) << "load step " << k;  // tip_ux
  }
  // Frames of the initial state, load step 2 and the last one, at their load factors.
  for (const char* f : {"step_0000000.vtu", "step_0000002.vtu", "step_0000004.vtu"})
    EXPECT_TRUE(std::filesystem::exists(dir_ / "vtk" / f)) << f;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "vtk" / "step_0000001.vtu"));
  std::ifstream pvd(dir_ / "vtk" / "series.pvd");
  const std::string pvd_text((std::istreambuf_iterator<char>(pvd)), std::istreambuf_iterator<char>());
  EXPECT_NE(pvd_text.find("timestep=\"0.5\""), std::string::npos) << pvd_text;
}

TEST_F(StaticRun, LinearChainTakesOneNewtonIteration) {
  const auto s = run_simulation(request({"spring-chain-test.hardening=0.0", "static.load_steps=1"}));
  EXPECT_NEAR(s["probes"]["tip"][0].get<double>(), 0.2, 1e-12);  // F L / (E A)
  const auto& rec = s["static"]["load_steps"][0];
  EXPECT_EQ(rec["outer_iterations"], 1);
  EXPECT_TRUE(rec["converged"].get<bool>());
}

TEST_F(StaticRun, MissedToleranceStopsTheRunAndMakesItInvalid) {
  const auto s = run_simulation(request({"static.max_iterations=1"}));
  EXPECT_EQ(s["time"]["steps"], 1);
  EXPECT_EQ(s["time"]["stopped_by"], "a load step missed static.tolerance");
  EXPECT_FALSE(s["validity"]["valid"].get<bool>());
  EXPECT_EQ(s["validity"]["first_invalid_step"], 1);
  EXPECT_FALSE(s["static"]["load_steps"][0]["converged"].get<bool>());
  EXPECT_TRUE(std::filesystem::exists(dir_ / "summary.json"));
}

TEST_F(StaticRun, ModesAndCountsAreCheckedBeforeAnythingIsWritten) {
  EXPECT_THROW(run_simulation(request({"time.mode=dynamic", "time.steps=3"})), InputError);  // no time stepping
  RunRequest req = request({});
  req.steps = 3;  // step counts are for time stepping
  EXPECT_THROW(run_simulation(req), InputError);
  req = request({"spring-chain-test.stiffness=2"});
  EXPECT_THROW(run_simulation(req), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir_));
  // A method without static solves refuses the static scenario, naming the mode.
  req = request({});
  req.scenario.method_options.erase(kChain);
  req.method = methods().infos().front().name;
  if (!methods().infos().front().static_solve) {
    try {
      run_simulation(req);
      FAIL() << "a method without static solves ran a static scenario";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("static"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace eb
