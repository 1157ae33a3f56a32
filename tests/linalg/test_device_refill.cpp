// Device operators refilled in place (GPU only, label gpu): an assembly writes new values through
// LinearOperator::values() and the operator's diagonal() reads them (no stale copy taken at
// construction); and every format's device product is deterministic, the COO family included
// (its rows span several 32-entry chunks here, whose pieces the carry kernel adds in chunk order).
#include <gtest/gtest.h>
#include <cuda_runtime.h>

#include <cmath>

#include "solvers/linalg/device_formats.cuh"
#include "solvers/linalg/linear_operator.h"
#include "tests/linalg/linalg_test_util.h"

namespace eb::linalg::test {
namespace {

#define EB_SKIP_WITHOUT_DEVICE()                                              \
  do {                                                                        \
    int n = 0;                                                                \
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA device"; \
  } while (0)

class DeviceRefill : public ::testing::TestWithParam<Format> {};

TEST_P(DeviceRefill, DiagonalReadsTheValuesWrittenInPlace) {
  EB_SKIP_WITHOUT_DEVICE();
  const AssembledMatrix<double> a = random_spd_blocks(200, 12, 5);
  auto op = make_matrix_operator(a, GetParam(), Location::Device);
  const std::vector<double> d0 = diagonal_from_host(*op);
  std::vector<double> host(static_cast<size_t>(a.rows));
  diagonal(make_format(a, GetParam()), host.data());
  EXPECT_EQ(d0, host);
  // Double every value on the device, as an assembly would rewrite them.
  const ValueSegments<double> v = op->values();
  ASSERT_GT(v.count, 0);
  for (int k = 0; k < v.count; ++k) {
    const int64_t n = v.end[k] - (k ? v.end[k - 1] : 0);
    std::vector<double> h(static_cast<size_t>(n));
    ASSERT_EQ(cudaMemcpy(h.data(), v.data[k], h.size() * sizeof(double), cudaMemcpyDeviceToHost), cudaSuccess);
    for (double& x : h) x *= 2;
    ASSERT_EQ(cudaMemcpy(v.data[k], h.data(), h.size() * sizeof(double), cudaMemcpyHostToDevice), cudaSuccess);
  }
  const std::vector<double> d1 = diagonal_from_host(*op);
  for (size_t i = 0; i < d1.size(); ++i) EXPECT_EQ(d1[i], 2 * host[i]) << i;
}

TEST_P(DeviceRefill, ProductIsDeterministicAndMatchesTheHost) {
  EB_SKIP_WITHOUT_DEVICE();
  const AssembledMatrix<double> a = random_spd_blocks(400, 24, 6);  // rows of ~75 entries: 3+ chunks
  auto op = make_matrix_operator(a, GetParam(), Location::Device);
  auto host = make_matrix_operator(a, GetParam(), Location::Host);
  const std::vector<double> x = random_vector(size_t(a.rows), 7);
  const std::vector<double> y1 = apply_from_host(*op, x), y2 = apply_from_host(*op, x), yh = apply_from_host(*host, x);
  EXPECT_EQ(y1, y2);
  for (size_t i = 0; i < yh.size(); ++i) EXPECT_NEAR(y1[i], yh[i], 1e-12 * (1 + std::abs(yh[i]))) << i;
}

INSTANTIATE_TEST_SUITE_P(Formats, DeviceRefill,
                         ::testing::Values(Format::Coo, Format::Csr, Format::Ell, Format::Hyb, Format::Dcoo,
                                           Format::Dcsr, Format::Dhyb),
                         [](const auto& i) { return to_string(i.param); });

}  // namespace
}  // namespace eb::linalg::test
