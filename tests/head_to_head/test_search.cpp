// The time-to-accuracy search (experiments/head_to_head/h2h_search.h) on synthetic tables of
// error and cost per setting.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "experiments/head_to_head/h2h_search.h"

namespace eb::head_to_head {
namespace {

// Error = discretization floor of the level + time error (dt) + solver error (effort);
// cost = elements(level) x steps(dt) x effort work.
TrialOutcome model(const TrialSetting& s) {
  TrialOutcome o;
  o.valid = true;
  const double floor[] = {0.05, 0.004, 0.0004};
  o.error = floor[s.level] + 0.002 * std::pow(0.5, s.dt) + 0.08 * std::pow(0.25, s.effort);
  o.wall_per_sim_s = std::pow(8.0, s.level) * std::pow(2.0, s.dt) * std::pow(2.0, s.effort);
  return o;
}

TEST(HeadToHeadSearch, PicksTheCheapestPassingSettingOverLevels) {
  int runs = 0;
  TrialCache cache([&](const TrialSetting& s) { ++runs; return model(s); });
  const SearchSpace space{3, 4, 6};
  const SearchResult r = search_cheapest(space, 1e-2, cache);
  ASSERT_TRUE(r.found);
  // Level 0 cannot pass (floor 5%); level 1 passes at dt 0 once 0.004 + 0.002 + 0.08 / 4^e is
  // below 0.01: e = 2 gives 0.011, e = 3 gives 0.00725.
  EXPECT_EQ(r.best.level, 1);
  EXPECT_EQ(r.best.dt, 0);
  EXPECT_EQ(r.best.effort, 3);
  EXPECT_DOUBLE_EQ(r.best_outcome.wall_per_sim_s, 8.0 * 8.0);
  // Level 1 passed, so level 2 (8x the elements) was not searched.
  for (const TrialSetting& s : r.tried) EXPECT_LT(s.level, 2);
  // Every passing setting of the table costs at least as much as the winner.
  for (int l = 0; l < 3; ++l)
    for (int d = 0; d < 4; ++d)
      for (int e = 0; e < 6; ++e) {
        const TrialOutcome o = model({l, d, e});
        if (passes(o, 1e-2)) EXPECT_GE(o.wall_per_sim_s, r.best_outcome.wall_per_sim_s) << l << d << e;
      }
  // The tighter tolerance reuses every trial the first search ran.
  const int first = runs;
  const SearchResult tight = search_cheapest(space, 1e-3, cache);
  ASSERT_TRUE(tight.found);
  EXPECT_EQ(tight.best.level, 2);
  EXPECT_GT(runs, first);
  const int second = runs;
  search_cheapest(space, 1e-3, cache);
  EXPECT_EQ(runs, second);
}

TEST(HeadToHeadSearch, StopsRaisingEffortWhenTheErrorNoLongerFalls) {
  std::vector<TrialSetting> order;
  TrialCache cache([&](const TrialSetting& s) {
    order.push_back(s);
    TrialOutcome o;
    o.valid = true;
    o.error = 0.5;  // the mesh's: no effort or dt changes it
    o.wall_per_sim_s = 1;
    return o;
  });
  const SearchResult r = search_cheapest({2, 4, 6}, 1e-2, cache);
  EXPECT_FALSE(r.found);
  // Per level: effort 0 and 1 at dt 0 (no improvement stops the effort), then dt 1 the same
  // (no improvement over dt 0 stops the level).
  ASSERT_EQ(order.size(), 8u);
  EXPECT_EQ(order[0].effort, 0);
  EXPECT_EQ(order[1].effort, 1);
  EXPECT_EQ(order[2].dt, 1);
  EXPECT_EQ(order[4].level, 1);
}

TEST(HeadToHeadSearch, OverBudgetTrialsEndTheLaddersTheyBound) {
  // Cost grows with level, dt index and effort; the budget admits level 0 up to effort 1 at dt 0,
  // effort 0 at dt 1, nothing at dt 2, and nothing at all at level 1. No trial passes.
  std::vector<TrialSetting> order;
  TrialCache cache([&](const TrialSetting& s) {
    order.push_back(s);
    TrialOutcome o;
    o.error = 0.5 - 0.1 * s.effort - 0.15 * s.dt;
    o.wall_per_sim_s = 1.0;
    o.over_budget = s.level > 0 || s.dt + s.effort > 1;
    o.valid = !o.over_budget;
    return o;
  });
  const SearchResult r = search_cheapest({3, 4, 6}, 1e-2, cache);
  EXPECT_FALSE(r.found);
  const std::vector<TrialSetting> want = {{0, 0, 0}, {0, 0, 1}, {0, 0, 2}, {0, 1, 0}, {0, 1, 1}, {0, 2, 0}, {1, 0, 0}};
  ASSERT_EQ(order.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(order[i].level, want[i].level) << i;
    EXPECT_EQ(order[i].dt, want[i].dt) << i;
    EXPECT_EQ(order[i].effort, want[i].effort) << i;
  }
}

TEST(HeadToHeadSearch, TighterToleranceOnlyAfterTheLooserPassed) {
  // Passing 1% but not 0.1% at level 0; nothing passes at all when the floor is 5%.
  for (double floor : {0.004, 0.05}) {
    int runs = 0;
    TrialCache cache([&](const TrialSetting& s) {
      ++runs;
      TrialOutcome o;
      o.valid = true;
      o.error = floor + 0.1 * std::pow(0.5, s.effort);
      o.wall_per_sim_s = 1.0 + s.effort;
      return o;
    });
    std::vector<ToleranceResult> got;
    search_tolerances({1, 1, 8}, {1e-3, 1e-2}, cache, [&](const ToleranceResult& t) { got.push_back(t); });
    ASSERT_EQ(got.size(), 2u);
    EXPECT_DOUBLE_EQ(got[0].tolerance, 1e-2);  // loosest first, whatever the order given
    EXPECT_TRUE(got[0].searched);
    EXPECT_EQ(got[0].result.found, floor < 0.01);
    EXPECT_EQ(got[1].searched, floor < 0.01) << floor;
    EXPECT_FALSE(got[1].result.found);
    if (!got[1].searched) EXPECT_TRUE(got[1].result.tried.empty());
    EXPECT_GT(runs, 0);
  }
}

TEST(HeadToHeadSearch, InvalidAndUnsettledTrialsNeverPass) {
  TrialCache cache([&](const TrialSetting& s) {
    TrialOutcome o;
    o.error = 1e-4;
    o.wall_per_sim_s = 1.0 + s.dt;
    o.valid = s.dt >= 1;               // dt 0 inverts
    o.settle_change = s.dt == 1 ? 5e-4 : 0.0;  // dt 1 still moves more than a tenth of 1e-3
    return o;
  });
  const SearchResult r = search_cheapest({1, 3, 1}, 1e-3, cache);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.best.dt, 2);
  EXPECT_TRUE(passes(cache.all().at({0, 1, 0}), 1e-2));  // settled enough for 1%
  EXPECT_FALSE(passes(cache.all().at({0, 1, 0}), 1e-3));
  EXPECT_FALSE(passes(cache.all().at({0, 0, 0}), 1e-2));
}

TEST(HeadToHeadSearch, UnsettledErrorsDoNotStopTheEffortLadder) {
  // Effort 1 catches the motion at a worse moment than effort 0; effort 2 has settled and passes.
  TrialCache cache([&](const TrialSetting& s) {
    TrialOutcome o;
    o.valid = true;
    o.wall_per_sim_s = 1.0 + s.effort;
    o.error = s.effort == 0 ? 0.1 : s.effort == 1 ? 0.5 : 0.001;
    o.settle_change = s.effort < 2 ? 0.05 : 0.0;
    return o;
  });
  const SearchResult r = search_cheapest({1, 1, 4}, 1e-2, cache);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.best.effort, 2);
}

TEST(HeadToHeadSearch, SkipsLevelsWhoseStaticSolutionIsTooFarFromTheReference) {
  // The model's level floors are 5%, 0.4% and 0.04%. With floors 0.05 and 0.0118 given for levels
  // 0 and 1, at 1% level 0 (0.05 > 1.25%) and level 1 (1.18% < 1.25%, searched) behave differently.
  std::vector<TrialSetting> order;
  TrialCache cache([&](const TrialSetting& s) { order.push_back(s); return model(s); });
  SearchSpace space{3, 4, 6};
  space.level_floor = {0.05, 0.0118, std::nan("")};
  const SearchResult r = search_cheapest(space, 1e-2, cache);
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.best.level, 1);
  ASSERT_EQ(r.skipped_levels, std::vector<int>{0});
  for (const TrialSetting& s : order) EXPECT_NE(s.level, 0);
  // At 0.1% both bounded levels are skipped; level 2 (no bound) is searched and passes.
  const SearchResult tight = search_cheapest(space, 1e-3, cache);
  EXPECT_EQ(tight.skipped_levels, (std::vector<int>{0, 1}));
  ASSERT_TRUE(tight.found);
  EXPECT_EQ(tight.best.level, 2);
  // Every level bounded above the tolerance: nothing is run.
  order.clear();
  TrialCache fresh([&](const TrialSetting& s) { order.push_back(s); return model(s); });
  space.level_floor = {0.05, 0.02, 0.015};
  const SearchResult none = search_cheapest(space, 1e-2, fresh);
  EXPECT_FALSE(none.found);
  EXPECT_TRUE(order.empty());
  EXPECT_EQ(none.skipped_levels.size(), 3u);
}

TEST(HeadToHeadSearch, LevelWithoutAFloorTakesTheNextFinerOne) {
  const double nan = std::nan("");
  const std::vector<double> f = fill_level_floors({nan, nan, 0.018, 0.005, nan});
  ASSERT_EQ(f.size(), 5u);
  EXPECT_DOUBLE_EQ(f[0], 0.018);
  EXPECT_DOUBLE_EQ(f[1], 0.018);
  EXPECT_DOUBLE_EQ(f[2], 0.018);
  EXPECT_DOUBLE_EQ(f[3], 0.005);
  EXPECT_TRUE(std::isnan(f[4]));  // finer than every known level: no bound
}

}  // namespace
}  // namespace eb::head_to_head
