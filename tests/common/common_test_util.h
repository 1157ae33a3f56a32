#pragma once
// Helpers shared by the runner tests: test-only methods in the process registry and a fresh
// output folder per test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "solvers/common/registry.h"

namespace eb::test {

// Declares `info` (its first variant registered for cpu fp64 with `factory`) in the process
// registry, once per process: test suites may set up more than once.
inline void register_test_method(MethodInfo info, SimulationFactory factory) {
  for (const auto& m : methods().infos())
    if (m.name == info.name) return;
  const std::string name = info.name, variant = info.variants.front().name;
  methods().add_method(std::move(info));
  methods().add({name, variant, Backend::Cpu, Precision::Fp64, std::move(factory)});
}

// An output folder for the running test (removed first if a previous run left it).
inline std::filesystem::path fresh_test_dir(const std::string& prefix) {
  const auto dir = std::filesystem::temp_directory_path() /
                   (prefix + "_" + std::to_string(::getpid()) + "_" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace eb::test
