// The CUDA CG engine against the host engine, step by step (GPU only, label gpu). Both run the
// iteration of cg_algorithm.h; on the same problem in fp64 their residual histories must agree per
// iteration and their iterates at the end (only summation orders differ: ~1e-15 per step, grown
// by the iteration to ~1e-12 over 40 steps; tolerance 1e-9). With every format's device operator
// captured in the graph. And the device engine's own knobs change nothing: graph or direct
// launches and any check_every give bit-identical results (the reductions are deterministic).
#include <cstring>

#include "solvers/linalg/cg.h"
#include "solvers/linalg/device_formats.cuh"
#include "tests/linalg/linalg_cases.h"

namespace eb::linalg::test {
namespace {

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
  for (bool sr : {false, true})
  for (Preconditioner pre : {Preconditioner::None, Preconditioner::Jacobi}) {
    const auto host = make_matrix_operator(P.A, GetParam(), Location::Host);
    const auto dev = make_matrix_operator(P.A, GetParam(), Location::Device);
    const Solved h = run(*host, P.b, fixed(40, pre, sr)), d = run(*dev, P.b, fixed(40, pre, sr));
    ASSERT_EQ(h.result.iterations, 40);
    ASSERT_EQ(d.result.iterations, 40);
    EXPECT_EQ(d.result.status, h.result.status);
    double worst = 0;
    for (size_t k = 0; k < h.result.residuals.size(); ++k)
      worst = std::max(worst, std::abs(d.result.residuals[k] - h.result.residuals[k]) / h.result.residuals[k]);
    std::printf("[ measured ] %s %s%s: history %.3e, iterate %.3e\n", to_string(GetParam()).c_str(),
                pre == Preconditioner::Jacobi ? "pcg" : "cg", sr ? " single reduction" : "", worst,
                relative_error(d.x, h.x));
    EXPECT_LE(worst, 1e-9);
    EXPECT_LE(relative_error(d.x, h.x), 1e-9);
  }
}
INSTANTIATE_TEST_SUITE_P(Formats, CgDeviceVsHost, ::testing::ValuesIn(all_formats()),
                         [](const auto& i) { return to_string(i.param); });

class CgDeviceModes : public ::testing::TestWithParam<bool> {};  // single reduction

TEST_P(CgDeviceModes, LaunchModesAreBitIdentical) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("raptor").available() ? problem("raptor") : problem("box6");
  const auto dev = make_matrix_operator(P.A, Format::Bcsr, Location::Device);
  CgOptions base;
  base.single_reduction = GetParam();
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

INSTANTIATE_TEST_SUITE_P(Iterations, CgDeviceModes, ::testing::Bool(),
                         [](const auto& i) { return std::string(i.param ? "single_reduction" : "standard"); });

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
    const Solved single = run(*dev, P.b, o);
    ASSERT_TRUE(standard.result.converged());
    ASSERT_TRUE(single.result.converged()) << to_string(single.result.status);
    std::printf("[ measured ] %s: standard %d iterations, single reduction %d, iterates differ by %.3e\n",
                to_string(f).c_str(), standard.result.iterations, single.result.iterations,
                relative_error(single.x, standard.x));
    EXPECT_LE(std::abs(single.result.iterations - standard.result.iterations), 0.02 * standard.result.iterations + 5);
    EXPECT_LE(relative_error(single.x, standard.x), 1e-5);
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
