// The host-memory limit elastobench sets at start-up (meshes/host_memory.h): the data-size limit
// becomes the process's data plus the memory available, is never raised, and the message of a
// failed allocation names it. Each case runs in its own process (gtest_discover_tests).
#include <sys/resource.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "meshes/host_memory.h"

namespace {

rlimit data_limit() {
  rlimit r{};
  getrlimit(RLIMIT_DATA, &r);
  return r;
}

}  // namespace

TEST(HostMemory, LimitIsTheAvailableMemoryAboveTheDataNow) {
  if (!eb::mesh::kHostMemoryLimit) GTEST_SKIP() << "AddressSanitizer's shadow memory: no limit is set";
  if (data_limit().rlim_cur != RLIM_INFINITY) GTEST_SKIP() << "a data limit is already set here";
  const uint64_t available = eb::mesh::available_host_memory();
  if (available == 0) GTEST_SKIP() << "no MemAvailable here";
  const uint64_t limit = eb::mesh::limit_host_memory_to_available();
  ASSERT_GT(limit, 0u);
  EXPECT_EQ(uint64_t(data_limit().rlim_cur), limit);
  EXPECT_EQ(eb::mesh::host_memory_limit(), limit);
  // The data now plus what was available: at least the available memory, and not more than it by
  // more than a test process's data (well under 4 GB).
  EXPECT_GE(limit, available / 2);
  EXPECT_LE(limit, available + (uint64_t(4) << 30));
  // Under the limit, what is left is at most what it leaves.
  EXPECT_LE(eb::mesh::available_host_memory(), limit);
}

TEST(HostMemory, NeverRaisesALimitAlreadySet) {
  if (!eb::mesh::kHostMemoryLimit) GTEST_SKIP() << "AddressSanitizer's shadow memory: no limit is set";
  rlimit r = data_limit();
  const rlim_t preset = rlim_t(4) << 30;  // 4 GiB: more than this process's data
  if (r.rlim_max != RLIM_INFINITY && r.rlim_max < preset) GTEST_SKIP() << "hard limit below 4 GiB";
  r.rlim_cur = preset;
  ASSERT_EQ(setrlimit(RLIMIT_DATA, &r), 0);
  const uint64_t limit = eb::mesh::limit_host_memory_to_available();
  EXPECT_LE(limit, uint64_t(preset));
  EXPECT_EQ(uint64_t(data_limit().rlim_cur), limit);
  // The preset bounds what is available.
  EXPECT_LE(eb::mesh::available_host_memory(), uint64_t(preset));
}

TEST(HostMemory, TheMessageNamesTheLimit) {
  if (!eb::mesh::kHostMemoryLimit) GTEST_SKIP() << "AddressSanitizer's shadow memory: no limit is set";
  const uint64_t limit = eb::mesh::limit_host_memory_to_available();
  if (limit == 0) GTEST_SKIP() << "no limit could be set here";
  const std::string text = eb::mesh::out_of_host_memory_text();
  EXPECT_NE(text.find("out of host memory"), std::string::npos) << text;
  EXPECT_NE(text.find(std::to_string(limit / 1000000) + " MB"), std::string::npos) << text;
}

// The scale part measures a build's peak host bytes as the peak resident size after a reset minus
// the resident size before: a block touched and freed in between counts.
TEST(HostMemory, PeakAfterAResetCountsATransientBlock) {
  if (!eb::mesh::reset_peak_resident()) GTEST_SKIP() << "this kernel cannot reset the peak";
  const uint64_t before = eb::mesh::resident_bytes();
  ASSERT_GT(before, 0u);
  EXPECT_LE(eb::mesh::peak_resident_bytes(), before + (uint64_t(16) << 20));
  {
    std::vector<char> block(uint64_t(64) << 20, 1);  // every page written
    EXPECT_EQ(block[block.size() / 2], 1);
  }
  EXPECT_GE(eb::mesh::peak_resident_bytes(), before + (uint64_t(60) << 20));
}
