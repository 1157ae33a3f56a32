#include <gtest/gtest.h>

#include "solvers/common/timers.h"

TEST(PhaseTimes, StatisticsPerStepExcludeWarmup) {
  eb::PhaseTimes t;
  t.add("force", 100.0);      // step 0: warm-up
  t.add("force", 2.0);        // step 1
  t.add("force", 4.0);        // step 2
  t.add("force", 30.0, 10);   // steps 3..12 at 3 ms each
  t.add("update", 1.0, 13);   // one sample covering everything, starts in the warm-up
  const auto s = t.stats(1);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].name, "force");
  EXPECT_EQ(s[0].steps, 12);
  EXPECT_DOUBLE_EQ(s[0].min_ms, 2.0);
  EXPECT_DOUBLE_EQ(s[0].max_ms, 4.0);
  EXPECT_DOUBLE_EQ(s[0].median_ms, 3.0);
  EXPECT_DOUBLE_EQ(s[0].total_ms, 36.0);
  EXPECT_DOUBLE_EQ(s[0].mean_ms, 3.0);
  EXPECT_EQ(s[1].steps, 0);  // dropped whole: it touches the warm-up
  const auto j = t.to_json(1);
  EXPECT_TRUE(j.contains("force"));
  EXPECT_FALSE(j.contains("update"));
  EXPECT_DOUBLE_EQ(j["force"]["median_ms"].get<double>(), 3.0);
}

TEST(PhaseTimes, EvenSampleCountMedianAveragesTheMiddle) {
  eb::PhaseTimes t;
  for (double ms : {5.0, 1.0, 3.0, 7.0}) t.add("p", ms);
  EXPECT_DOUBLE_EQ(t.stats(0)[0].median_ms, 4.0);
}

TEST(PhaseTimes, CpuPhaseRecordsOneSample) {
  eb::PhaseTimes t;
  {
    eb::CpuPhase p(t, "work", 3);
    volatile double x = 0;
    for (int i = 0; i < 1000; ++i) x = x + i;
  }
  const auto s = t.stats(0);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].steps, 3);
  EXPECT_GE(s[0].min_ms, 0.0);
}
