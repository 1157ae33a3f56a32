// The CG engines' plan (choose_cg_plan, solvers/linalg/cg_plan.cpp), a pure function: which
// iteration, reduction and L2 residency Auto resolves to for host and device problems, what On and
// Off force, the option text, the refusals, and describe()'s JSON. Device problems are described
// by hand with an H100's properties (132 SMs, 50 MiB of L2, 32.8 MB largest persisting set-aside),
// so no device is needed; test_cg_cpu_vs_cuda.cpp checks that a device solver runs its plan.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "meshes/errors.h"
#include "solvers/linalg/cg.h"
#include "solvers/linalg/cg_algorithm.h"

namespace eb::linalg::test {
namespace {

CgDeviceProperties h100() {
  CgDeviceProperties d;
  d.multiprocessors = 132;
  d.l2_bytes = 52428800;
  d.max_persisting_l2_bytes = 32768000;
  d.max_access_policy_window_bytes = 134213632;
  return d;
}

// A device problem of `rows` unknowns; `fused`: the product's fused-dot blocks (0: none).
CgProblem device_problem(Index rows, std::size_t value_bytes, std::size_t fused, std::size_t hot_bytes) {
  CgProblem p;
  p.location = Location::Device;
  p.rows = rows;
  p.value_bytes = value_bytes;
  p.fused_dot_blocks = fused;
  p.hot_bytes = hot_bytes;
  p.device = h100();
  return p;
}

// box80 (107,163 unknowns): the BCSR product splits into 559 blocks; values 36.4 MB in fp64.
constexpr Index kBox80 = 107163;
constexpr std::size_t kBox80Shares = 559;
constexpr std::size_t kBox80ValuesFp64 = 36400000, kBox80ValuesFp32 = 18200000;

TEST(CgPlan, HostAutoIsTheStandardIterationWithoutL2) {
  CgProblem p;
  p.location = Location::Host;
  p.rows = kBox80;
  p.hot_bytes = kBox80ValuesFp64;
  const CgPlan plan = choose_cg_plan(p, CgOptions{});
  EXPECT_FALSE(plan.single_reduction);
  EXPECT_FALSE(plan.l2_resident);
  EXPECT_FALSE(plan.programmatic_launch);
  CgOptions on;
  on.single_reduction = SingleReduction::On;
  on.l2_resident_operator = L2Residency::On;
  const CgPlan forced = choose_cg_plan(p, on);
  EXPECT_TRUE(forced.single_reduction);
  EXPECT_FALSE(forced.l2_resident) << "the host has no L2 window";
}

TEST(CgPlan, DeviceAutoAtTenthOfAMillionIsSingleReductionNextKernel) {
  const CgPlan fp32 = choose_cg_plan(device_problem(kBox80, 4, kBox80Shares, kBox80ValuesFp32), CgOptions{});
  EXPECT_TRUE(fp32.single_reduction) << fp32.iteration_reason;
  EXPECT_EQ(fp32.reduction, SrReduction::NextKernel);
  EXPECT_TRUE(fp32.programmatic_launch);
  EXPECT_FALSE(fp32.l2_resident) << fp32.l2_reason;
  // Two entries per thread in the next-kernel update: 107,163 / 512 -> 210 blocks.
  EXPECT_EQ(fp32.vector_blocks, 210u);
  EXPECT_EQ(fp32.product_dot_partials, 559u);
  // The rule at one entry per thread: 419 blocks x (838 + 559) doubles.
  EXPECT_DOUBLE_EQ(fp32.next_kernel_partial_bytes, 419.0 * (838 + 559) * 8);

  const CgPlan fp64 = choose_cg_plan(device_problem(kBox80, 8, kBox80Shares, kBox80ValuesFp64), CgOptions{});
  EXPECT_TRUE(fp64.single_reduction);
  EXPECT_EQ(fp64.reduction, SrReduction::NextKernel);
  EXPECT_FALSE(fp64.programmatic_launch) << "fp64 launches normally";
  EXPECT_TRUE(fp64.l2_resident) << fp64.l2_reason;
  EXPECT_EQ(fp64.l2_window_bytes, kBox80ValuesFp64);
  EXPECT_EQ(fp64.l2_set_aside_bytes, 32768000u / 2) << "half the largest set-aside";
}

TEST(CgPlan, DeviceAutoAtAMillionIsStandard) {
  // box160: 811,923 unknowns, ~4,200 product shares, 0.28 GB of fp64 values (more than the L2).
  const CgPlan plan = choose_cg_plan(device_problem(811923, 8, 4200, 280000000), CgOptions{});
  EXPECT_FALSE(plan.single_reduction) << plan.iteration_reason;
  EXPECT_EQ(plan.reduction, SrReduction::LastBlock);
  EXPECT_FALSE(plan.programmatic_launch);
  EXPECT_EQ(plan.vector_blocks, 1056u) << "one resident wave: 8 blocks per SM";
  EXPECT_EQ(plan.product_dot_partials, 0u);
  EXPECT_FALSE(plan.l2_resident);
  EXPECT_NE(plan.l2_reason.find("exceed the L2"), std::string::npos) << plan.l2_reason;
  // On forces the single reduction; its reductions then finish in the last block.
  CgOptions on;
  on.single_reduction = SingleReduction::On;
  const CgPlan sr = choose_cg_plan(device_problem(811923, 8, 4200, 280000000), on);
  EXPECT_TRUE(sr.single_reduction);
  EXPECT_EQ(sr.reduction, SrReduction::LastBlock);
  EXPECT_EQ(sr.vector_blocks, 1056u);
}

// The crossover, without a fused dot (the dot's partial sums on the vector grid): blocks x 3 blocks
// x 8 B <= 8 MB up to 577 blocks of 256 unknowns.
TEST(CgPlan, CrossoverFollowsThePartialSumRule) {
  const Index last = 577 * 256;
  const CgPlan below = choose_cg_plan(device_problem(last, 8, 0, 0), CgOptions{});
  const CgPlan above = choose_cg_plan(device_problem(last + 1, 8, 0, 0), CgOptions{});
  EXPECT_TRUE(below.single_reduction) << below.iteration_reason;
  EXPECT_FALSE(above.single_reduction) << above.iteration_reason;
  EXPECT_EQ(below.product_dot_partials, below.vector_blocks) << "the dot kernel runs on the vector grid";
  // Off keeps the standard iteration below it; an explicit reduction is honoured above it.
  CgOptions off;
  off.single_reduction = SingleReduction::Off;
  EXPECT_FALSE(choose_cg_plan(device_problem(last, 8, 0, 0), off).single_reduction);
  CgOptions next;
  next.single_reduction = SingleReduction::On;
  next.sr_reduction = SrReduction::NextKernel;
  const CgPlan forced = choose_cg_plan(device_problem(last + 1, 8, 0, 0), next);
  EXPECT_EQ(forced.reduction, SrReduction::NextKernel);
  EXPECT_EQ(forced.vector_blocks, 289u) << "two entries per thread";
  CgOptions last_block = next;
  last_block.sr_reduction = SrReduction::LastBlock;
  const CgPlan lb = choose_cg_plan(device_problem(last, 8, 0, 0), last_block);
  EXPECT_EQ(lb.reduction, SrReduction::LastBlock);
  EXPECT_EQ(lb.vector_blocks, 577u) << "one entry per thread";
}

TEST(CgPlan, L2ResidencyFollowsItsRules) {
  const CgProblem fp64 = device_problem(kBox80, 8, kBox80Shares, kBox80ValuesFp64);
  CgOptions o;
  o.l2_resident_operator = L2Residency::Off;
  EXPECT_FALSE(choose_cg_plan(fp64, o).l2_resident);
  o.l2_resident_operator = L2Residency::On;
  EXPECT_TRUE(choose_cg_plan(device_problem(kBox80, 4, kBox80Shares, kBox80ValuesFp32), o).l2_resident)
      << "On applies in fp32 too";
  CgProblem no_values = fp64;
  no_values.hot_bytes = 0;
  EXPECT_FALSE(choose_cg_plan(no_values, o).l2_resident);
  CgProblem no_persisting = fp64;
  no_persisting.device.max_persisting_l2_bytes = 0;
  EXPECT_FALSE(choose_cg_plan(no_persisting, o).l2_resident);
  // A window smaller than the values: the window is the device's largest.
  CgProblem small_window = fp64;
  small_window.device.max_access_policy_window_bytes = 1 << 20;
  const CgPlan w = choose_cg_plan(small_window, o);
  EXPECT_EQ(w.l2_window_bytes, std::size_t(1) << 20);
  EXPECT_EQ(w.l2_set_aside_bytes, std::size_t(1) << 20);
}

TEST(CgPlan, DeviceBytesCountTheWorkspace) {
  CgOptions standard;
  standard.single_reduction = SingleReduction::Off;
  standard.max_iterations = 99;
  const CgProblem p = device_problem(kBox80, 8, kBox80Shares, 0);
  const CgPlan s = choose_cg_plan(p, standard);
  // x r p q, the diagonal and its inverse; 3 partial sums per block, ticket, scalars, history.
  const std::size_t vectors = 6 * std::size_t(kBox80) * 8;
  EXPECT_GT(s.device_bytes, vectors + 419 * 3 * 8 + 100 * 8);
  EXPECT_LT(s.device_bytes, vectors + 419 * 3 * 8 + 100 * 8 + 1024);
  CgOptions sr = standard;
  sr.single_reduction = SingleReduction::On;
  const CgPlan r = choose_cg_plan(p, sr);
  // s w u, two state slots, the update's partials (210 blocks x 2 slots x 2) and the product's 559;
  // the last-block partial sums shrink from 419 x 3 to max(210 x 3, 559).
  const long long added = 3LL * kBox80 * 8 + 2LL * sizeof(CgScalars) + (210LL * 4 + 559) * 8 + (210LL - 419) * 3 * 8;
  EXPECT_EQ(static_cast<long long>(r.device_bytes) - static_cast<long long>(s.device_bytes), added);
}

TEST(CgPlan, ReductionChoiceNeedsTheSingleReduction) {
  for (SingleReduction sr : {SingleReduction::Auto, SingleReduction::Off}) {
    CgOptions o;
    o.single_reduction = sr;
    o.sr_reduction = SrReduction::NextKernel;
    try {
      choose_cg_plan(device_problem(kBox80, 8, kBox80Shares, 0), o);
      ADD_FAILURE() << "sr_reduction accepted with single_reduction = " << to_string(sr);
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("sr_reduction"), std::string::npos) << e.what();
    }
  }
}

TEST(CgPlan, OptionTextRoundTripsAndRefusesUnknownWords) {
  for (SingleReduction v : {SingleReduction::Auto, SingleReduction::On, SingleReduction::Off})
    EXPECT_EQ(parse_single_reduction(to_string(v)), v);
  for (L2Residency v : {L2Residency::Auto, L2Residency::On, L2Residency::Off})
    EXPECT_EQ(parse_l2_residency(to_string(v)), v);
  for (SrReduction v : {SrReduction::Auto, SrReduction::LastBlock, SrReduction::NextKernel})
    EXPECT_EQ(parse_sr_reduction(to_string(v)), v);
  EXPECT_EQ(to_string(SrReduction::NextKernel), "next-kernel");
  try {
    parse_sr_reduction("persistent");
    ADD_FAILURE() << "'persistent' accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'persistent'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("last-block"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_single_reduction("true"), InputError);
  EXPECT_THROW(parse_l2_residency("1"), InputError);
}

TEST(CgPlan, DescribeStatesTheChoices) {
  const nlohmann::json d = describe(choose_cg_plan(device_problem(kBox80, 8, kBox80Shares, kBox80ValuesFp64), {}));
  EXPECT_EQ(d.at("iteration"), "single-reduction");
  EXPECT_EQ(d.at("reduction"), "next-kernel");
  EXPECT_EQ(d.at("l2_resident"), true);
  EXPECT_NE(d.at("iteration_reason").get<std::string>().find("auto"), std::string::npos);
  EXPECT_EQ(d.at("vector_blocks"), 210);
  CgProblem host;
  host.rows = 10;
  const nlohmann::json h = describe(choose_cg_plan(host, {}));
  EXPECT_EQ(h.at("iteration"), "standard");
  EXPECT_EQ(h.at("reduction"), "host");
  EXPECT_EQ(h.at("l2_resident"), false);
  EXPECT_FALSE(h.contains("vector_blocks"));
}

}  // namespace
}  // namespace eb::linalg::test
