// Two identical runs of the gather variant (the paper's) end in bit-identical states after 20
// steps. Compiled into test_bcsr_pcg (the CPU backend with 1 thread and with 2 threads, each
// against itself) and test_bcsr_pcg_gpu (the CUDA backend with the step as separate launches,
// bcsr-pcg.graph = false, against itself; the default graph is the contract's, tests/contract/
// test_determinism.cpp).
//
// What fixes the order: the element phases write only their own slots (det F checks: integer
// reductions and a minimum, order-free); the gather sums each matrix value's and each node's
// element entries in the plan's order; the CG's dot products are OpenMP reductions (CPU) or the
// shared deterministic block reductions (CUDA, tests/linalg). The model is the loaded box of
// bcsr_pcg_test_util.h widened to 12 x 6 x 4 cubes (1,728 elements, 455 nodes, 5,395 blocks), so
// that with 2 threads the element loops and the matrix gather (parallel from 3,641 blocks on,
// checked below) are split; the CG's vector loops and the vector gather are not (serial below
// 32,768 unknowns, kParallelMin: a 20-step test on 2 cores cannot afford 11,000 nodes; and an
// OpenMP sum of two threads' partial results is order-free anyway: 0 + a + b = 0 + b + a).
// The scatter variant adds with atomics in arrival order: not deterministic, not checked here
// (test_cpu_vs_cuda.cpp compares it with a tolerance).
//
// The CPU instance also checks that a simulation runs with its own thread count whatever
// simulation was made after it (OpenMP's count is process-wide; the backend sets it per phase).
#include <omp.h>

#include "solvers/linalg/spmv_cpu.h"
#include "tests/bcsr_pcg/bcsr_pcg_test_util.h"

namespace eb::bcsr_pcg::test {
namespace {

struct DeterminismCase {
  Regime regime;
  int threads;  // CPU
  bool graph;   // CUDA
};
std::string case_name(const ::testing::TestParamInfo<DeterminismCase>& i) {
  const DeterminismCase& c = i.param;
  return regime_label(c.regime) +
         (c.regime.backend == Backend::Cpu ? "_threads" + std::to_string(c.threads) : c.graph ? "_graph" : "_launches");
}
std::vector<DeterminismCase> cases() {
  std::vector<DeterminismCase> out;
  for (const Regime& r : regimes())
    for (int k = 0; k < 2; ++k)
      if (r.backend == Backend::Cpu || k == 1) out.push_back({r, k + 1, k == 0});
  return out;
}

constexpr int kSteps = 20;

struct RunResult {
  std::vector<double> u, v;
  ValidityCounts validity;
};
RunResult run_once(const DeterminismCase& c) {
  auto sim = make(test_box({"mesh.size=[0.12, 0.06, 0.04]", std::string("bcsr-pcg.graph=") + (c.graph ? "true" : "false")}),
                  c.regime, c.threads, "gather");
  EXPECT_GE(sim->setup().plan.blocks(), linalg::kParallelMin / 9) << "the gather would run on one thread";
  sim->advance(7);  // uneven chunks: the same steps however they are grouped
  sim->advance(kSteps - 7);
  RunResult r;
  sim->copy_state_to_host(r.u, r.v);
  r.validity = sim->validity();
  EXPECT_EQ(sim->steps_done(), kSteps);
  return r;
}

class Determinism : public ::testing::TestWithParam<DeterminismCase> {};

TEST_P(Determinism, GatherRunsAreBitIdentical) {
  const DeterminismCase c = GetParam();
  EB_BCSR_PCG_SKIP_WITHOUT_DEVICE(c.regime);
  const RunResult a = run_once(c), b = run_once(c);
  ASSERT_GT(max_abs(a.u), 0.0);
  EXPECT_EQ(first_bitwise_difference(a.u, b.u), "");
  EXPECT_EQ(first_bitwise_difference(a.v, b.v), "");
  EXPECT_EQ(a.validity.inverted_element_steps, b.validity.inverted_element_steps);
  EXPECT_EQ(a.validity.min_det_f, b.validity.min_det_f);
}

INSTANTIATE_TEST_SUITE_P(BcsrPcg, Determinism, ::testing::ValuesIn(cases()), case_name);

#if !defined(EB_BCSR_PCG_TEST_CUDA)
TEST(Threads, EachSimulationRunsWithItsOwnThreadCount) {
  auto two = make(test_box(), Backend::Cpu, Precision::Fp64, 2);
  auto one = make(test_box(), Backend::Cpu, Precision::Fp64, 1);  // made last
  two->run_phase(Phase::Rotation);
  EXPECT_EQ(omp_get_max_threads(), 2);
  one->run_phase(Phase::Rotation);
  EXPECT_EQ(omp_get_max_threads(), 1);
  two->advance(1);
  EXPECT_EQ(omp_get_max_threads(), 2);
}
#endif

}  // namespace
}  // namespace eb::bcsr_pcg::test
