// Device utilities against their host-side contract. Skipped (reported as skipped) without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>

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

namespace {
// A size as require_device_memory writes it (3 significant digits, in GB).
std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g GB", bytes / 1e9);
  return buf;
}
// The number after `key` in `msg` (NaN when absent).
double number_after(const std::string& msg, const std::string& key) {
  const auto at = msg.find(key);
  return at == std::string::npos ? NAN : std::strtod(msg.c_str() + at + key.size(), nullptr);
}
}  // namespace

TEST_F(CudaUtils, RequireDeviceMemoryRefusesMoreThanIsFree) {
  const auto info = eb::cuda_device_info(0);
  const double twice = 2.0 * double(info.total_memory);
  const std::size_t held = eb::cuda_tracked_bytes();
  try {
    eb::require_device_memory(twice, "a mesh of twice the device", 0, 0);
    FAIL() << "an estimate of twice the device memory was accepted";
  } catch (const eb::RuntimeFailure& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("a mesh of twice the device"), std::string::npos) << msg;
    EXPECT_NE(msg.find("needs an estimated " + gb(twice) + " of GPU memory"), std::string::npos) << msg;
    // The limit is the free memory: positive, at most the device's total.
    const double limit = number_after(msg, "the limit is ");
    EXPECT_GT(limit, 0.0) << msg;
    EXPECT_LE(limit, 1.001 * double(info.total_memory) / 1e9) << msg;
    EXPECT_NE(msg.find("free on device 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("smaller mesh"), std::string::npos) << msg;
    EXPECT_NE(msg.find("fp32"), std::string::npos) << msg;
  }
  EXPECT_EQ(eb::cuda_tracked_bytes(), held);  // nothing was allocated
}

TEST_F(CudaUtils, RequireDeviceMemoryAcceptsWhatFits) {
  EXPECT_NO_THROW(eb::require_device_memory(double(1 << 20), "one MiB", 0, 0));
  EXPECT_NO_THROW(eb::require_device_memory(double(1 << 20), "one MiB", 0, std::size_t(1) << 20));  // at the limit
  EXPECT_NO_THROW(eb::require_device_memory(0.0, "nothing", 0, 1));
}

TEST_F(CudaUtils, RequireDeviceMemoryRefusesMoreThanTheUserLimit) {
  try {
    eb::require_device_memory(2.5e6, "a small run", 0, 1000000);
    FAIL() << "an estimate above the user limit was accepted";
  } catch (const eb::RuntimeFailure& e) {
    const std::string msg = e.what();
    const std::string want =
        "a small run needs an estimated 0.0025 GB of GPU memory; the limit is 0.001 GB (--gpu-memory-limit";
    EXPECT_NE(msg.find(want), std::string::npos) << msg;
    EXPECT_NE(msg.find("raise --gpu-memory-limit"), std::string::npos) << msg;
  }
  // A user limit above the free memory does not raise the limit.
  const auto info = eb::cuda_device_info(0);
  EXPECT_THROW(eb::require_device_memory(2.0 * double(info.total_memory), "x", 0, 4 * info.total_memory),
               eb::RuntimeFailure);
}

TEST_F(CudaUtils, RequireDeviceMemoryNamesAMissingDevice) {
  const int n = eb::cuda_device_count();
  try {
    eb::require_device_memory(1.0, "a run", n, 0);
    FAIL() << "device " << n << " of " << n << " was accepted";
  } catch (const eb::RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}
