// Device utilities against their host-side contract. Skipped (reported as skipped) without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <stdexcept>

#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"

namespace {

__global__ void scale_kernel(double* x, int n, double a) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

class CudaUtils : public ::testing::Test {
 protected:
  void SetUp() override {
    if (eb::cuda_device_count() == 0) GTEST_SKIP() << eb::cuda_device_info(0).reason;
  }
};

}  // namespace

TEST_F(CudaUtils, BufferRoundTripAndAccounting) {
  const std::size_t before = eb::cuda_tracked_bytes();
  std::vector<double> h(1000);
  std::iota(h.begin(), h.end(), 0.5);
  {
    eb::cuda::DeviceBuffer<double> d(h.size(), "test buffer");
    EXPECT_EQ(eb::cuda_tracked_bytes(), before + h.size() * sizeof(double));
    d.upload(h);
    scale_kernel<<<4, 256>>>(d.data(), int(h.size()), 2.0);
    EB_CUDA_CHECK_LAUNCH();
    const auto back = d.to_host();
    for (size_t i = 0; i < h.size(); ++i) ASSERT_EQ(back[i], 2.0 * h[i]);
  }
  EXPECT_EQ(eb::cuda_tracked_bytes(), before);
  EXPECT_GE(eb::cuda_peak_tracked_bytes(), h.size() * sizeof(double));
}

TEST_F(CudaUtils, OutOfMemoryIsARuntimeFailureWithSizes) {
  const auto info = eb::cuda_device_info(0);
  try {
    eb::cuda::DeviceBuffer<char> d(info.total_memory * 4, "an impossible buffer");
    FAIL() << "allocating four times the device memory succeeded";
  } catch (const eb::RuntimeFailure& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("out of GPU memory"), std::string::npos) << msg;
    EXPECT_NE(msg.find("an impossible buffer"), std::string::npos) << msg;
  }
}

TEST_F(CudaUtils, EventTimerRecordsEveryPhase) {
  eb::cuda::DeviceBuffer<double> d(1 << 20, "timer buffer");
  d.fill_zero();
  eb::cuda::EventTimer timer;
  eb::PhaseTimes times;
  for (int i = 0; i < 3; ++i) {
    timer.begin("scale", nullptr);
    scale_kernel<<<(1 << 20) / 256, 256>>>(d.data(), 1 << 20, 1.5);
    EB_CUDA_CHECK_LAUNCH();
    timer.end(nullptr);
  }
  timer.flush(times, 1);
  const auto s = times.stats(0);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].steps, 3);
  EXPECT_GT(s[0].min_ms, 0.0);
}

TEST_F(CudaUtils, PeakResetsToWhatIsHeldNow) {
  const std::size_t held = eb::cuda_tracked_bytes();
  { eb::cuda::DeviceBuffer<char> big(std::size_t(8) << 20, "earlier run"); }
  EXPECT_GE(eb::cuda_peak_tracked_bytes(), held + (std::size_t(8) << 20));
  eb::cuda_reset_peak_tracked_bytes();
  EXPECT_EQ(eb::cuda_peak_tracked_bytes(), held);
  eb::cuda::DeviceBuffer<char> small(std::size_t(1) << 20, "this run");
  EXPECT_EQ(eb::cuda_peak_tracked_bytes(), held + (std::size_t(1) << 20));
}

TEST_F(CudaUtils, StreamTriadReportsBandwidthAndFreesItsArrays) {
  const std::size_t held = eb::cuda_tracked_bytes();
  for (int bytes : {4, 8}) {
    const double gbps = eb::cuda_stream_triad_gbps(0, bytes);
    EXPECT_TRUE(std::isfinite(gbps) && gbps > 0) << gbps;
  }
  EXPECT_EQ(eb::cuda_tracked_bytes(), held);
  EXPECT_THROW(eb::cuda_stream_triad_gbps(0, 2), std::invalid_argument);
}
