// The CUDA kernels of the smoothed hierarchy (smoothed_cuda_kernels.cuh) against the CPU functions
// (hexmg_cpu.cpp on smoothed_kernels.h), one phase at a time from the same seeded random inputs:
// the Galerkin product, a Gauss-Seidel sweep forward and backward on the simulation level and a
// coloured coarse level, the residual, restriction, prolongation, the coarsest CG and a whole
// V-cycle; then whole runs of smoothed-vcycle and smoothed-pcg, which repeated on the GPU give
// identical bits. Compiled into test_hexmg_gpu only (label gpu); skipped without a device.
#include <cstring>
#include <random>
#include <string>

#include "solvers/hexmg/smoothed_plan.h"
#include "tests/hexmg/hexmg_test_util.h"
#include "tests/linalg/linalg_test_util.h"

namespace eb::hexmg::test {
namespace {

using SA = HexmgSimulation::SmoothedArray;
using SP = HexmgSimulation::SmoothedPhaseKind;

class SmoothedCuda : public ::testing::TestWithParam<Precision> {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device";
    Scenario sc = clamped_cube(16);
    sc.solver.variant = "smoothed-vcycle";
    cpu_ = make(sc, {Backend::Cpu, GetParam()});
    gpu_ = make(sc, {Backend::Cuda, GetParam()});
    ASSERT_GE(cpu_->model().n_levels(), 3);
    // A deformed, moving state (rotations away from I), the same on both.
    std::mt19937_64 rng(2024);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    const size_t n = cpu_->array_size(PhaseArray::u0, 0);
    std::vector<double> u(n), v(n);
    for (size_t i = 0; i < n; ++i) {
      u[i] = 2e-3 * U(rng);
      v[i] = 1e-2 * U(rng);
    }
    cpu_->set_state(u, v);
    gpu_->set_state(u, v);
    cpu_->begin_step();
    gpu_->begin_step();
  }
  double tol() const { return GetParam() == Precision::Fp32 ? 2e-4 : 1e-10; }
  // |a - b|_max / |b|_max.
  static double diff(const std::vector<double>& a, const std::vector<double>& b) {
    EXPECT_EQ(a.size(), b.size());
    double d = 0, m = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
      d = std::max(d, std::abs(a[i] - b[i]));
      m = std::max(m, std::abs(b[i]));
    }
    return m > 0 ? d / m : d;
  }
  // The same random b, u (and r) on level l of both backends.
  void same_vectors(int l, uint32_t seed, bool zero_u = false) {
    const size_t n = cpu_->smoothed_array(SA::b, l).size();
    for (SA a : {SA::b, SA::u, SA::r}) {
      std::vector<double> v = linalg::test::random_vector(n, seed++);
      if (a == SA::u && zero_u) std::fill(v.begin(), v.end(), 0.0);
      cpu_->set_smoothed_array(a, l, v);
      gpu_->set_smoothed_array(a, l, v);
    }
  }
  // Level l's coarse matrix of the CPU copied to the GPU, so that a phase starts from equal bits.
  void same_matrix(int l) {
    if (l == 0)
      gpu_->set_array(PhaseArray::A, 0, cpu_->get_array(PhaseArray::A, 0));
    else
      gpu_->set_smoothed_array(SA::A, l, cpu_->smoothed_array(SA::A, l));
  }
  void run_both(SP k, int l) {
    cpu_->run_smoothed_phase(k, l);
    gpu_->run_smoothed_phase(k, l);
  }
  void expect_same(SA a, int l, const char* what) {
    const double d = diff(gpu_->smoothed_array(a, l), cpu_->smoothed_array(a, l));
    std::printf("%s level %d: max relative difference %.2e\n", what, l, d);
    EXPECT_LE(d, tol()) << what << " level " << l;
  }
  // Forward and backward sweeps and the residual of level l from equal inputs (seeds from `seed`).
  void check_sweeps_and_residual(int l, uint32_t seed, const char* kernels) {
    same_matrix(l);
    for (SP k : {SP::Sweep, SP::SweepBackward}) {
      same_vectors(l, seed + l);
      run_both(k, l);
      expect_same(SA::u, l, (std::string(kernels) + (k == SP::Sweep ? " Gauss-Seidel sweep" : " backward sweep")).c_str());
    }
    same_vectors(l, seed + 100 + l);
    run_both(SP::Residual, l);
    expect_same(SA::r, l, (std::string(kernels) + " residual").c_str());
  }
  std::unique_ptr<HexmgSimulation> cpu_, gpu_;
};

TEST_P(SmoothedCuda, GalerkinProduct) {
  const int nl = cpu_->model().n_levels();
  for (int l = 1; l < nl; ++l) {
    expect_same(SA::AP, l, "A P after begin_step");
    expect_same(SA::A, l, "P^T A P after begin_step");
    same_matrix(l - 1);
    run_both(SP::Galerkin, l);
    expect_same(SA::A, l, "P^T A P from equal inputs");
  }
}

TEST_P(SmoothedCuda, SweepsResidualTransfers) {
  const int nl = cpu_->model().n_levels();
  for (int l = 0; l + 1 < nl; ++l) {
    check_sweeps_and_residual(l, 100, "warp-per-row");
    same_vectors(l, 300 + l);
    same_vectors(l + 1, 400 + l);
    run_both(SP::Restrict, l + 1);
    expect_same(SA::b, l + 1, "restriction b");
    expect_same(SA::u, l + 1, "restriction u = 0");
    same_vectors(l, 500 + l);
    same_vectors(l + 1, 600 + l);
    run_both(SP::Prolong, l + 1);
    expect_same(SA::u, l, "prolongation");
  }
}

TEST_P(SmoothedCuda, CoarsestSolveAndCycle) {
  const int last = cpu_->model().n_levels() - 1;
  same_matrix(last);
  // A consistent right-hand side (0 on dead components), from u = 0, as a cycle hands it over.
  std::vector<double> b = linalg::test::random_vector(cpu_->smoothed_array(SA::b, last).size(), 700);
  const SmoothedLevel& S = cpu_->smoothed_plan()->levels[size_t(last)];
  for (size_t i = 0; i < b.size(); ++i)
    if (S.dead[i / 3] & (1u << (i % 3))) b[i] = 0;
  for (HexmgSimulation* s : {cpu_.get(), gpu_.get()}) {
    s->set_smoothed_array(SA::b, last, b);
    s->set_smoothed_array(SA::u, last, std::vector<double>(b.size(), 0.0));
  }
  run_both(SP::CoarseSolve, last);
  // CG to its relative tolerance: the two solutions agree to about that tolerance times the
  // coarsest level's condition, not to rounding.
  const double d = diff(gpu_->smoothed_array(SA::u, last), cpu_->smoothed_array(SA::u, last));
  std::printf("coarsest CG: max relative difference %.2e\n", d);
  EXPECT_LE(d, GetParam() == Precision::Fp32 ? 1e-2 : 1e-6);

  for (int l = 1; l <= last; ++l) same_matrix(l);
  same_vectors(0, 800, true);
  run_both(SP::Cycle, 0);
  expect_same(SA::u, 0, "whole V-cycle");
}

INSTANTIATE_TEST_SUITE_P(Precisions, SmoothedCuda, ::testing::Values(Precision::Fp32, Precision::Fp64),
                         [](const ::testing::TestParamInfo<Precision>& i) { return to_string(i.param); });

// Whole runs: GPU against CPU, and the GPU against itself bit for bit.
TEST(SmoothedCudaRuns, MatchCpuAndRepeatBitIdentical) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device";
  for (const char* v : {"smoothed-vcycle", "smoothed-pcg"})
    for (Precision p : {Precision::Fp32, Precision::Fp64}) {
      Scenario sc = clamped_cube(12, {"hexmg.tolerance=1e-5"});
      sc.solver.variant = v;
      auto cpu = make(sc, {Backend::Cpu, p}, 2);
      auto g1 = make(sc, {Backend::Cuda, p}), g2 = make(sc, {Backend::Cuda, p});
      for (auto* s : {cpu.get(), g1.get(), g2.get()}) advance_twenty(*s);
      std::vector<double> u1, v1, u2, v2;
      g1->copy_state_to_host(u1, v1);
      g2->copy_state_to_host(u2, v2);
      EXPECT_EQ(0, std::memcmp(u1.data(), u2.data(), u1.size() * sizeof(double))) << v << " " << to_string(p);
      EXPECT_EQ(0, std::memcmp(v1.data(), v2.data(), v1.size() * sizeof(double))) << v << " " << to_string(p);
      const double d = relative_difference(*g1, *cpu);
      std::printf("%s %s: GPU against CPU after 20 steps %.2e\n", v, to_string(p).c_str(), d);
      EXPECT_LE(d, p == Precision::Fp32 ? 1e-3 : 1e-7) << v;
      // smoothed-pcg solves to 1e-5; a fixed cycle count states no convergence (SolverStats).
      if (std::string(v) == "smoothed-pcg") EXPECT_TRUE(g1->solver_stats().converged) << v;
    }
}

// hexmg.galerkin_every = 4 over 10 steps (refreshes at steps 0, 4, 8): smoothed-vcycle through the
// two step graphs (advanced in chunks that start off the schedule), smoothed-pcg launched
// directly; the GPU state and its lagged coarse operators against the CPU's.
TEST(SmoothedCudaRuns, GalerkinEveryFourMatchesCpu) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device";
  for (const char* v : {"smoothed-vcycle", "smoothed-pcg"})
    for (Precision p : {Precision::Fp32, Precision::Fp64}) {
      Scenario sc = clamped_cube(12, {"hexmg.tolerance=1e-5", "hexmg.galerkin_every=4"});
      sc.solver.variant = v;
      auto cpu = make(sc, {Backend::Cpu, p}, 2);
      auto gpu = make(sc, {Backend::Cuda, p});
      for (int chunk : {1, 2, 6, 1}) {
        cpu->advance(chunk);
        gpu->advance(chunk);
      }
      ASSERT_EQ(gpu->steps_done(), 10);
      const double d = relative_difference(*gpu, *cpu);
      std::printf("%s %s galerkin_every=4: GPU against CPU after 10 steps %.2e\n", v, to_string(p).c_str(), d);
      EXPECT_LE(d, p == Precision::Fp32 ? 1e-3 : 1e-7) << v;
      // The coarse operators of step 8 on both (a GPU refreshed on other steps would hold step 9's).
      for (int l = 1; l < cpu->model().n_levels(); ++l) {
        const std::vector<double> a = gpu->smoothed_array(SA::A, l), b = cpu->smoothed_array(SA::A, l);
        double dd = 0, m = 0;
        for (size_t i = 0; i < a.size(); ++i) {
          dd = std::max(dd, std::abs(a[i] - b[i]));
          m = std::max(m, std::abs(b[i]));
        }
        std::printf("  level %d coarse operator: max relative difference %.2e\n", l, dd / m);
        EXPECT_LE(dd, (p == Precision::Fp32 ? 1e-3 : 1e-7) * m) << v << " level " << l;
      }
      if (std::string(v) == "smoothed-pcg") EXPECT_TRUE(gpu->solver_stats().converged) << v;
    }
}

}  // namespace
}  // namespace eb::hexmg::test
