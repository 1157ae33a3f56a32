// The CUDA CG engine against the host engine, step by step (GPU only, label gpu). Both run the
// iteration of cg_algorithm.h; on the same problem in fp64 their residual histories must agree per
// iteration and their iterates at the end (only summation orders differ: ~1e-15 per step, grown
// by the iteration to ~1e-12 over 40 steps; tolerance 1e-9). With every format's device operator
// captured in the graph. And the device engine's own knobs change nothing: graph or direct
// launches and any check_every give bit-identical results (the reductions are deterministic).
#include <cstring>

#include "solvers/linalg/cg.h"
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

CgOptions fixed(int iterations, Preconditioner pre) {
  CgOptions o;
  o.tolerance = 0;
  o.max_iterations = iterations;
  o.preconditioner = pre;
  return o;
}

class CgDeviceVsHost : public ::testing::TestWithParam<Format> {};

TEST_P(CgDeviceVsHost, SameHistoryAndIterate) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("box6");
  for (Preconditioner pre : {Preconditioner::None, Preconditioner::Jacobi}) {
    const auto host = make_matrix_operator(P.A, GetParam(), Location::Host);
    const auto dev = make_matrix_operator(P.A, GetParam(), Location::Device);
    const Solved h = run(*host, P.b, fixed(40, pre)), d = run(*dev, P.b, fixed(40, pre));
    ASSERT_EQ(h.result.iterations, 40);
    ASSERT_EQ(d.result.iterations, 40);
    EXPECT_EQ(d.result.status, h.result.status);
    double worst = 0;
    for (size_t k = 0; k < h.result.residuals.size(); ++k)
      worst = std::max(worst, std::abs(d.result.residuals[k] - h.result.residuals[k]) / h.result.residuals[k]);
    std::printf("[ measured ] %s %s: history %.3e, iterate %.3e\n", to_string(GetParam()).c_str(),
                pre == Preconditioner::Jacobi ? "pcg" : "cg", worst, relative_error(d.x, h.x));
    EXPECT_LE(worst, 1e-9);
    EXPECT_LE(relative_error(d.x, h.x), 1e-9);
  }
}
INSTANTIATE_TEST_SUITE_P(Formats, CgDeviceVsHost, ::testing::ValuesIn(all_formats()),
                         [](const auto& i) { return to_string(i.param); });

TEST(CgDevice, LaunchModesAreBitIdentical) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const NamedProblem& P = problem("raptor").available() ? problem("raptor") : problem("box6");
  const auto dev = make_matrix_operator(P.A, Format::Bcsr, Location::Device);
  CgOptions base;
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
