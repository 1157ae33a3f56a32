// The method registry: entries per method x variant x backend x precision, and what it makes of a
// scenario for a run (MethodRegistry::resolve): the variant, the method's own section read
// strictly, variant-only keys, run modes and optional scenario features, each refused with an
// InputError naming the key or choice.
#include <gtest/gtest.h>

#include <algorithm>

#include "meshes/errors.h"
#include "solvers/common/registry.h"

namespace eb {

// A method section with two keys; `span` applies to one variant only.
struct AlphaOptions {
  int depth = 3;
  double span = 1.0;
};
template <class V> void visit(V& v, AlphaOptions& o) {
  v("depth", o.depth);
  v("span", o.span);
}
void validate_alpha(const AlphaOptions& o) {
  if (o.depth < 1) throw InputError("scenario key 'alpha.depth' must be >= 1");
}

namespace {

template <class F> std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

MethodEntry entry(const std::string& m, const std::string& v, Backend b, Precision p) {
  return {m, v, b, p, [](const Scenario&, const RunOptions&) { return nullptr; }};
}

MethodInfo info(const std::string& name, std::vector<VariantInfo> variants) {
  MethodInfo m;
  m.name = name;
  m.summary = "test method " + name;
  m.variants = std::move(variants);
  return m;
}

// alpha: variants plain (default, every key) and wide (depth only... and span); options; damage.
// beta: no options, static solves only.
MethodRegistry test_registry() {
  MethodRegistry r;
  MethodInfo a = info("alpha", {{"plain", "the default", {"depth"}}, {"wide", "with a span", {}}});
  a.options = option_schema<AlphaOptions>(validate_alpha);
  a.features = {"material.damage"};
  r.add_method(a);
  MethodInfo b = info("beta", {{"only", "its one variant", {}}});
  b.dynamic = false;
  b.static_solve = true;
  r.add_method(b);
  r.add(entry("alpha", "plain", Backend::Cpu, Precision::Fp64));
  r.add(entry("alpha", "wide", Backend::Cpu, Precision::Fp64));
  r.add(entry("alpha", "wide", Backend::Cuda, Precision::Fp32));
  r.add(entry("beta", "only", Backend::Cpu, Precision::Fp32));
  return r;
}

Scenario scenario(const std::vector<std::string>& overrides = {}) { return load_scenario("cantilever", overrides); }

}  // namespace

TEST(Registry, FindsRegisteredEntries) {
  const MethodRegistry r = test_registry();
  EXPECT_EQ(r.find("alpha", "wide", Backend::Cuda, Precision::Fp32).backend, Backend::Cuda);
  EXPECT_EQ(r.find("alpha", Backend::Cpu, Precision::Fp64).variant, "plain");  // the default variant
  EXPECT_EQ(r.find("beta", Backend::Cpu, Precision::Fp32).method, "beta");
  EXPECT_EQ(r.method_names(), (std::vector<std::string>{"alpha", "beta"}));
}

TEST(Registry, RejectsDuplicatesAndUndeclaredEntries) {
  MethodRegistry r = test_registry();
  EXPECT_THROW(r.add(entry("alpha", "plain", Backend::Cpu, Precision::Fp64)), std::logic_error);
  EXPECT_THROW(r.add(entry("gamma", "plain", Backend::Cpu, Precision::Fp64)), std::logic_error);
  EXPECT_THROW(r.add(entry("alpha", "narrow", Backend::Cpu, Precision::Fp64)), std::logic_error);
  EXPECT_THROW(r.add_method(info("alpha", {{"x", "", {}}})), std::logic_error);
  EXPECT_THROW(r.add_method(info("delta", {})), std::logic_error);
  MethodInfo bad = info("epsilon", {{"x", "", {}}});
  bad.features = {"boundary.gravity"};  // not an optional feature
  EXPECT_THROW(r.add_method(bad), std::logic_error);
}

TEST(Registry, UnknownChoicesListWhatExists) {
  const MethodRegistry r = test_registry();
  std::string msg = input_error_of([&] { r.find("gamma", Backend::Cpu, Precision::Fp64); });
  EXPECT_NE(msg.find("unknown method 'gamma'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("alpha wide cuda fp32"), std::string::npos) << msg;
  msg = input_error_of([&] { r.find("alpha", Backend::Cuda, Precision::Fp64); });
  EXPECT_NE(msg.find("no cuda/fp64 implementation"), std::string::npos) << msg;
  msg = input_error_of([&] { r.find("alpha", "narrow", Backend::Cpu, Precision::Fp64); });
  EXPECT_NE(msg.find("no variant 'narrow'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("plain, wide"), std::string::npos) << msg;
}

TEST(Registry, ResolvesTheVariantAndTheMethodSection) {
  const MethodRegistry r = test_registry();
  ResolvedMethod m = r.resolve(scenario(), "alpha", Backend::Cpu, Precision::Fp64);
  EXPECT_EQ(m.entry->variant, "plain");
  EXPECT_EQ(m.options, (nlohmann::json{{"depth", 3}, {"span", 1.0}}));  // defaults filled in
  m = r.resolve(scenario({"solver.variant=wide", "alpha.depth=5", "alpha.span=2.5"}), "alpha", Backend::Cuda,
                Precision::Fp32);
  EXPECT_EQ(m.entry->variant, "wide");
  EXPECT_EQ(m.options, (nlohmann::json{{"depth", 5}, {"span", 2.5}}));
}

TEST(Registry, SectionKeysAreCheckedAndNamed) {
  const MethodRegistry r = test_registry();
  auto resolve = [&](const std::vector<std::string>& o, const std::string& method = "alpha") {
    return input_error_of([&] { r.resolve(scenario(o), method, Backend::Cpu, Precision::Fp64); });
  };
  std::string msg = resolve({"alpha.depht=4"});
  EXPECT_NE(msg.find("unknown key 'alpha.depht'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("depth, span"), std::string::npos) << msg;
  EXPECT_NE(resolve({"alpha.depth=0"}).find("'alpha.depth' must be >= 1"), std::string::npos);
  EXPECT_NE(resolve({"alpha.depth=\"deep\""}).find("'alpha.depth' must be an integer"), std::string::npos);
  // The span applies to the wide variant only.
  msg = resolve({"alpha.span=2"});
  EXPECT_NE(msg.find("'alpha.span' does not apply to variant 'plain'"), std::string::npos) << msg;
  // Another method's key, a section of no method, an option for a method without options.
  msg = resolve({"beta.anything=1"});
  EXPECT_NE(msg.find("unknown scenario key 'beta.anything'"), std::string::npos) << msg;
  msg = input_error_of([&] {
    r.resolve(scenario({"alpha.depth=2", "time.mode=static"}), "beta", Backend::Cpu, Precision::Fp32);
  });
  EXPECT_NE(msg.find("'alpha.depth' belongs to method 'alpha', not to 'beta'"), std::string::npos) << msg;
  msg = resolve({"alhpa.depth=2"});
  EXPECT_NE(msg.find("unknown scenario key 'alhpa'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("alpha, beta"), std::string::npos) << msg;
  // The same checks without a run (`scenario check`).
  EXPECT_NO_THROW(r.check_sections(scenario({"alpha.span=2"})));
  EXPECT_THROW(r.check_sections(scenario({"alpha.spam=2"})), InputError);
  EXPECT_THROW(r.check_sections(scenario({"alhpa.depth=2"})), InputError);
}

TEST(Registry, ModesAndFeaturesTheMethodLacksAreRefused) {
  const MethodRegistry r = test_registry();
  std::string msg = input_error_of([&] {
    r.resolve(scenario({"time.mode=static"}), "alpha", Backend::Cpu, Precision::Fp64);
  });
  EXPECT_NE(msg.find("'alpha' has no static solve"), std::string::npos) << msg;
  EXPECT_NE(msg.find("that have: beta"), std::string::npos) << msg;
  msg = input_error_of([&] { r.resolve(scenario(), "beta", Backend::Cpu, Precision::Fp32); });
  EXPECT_NE(msg.find("'beta' has no time stepping"), std::string::npos) << msg;
  EXPECT_NO_THROW(r.resolve(scenario({"time.mode=static"}), "beta", Backend::Cpu, Precision::Fp32));

  msg = input_error_of([&] {
    r.resolve(scenario({"boundary.ground.enabled=true"}), "alpha", Backend::Cpu, Precision::Fp64);
  });
  EXPECT_NE(msg.find("does not implement scenario key 'boundary.ground'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("that do: none"), std::string::npos) << msg;
  const auto damage = scenario({"material.damage.enabled=true", "material.damage.gamma=0.5", "time.mode=static"});
  EXPECT_THROW(r.resolve(damage, "beta", Backend::Cpu, Precision::Fp32), InputError);
}

TEST(Registry, DescribesVariantsOptionsAndModes) {
  const nlohmann::json d = test_registry().describe();
  ASSERT_TRUE(d.contains("alpha"));
  EXPECT_EQ(d["alpha"]["options"], (nlohmann::json{{"depth", 3}, {"span", 1.0}}));
  EXPECT_EQ(d["alpha"]["modes"], nlohmann::json::array({"dynamic"}));
  EXPECT_EQ(d["beta"]["modes"], nlohmann::json::array({"static"}));
  ASSERT_EQ(d["alpha"]["variants"].size(), 2u);
  EXPECT_TRUE(d["alpha"]["variants"][0]["default"].get<bool>());
  EXPECT_EQ(d["alpha"]["variants"][1]["implementations"], nlohmann::json::array({"cpu fp64", "cuda fp32"}));
}

TEST(Registry, ParsesBackendAndPrecisionNames) {
  EXPECT_EQ(parse_backend("cpu"), Backend::Cpu);
  EXPECT_EQ(parse_backend("cuda"), Backend::Cuda);
  EXPECT_EQ(parse_precision("fp32"), Precision::Fp32);
  EXPECT_EQ(parse_precision("double"), Precision::Fp64);
  EXPECT_THROW(parse_backend("opencl"), InputError);
  EXPECT_THROW(parse_precision("fp16"), InputError);
  EXPECT_EQ(to_string(Backend::Cuda), "cuda");
  EXPECT_EQ(to_string(Precision::Fp32), "fp32");
}

TEST(Registry, ProcessRegistryEntriesAreConsistent) {
  // Every compiled-in method declares a summary and a default variant; every entry has a
  // factory and is found again; a scenario without a method section resolves for each.
  for (const auto& m : methods().infos()) {
    EXPECT_FALSE(m.summary.empty()) << m.name;
    ASSERT_FALSE(m.variants.empty()) << m.name;
  }
  for (const auto& e : methods().entries()) {
    EXPECT_TRUE(bool(e.factory)) << e.method;
    EXPECT_NO_THROW(methods().find(e.method, e.variant, e.backend, e.precision)) << e.method << " " << e.variant;
  }
}

// What the shipped methods accept: the keys the issue names (boundary.ground, tled's texture,
// nr-neohookean's assembly) are refused where they mean nothing, naming the key.
TEST(Registry, ShippedMethodsRefuseKeysTheyDoNotSupport) {
  auto has = [](const std::string& m) {
    const auto names = methods().method_names();
    return std::find(names.begin(), names.end(), m) != names.end();
  };
  if (!has("hexmg") || !has("tled")) GTEST_SKIP() << "hexmg and tled are not both in this build";
  auto resolve = [](const std::string& method, const std::vector<std::string>& o) {
    return input_error_of([&] { methods().resolve(scenario(o), method, Backend::Cpu, Precision::Fp64); });
  };
  EXPECT_NE(resolve("hexmg", {"boundary.ground.enabled=true"}).find("boundary.ground"), std::string::npos);
  EXPECT_NE(resolve("hexmg", {"tled.texture=true"}).find("'tled.texture' belongs to method 'tled'"), std::string::npos);
  EXPECT_NE(resolve("hexmg", {"hexmg.assembly=\"sharednz\""}).find("unknown key 'hexmg.assembly'"), std::string::npos);
  EXPECT_NE(resolve("tled", {"hexmg.cycles=1"}).find("'hexmg.cycles' belongs to method 'hexmg'"), std::string::npos);
  EXPECT_NE(resolve("tled", {"material.overrides=[{\"density\": 500}]"}).find("material.overrides"), std::string::npos);
  EXPECT_NE(resolve("tled", {"solver.variant=colouring"}).find("no variant 'colouring'"), std::string::npos);
  // The old places of the method options name the key and say where options went.
  const std::string moved = input_error_of([] { scenario({"solver.texture=true"}); });
  EXPECT_NE(moved.find("unknown key 'solver.texture'"), std::string::npos) << moved;
  EXPECT_NE(moved.find("METHOD.texture"), std::string::npos) << moved;
  EXPECT_EQ(methods().resolve(scenario({"hexmg.cycles=1"}), "hexmg", Backend::Cpu, Precision::Fp64).options["cycles"], 1);
  EXPECT_EQ(methods().resolve(scenario({"solver.variant=atomic", "tled.texture=true"}), "tled", Backend::Cpu,
                              Precision::Fp64).entry->variant,
            "atomic");
}

}  // namespace eb
