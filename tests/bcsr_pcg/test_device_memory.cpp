// The device-memory estimate (issue 12): estimate_device_bytes, which the CUDA factory checks
// against the device's free memory and RunOptions::gpu_memory_limit before its first
// allocation, against what the backend then holds (its buffers and sliced matrix, device_bytes(),
// plus its two CG solvers' vectors: the tracked allocations): actual <= estimate <= 1.25 actual
// in both precisions with tolerance CG (bcsr-pcg.cg_tolerance > 0: the CG's history sized by
// cg_max_iterations). Each update with fixed-count CG, and the refusal of a limit below the
// estimate, are the contract's (tests/contract/test_device_memory.cpp). CUDA build only
// (test_bcsr_pcg_gpu).
#include <memory>
#include <string>

#include "tests/bcsr_pcg/bcsr_pcg_test_util.h"
#include "tests/common/device_memory_test_util.h"

namespace eb::bcsr_pcg::test {
namespace {

struct MemoryCase {
  Precision precision;
  std::string variant;  // gather, scatter
  bool tolerance;       // bcsr-pcg.cg_tolerance > 0 (the CG's history sized by cg_max_iterations)
};

std::string case_name(const ::testing::TestParamInfo<MemoryCase>& info) {
  return to_string(info.param.precision) + "_" + info.param.variant + (info.param.tolerance ? "_tolerance" : "");
}

Scenario scenario_of(const MemoryCase& c) {
  Scenario s = test_box(c.tolerance ? std::vector<std::string>{"bcsr-pcg.cg_tolerance=1e-6"}
                                    : std::vector<std::string>{});
  s.solver.variant = c.variant;
  return s;
}

RunOptions cuda_options(Precision p, std::size_t limit = 0) {
  RunOptions o = eb::test::cuda_options(p, limit);
  o.data_dir = data_dir();
  return o;
}

class DeviceMemory : public ::testing::TestWithParam<MemoryCase> {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: " << cuda_device_info(0).reason;
    c_ = GetParam();
    sc_ = scenario_of(c_);
    estimate_ = estimate_device_bytes(build_bcsr_pcg_setup(sc_, cuda_options(c_.precision)), c_.precision, 0);
    make_ = [this](std::size_t limit) -> std::unique_ptr<Simulation> {
      return make_bcsr_pcg(sc_, cuda_options(c_.precision, limit));
    };
  }
  MemoryCase c_;
  Scenario sc_;
  std::size_t estimate_ = 0;
  eb::test::MakeWithLimit make_;
};

TEST_P(DeviceMemory, EstimateBoundsWhatIsAllocated) {
  const auto a = eb::test::expect_estimate_bounds_allocation(estimate_, make_);
  // Steps allocate nothing more: the estimate covers the run, not only the setup.
  a.sim->advance(2);
  EXPECT_EQ(cuda_tracked_bytes() - a.before, a.held);
}

std::vector<MemoryCase> memory_cases() {
  std::vector<MemoryCase> out;
  for (Precision p : {Precision::Fp32, Precision::Fp64}) {
    out.push_back({p, "gather", true});
    out.push_back({p, "scatter", true});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, DeviceMemory, ::testing::ValuesIn(memory_cases()), case_name);

}  // namespace
}  // namespace eb::bcsr_pcg::test
