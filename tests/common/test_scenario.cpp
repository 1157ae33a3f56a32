#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "meshes/errors.h"
#include "solvers/common/scenario.h"

using eb::InputError;

namespace {

// Expects `f` to throw InputError whose message contains `needle`.
template <class F>
void expect_input_error(F&& f, const std::string& needle) {
  try {
    f();
    FAIL() << "expected InputError mentioning '" << needle << "'";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message was: " << e.what();
  }
}

std::filesystem::path temp_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "eb_test_scenario";
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  std::ofstream(p) << text;
  return p;
}

}  // namespace

TEST(Scenario, BuiltinsParseAndValidate) {
  ASSERT_GE(eb::builtin_scenarios().size(), 2u);
  for (const auto& b : eb::builtin_scenarios()) {
    SCOPED_TRACE(b.name);
    const eb::Scenario s = eb::load_scenario(b.name, {});
    EXPECT_EQ(s.name, b.name);
  }
}

TEST(Scenario, CantileverMatchesTheSpecification) {
  const auto s = eb::load_scenario("cantilever", {});
  EXPECT_EQ(s.mesh.size, (eb::Vec3{1.0, 0.1, 0.1}));
  EXPECT_DOUBLE_EQ(*s.material.youngs_modulus, 1e8);
  EXPECT_DOUBLE_EQ(*s.material.poisson_ratio, 0.3);
  EXPECT_DOUBLE_EQ(s.material.density, 1000.0);
  EXPECT_DOUBLE_EQ(s.boundary.gravity[2], -9.81);
  ASSERT_EQ(s.output.probes.size(), 1u);
  EXPECT_EQ(s.output.probes[0].name, "tip");
  EXPECT_EQ(s.output.probes[0].position, (eb::Vec3{1.0, 0.05, 0.05}));
  // Euler-Bernoulli tip deflection quoted in the scenario: q L^4 / (8 E I).
  const double q = 1000.0 * 9.81 * 0.01, I = 0.1 * std::pow(0.1, 3) / 12.0;
  EXPECT_NEAR(q / (8.0 * 1e8 * I), 0.0147, 5e-5);
}

TEST(Scenario, CubeCompressionMatchesStrbac) {
  const auto s = eb::load_scenario("cube-compression", {"mesh.elements_per_edge=20"});
  EXPECT_EQ(s.mesh.elements_per_edge, 20);
  EXPECT_EQ(s.mesh.size, (eb::Vec3{0.05, 0.05, 0.05}));
  const auto c = eb::elastic_constants(s.material);
  EXPECT_NEAR(c.mu, 10344.8, 0.1);
  EXPECT_NEAR(c.bulk, 1.0e5, 1e-6);
  ASSERT_EQ(s.output.probes.size(), 1u);
  EXPECT_EQ(s.output.probes[0].name, "corner");
  ASSERT_EQ(s.boundary.prescribed.size(), 1u);
  EXPECT_DOUBLE_EQ(s.boundary.prescribed[0].displacement[2], -0.01);  // 20% of 50 mm
}

TEST(Scenario, UnknownKeyIsNamed) {
  const auto p = temp_file("misspelt.toml", "name='x'\n[mesh]\nelemnts_per_edge = 3\n");
  expect_input_error([&] { eb::load_scenario(p.string(), {}); }, "unknown key 'mesh.elemnts_per_edge'");
}

TEST(Scenario, IllTypedKeyIsNamed) {
  const auto p = temp_file("typed.json", R"({"name": "x", "time": {"steps": "ten"}})");
  expect_input_error([&] { eb::load_scenario(p.string(), {}); }, "key 'time.steps' must be an integer");
  const auto q = temp_file("vec.toml", "[boundary]\ngravity = [0, 1]\n");
  expect_input_error([&] { eb::load_scenario(q.string(), {}); }, "'boundary.gravity' must be an array of 3 numbers");
}

TEST(Scenario, UnknownKeyInsideArrayOfTables) {
  expect_input_error([] { eb::load_scenario("cantilever", {"output.probes.0.positon=[1,2,3]"}); },
                     "unknown key 'output.probes.0.positon'");
}

TEST(Scenario, TomlSyntaxErrorReportsLine) {
  const auto p = temp_file("broken.toml", "name = 'x'\n[mesh\nsource='box'\n");
  expect_input_error([&] { eb::load_scenario(p.string(), {}); }, "broken.toml:2");
}

TEST(Scenario, OverridesSetScalarsArraysAndNewItems) {
  const auto s = eb::load_scenario(
      "cantilever", {"mesh.element_size=0.05", "boundary.gravity=[0,0,-1]", "solver.variant=fancy",
                     "output.probes.1.name=mid", "output.probes.1.position=[0.5,0.05,0.05]", "time.until_rest=false"});
  EXPECT_DOUBLE_EQ(s.mesh.element_size, 0.05);
  EXPECT_DOUBLE_EQ(s.boundary.gravity[2], -1.0);
  EXPECT_EQ(s.solver.variant, "fancy");
  ASSERT_EQ(s.output.probes.size(), 2u);
  EXPECT_EQ(s.output.probes[1].name, "mid");
  EXPECT_FALSE(s.time.until_rest);
}

TEST(Scenario, OverrideErrors) {
  expect_input_error([] { eb::load_scenario("cantilever", {"mesh.elemnt_size=1"}); }, "mesh.elemnt_size");
  expect_input_error([] { eb::load_scenario("cantilever", {"no-equals-sign"}); }, "KEY=VALUE");
  expect_input_error([] { eb::load_scenario("cantilever", {"output.probes.7.name=x"}); }, "out of range");
  expect_input_error([] { eb::load_scenario("cantilever", {"mesh.element_size=fast"}); }, "must be a number");
}

TEST(Scenario, TomlAndJsonRoundTrip) {
  const auto s = eb::load_scenario("cube-compression", {"material.damage.enabled=true", "material.damage.m=5.0"});
  const auto toml_path = temp_file("round.toml", eb::scenario_to_toml(s));
  const auto json_path = temp_file("round.json", eb::scenario_to_json(s).dump(2));
  EXPECT_EQ(eb::scenario_to_json(eb::load_scenario(toml_path.string(), {})), eb::scenario_to_json(s));
  EXPECT_EQ(eb::scenario_to_json(eb::load_scenario(json_path.string(), {})), eb::scenario_to_json(s));
}

TEST(Scenario, SemanticValidation) {
  expect_input_error([] { eb::load_scenario("cantilever", {"material.poisson_ratio=0.5"}); }, "Poisson");
  expect_input_error([] { eb::load_scenario("cantilever", {"material.lame_mu=5"}); }, "exactly one pair");
  expect_input_error([] { eb::load_scenario("cantilever", {"mesh.source=tetgen"}); }, "mesh.source");
  expect_input_error([] { eb::load_scenario("cantilever", {"boundary.fixed.0.components=xw"}); }, "components");
  expect_input_error([] { eb::load_scenario("cantilever", {"time.end_time=0", "time.until_rest=false"}); },
                     "never stops");
  expect_input_error([] { eb::load_scenario("no-such-scenario", {}); }, "cantilever");
}

TEST(Scenario, ElasticConstantPairsAgree) {
  eb::MaterialSpec en, lm, gk;
  en.youngs_modulus = 2.5e5;
  en.poisson_ratio = 0.35;
  const auto a = eb::elastic_constants(en);
  lm.lame_lambda = a.lambda;
  lm.lame_mu = a.mu;
  gk.shear_modulus = a.mu;
  gk.bulk_modulus = a.bulk;
  for (const auto& c : {eb::elastic_constants(lm), eb::elastic_constants(gk)}) {
    EXPECT_NEAR(c.youngs_modulus, 2.5e5, 1e-6);
    EXPECT_NEAR(c.poisson_ratio, 0.35, 1e-12);
    EXPECT_NEAR(c.lambda, a.lambda, 1e-6);
  }
  EXPECT_NEAR(a.mu, 2.5e5 / 2.7, 1e-6);
}

TEST(Scenario, LoadCurves) {
  eb::LoadCurve smooth{"smooth", 1.0, 4.0}, linear{"linear", 0.0, 2.0}, step{"step", 0.5, 0.0};
  EXPECT_DOUBLE_EQ(eb::load_factor(smooth, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(eb::load_factor(smooth, 3.0), 0.5);  // symmetric about the midpoint
  EXPECT_DOUBLE_EQ(eb::load_factor(smooth, 5.0), 1.0);
  EXPECT_DOUBLE_EQ(eb::load_factor(smooth, 9.0), 1.0);
  // Zero slope at both ends: the finite-difference slope vanishes quadratically.
  const double h = 1e-4;
  EXPECT_LT(eb::load_factor(smooth, 1.0 + h) / h, 1e-6);
  EXPECT_LT((1.0 - eb::load_factor(smooth, 5.0 - h)) / h, 1e-6);
  EXPECT_DOUBLE_EQ(eb::load_factor(linear, 0.5), 0.25);
  EXPECT_DOUBLE_EQ(eb::load_factor(step, 0.4), 0.0);
  EXPECT_DOUBLE_EQ(eb::load_factor(step, 0.5), 1.0);
  double prev = -1;
  for (int i = 0; i <= 100; ++i) {
    const double f = eb::load_factor(smooth, 1.0 + 4.0 * i / 100.0);
    EXPECT_GE(f, prev);
    prev = f;
  }
}

TEST(Scenario, MethodSectionsAreKeptAsWrittenAndRoundTrip) {
  const auto p = temp_file("sections.toml", R"(name = "x"
[mesh]
source = "box"
size = [1.0, 1.0, 1.0]
elements_per_edge = 2
[material]
youngs_modulus = 1.0e6
poisson_ratio = 0.3
[time]
steps = 3
[hexmg]
cycles = 1
[nr-neohookean]
assembly = "sharednz"
)");
  const auto s = eb::load_scenario(p.string(), {"hexmg.pre_smooth=3"});
  EXPECT_EQ(s.method_options, (nlohmann::json{{"hexmg", {{"cycles", 1}, {"pre_smooth", 3}}},
                                              {"nr-neohookean", {{"assembly", "sharednz"}}}}));
  const auto toml_path = temp_file("sections_round.toml", eb::scenario_to_toml(s));
  EXPECT_EQ(eb::load_scenario(toml_path.string(), {}).method_options, s.method_options);
  EXPECT_EQ(eb::scenario_to_json(s)["hexmg"]["cycles"], 1);
  // A top-level key that is not a table is not a section.
  expect_input_error([] { eb::load_scenario("cantilever", {"cycles=2"}); }, "unknown key 'cycles'");
}

TEST(Scenario, OldSolverKeysSayWhereMethodOptionsWent) {
  for (const char* key : {"solver.cycles=1", "solver.texture=true", "solver.tolerance=1e-3", "solver.assembly=globalnz"}) {
    SCOPED_TRACE(key);
    const std::string name = std::string(key).substr(0, std::string(key).find('='));
    expect_input_error([&] { eb::load_scenario("cantilever", {key}); }, "unknown key '" + name + "'");
    expect_input_error([&] { eb::load_scenario("cantilever", {key}); }, "--set METHOD.");
  }
}

TEST(Scenario, StaticModeAndItsSection) {
  const auto s = eb::load_scenario("cantilever", {"time.mode=static", "static.load_steps=5", "time.end_time=0",
                                                  "time.until_rest=false"});  // no stopping rule needed
  EXPECT_TRUE(eb::is_static(s));
  EXPECT_EQ(s.static_solve.load_steps, 5);
  EXPECT_FALSE(eb::is_static(eb::load_scenario("cantilever", {})));
  expect_input_error([] { eb::load_scenario("cantilever", {"time.mode=quasistatic"}); }, "time.mode");
  expect_input_error([] { eb::load_scenario("cantilever", {"static.load_steps=0"}); }, "static.load_steps");
  expect_input_error([] { eb::load_scenario("cantilever", {"static.tolerance=1.5"}); }, "static.tolerance");
  expect_input_error([] { eb::load_scenario("cantilever", {"static.max_iterations=0"}); }, "static.max_iterations");
}

TEST(Scenario, FeaturesUsedAreNamedByTheirKeys) {
  EXPECT_TRUE(eb::features_used(eb::load_scenario("cantilever", {})).empty());
  const auto s = eb::load_scenario("cantilever", {"boundary.ground.enabled=true", "material.damage.enabled=true",
                                                  "material.damage.gamma=0.5", "material.overrides=[{\"density\": 500}]",
                                                  "boundary.random_impulses.enabled=true",
                                                  "time.rayleigh_stiffness=0.1"});
  EXPECT_EQ(eb::features_used(s), eb::scenario_features());
}

namespace {

eb::LoadCurve curve(const char* shape, double start, double duration) {
  eb::LoadCurve c;
  c.shape = shape;
  c.start = start;
  c.duration = duration;
  return c;
}

}  // namespace

// The values every backend's loads follow (load_curve.h), at points worked out by hand.
TEST(LoadCurve, ShapesTakeTheirDefiningValues) {
  const eb::LoadCurve smooth = curve("smooth", 0.5, 2.0), linear = curve("linear", 0.5, 2.0);
  const eb::LoadCurve step = curve("step", 0.5, 2.0), instant = curve("linear", 0.5, 0.0);
  EXPECT_EQ(eb::load_factor(smooth, 0.0), 0.0);
  EXPECT_EQ(eb::load_factor(smooth, 1.5), 0.5);                  // s = 1/2
  EXPECT_DOUBLE_EQ(eb::load_factor(smooth, 1.0), 0.103515625);  // s = 1/4: s^3 (10 - 15 s + 6 s^2)
  EXPECT_EQ(eb::load_factor(smooth, 9.0), 1.0);
  EXPECT_EQ(eb::load_factor(linear, 1.0), 0.25);
  EXPECT_EQ(eb::load_factor(linear, -1.0), 0.0);
  EXPECT_EQ(eb::load_factor(linear, 3.0), 1.0);
  EXPECT_EQ(eb::load_factor(step, 0.49), 0.0);
  EXPECT_EQ(eb::load_factor(step, 0.5), 1.0);
  EXPECT_EQ(eb::load_factor(instant, 0.49), 0.0);  // zero duration acts as a step
  EXPECT_EQ(eb::load_factor(instant, 0.5), 1.0);
}

TEST(LoadCurve, ParamsCarryTheShapeAndRefuseAnUnknownOne) {
  EXPECT_EQ(eb::curve_params(curve("smooth", 0, 1)).shape, int(eb::CurveShape::Smooth));
  EXPECT_EQ(eb::curve_params(curve("linear", 0, 1)).shape, int(eb::CurveShape::Linear));
  const eb::CurveParams p = eb::curve_params(curve("step", 0.25, 3.0));
  EXPECT_EQ(p.shape, int(eb::CurveShape::Step));
  EXPECT_EQ(p.start, 0.25);
  EXPECT_EQ(p.duration, 3.0);
  try {
    eb::curve_params(curve("cubic", 0, 1));
    FAIL() << "an unknown shape was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cubic"), std::string::npos) << e.what();
  }
}
