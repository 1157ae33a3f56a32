// The CUDA CG engine against the host engine, step by step (GPU only, label gpu). Both run the
// iteration of cg_algorithm.h; on the same problem in fp64 their residual histories must agree per
// iteration and their iterates at the end (only summation orders differ: ~1e-15 per step, grown
// by the iteration to ~1e-12 over 40 steps; tolerance 1e-9). With every format's device operator
// captured in the graph. And the device engine's own launch choices change nothing: graph or direct
// launches and any check_every give bit-identical results (the reductions are deterministic).
// The single reduction runs with its reductions finished by each kernel's last block and with them
// summed by the next kernel (CgOptions::sr_reduction), both checked here; and a solver left on Auto
// runs the plan choose_cg_plan gives for its operator (cg_plan.cpp; its rules: test_cg_plan.cpp).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "meshes/errors.h"
#include "solvers/linalg/cg.h"
#include "solvers/linalg/device_formats.cuh"
#include "tests/linalg/linalg_cases.h"

namespace eb::linalg::test {
namespace {

// The two ways the single-reduction engine finishes a reduction (cg_kernels.cuh).
constexpr SrReduction kSrReductions[] = {SrReduction::LastBlock, SrReduction::NextKernel};

struct Solved {
  CgResult result;
  std::vector<double> x;
};

Solved run(const LinearOperator<double>& op, const std::vector<double>& b, const CgOptions& o) {
  Solved r;
  r.x.assign(b.size(), 0.0);
  r.result = cg_solve_from_host(op, b, r.x, o);
  return r;
}

// The iteration of options: standard (reduction Auto) or the single reduction with `reduction`.
CgOptions iteration(SrReduction reduction, bool single_reduction = true) {
  CgOptions o;
  o.single_reduction = single_reduction ? SingleReduction::On : SingleReduction::Off;
  o.sr_reduction = single_reduction ? reduction : SrReduction::Auto;
  return o;
}
CgOptions standard() { return iteration(SrReduction::Auto, false); }

// A fixed count of iterations (tolerance 0) of `o`'s iteration.
CgOptions fixed(int iterations, Preconditioner pre, CgOptions o) {
  o.tolerance = 0;
  o.max_iterations = iterations;
  o.preconditioner = pre;
  return o;
}

class CgDeviceVsHost : public ::testing::TestWithParam<Format> {};

TEST_P(CgDeviceVsHost, SameHistoryAndIterate) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("box6");
  const std::pair<const char*, CgOptions> modes[] = {{"standard", standard()},
                                                     {"single reduction, last-block", iteration(SrReduction::LastBlock)},
                                                     {"single reduction, next-kernel", iteration(SrReduction::NextKernel)}};
  for (const auto& [mode, options] : modes)
    for (Preconditioner pre : {Preconditioner::None, Preconditioner::Jacobi}) {
      const auto host = make_matrix_operator(P.A, GetParam(), Location::Host);
      const auto dev = make_matrix_operator(P.A, GetParam(), Location::Device);
      const CgOptions o = fixed(40, pre, options);
      const Solved h = run(*host, P.b, o), d = run(*dev, P.b, o);
      ASSERT_EQ(h.result.iterations, 40);
      ASSERT_EQ(d.result.iterations, 40);
      EXPECT_EQ(d.result.status, h.result.status);
      double worst = 0;
      for (size_t k = 0; k < h.result.residuals.size(); ++k)
        worst = std::max(worst, std::abs(d.result.residuals[k] - h.result.residuals[k]) / h.result.residuals[k]);
      std::printf("[ measured ] %s %s %s: history %.3e, iterate %.3e\n", to_string(GetParam()).c_str(),
                  pre == Preconditioner::Jacobi ? "pcg" : "cg", mode, worst, relative_error(d.x, h.x));
      EXPECT_LE(worst, 1e-9) << mode;
      EXPECT_LE(relative_error(d.x, h.x), 1e-9) << mode;
    }
}
INSTANTIATE_TEST_SUITE_P(Formats, CgDeviceVsHost, ::testing::ValuesIn(all_formats()),
                         [](const auto& i) { return to_string(i.param); });

// "standard", or the single reduction's way of finishing its reductions.
class CgDeviceModes : public ::testing::TestWithParam<std::string> {};

CgOptions mode_options(const std::string& mode) {
  return mode == "standard" ? standard() : iteration(parse_sr_reduction(mode));
}

TEST_P(CgDeviceModes, LaunchModesAreBitIdentical) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("raptor").available() ? problem("raptor") : problem("box6");
  const auto dev = make_matrix_operator(P.A, Format::Bcsr, Location::Device);
  CgOptions base = mode_options(GetParam());
  base.tolerance = 1e-8;
  base.max_iterations = 5000;
  base.check_every = 8;
  const Solved ref = run(*dev, P.b, base);
  ASSERT_TRUE(ref.result.converged());
  for (bool graph : {true, false})
    for (int k : {1, 3, 8, 64}) {
      CgOptions o = base;
      o.use_graph = graph;
      o.check_every = k;
      const Solved r = run(*dev, P.b, o);
      EXPECT_EQ(r.result.iterations, ref.result.iterations) << "graph " << graph << ", check_every " << k;
      EXPECT_EQ(r.result.residuals, ref.result.residuals) << "graph " << graph << ", check_every " << k;
      EXPECT_EQ(0, std::memcmp(r.x.data(), ref.x.data(), r.x.size() * sizeof(double)))
          << "graph " << graph << ", check_every " << k;
    }
}

INSTANTIATE_TEST_SUITE_P(Iterations, CgDeviceModes, ::testing::Values("standard", "last-block", "next-kernel"),
                         [](const auto& i) {
                           std::string n = i.param == "standard" ? i.param : "single_reduction_" + i.param;
                           for (char& c : n) c = c == '-' ? '_' : c;
                           return n;
                         });

// The single-reduction iteration on the device reaches the same solution as the standard one, in
// about the same number of iterations (rounding alone separates them), with a BCSR operator whose
// product fuses the dot and with a CSR one whose dot is a kernel of its own.
TEST(CgDevice, SingleReductionAgreesWithStandard) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("raptor").available() ? problem("raptor") : problem("box6");
  for (Format f : {Format::Bcsr, Format::Csr}) {
    const auto dev = make_matrix_operator(P.A, f, Location::Device);
    CgOptions o = standard();
    o.tolerance = 1e-8;
    o.max_iterations = 20000;
    const Solved reference = run(*dev, P.b, o);
    ASSERT_TRUE(reference.result.converged());
    for (SrReduction reduction : kSrReductions) {
      CgOptions so = iteration(reduction);
      so.tolerance = o.tolerance;
      so.max_iterations = o.max_iterations;
      const std::string mode = to_string(reduction);
      const Solved single = run(*dev, P.b, so);
      ASSERT_TRUE(single.result.converged()) << mode << ": " << to_string(single.result.status);
      std::printf("[ measured ] %s: standard %d iterations, single reduction (%s) %d, iterates differ by %.3e\n",
                  to_string(f).c_str(), reference.result.iterations, mode.c_str(), single.result.iterations,
                  relative_error(single.x, reference.x));
      EXPECT_LE(std::abs(single.result.iterations - reference.result.iterations),
                0.02 * reference.result.iterations + 5)
          << mode;
      EXPECT_LE(relative_error(single.x, reference.x), 1e-5) << mode;
    }
  }
}

// The two ways of finishing the single reduction's sums add block partial sums of different
// grids (the next-kernel update takes two entries per thread): the same iterates to rounding (fp64;
// the bound of device against host), on a BCSR operator (dot fused into the product) and a CSR one
// (a dot kernel), for fixed counts that cross the chunk boundaries at odd and even check_every, and
// with a stop inside a chunk.
TEST(CgDevice, SingleReductionNextKernelMatchesLastBlock) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("raptor").available() ? problem("raptor") : problem("box6");
  for (Format f : {Format::Bcsr, Format::Csr})
    for (int check_every : {1, 7, 64}) {
      const auto dev = make_matrix_operator(P.A, f, Location::Device);
      Solved r[2];
      for (int m = 0; m < 2; ++m) {
        CgOptions o = fixed(75, Preconditioner::Jacobi, iteration(kSrReductions[m]));
        o.check_every = check_every;
        r[m] = run(*dev, P.b, o);
      }
      ASSERT_EQ(r[0].result.iterations, 75);
      ASSERT_EQ(r[1].result.iterations, 75) << to_string(f) << " check_every " << check_every;
      EXPECT_EQ(r[1].result.status, r[0].result.status);
      ASSERT_EQ(r[1].result.residuals.size(), r[0].result.residuals.size());
      double worst = 0;
      for (size_t k = 0; k < r[0].result.residuals.size(); ++k)
        worst = std::max(worst, std::abs(r[1].result.residuals[k] - r[0].result.residuals[k]) / r[0].result.residuals[k]);
      std::printf("[ measured ] %s check_every %d: next-kernel vs last-block history %.3e, iterate %.3e\n",
                  to_string(f).c_str(), check_every, worst, relative_error(r[1].x, r[0].x));
      EXPECT_LE(worst, 1e-9) << to_string(f) << " check_every " << check_every;
      EXPECT_LE(relative_error(r[1].x, r[0].x), 1e-9) << to_string(f) << " check_every " << check_every;
    }
  // A tolerance stop inside a chunk. The grids differ, so the rounding of the sums does, and over
  // thousands of iterations on an ill-conditioned matrix the stop moves by a few iterations (13 of
  // ~3,500 on the raptor, H200): within 1% + 2, with iterates that agree to the tolerance.
  const auto dev = make_matrix_operator(P.A, Format::Bcsr, Location::Device);
  Solved r[2];
  for (int m = 0; m < 2; ++m) {
    CgOptions o = iteration(kSrReductions[m]);
    o.tolerance = 1e-6;
    o.max_iterations = 20000;
    o.check_every = 16;
    r[m] = run(*dev, P.b, o);
  }
  ASSERT_TRUE(r[0].result.converged());
  ASSERT_TRUE(r[1].result.converged());
  std::printf("[ measured ] tolerance 1e-6: last-block %d iterations, next-kernel %d\n", r[0].result.iterations,
              r[1].result.iterations);
  EXPECT_LE(std::abs(r[1].result.iterations - r[0].result.iterations), 2 + r[0].result.iterations / 100);
  EXPECT_LE(relative_error(r[1].x, r[0].x), 1e-6);
}

// fp32 solves, whose next-kernel single reduction launches its update and fused product as
// programmatic dependents (CgPlan::programmatic_launch): bit-identical with and without the graph,
// across chunk boundaries and from one run to the next (a kernel that read what the one before it
// had not yet written would show here); and 30 iterations on the cantilever equal the host
// engine's to fp32 rounding (test_cg's fixed-count bound against Eigen, 1e-3). BCSR, whose product
// takes part; CSR, whose product does not.
template <class T>
std::pair<CgResult, std::vector<T>> solve_fp(const LinearOperator<T>& op, const std::vector<T>& b, const CgOptions& o) {
  std::pair<CgResult, std::vector<T>> r;
  r.second.assign(b.size(), T(0));
  r.first = cg_solve_from_host(op, b, r.second, o);
  return r;
}

TEST(CgDevice, ProgrammaticLaunchIsDeterministic) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  for (const char* name : {"box6", "raptor"}) {
    if (!problem(name).available()) continue;
    const AssembledMatrix<float> A = cast_values<float>(problem(name).A);
    const std::vector<float> b(problem(name).b.begin(), problem(name).b.end());
    for (Format f : {Format::Bcsr, Format::Csr}) {
      const auto dev = make_matrix_operator(A, f, Location::Device);
      const CgOptions base = fixed(75, Preconditioner::Jacobi, iteration(SrReduction::NextKernel));
      ASSERT_TRUE(CgSolver<float>(*dev, base).plan().programmatic_launch) << to_string(f);
      const auto ref = solve_fp(*dev, b, base);
      ASSERT_EQ(ref.first.iterations, 75);
      for (bool graph : {true, false})
        for (int check_every : {1, 7, 64})
          for (int repeat = 0; repeat < 2; ++repeat) {
            CgOptions o = base;
            o.use_graph = graph;
            o.check_every = check_every;
            const auto r = solve_fp(*dev, b, o);
            EXPECT_EQ(r.first.residuals, ref.first.residuals)
                << name << " " << to_string(f) << " graph " << graph << " check_every " << check_every;
            EXPECT_EQ(0, std::memcmp(r.second.data(), ref.second.data(), r.second.size() * sizeof(float)))
                << name << " " << to_string(f) << " graph " << graph << " check_every " << check_every;
          }
      if (std::string(name) != "box6") continue;
      const CgOptions thirty = fixed(30, Preconditioner::Jacobi, iteration(SrReduction::NextKernel));
      const auto host = make_matrix_operator(A, f, Location::Host);
      const auto d = solve_fp(*dev, b, thirty), h = solve_fp(*host, b, thirty);
      ASSERT_EQ(d.first.iterations, 30);
      const std::vector<double> xd(d.second.begin(), d.second.end()), xh(h.second.begin(), h.second.end());
      std::printf("[ measured ] box6 fp32 %s, 30 iterations: device (programmatic) vs host %.3e\n",
                  to_string(f).c_str(), relative_error(xd, xh));
      EXPECT_LE(relative_error(xd, xh), 1e-3) << to_string(f);
    }
  }
}

// Keeping the operator's values in the L2 (CgOptions::l2_resident_operator) changes where bytes
// come from, never what is computed: the same bits as without, for each format that offers its
// values, the standard and both single-reduction engines, with and without the graph. While such
// a solver lives the process's persisting-L2 set-aside is raised (on a device that has one) and
// its destruction puts the old value back.
TEST(CgDevice, L2ResidencyChangesNoBit) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("raptor").available() ? problem("raptor") : problem("box6");
  int device = 0, max_persisting = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device), cudaSuccess);
  if (max_persisting <= 0) GTEST_SKIP() << "no persisting L2 lines on this device";
  size_t before = 0;
  ASSERT_EQ(cudaDeviceGetLimit(&before, cudaLimitPersistingL2CacheSize), cudaSuccess);
  for (Format f : {Format::Bcsr, Format::Csr, Format::Ell}) {
    const auto dev = make_matrix_operator(P.A, f, Location::Device);
    ASSERT_NE(dev->hot_storage().data, nullptr) << to_string(f);
    for (const std::string mode : {"standard", "last-block", "next-kernel"}) {
      for (bool graph : {true, false}) {
        CgOptions o = fixed(60, Preconditioner::Jacobi, mode_options(mode));
        o.use_graph = graph;
        o.check_every = 16;
        o.l2_resident_operator = L2Residency::Off;
        const Solved plain = run(*dev, P.b, o);
        o.l2_resident_operator = L2Residency::On;
        Solved kept;
        {
          CgSolver<double> solver(*dev, o);
          EXPECT_TRUE(solver.plan().l2_resident) << solver.plan().l2_reason;
          size_t during = 0;
          ASSERT_EQ(cudaDeviceGetLimit(&during, cudaLimitPersistingL2CacheSize), cudaSuccess);
          // At least the set-aside the plan asks for: more when it already was.
          EXPECT_GE(during, solver.plan().l2_set_aside_bytes) << to_string(f) << " " << mode;
          if (graph && mode == "standard")
            std::printf("[ measured ] %s: values %zu B, persisting L2 max %d B, set-aside before %zu B, during %zu B\n",
                        to_string(f).c_str(), dev->hot_storage().bytes, max_persisting, before, during);
          cuda::DeviceBuffer<double> db, dx;
          db.upload(P.b);
          dx.upload(std::vector<double>(P.b.size(), 0.0));
          kept.result = solver.solve(db.data(), dx.data());
          kept.x = dx.to_host();
        }
        size_t after = 0;
        ASSERT_EQ(cudaDeviceGetLimit(&after, cudaLimitPersistingL2CacheSize), cudaSuccess);
        EXPECT_EQ(after, before) << to_string(f) << " " << mode;
        ASSERT_EQ(plain.result.iterations, 60);
        EXPECT_EQ(kept.result.iterations, 60);
        EXPECT_EQ(kept.result.residuals, plain.result.residuals) << to_string(f) << " " << mode << " graph " << graph;
        EXPECT_EQ(0, std::memcmp(kept.x.data(), plain.x.data(), plain.x.size() * sizeof(double)))
            << to_string(f) << " " << mode << " graph " << graph;
      }
    }
  }
}

// An operator that computes with a real device matrix but names, as its values, a device array
// larger than the whole L2 (the size rule of CgOptions::l2_resident_operator, without building a
// 50 MB matrix).
class LargeValuesOperator final : public LinearOperator<double> {
 public:
  LargeValuesOperator(const LinearOperator<double>& op, std::size_t bytes) : op_(op) { big_.resize(bytes, "large values"); }
  Index rows() const override { return op_.rows(); }
  Location location() const override { return Location::Device; }
  void apply(const double* x, double* y, StreamHandle s) const override { op_.apply(x, y, s); }
  void diagonal(double* d, StreamHandle s) const override { op_.diagonal(d, s); }
  std::string name() const override { return "large values"; }
  Storage hot_storage() const override { return {big_.data(), big_.bytes()}; }

 private:
  const LinearOperator<double>& op_;
  cuda::DeviceBuffer<unsigned char> big_;
};

// What the option leaves behind: values larger than the L2 get no window and no set-aside; a
// caller's stream gets its own access policy window back when the solver goes.
TEST(CgDevice, L2ResidencyLeavesLargeValuesAndTheCallersStreamAlone) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("box6");
  int device = 0, l2 = 0, max_persisting = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device), cudaSuccess);
  if (max_persisting <= 0) GTEST_SKIP() << "no persisting L2 lines on this device";
  const auto dev = make_matrix_operator(P.A, Format::Bcsr, Location::Device);
  size_t original = 0, before = 0, during = 0;
  ASSERT_EQ(cudaDeviceGetLimit(&original, cudaLimitPersistingL2CacheSize), cudaSuccess);
  ASSERT_EQ(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetLimit(&before, cudaLimitPersistingL2CacheSize), cudaSuccess);
  CgOptions o = fixed(20, Preconditioner::Jacobi, iteration(SrReduction::Auto));
  o.l2_resident_operator = L2Residency::On;
  {
    const LargeValuesOperator large(*dev, size_t(l2) + (size_t(1) << 20));
    CgSolver<double> solver(large, o);
    EXPECT_FALSE(solver.plan().l2_resident) << solver.plan().l2_reason;
    ASSERT_EQ(cudaDeviceGetLimit(&during, cudaLimitPersistingL2CacheSize), cudaSuccess);
    EXPECT_EQ(during, before) << "the set-aside was raised for values larger than the L2";
    const Solved r = run(large, P.b, o);
    EXPECT_EQ(r.result.iterations, 20);
  }
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  cuda::DeviceBuffer<double> mine;
  mine.resize(1024, "caller's window");
  cudaStreamAttrValue callers{};
  callers.accessPolicyWindow.base_ptr = mine.data();
  callers.accessPolicyWindow.num_bytes = mine.bytes();
  callers.accessPolicyWindow.hitRatio = 0.25f;
  callers.accessPolicyWindow.hitProp = cudaAccessPropertyNormal;
  callers.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  ASSERT_EQ(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &callers), cudaSuccess);
  o.stream = stream;
  {
    CgSolver<double> solver(*dev, o);
    cudaStreamAttrValue now{};
    ASSERT_EQ(cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &now), cudaSuccess);
    EXPECT_NE(now.accessPolicyWindow.base_ptr, callers.accessPolicyWindow.base_ptr) << "no window while the solver lives";
    ASSERT_EQ(cudaDeviceGetLimit(&during, cudaLimitPersistingL2CacheSize), cudaSuccess);
    EXPECT_GT(during, before);
  }
  cudaStreamAttrValue after{};
  ASSERT_EQ(cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &after), cudaSuccess);
  EXPECT_EQ(after.accessPolicyWindow.base_ptr, callers.accessPolicyWindow.base_ptr);
  EXPECT_EQ(after.accessPolicyWindow.num_bytes, callers.accessPolicyWindow.num_bytes);
  EXPECT_EQ(after.accessPolicyWindow.hitRatio, callers.accessPolicyWindow.hitRatio);
  EXPECT_EQ(after.accessPolicyWindow.hitProp, callers.accessPolicyWindow.hitProp);
  ASSERT_EQ(cudaDeviceGetLimit(&during, cudaLimitPersistingL2CacheSize), cudaSuccess);
  EXPECT_EQ(during, before);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
  EXPECT_EQ(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, original), cudaSuccess);
}

// An operator of `rows` unknowns on the device that is never applied: enough for a solver's plan
// and workspace (without Jacobi its construction reads nothing from the operator).
class SizeOnlyOperator final : public LinearOperator<double> {
 public:
  explicit SizeOnlyOperator(Index rows) : rows_(rows) {}
  Index rows() const override { return rows_; }
  Location location() const override { return Location::Device; }
  void apply(const double*, double*, StreamHandle) const override { throw std::logic_error("not applied"); }
  void diagonal(double*, StreamHandle) const override { throw std::logic_error("not applied"); }
  std::string name() const override { return "size only"; }

 private:
  Index rows_;
};

// A device solver left on Auto runs the plan choose_cg_plan gives for its operator and device: the
// single reduction with next-kernel sums at small sizes (programmatic launch in fp32 only, the
// values in the L2 in fp64 only), the standard iteration above the crossover; and the Auto solve
// is bit for bit the solve with those choices made explicit.
TEST(CgDevice, AutoRunsThePlanForItsSize) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("box6");
  const CgDeviceProperties device = cg_device_properties();
  const auto dev = make_matrix_operator(P.A, Format::Bcsr, Location::Device);
  CgOptions o;
  o.tolerance = 1e-8;
  CgSolver<double> solver(*dev, o);
  const CgPlan& plan = solver.plan();
  std::printf("[ measured ] box6 bcsr fp64 auto plan: %s\n", describe(plan).dump().c_str());
  EXPECT_EQ(describe(plan), describe(choose_cg_plan(cg_problem(*dev), o)));
  EXPECT_TRUE(plan.single_reduction) << plan.iteration_reason;
  EXPECT_EQ(plan.reduction, SrReduction::NextKernel);
  EXPECT_FALSE(plan.programmatic_launch);
  EXPECT_EQ(plan.l2_resident, device.max_persisting_l2_bytes > 0) << plan.l2_reason;
  const AssembledMatrix<float> A32 = cast_values<float>(P.A);
  const auto dev32 = make_matrix_operator(A32, Format::Bcsr, Location::Device);
  const CgPlan plan32 = CgSolver<float>(*dev32, o).plan();
  EXPECT_TRUE(plan32.single_reduction);
  EXPECT_TRUE(plan32.programmatic_launch);
  EXPECT_FALSE(plan32.l2_resident) << plan32.l2_reason;

  const Solved automatic = run(*dev, P.b, o);
  CgOptions explicit_options = iteration(SrReduction::NextKernel);
  explicit_options.tolerance = o.tolerance;
  explicit_options.l2_resident_operator = L2Residency::Off;  // changes no bit (L2ResidencyChangesNoBit)
  const Solved chosen = run(*dev, P.b, explicit_options);
  ASSERT_TRUE(automatic.result.converged());
  EXPECT_EQ(automatic.result.residuals, chosen.result.residuals);
  EXPECT_EQ(0, std::memcmp(automatic.x.data(), chosen.x.data(), chosen.x.size() * sizeof(double)));

  // Above the crossover without a fused dot (578 blocks of 256 unknowns, on a device that runs that
  // many: 8 blocks per SM): the standard iteration.
  CgOptions plain;
  plain.preconditioner = Preconditioner::None;
  const SizeOnlyOperator big(578 * 256);
  const CgPlan above = CgSolver<double>(big, plain).plan();
  EXPECT_EQ(describe(above), describe(choose_cg_plan(cg_problem(big), plain)));
  if (device.multiprocessors * 8 >= 578) EXPECT_FALSE(above.single_reduction) << above.iteration_reason;
}

// A reduction forced without the single reduction is refused when the solver is made.
TEST(CgDevice, ForcedReductionNeedsTheSingleReduction) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("box6");
  const auto dev = make_matrix_operator(P.A, Format::Bcsr, Location::Device);
  CgOptions o;
  o.sr_reduction = SrReduction::NextKernel;
  EXPECT_THROW(CgSolver<double>(*dev, o), InputError);
  o.single_reduction = SingleReduction::Off;
  EXPECT_THROW(CgSolver<double>(*dev, o), InputError);
}

// The BCSR product with the fused dot (LinearOperator::apply_dot), for every split of a slice
// among warps: y bit-identical to the plain product's, x . y equal to the host's sum to rounding,
// and the same bits in two runs.
TEST(DeviceBcsrDot, EqualsProductAndHostDot) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  for (const char* name : {"raptor", "box5", "planted"}) {
    if (!problem(name).available()) continue;
    const AssembledMatrix<double>& A = problem(name).A;
    const std::vector<double> x = random_vector(size_t(A.rows), 11);
    for (int w : {1, 2, 4, 8}) {
      SlicedBcsr<double> s = make_sliced_bcsr(to_bcsr(A));
      s.warps_per_slice = w;
      const auto op = make_sliced_bcsr_operator(s, Location::Device);
      ASSERT_GT(op->fused_dot_blocks(), 0u);
      EXPECT_EQ(op->fused_dot_blocks(), sliced_bcsr_product_blocks(s.slices(), w)) << name << " w" << w;
      const std::vector<double> y_plain = apply_from_host(*op, x);
      double host_dot = 0;
      for (size_t i = 0; i < x.size(); ++i) host_dot += x[i] * y_plain[i];
      cuda::DeviceBuffer<double> dx, dy, partials, result;
      cuda::DeviceBuffer<unsigned> ticket;
      dx.upload(x);
      dy.resize(x.size(), "test y");
      partials.resize(op->fused_dot_blocks(), "test partials");
      result.resize(1, "test dot");
      ticket.resize(1, "test ticket");
      ticket.fill_zero();
      double dots[2];
      for (double& d : dots) {
        op->apply_dot(dx.data(), dy.data(), DotTarget{partials.data(), ticket.data(), result.data()}, nullptr);
        EB_CUDA_CHECK(cudaDeviceSynchronize());
        d = result.to_host()[0];
      }
      const std::vector<double> y = dy.to_host();
      ASSERT_EQ(0, std::memcmp(y.data(), y_plain.data(), y.size() * sizeof(double))) << name << " w" << w;
      EXPECT_EQ(0, std::memcmp(&dots[0], &dots[1], sizeof(double))) << name << " w" << w;
      EXPECT_NEAR(dots[0], host_dot, 1e-12 * std::abs(host_dot)) << name << " w" << w;
      EXPECT_EQ(ticket.to_host()[0], 0u) << "the ticket is left 0 for the next reduction";
    }
  }
}

// One solver, several solves: the captured graph is reused (the engine copies x in and out).
TEST(CgDevice, SolverReusesItsGraph) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("box6");
  const auto dev = make_matrix_operator(P.A, Format::Bcsr, Location::Device);
  CgOptions o;
  o.tolerance = 1e-9;
  const Solved first = run(*dev, P.b, o);
  std::vector<double> b2 = P.b;
  for (double& v : b2) v *= -2.0;
  const Solved second = run(*dev, b2, o);
  ASSERT_TRUE(second.result.converged());
  std::vector<double> expect = first.x;
  for (double& v : expect) v *= -2.0;
  EXPECT_LE(relative_error(second.x, expect), 1e-7);
}

}  // namespace
}  // namespace eb::linalg::test
