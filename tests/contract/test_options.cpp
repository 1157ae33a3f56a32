// Every option a method lists (MethodInfo::options, the keys and defaults `elastobench list`
// shows, MethodRegistry::describe) is accepted with its default value by every implementation
// of every variant it applies to (VariantInfo::keys), and means the default: the run with every
// such key written out equals the run without the section, bit for bit where the variant is
// deterministic. A value of the wrong type is an InputError naming `method.key`, both from the
// registry (before anything is built) and from the method's own reading of its section.
#include "tests/contract/contract_util.h"

namespace eb::contract {
namespace {

nlohmann::json defaults_of(const std::string& method) { return methods().describe()[method]["options"]; }

class Options : public ::testing::TestWithParam<Impl> {};

TEST_P(Options, EveryOptionIsAcceptedWithItsDefault) {
  const Impl i = GetParam();
  EB_CONTRACT_SKIP_WITHOUT_DEVICE(i);
  const nlohmann::json defaults = defaults_of(i.method);
  const std::vector<std::string>& keys = i.variant_info().keys;
  Scenario explicit_defaults = scene();
  nlohmann::json section = nlohmann::json::object();
  for (auto it = defaults.begin(); it != defaults.end(); ++it)
    if (keys.empty() || std::find(keys.begin(), keys.end(), it.key()) != keys.end()) section[it.key()] = it.value();
  explicit_defaults.method_options[i.method] = section;
  const ResolvedMethod r = methods().resolve(for_impl(explicit_defaults, i), i.method, i.backend, i.precision);
  EXPECT_EQ(r.options, defaults);
  auto a = make(i, explicit_defaults), b = make(i, scene());
  if (i.info().dynamic) {
    a->advance(2);
    b->advance(2);
  }
  const State sa = state_of(*a), sb = state_of(*b);
  if (i.variant_info().deterministic) {
    EXPECT_EQ(first_bitwise_difference(sa.u, sb.u), "") << section.dump();
  } else {
    // Two runs of an order-dependent variant differ by their rounding, which in fp32 reaches the
    // precision the state has on this scene (~1e-3 under co-rotation: test_cpu_vs_cuda.cpp says
    // why; bcsr-pcg scatter 3.1e-4 after two steps on the H100).
    EXPECT_LE(relative_difference(sa.u, sb.u), i.precision == Precision::Fp32 ? 2e-3 : 1e-9) << section.dump();
  }
}

EB_CONTRACT_INSTANTIATE(Options, nullptr);

struct OptionKey {
  std::string method, key;
  nlohmann::json default_value;
};
void PrintTo(const OptionKey& k, std::ostream* os) { *os << k.method << "." << k.key; }

std::vector<OptionKey> option_keys() {
  std::vector<OptionKey> out;
  for (const MethodInfo& m : methods().infos()) {
    const nlohmann::json defaults = defaults_of(m.name);
    for (auto it = defaults.begin(); it != defaults.end(); ++it) out.push_back({m.name, it.key(), it.value()});
  }
  return out;
}

class WrongType : public ::testing::TestWithParam<OptionKey> {};

TEST_P(WrongType, IsRefusedNamingTheKey) {
  const OptionKey k = GetParam();
  const std::string name = k.method + "." + k.key;
  Scenario sc = scene();
  sc.method_options[k.method] = {{k.key, k.default_value.is_string() ? nlohmann::json(17) : nlohmann::json("seventeen")}};
  const MethodEntry& first = methods().entries().at(0);
  const MethodEntry* entry = &first;  // the method's first (its default variant's first, as registered)
  for (const MethodEntry& e : methods().entries())
    if (e.method == k.method && e.variant == methods().info(k.method).variants.front().name) {
      entry = &e;
      break;
    }
  ASSERT_EQ(entry->method, k.method);
  std::string msg = input_error([&] { methods().resolve(sc, k.method, entry->backend, entry->precision); });
  EXPECT_NE(msg.find(name), std::string::npos) << "registry: " << (msg.empty() ? "accepted" : msg);
  // The method reads its section itself too (a factory called without the registry).
  for (const MethodEntry& e : methods().entries())
    if (e.method == k.method && e.backend == Backend::Cpu) {
      msg = input_error([&] { e.factory(for_impl(sc, {e.method, e.variant, e.backend, e.precision}), run_options({e.method, e.variant, e.backend, e.precision})); });
      EXPECT_NE(msg.find(name), std::string::npos) << e.variant << " factory: " << (msg.empty() ? "accepted" : msg);
      break;
    }
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(WrongType);
INSTANTIATE_TEST_SUITE_P(Keys, WrongType, ::testing::ValuesIn(option_keys()),
                         [](const ::testing::TestParamInfo<OptionKey>& i) {
                           return identifier(i.param.method + "_" + i.param.key);
                         });

}  // namespace
}  // namespace eb::contract
