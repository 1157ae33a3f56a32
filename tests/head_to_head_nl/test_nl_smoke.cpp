// head-to-head's nonlinear part end to end in quick mode (CPU), and the scale part without a
// device: the files each writes and what they must hold (one thread: a few seconds).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "experiments/head_to_head/parts.h"
#include "solvers/common/results.h"

namespace eb::head_to_head {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

ExperimentContext quick_context(const std::string& name) {
  ExperimentContext ctx;
  ctx.out_dir = fs::temp_directory_path() / ("eb_h2h_nl_" + name);
  fs::remove_all(ctx.out_dir);
  fs::create_directories(ctx.out_dir);
  ctx.quick = true;
  ctx.max_threads = 1;
  ctx.quiet = true;
  return ctx;
}

TEST(NlSmoke, QuickNonlinearPartWritesItsTables) {
  const ExperimentContext ctx = quick_context("nonlinear");
  run_nonlinear_part(ctx);
  for (const char* f : {"nonlinear_rows.csv", "nonlinear_search.csv", "nonlinear_reference.csv", "nonlinear_meta.json"})
    EXPECT_TRUE(fs::exists(ctx.out_dir / f)) << f;
  const std::string rows = slurp(ctx.out_dir / "nonlinear_rows.csv");
  // The cube's exact solutions are met by both methods at both targets on the CPU.
  for (const char* m : {"cube,0.01,yes,tled,", "cube,0.001,yes,tled,", "cube,0.01,yes,nr-neohookean,",
                        "cube,0.001,yes,nr-neohookean,"})
    EXPECT_NE(rows.find(m), std::string::npos) << m;
  EXPECT_NE(rows.find(",valid,"), std::string::npos);
  const nlohmann::json meta = read_json_file(ctx.out_dir / "nonlinear_meta.json");
  EXPECT_GT(meta["cube_model_gap"].get<double>(), 1e-3);
  EXPECT_EQ(meta["reference"]["levels"].size(), 2u);
}

TEST(NlSmoke, ScalePartWithoutDeviceWritesOnlyItsNote) {
  ExperimentContext ctx = quick_context("scale");
  if (ctx.cuda_available) GTEST_SKIP();
  run_scale_part(ctx);
  EXPECT_TRUE(fs::exists(ctx.out_dir / "scale_meta.json"));
  EXPECT_FALSE(fs::exists(ctx.out_dir / "scale_rows.csv"));
  EXPECT_NE(slurp(ctx.out_dir / "scale_meta.json").find("GPU-only"), std::string::npos);
}

}  // namespace
}  // namespace eb::head_to_head
