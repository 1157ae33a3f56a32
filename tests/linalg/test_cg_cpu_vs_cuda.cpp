// The CUDA CG engine against the host engine, step by step (GPU only, label gpu). Both run the
// iteration of cg_algorithm.h; on the same problem in fp64 their residual histories must agree per
// iteration and their iterates at the end (only summation orders differ: ~1e-15 per step, grown
// by the iteration to ~1e-12 over 40 steps; tolerance 1e-9). With every format's device operator
// captured in the graph. And the device engine's own knobs change nothing: graph or direct
// launches and any check_every give bit-identical results (the reductions are deterministic).
// The single reduction runs with its reductions finished by each kernel's last block, with them
// summed by the next kernel, and as one persistent kernel per chunk (EB_CG_SR_REDUCTION), all
// checked here; the persistent kernel must give the next-kernel engine's bits.
#include <algorithm>
#include <cstdio>
#include <cstring>

#include "meshes/errors.h"
#include "solvers/linalg/cg.h"
#include "solvers/linalg/device_formats.cuh"
#include "tests/common/env_guard.h"
#include "tests/linalg/linalg_cases.h"

namespace eb::linalg::test {
namespace {

using ::eb::test::EnvGuard;
// The two ways the single-reduction engine finishes a reduction (cg_cuda.cu).
constexpr const char* kSrReductions[] = {"last-block", "next-kernel"};

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

CgOptions fixed(int iterations, Preconditioner pre, bool single_reduction) {
  CgOptions o;
  o.tolerance = 0;
  o.max_iterations = iterations;
  o.preconditioner = pre;
  o.single_reduction = single_reduction;
  return o;
}

class CgDeviceVsHost : public ::testing::TestWithParam<Format> {};

TEST_P(CgDeviceVsHost, SameHistoryAndIterate) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("box6");
  for (const char* sr_mode : {"", "last-block", "next-kernel", "persistent"})
  for (Preconditioner pre : {Preconditioner::None, Preconditioner::Jacobi}) {
    const bool sr = *sr_mode != '\0';
    if (std::string(sr_mode) == "persistent" && GetParam() != Format::Bcsr) continue;  // BCSR only
    EnvGuard mode("EB_CG_SR_REDUCTION", sr_mode);
    const auto host = make_matrix_operator(P.A, GetParam(), Location::Host);
    const auto dev = make_matrix_operator(P.A, GetParam(), Location::Device);
    const Solved h = run(*host, P.b, fixed(40, pre, sr)), d = run(*dev, P.b, fixed(40, pre, sr));
    ASSERT_EQ(h.result.iterations, 40);
    ASSERT_EQ(d.result.iterations, 40);
    EXPECT_EQ(d.result.status, h.result.status);
    double worst = 0;
    for (size_t k = 0; k < h.result.residuals.size(); ++k)
      worst = std::max(worst, std::abs(d.result.residuals[k] - h.result.residuals[k]) / h.result.residuals[k]);
    std::printf("[ measured ] %s %s%s%s: history %.3e, iterate %.3e\n", to_string(GetParam()).c_str(),
                pre == Preconditioner::Jacobi ? "pcg" : "cg", sr ? " single reduction, " : "", sr_mode, worst,
                relative_error(d.x, h.x));
    EXPECT_LE(worst, 1e-9);
    EXPECT_LE(relative_error(d.x, h.x), 1e-9);
  }
}
INSTANTIATE_TEST_SUITE_P(Formats, CgDeviceVsHost, ::testing::ValuesIn(all_formats()),
                         [](const auto& i) { return to_string(i.param); });

// "standard", or the single reduction's way of finishing its reductions.
class CgDeviceModes : public ::testing::TestWithParam<std::string> {};

TEST_P(CgDeviceModes, LaunchModesAreBitIdentical) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("raptor").available() ? problem("raptor") : problem("box6");
  const auto dev = make_matrix_operator(P.A, Format::Bcsr, Location::Device);
  const bool sr = GetParam() != "standard";
  EnvGuard mode("EB_CG_SR_REDUCTION", sr ? GetParam().c_str() : "");
  CgOptions base;
  base.single_reduction = sr;
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

INSTANTIATE_TEST_SUITE_P(Iterations, CgDeviceModes,
                         ::testing::Values("standard", "last-block", "next-kernel", "persistent"),
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
    CgOptions o;
    o.tolerance = 1e-8;
    o.max_iterations = 20000;
    const Solved standard = run(*dev, P.b, o);
    o.single_reduction = true;
    ASSERT_TRUE(standard.result.converged());
    for (const char* sr_mode : kSrReductions) {
      EnvGuard mode("EB_CG_SR_REDUCTION", sr_mode);
      const Solved single = run(*dev, P.b, o);
      ASSERT_TRUE(single.result.converged()) << sr_mode << ": " << to_string(single.result.status);
      std::printf("[ measured ] %s: standard %d iterations, single reduction (%s) %d, iterates differ by %.3e\n",
                  to_string(f).c_str(), standard.result.iterations, sr_mode, single.result.iterations,
                  relative_error(single.x, standard.x));
      EXPECT_LE(std::abs(single.result.iterations - standard.result.iterations),
                0.02 * standard.result.iterations + 5)
          << sr_mode;
      EXPECT_LE(relative_error(single.x, standard.x), 1e-5) << sr_mode;
    }
  }
}

// The two ways of finishing the single reduction's sums add the same block partial sums, in the
// same order wherever the summing block has as many threads as the product's kernel (the vector
// kernels' sums always): the same iterates to rounding (fp64; the bound of device against host),
// on a BCSR operator (dot fused into the product) and a CSR one (a dot kernel), for fixed counts
// that cross the chunk boundaries at odd and even check_every, and with a stop inside a chunk.
TEST(CgDevice, SingleReductionNextKernelMatchesLastBlock) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  // The same blocks in both (the next-kernel engine otherwise takes two entries per thread).
  EnvGuard same_blocks("EB_CG_ENTRIES_PER_THREAD", "1");
  const NamedProblem& P = problem("raptor").available() ? problem("raptor") : problem("box6");
  for (Format f : {Format::Bcsr, Format::Csr})
    for (int check_every : {1, 7, 64}) {
      const auto dev = make_matrix_operator(P.A, f, Location::Device);
      CgOptions o = fixed(75, Preconditioner::Jacobi, true);
      o.check_every = check_every;
      Solved r[2];
      for (int m = 0; m < 2; ++m) {
        EnvGuard mode("EB_CG_SR_REDUCTION", kSrReductions[m]);
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
  // A tolerance stop inside a chunk: both stop at the same iteration with the same residual.
  const auto dev = make_matrix_operator(P.A, Format::Bcsr, Location::Device);
  CgOptions o;
  o.single_reduction = true;
  o.tolerance = 1e-6;
  o.max_iterations = 20000;
  o.check_every = 16;
  Solved r[2];
  for (int m = 0; m < 2; ++m) {
    EnvGuard mode("EB_CG_SR_REDUCTION", kSrReductions[m]);
    r[m] = run(*dev, P.b, o);
  }
  ASSERT_TRUE(r[0].result.converged());
  ASSERT_TRUE(r[1].result.converged());
  std::printf("[ measured ] tolerance 1e-6: last-block %d iterations, next-kernel %d\n", r[0].result.iterations,
              r[1].result.iterations);
  EXPECT_LE(std::abs(r[1].result.iterations - r[0].result.iterations), 1);
  EXPECT_LE(relative_error(r[1].x, r[0].x), 1e-6);
}

// The persistent kernel runs the next-kernel engine's blocks and shares (cg_cuda.cu), so its
// iterates, residual histories and stops are those bits exactly: for each split of a slice among
// warps (its three instantiations), with as many resident blocks as fit and with one per SM (each
// block then runs several update blocks and product shares), for fixed counts whose chunks end
// inside the count (75 iterations at check_every 1, 7 and 64) and for a stop at a tolerance.
template <class T>
struct SolvedT {
  CgResult result;
  std::vector<T> x;
};

template <class T>
bool same_bits(const SolvedT<T>& a, const SolvedT<T>& b) {
  return a.result.iterations == b.result.iterations && a.result.status == b.result.status &&
         a.result.residuals == b.result.residuals && 0 == std::memcmp(a.x.data(), b.x.data(), a.x.size() * sizeof(T));
}

template <class T>
void check_persistent_bits() {
  const char* name = problem("raptor").available() ? "raptor" : "box6";
  const AssembledMatrix<T> A = cast_values<T>(problem(name).A);
  const std::vector<T> b(problem(name).b.begin(), problem(name).b.end());
  auto solve = [&](const LinearOperator<T>& op, const CgOptions& o, const char* mode) {
    EnvGuard guard("EB_CG_SR_REDUCTION", mode);
    SolvedT<T> r;
    r.x.assign(b.size(), T(0));
    r.result = cg_solve_from_host(op, b, r.x, o);
    return r;
  };
  const char* fp = sizeof(T) == 4 ? "fp32" : "fp64";
  for (int w : {2, 4, 8}) {
    SlicedBcsr<T> sliced = make_sliced_bcsr(to_bcsr(A));
    sliced.warps_per_slice = w;
    const auto dev = make_sliced_bcsr_operator(sliced, Location::Device);
    for (const char* per_sm : {"", "1"}) {
      EnvGuard cap("EB_CG_PERSISTENT_BLOCKS_PER_SM", per_sm);
      for (int check_every : {1, 7, 64}) {
        CgOptions o = fixed(75, Preconditioner::Jacobi, true);
        o.check_every = check_every;
        const SolvedT<T> next = solve(*dev, o, "next-kernel"), persistent = solve(*dev, o, "persistent");
        ASSERT_EQ(next.result.iterations, 75);
        EXPECT_TRUE(same_bits(next, persistent))
            << fp << " " << name << " w" << w << " blocks per SM '" << per_sm << "' check_every " << check_every
            << ": " << persistent.result.iterations << " iterations";
      }
      CgOptions o;
      o.single_reduction = true;
      o.tolerance = sizeof(T) == 4 ? 1e-4 : 1e-6;
      o.max_iterations = 20000;
      o.check_every = 16;
      const SolvedT<T> next = solve(*dev, o, "next-kernel"), persistent = solve(*dev, o, "persistent");
      ASSERT_TRUE(next.result.converged());
      std::printf("[ measured ] %s %s w%d blocks per SM '%s': tolerance %.0e in %d iterations (next-kernel), %d "
                  "(persistent)\n",
                  fp, name, w, per_sm, o.tolerance, next.result.iterations, persistent.result.iterations);
      EXPECT_TRUE(same_bits(next, persistent)) << fp << " " << name << " w" << w << " blocks per SM '" << per_sm << "'";
    }
  }
}

TEST(CgDevice, SingleReductionPersistentMatchesNextKernelBitForBit) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  check_persistent_bits<double>();
  check_persistent_bits<float>();
}

// Asking for the persistent kernel with an operator it cannot run (its product is the split device
// BCSR's) is refused, naming the operator; so is a malformed cap on its resident blocks.
TEST(CgDevice, PersistentModeRefusesWhatItCannotRun) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("box6");
  const CgOptions o = fixed(5, Preconditioner::Jacobi, true);
  {
    const auto csr = make_matrix_operator(P.A, Format::Csr, Location::Device);
    EnvGuard mode("EB_CG_SR_REDUCTION", "persistent");
    try {
      CgSolver<double> solver(*csr, o);
      FAIL() << "the persistent mode was accepted for " << csr->name();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(csr->name()), std::string::npos) << e.what();
    }
  }
  const auto bcsr = make_matrix_operator(P.A, Format::Bcsr, Location::Device);
  for (const char* bad : {"0", "four", "3x"}) {
    EnvGuard cap("EB_CG_PERSISTENT_BLOCKS_PER_SM", bad);
    try {
      CgSolver<double> solver(*bcsr, o);
      FAIL() << "EB_CG_PERSISTENT_BLOCKS_PER_SM=" << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("EB_CG_PERSISTENT_BLOCKS_PER_SM='") + bad + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

// The next-kernel single reduction's kernels launched as programmatic dependents (EB_CG_PDL=early
// or late) or normally: the same work in the same order, so the same bits, with and without the
// graph and across chunk boundaries (BCSR, whose product takes part; CSR, whose product does not).
TEST(CgDevice, ProgrammaticLaunchChangesNoBit) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("raptor").available() ? problem("raptor") : problem("box6");
  EnvGuard mode("EB_CG_SR_REDUCTION", "next-kernel");
  for (Format f : {Format::Bcsr, Format::Csr}) {
    const auto dev = make_matrix_operator(P.A, f, Location::Device);
    for (bool graph : {true, false})
      for (int check_every : {1, 7, 64}) {
        CgOptions o = fixed(75, Preconditioner::Jacobi, true);
        o.use_graph = graph;
        o.check_every = check_every;
        const char* modes[] = {"0", "early", "late"};
        Solved r[3];
        for (int k = 0; k < 3; ++k) {
          EnvGuard knob("EB_CG_PDL", modes[k]);
          r[k] = run(*dev, P.b, o);
        }
        ASSERT_EQ(r[0].result.iterations, 75);
        for (int k = 1; k < 3; ++k) {
          EXPECT_EQ(r[k].result.iterations, 75);
          EXPECT_EQ(r[k].result.residuals, r[0].result.residuals)
              << modes[k] << ", " << to_string(f) << " graph " << graph << " check_every " << check_every;
          EXPECT_EQ(0, std::memcmp(r[k].x.data(), r[0].x.data(), r[0].x.size() * sizeof(double)))
              << modes[k] << ", " << to_string(f) << " graph " << graph << " check_every " << check_every;
        }
      }
  }
}

// Keeping the operator's values in the L2 (CgOptions::l2_resident_operator) changes where bytes
// come from, never what is computed: the same bits as without, for each format that offers its
// values, the standard and the single-reduction iteration (and its persistent kernel), with and
// without the graph. While such a solver lives the process's persisting-L2 set-aside is raised
// (on a device that has one) and its destruction puts the old value back.
TEST(CgDevice, L2ResidencyChangesNoBit) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("raptor").available() ? problem("raptor") : problem("box6");
  int device = 0, max_persisting = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&max_persisting, cudaDevAttrMaxPersistingL2CacheSize, device), cudaSuccess);
  size_t before = 0;
  ASSERT_EQ(cudaDeviceGetLimit(&before, cudaLimitPersistingL2CacheSize), cudaSuccess);
  for (Format f : {Format::Bcsr, Format::Csr, Format::Ell}) {
    const auto dev = make_matrix_operator(P.A, f, Location::Device);
    ASSERT_NE(dev->hot_storage().data, nullptr) << to_string(f);
    for (const char* mode : {"", "next-kernel", "persistent"}) {
      if (std::string(mode) == "persistent" && f != Format::Bcsr) continue;
      EnvGuard reduction("EB_CG_SR_REDUCTION", mode);
      for (bool graph : {true, false}) {
        CgOptions o = fixed(60, Preconditioner::Jacobi, *mode != '\0');
        o.use_graph = graph;
        o.check_every = 16;
        const Solved plain = run(*dev, P.b, o);
        o.l2_resident_operator = true;
        Solved kept;
        {
          CgSolver<double> solver(*dev, o);
          size_t during = 0;
          ASSERT_EQ(cudaDeviceGetLimit(&during, cudaLimitPersistingL2CacheSize), cudaSuccess);
          // At least the values' bytes (or the device's maximum): more when it already was.
          const size_t wanted = std::min(dev->hot_storage().bytes, size_t(std::max(max_persisting, 0)));
          EXPECT_GE(during, wanted) << to_string(f) << " " << mode;
          if (graph && *mode == '\0')
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
  CgOptions o = fixed(20, Preconditioner::Jacobi, true);
  o.l2_resident_operator = true;
  {
    const LargeValuesOperator large(*dev, size_t(l2) + (size_t(1) << 20));
    CgSolver<double> solver(large, o);
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

// The engine's tuning knobs refuse values that name nothing, naming the knob and the value.
TEST(CgDevice, MalformedTuningKnobsAreRefused) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("box6");
  const auto dev = make_matrix_operator(P.A, Format::Bcsr, Location::Device);
  const CgOptions o = fixed(5, Preconditioner::Jacobi, true);
  for (const auto& [knob, bad] : {std::pair<const char*, const char*>{"EB_CG_PDL", "1"},
                                  {"EB_CG_ENTRIES_PER_THREAD", "0"},
                                  {"EB_CG_ENTRIES_PER_THREAD", "2x"},
                                  {"EB_CG_L2_WINDOW", "yes"}}) {
    EnvGuard guard(knob, bad);
    try {
      CgSolver<double> solver(*dev, o);
      ADD_FAILURE() << knob << "=" << bad << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(knob) + "='" + bad + "'"), std::string::npos) << e.what();
    }
  }
}

// A value of the knob that names no mode is refused when the solver is made, naming it.
TEST(CgDevice, UnknownSingleReductionModeIsRefused) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("box6");
  const auto dev = make_matrix_operator(P.A, Format::Bcsr, Location::Device);
  EnvGuard mode("EB_CG_SR_REDUCTION", "fastest");
  CgOptions o = fixed(5, Preconditioner::Jacobi, true);
  try {
    CgSolver<double> solver(*dev, o);
    FAIL() << "EB_CG_SR_REDUCTION=fastest was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("EB_CG_SR_REDUCTION='fastest'"), std::string::npos) << e.what();
  }
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
