// The CPU STREAM triad: one point per requested thread count, a median inside its range, the
// arithmetic checked, and the sizing rule (beyond the last-level cache) applied. Nothing here
// depends on how fast the machine is.
#include <gtest/gtest.h>

#include <cmath>

#include "solvers/common/cpu_stream.h"

namespace eb {
namespace {

TEST(CpuStream, ThreadCountsRunFromOneToAll) {
  EXPECT_EQ(triad_thread_counts(1), (std::vector<int>{1}));
  EXPECT_EQ(triad_thread_counts(2), (std::vector<int>{1, 2}));
  EXPECT_EQ(triad_thread_counts(6), (std::vector<int>{1, 2, 4, 6}));
  EXPECT_EQ(triad_thread_counts(16), (std::vector<int>{1, 2, 4, 8, 16}));
}

TEST(CpuStream, MeasuresEachThreadCount) {
  const CpuTriad t = cpu_stream_triad({1, 2}, std::size_t(1) << 20, 3);
  EXPECT_TRUE(t.verified);
  EXPECT_EQ(t.array_bytes, std::size_t(1) << 20);
  ASSERT_EQ(t.points.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const auto& p = t.points[i];
    EXPECT_EQ(p.threads, int(i) + 1);
    EXPECT_EQ(p.repetitions, 5);  // at least five, whatever is asked
    EXPECT_TRUE(std::isfinite(p.median_gbps) && p.median_gbps > 0);
    EXPECT_LE(p.min_gbps, p.median_gbps);
    EXPECT_GE(p.max_gbps, p.median_gbps);
  }
  const auto j = t.to_json();
  EXPECT_EQ(j["points"].size(), 2u);
  EXPECT_TRUE(j["verified"].get<bool>());
}

TEST(CpuStream, DefaultArraysExceedTheLastLevelCache) {
  const std::size_t llc = cpu_last_level_cache_bytes();
  const CpuTriad t = cpu_stream_triad({1}, 0, 5);
  EXPECT_EQ(t.llc_bytes, llc);
  EXPECT_GE(t.array_bytes, std::size_t(64) << 20);
  EXPECT_LE(t.array_bytes, std::size_t(1) << 30);
  if (llc > 0 && 4 * llc <= (std::size_t(1) << 30)) EXPECT_GE(t.array_bytes, 4 * llc);
}

TEST(CpuStream, RejectsMeaninglessThreadCounts) {
  EXPECT_THROW(cpu_stream_triad({}), std::invalid_argument);
  EXPECT_THROW(cpu_stream_triad({0}), std::invalid_argument);
}

}  // namespace
}  // namespace eb
