// The cuSPARSE-backed CSR operator (solvers/linalg/cusparse_operator.h) against linalg's CSR SpMV
// on the host, on random vectors, in fp64 and fp32, and linalg's Jacobi-PCG through it reaching its
// tolerance. Label gpu; skipped without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "solvers/common/cuda_info.h"
#include "solvers/linalg/cg.h"
#include "solvers/linalg/cusparse_operator.h"
#include "solvers/linalg/spmv_cpu.h"

namespace eb::linalg {
namespace {

// A random SPD matrix with a 3D 7-point pattern plus random couplings (irregular row lengths).
template <class T>
AssembledMatrix<T> random_spd(int m, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.1, 1.0);
  std::uniform_int_distribution<int> any(0, m * m * m - 1);
  const int n = m * m * m;
  std::vector<Triplet<T>> t;
  std::vector<double> rowsum(std::size_t(n), 0.0);
  auto couple = [&](int i, int j) {
    if (i == j) return;
    const double v = -u(rng);
    t.push_back({i, j, T(v)});
    t.push_back({j, i, T(v)});
    rowsum[std::size_t(i)] -= v;
    rowsum[std::size_t(j)] -= v;
  };
  for (int z = 0; z < m; ++z)
    for (int y = 0; y < m; ++y)
      for (int x = 0; x < m; ++x) {
        const int i = (z * m + y) * m + x;
        if (x + 1 < m) couple(i, i + 1);
        if (y + 1 < m) couple(i, i + m);
        if (z + 1 < m) couple(i, i + m * m);
        if (x % 5 == 0) couple(i, any(rng));
      }
  for (int i = 0; i < n; ++i) t.push_back({i, i, T(rowsum[std::size_t(i)] + 0.5)});
  return assemble_from_triplets(n, n, t);
}

template <class T>
void check_products(unsigned seed) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const CsrMatrix<T> a = to_csr(random_spd<T>(23, seed));
  const auto op = make_cusparse_csr_operator(a);
  ASSERT_EQ(op->rows(), a.rows);
  EXPECT_EQ(op->location(), Location::Device);
  std::mt19937 rng(seed + 1);
  std::normal_distribution<double> g;
  std::vector<T> x(std::size_t(a.rows)), ref(x.size());
  const double eps = std::is_same_v<T, float> ? 1e-5 : 1e-13;
  for (int trial = 0; trial < 4; ++trial) {
    for (auto& v : x) v = T(g(rng));
    spmv(a, x.data(), ref.data());
    const std::vector<T> y = apply_from_host(*op, x);
    double d = 0, n = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      d = std::max(d, std::abs(double(y[i]) - double(ref[i])));
      n = std::max(n, std::abs(double(ref[i])));
    }
    EXPECT_LE(d, eps * n) << "trial " << trial;
  }
  std::vector<T> dref(x.size());
  diagonal(a, dref.data());
  EXPECT_EQ(diagonal_from_host(*op), dref);
}

TEST(CusparseOperator, EqualsCsrSpmvFp64) { check_products<double>(11); }
TEST(CusparseOperator, EqualsCsrSpmvFp32) { check_products<float>(12); }

// With and without CUDA graphs: CgSolver captures its iterations, the library call included.
class CusparseCg : public ::testing::TestWithParam<bool> {};

TEST_P(CusparseCg, JacobiPcgReachesItsTolerance) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const AssembledMatrix<double> a = random_spd<double>(20, 5);
  const CsrMatrix<double> csr = to_csr(a);
  const auto op = make_cusparse_csr_operator(csr);
  std::vector<double> b(std::size_t(a.rows)), x(b.size(), 0.0), ax(b.size());
  std::mt19937 rng(9);
  std::normal_distribution<double> g;
  for (auto& v : b) v = g(rng);
  CgOptions o;
  o.tolerance = 1e-8;
  o.max_iterations = 2000;
  o.use_graph = GetParam();
  const CgResult r = cg_solve_from_host(*op, b, x, o);
  EXPECT_TRUE(r.converged());
  spmv(csr, x.data(), ax.data());
  double rr = 0, bb = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    rr += (b[i] - ax[i]) * (b[i] - ax[i]);
    bb += b[i] * b[i];
  }
  EXPECT_LE(std::sqrt(rr / bb), 1e-7);
}

INSTANTIATE_TEST_SUITE_P(Graph, CusparseCg, ::testing::Bool());

}  // namespace
}  // namespace eb::linalg
