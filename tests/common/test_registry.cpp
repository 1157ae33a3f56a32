#include <gtest/gtest.h>

#include "meshes/errors.h"
#include "solvers/common/registry.h"

namespace {
eb::MethodEntry entry(const std::string& m, eb::Backend b, eb::Precision p) {
  return {m, b, p, "test entry", [](const eb::Scenario&, const eb::RunOptions&) { return nullptr; }};
}
}  // namespace

TEST(Registry, FindsRegisteredEntries) {
  eb::MethodRegistry r;
  r.add(entry("alpha", eb::Backend::Cpu, eb::Precision::Fp64));
  r.add(entry("alpha", eb::Backend::Cuda, eb::Precision::Fp32));
  r.add(entry("beta", eb::Backend::Cpu, eb::Precision::Fp32));
  EXPECT_EQ(r.find("alpha", eb::Backend::Cuda, eb::Precision::Fp32).backend, eb::Backend::Cuda);
  EXPECT_EQ(r.find("beta", eb::Backend::Cpu, eb::Precision::Fp32).method, "beta");
  EXPECT_EQ(r.method_names(), (std::vector<std::string>{"alpha", "beta"}));
}

TEST(Registry, RejectsDuplicates) {
  eb::MethodRegistry r;
  r.add(entry("alpha", eb::Backend::Cpu, eb::Precision::Fp64));
  EXPECT_THROW(r.add(entry("alpha", eb::Backend::Cpu, eb::Precision::Fp64)), std::logic_error);
}

TEST(Registry, UnknownChoicesListWhatExists) {
  eb::MethodRegistry r;
  r.add(entry("alpha", eb::Backend::Cpu, eb::Precision::Fp64));
  try {
    r.find("gamma", eb::Backend::Cpu, eb::Precision::Fp64);
    FAIL();
  } catch (const eb::InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("unknown method 'gamma'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("alpha cpu fp64"), std::string::npos) << msg;
  }
  try {
    r.find("alpha", eb::Backend::Cuda, eb::Precision::Fp64);
    FAIL();
  } catch (const eb::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no cuda/fp64 implementation"), std::string::npos) << e.what();
  }
}

TEST(Registry, ParsesBackendAndPrecisionNames) {
  EXPECT_EQ(eb::parse_backend("cpu"), eb::Backend::Cpu);
  EXPECT_EQ(eb::parse_backend("cuda"), eb::Backend::Cuda);
  EXPECT_EQ(eb::parse_precision("fp32"), eb::Precision::Fp32);
  EXPECT_EQ(eb::parse_precision("double"), eb::Precision::Fp64);
  EXPECT_THROW(eb::parse_backend("opencl"), eb::InputError);
  EXPECT_THROW(eb::parse_precision("fp16"), eb::InputError);
  EXPECT_EQ(eb::to_string(eb::Backend::Cuda), "cuda");
  EXPECT_EQ(eb::to_string(eb::Precision::Fp32), "fp32");
}

TEST(Registry, ProcessRegistryEntriesAreConsistent) {
  // Every compiled-in entry has a factory and a summary; names follow the documented set.
  for (const auto& e : eb::methods().entries()) {
    EXPECT_TRUE(bool(e.factory)) << e.method;
    EXPECT_FALSE(e.summary.empty()) << e.method;
    EXPECT_NO_THROW(eb::methods().find(e.method, e.backend, e.precision));
  }
}
