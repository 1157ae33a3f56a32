// The device-memory estimate (issue 12): estimate_device_bytes, which make_tled_cuda checks
// against the device's free memory and RunOptions::gpu_memory_limit before its first
// allocation, against what the backend then holds: actual <= estimate <= 1.25 actual, in both
// precisions, with what the contract scene (tests/contract/test_device_memory.cpp: each
// assembly, and the refusal of a limit below the estimate) lacks: damage, and the loaded box's
// prescribed displacements. CUDA build only (test_tled_gpu).
#include <string>

#include "solvers/tled/tled_setup.h"
#include "solvers/tled/tled_simulation.h"

#include "tests/common/device_memory_test_util.h"
#include "tests/tled/tled_test_util.h"

namespace eb::tled::test {
namespace {

struct MemoryCase {
  Precision precision;
  std::string variant;  // solver.variant: gather or atomic
  bool damage;
  bool box;  // the loaded box instead of the cube
};

std::string case_name(const ::testing::TestParamInfo<MemoryCase>& info) {
  const MemoryCase& c = info.param;
  return to_string(c.precision) + "_" + c.variant + (c.damage ? "_damage" : "") + (c.box ? "_box" : "_cube");
}

Scenario scenario_of(const MemoryCase& c) {
  std::vector<std::string> o = {"solver.variant=" + c.variant};
  if (c.damage)  // parameters as in test_cpu_vs_cuda.cpp (damage needs gamma in (0, 1])
    o.insert(o.end(), {"material.damage.enabled=true", "material.damage.gamma=0.5", "material.damage.m=200",
                       "material.damage.psi0=50"});
  return c.box ? loaded_box(o) : cube(6, o);
}

class DeviceMemory : public ::testing::TestWithParam<MemoryCase> {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device";
    c_ = GetParam();
    sc_ = scenario_of(c_);
    estimate_ = estimate_device_bytes(build_tled_setup(sc_, eb::test::cuda_options(c_.precision)), c_.precision);
    make_ = [this](std::size_t limit) {
      const auto& entry = methods().find("tled", Backend::Cuda, c_.precision);
      return entry.factory(sc_, eb::test::cuda_options(c_.precision, limit));
    };
  }
  MemoryCase c_;
  Scenario sc_;
  std::size_t estimate_ = 0;
  eb::test::MakeWithLimit make_;
};

TEST_P(DeviceMemory, EstimateBoundsWhatIsAllocated) {
  const auto a = eb::test::expect_estimate_bounds_allocation(estimate_, make_);
  EXPECT_EQ(a.sim->device_bytes(), a.held);
}

std::vector<MemoryCase> memory_cases() {
  std::vector<MemoryCase> out;
  for (Precision p : {Precision::Fp32, Precision::Fp64}) {
    out.push_back({p, "gather", true, false});
    out.push_back({p, "gather", false, true});
    out.push_back({p, "atomic", true, true});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, DeviceMemory, ::testing::ValuesIn(memory_cases()), case_name);

}  // namespace
}  // namespace eb::tled::test
