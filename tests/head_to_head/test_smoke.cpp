// `reproduce head-to-head --quick --parts corot` on one tiny scene and one method: every file is
// written, the reference converged, the throughput row is valid and the search recorded its
// trials and a row per tolerance. Label long: the reference and the trials take tens of seconds
// on 2 cores.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <functional>

#include "experiments/head_to_head/h2h_reference.h"
#include "experiments/head_to_head/parts.h"
#include "meshes/errors.h"
#include "meshes/mesh_spec.h"

namespace eb::head_to_head {
namespace {

std::vector<std::string> lines(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// bcsr-pcg's levels are all skipped by their static floors (the --quick cantilever's 0.05 and
// 0.025 m tetrahedra are percents from the reference), so hexmg's V-cycle runs the trials.
TEST(HeadToHeadSmoke, QuickCantileverWithBcsrPcgAndHexmg) {
  ExperimentContext ctx;
  ctx.out_dir = std::filesystem::path(::testing::TempDir()) / "h2h_smoke";
  std::filesystem::remove_all(ctx.out_dir);
  std::filesystem::create_directories(ctx.out_dir);
  ctx.quick = true;
  ctx.max_threads = 1;
  ctx.quiet = true;
  ctx.data_dir = mesh::default_data_dir();
  ctx.options = {{"corot_scenes", "cantilever"}, {"corot_methods", "bcsr-pcg,hexmg/vcycle"}, {"corot_sizes", "500"}};
  run_corot_part(ctx);
  for (const char* f : {"corot_reference_cantilever.csv", "corot_throughput_cantilever.csv", "corot_trials_cantilever.csv",
                        "corot_accuracy_cantilever.csv", "corot_skipped_cantilever.csv",
                        "corot_throughput_skipped_cantilever.csv", "corot_meta.json"})
    EXPECT_TRUE(std::filesystem::exists(ctx.out_dir / f)) << f;
  const auto ref = lines(ctx.out_dir / "corot_reference_cantilever.csv");
  ASSERT_EQ(ref.size(), 2u);
  EXPECT_NE(ref[1].find(",yes,"), std::string::npos) << ref[1];
  const auto thr = lines(ctx.out_dir / "corot_throughput_cantilever.csv");
  ASSERT_GE(thr.size(), 3u);  // fp32 and fp64 on one thread
  EXPECT_NE(thr[1].find(",valid,"), std::string::npos) << thr[1];
  const auto acc = lines(ctx.out_dir / "corot_accuracy_cantilever.csv");
  ASSERT_EQ(acc.size(), 7u);  // 10%, 1% and 0.1% of each
  // bcsr-pcg: no level searched at 10%, the row says why; no trial of it. The --quick reference
  // (0.0125 m tetrahedra) is uncertain to ~4%: 1% and 0.1% are not searched, for either method.
  EXPECT_NE(acc[1].find("bcsr-pcg"), std::string::npos) << acc[1];
  EXPECT_NE(acc[1].find("levels 0 1 not searched (their static solutions are at least"), std::string::npos) << acc[1];
  for (int i : {2, 3, 5, 6})
    EXPECT_NE(acc[size_t(i)].find("not searched: the reference's error estimate"), std::string::npos) << acc[size_t(i)];
  const auto first_trials = lines(ctx.out_dir / "corot_trials_cantilever.csv");
  EXPECT_GE(first_trials.size(), 3u);
  for (size_t i = 1; i < first_trials.size(); ++i) EXPECT_NE(first_trials[i].find(",hexmg,vcycle,"), std::string::npos) << first_trials[i];

  // A second run reads that reference instead of solving it (corot_reference_from): the same file
  // beside its results, and trials over a tiny time budget end the search at its first trial.
  ExperimentContext again = ctx;
  again.out_dir = std::filesystem::path(::testing::TempDir()) / "h2h_smoke_again";
  std::filesystem::remove_all(again.out_dir);
  std::filesystem::create_directories(again.out_dir);
  again.options = {{"corot_scenes", "cantilever"}, {"corot_methods", "hexmg/vcycle"}, {"corot_sizes", "none"},
                   {"corot_reference_from", ctx.out_dir.string()}, {"corot_trial_seconds", "1e-6"}};
  run_corot_part(again);
  EXPECT_EQ(lines(again.out_dir / "corot_reference_cantilever.csv"), ref);
  const auto trials = lines(again.out_dir / "corot_trials_cantilever.csv");
  ASSERT_EQ(trials.size(), 2u);  // the header and the one trial over the budget
  EXPECT_NE(trials[1].find("over the trial time budget"), std::string::npos) << trials[1];

  // What the reader refuses, naming the file.
  const Scene& cantilever = corot_scenes().front();
  const auto file = ctx.out_dir / "corot_reference_cantilever.csv";
  const double res = cantilever.quick_reference;
  EXPECT_NO_THROW(read_reference_csv(file, "cantilever", res, {"tip"}, nullptr));
  for (auto bad : std::vector<std::function<void()>>{
           [&] { read_reference_csv(file, "cantilever", 2 * res, {"tip"}, nullptr); },
           [&] { read_reference_csv(file, "bunny", res, {"tip"}, nullptr); },
           [&] { read_reference_csv(file, "cantilever", res, {"ear", "head"}, nullptr); },
           [&] { read_reference_csv(ctx.out_dir / "absent.csv", "cantilever", res, {"tip"}, nullptr); }}) {
    try {
      bad();
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(ctx.out_dir.string()), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace eb::head_to_head
