#include <gtest/gtest.h>
#include <sched.h>

#include <fstream>
#include <sstream>

#include "solvers/common/results.h"

namespace {
std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

TEST(Results, AtomicWriteLeavesOnlyTheTarget) {
  const auto dir = std::filesystem::temp_directory_path() / "eb_test_results" / "nested";
  std::filesystem::remove_all(dir.parent_path());
  const auto p = dir / "summary.json";
  eb::write_json_atomic(p, {{"a", 1}});
  eb::write_json_atomic(p, {{"a", 2}});  // replaces
  EXPECT_EQ(nlohmann::json::parse(slurp(p))["a"], 2);
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(e.path().filename(), "summary.json");
  }
  EXPECT_EQ(files, 1);
}

TEST(Results, CsvQuotesAndRoundTripsNumbers) {
  eb::CsvTable t({"name", "value"});
  t.add_row({"plain", eb::CsvTable::num(0.1)});
  t.add_row({"with,comma \"q\"", eb::CsvTable::num(1.0 / 3.0)});
  EXPECT_THROW(t.add_row({"short"}), std::logic_error);
  const std::string s = t.str();
  EXPECT_NE(s.find("\"with,comma \"\"q\"\"\""), std::string::npos) << s;
  EXPECT_EQ(std::stod(eb::CsvTable::num(1.0 / 3.0)), 1.0 / 3.0);
  EXPECT_EQ(s.substr(0, 11), "name,value\n");
}

// A process pinned to one processor records 1 usable thread beside the host's count.
TEST(Results, MachineRecordsTheProcessorsThisProcessMayUse) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
    if (CPU_ISSET(c, &before)) first = c;
  ASSERT_GE(first, 0);
  const auto all = eb::machine_info(0);
  EXPECT_EQ(all["cpu_threads_usable"].get<int>(), CPU_COUNT(&before));
  EXPECT_LE(all["cpu_threads_usable"].get<int>(), all["cpu_threads"].get<int>());
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const auto pinned = eb::machine_info(0);
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
  EXPECT_EQ(pinned["cpu_threads_usable"].get<int>(), 1);
  EXPECT_EQ(pinned["cpu_threads"].get<int>(), all["cpu_threads"].get<int>());
}

TEST(Results, ProvenanceHasMachineBuildAndCommit) {
  const auto m = eb::machine_info(0);
  EXPECT_TRUE(m.contains("cpu_model"));
  EXPECT_GT(m["cpu_threads"].get<int>(), 0);
  EXPECT_TRUE(m.contains("gpu"));
  if (m["gpu"].is_null()) {
    EXPECT_FALSE(m["gpu_unavailable_reason"].get<std::string>().empty());
  }
  const auto b = eb::build_json();
  EXPECT_FALSE(b["git_commit"].get<std::string>().empty());
  EXPECT_FALSE(b["build_type"].get<std::string>().empty());
  EXPECT_GT(eb::peak_host_memory_bytes(), 0u);
}
