// Every CUDA implementation declares the device memory a run will hold (MethodEntry::
// estimate_device_bytes, the estimate its factory checks against RunOptions::gpu_memory_limit
// and the device's free memory before the first allocation, issue 12), and the estimate holds:
// actual <= estimate <= 1.25 actual on the contract scene, actual being the larger of the
// simulation's device_bytes() and the tracked peak of its construction; steps allocate nothing
// more; a limit one byte below the estimate is refused (RuntimeFailure naming the method,
// backend and precision, the estimate and --gpu-memory-limit) before anything is allocated, and
// a limit of exactly the estimate is not.
#include "tests/common/device_memory_test_util.h"
#include "tests/contract/contract_util.h"

namespace eb::contract {
namespace {

class DeviceMemory : public ::testing::TestWithParam<Impl> {
 protected:
  void SetUp() override {
    i_ = GetParam();
    EB_CONTRACT_SKIP_WITHOUT_DEVICE(i_);
    const MethodEntry& e = i_.entry();
    ASSERT_TRUE(e.estimate_device_bytes) << label(i_) << " registers no estimate_device_bytes";
    sc_ = scene();
    estimate_ = e.estimate_device_bytes(for_impl(sc_, i_), run_options(i_));
    make_ = [this](std::size_t limit) { return make(i_, sc_, run_options(i_, 1, limit)); };
  }
  Impl i_;
  Scenario sc_;
  std::size_t estimate_ = 0;
  eb::test::MakeWithLimit make_;
};

TEST_P(DeviceMemory, EstimateBoundsWhatIsAllocated) {
  const auto a = eb::test::expect_estimate_bounds_allocation(estimate_, make_);
  a.sim->advance(3);
  EXPECT_EQ(cuda_tracked_bytes() - a.before, a.held) << "steps allocated device memory the estimate does not cover";
}

TEST_P(DeviceMemory, LimitBelowTheEstimateIsRefusedBeforeAllocating) {
  eb::test::expect_refused_below_estimate(
      estimate_, i_.method + " " + to_string(i_.backend) + " " + to_string(i_.precision), make_);
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DeviceMemory);
INSTANTIATE_TEST_SUITE_P(Cuda, DeviceMemory, ::testing::ValuesIn(impls(Backend::Cuda)), impl_name);

}  // namespace
}  // namespace eb::contract
