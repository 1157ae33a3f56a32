// On the GPU, every variant that declares itself deterministic (VariantInfo::deterministic: it
// fixes every summation order) gives the same bits in three runs of the contract scene from fresh
// simulations, each advanced in the same uneven chunks (1, 7, 22 steps: single steps and batches,
// which some CUDA backends launch as one graph). A kernel that reads what its predecessor has not
// finished writing gives results that depend on timing, which no tolerance would show (issue 9:
// a race of this kind gave 8 tip displacements in 8 runs on this one-level hexmg scene). Variants that add in the order threads arrive (floating-point atomics) declare
// deterministic = false and are not instantiated here; tests/contract/test_cpu_vs_cuda.cpp bounds
// them with a tolerance. The CPU backends' thread-count independence is method-specific (tests/
// tled/test_determinism.cpp, tests/bcsr_pcg/test_determinism.cpp).
#include <cstdio>
#include <cstring>

#include "tests/contract/contract_util.h"

namespace eb::contract {
namespace {

constexpr int kSteps = 30;

struct RunResult {
  State state;
  ValidityCounts validity;
};

RunResult run_once(const Impl& i) {
  auto sim = make(i, scene());
  for (int chunk : {1, 7, kSteps - 8}) sim->advance(chunk);
  RunResult r;
  r.state = state_of(*sim);
  r.validity = sim->validity();
  return r;
}

class Determinism : public ::testing::TestWithParam<Impl> {};

TEST_P(Determinism, RepeatedRunsAreBitIdentical) {
  const Impl i = GetParam();
  EB_CONTRACT_SKIP_WITHOUT_DEVICE(i);
  const RunResult first = run_once(i);
  ASSERT_GT(max_abs(first.state.u), 0.0) << "the scene did not move: equal zeros would prove nothing";
  ASSERT_TRUE(std::isfinite(max_abs(first.state.u)));
  std::printf("%s: largest displacement %.9e m after %d steps\n", label(i).c_str(), max_abs(first.state.u), kSteps);
  for (int rep = 1; rep < 3; ++rep) {
    SCOPED_TRACE("repetition " + std::to_string(rep));
    const RunResult again = run_once(i);
    EXPECT_EQ(first_bitwise_difference(first.state.u, again.state.u), "") << "displacements";
    EXPECT_EQ(first_bitwise_difference(first.state.v, again.state.v), "") << "velocities";
    EXPECT_EQ(again.validity.inverted_element_steps, first.validity.inverted_element_steps);
    EXPECT_EQ(std::memcmp(&again.validity.min_det_f, &first.validity.min_det_f, sizeof(double)), 0)
        << again.validity.min_det_f << " vs " << first.validity.min_det_f;
  }
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Determinism);
INSTANTIATE_TEST_SUITE_P(Cuda, Determinism,
                         ::testing::ValuesIn(impls(Backend::Cuda, [](const Impl& i) { return i.variant_info().deterministic; })),
                         impl_name);

}  // namespace
}  // namespace eb::contract
