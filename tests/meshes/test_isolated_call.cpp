// meshes/isolated_call.h: results, exceptions, crashes and hangs of the child process.
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include <gtest/gtest.h>

#include "meshes/isolated_call.h"

namespace eb::mesh {
namespace {

using Checkpoint = std::function<void()>;

TEST(IsolatedCall, ReturnsTheResultAndCarriesExceptions) {
  EXPECT_EQ(run_isolated([](const Checkpoint& done) { done(); return std::string("abc\0def", 7); }, 10, "job", "stage"),
            std::string("abc\0def", 7));
  try {
    run_isolated([](const Checkpoint&) -> std::string { throw std::string("Gmsh-style error"); }, 10, "job", "stage");
    FAIL();
  } catch (const IsolatedCallFailure& e) {
    EXPECT_EQ(std::string(e.what()), "Gmsh-style error");
    EXPECT_FALSE(e.timed_out());
  }
}

// The cases below only mean something in a child: ctest runs each test in its own process, which
// is single-threaded here; a whole-binary run may already have OpenMP threads (other tests).
TEST(IsolatedCall, SurvivesACrashAndStopsAHang) {
  if (!process_is_single_threaded()) GTEST_SKIP() << "process has threads: the work would run in-process";
  try {
    run_isolated([](const Checkpoint&) -> std::string { std::abort(); }, 10, "job", "stage");
    FAIL();
  } catch (const IsolatedCallFailure& e) {
    EXPECT_NE(std::string(e.what()).find("job crashed (signal " + std::to_string(SIGABRT)), std::string::npos) << e.what();
  }
  try {
    run_isolated([](const Checkpoint&) -> std::string { for (;;) std::this_thread::sleep_for(std::chrono::seconds(1)); },
                 0.3, "job", "its stage");
    FAIL();
  } catch (const IsolatedCallFailure& e) {
    EXPECT_TRUE(e.timed_out());
    EXPECT_NE(std::string(e.what()).find("job did not finish its stage within"), std::string::npos) << e.what();
  }
  // After the checkpoint the deadline no longer applies.
  EXPECT_EQ(run_isolated(
                [](const Checkpoint& done) {
                  done();
                  std::this_thread::sleep_for(std::chrono::milliseconds(600));
                  return std::string("late");
                },
                0.3, "job", "stage"),
            "late");
}

}  // namespace
}  // namespace eb::mesh
