// SpMV and diagonal of every format, through the operator interface, in fp32 and fp64.
// Host subject: against Eigen's sparse product in fp64 of the same (rounded) inputs. Device
// subject: against the host backend of the same format and precision.
//
// Tolerances (normwise relative, ||y - y_ref||_2 / ||y_ref||_2):
//  - fp64: 1e-12. Each entry is a sum of <= ~100 products (the planted long row: ~300) of rounded
//    inputs; only the summation order differs from the reference (FMA contraction on the device),
//    ~1e-15 of |A||x| per entry. The stiffness products cancel (|A||x| / |Ax| is ~10-100 for
//    random x), so observed errors are 1e-16..1e-14: two orders of margin.
//  - fp32: 1e-5. The inputs are the reference's own (rounded to fp32 first), so again only fp32
//    rounding of the sums counts: ~6e-8 x cancellation x sqrt(terms), observed ~1e-7..1e-6.
// The diagonal is a copy of stored values: exact.
#include <cmath>
#include <cstring>
#include <numeric>

#include "tests/linalg/linalg_cases.h"

namespace eb::linalg::test {
namespace {

class Spmv : public ::testing::TestWithParam<FormatCase> {};

template <class T>
void check_spmv(const FormatCase& c) {
  const AssembledMatrix<T> A = cast_values<T>(problem(c.matrix).A);
  const std::vector<T> x = cast_vector<T>(random_vector(size_t(A.rows), 7));
  const auto op = make_matrix_operator(A, c.format, kSubject);
  ASSERT_EQ(op->rows(), A.rows);
  const std::vector<T> y = apply_from_host(*op, x);
  const std::vector<T> d = diagonal_from_host(*op);

  std::vector<double> y_ref, d_ref;
  if (kSubject == Location::Device) {
    const auto host = make_matrix_operator(A, c.format, Location::Host);
    y_ref = cast_vector<double>(apply_from_host(*host, x));
    d_ref = cast_vector<double>(diagonal_from_host(*host));
  } else {
    const auto E = to_eigen(cast_values<double>(A));
    const Eigen::VectorXd xe = Eigen::Map<const Eigen::VectorXd>(cast_vector<double>(x).data(), A.rows);
    const Eigen::VectorXd ye = E * xe;
    y_ref.assign(ye.data(), ye.data() + ye.size());
    const Eigen::VectorXd de = E.diagonal();
    d_ref.assign(de.data(), de.data() + de.size());
  }
  const double norm = std::sqrt(std::inner_product(y_ref.begin(), y_ref.end(), y_ref.begin(), 0.0));
  ASSERT_GT(norm, 0.0) << "the reference product is zero: the comparison would be empty";
  const double err = relative_error(y, y_ref);
  const double tol = c.precision == Precision::Fp64 ? 1e-12 : 1e-5;
  EXPECT_LE(err, tol) << op->name() << " on " << c.matrix;
  ::testing::Test::RecordProperty("relative_error", std::to_string(err));
  std::printf("[ measured ] %s %s %s: relative error %.3e\n", c.matrix.c_str(), to_string(c.format).c_str(),
              to_string(c.precision).c_str(), err);
  for (size_t i = 0; i < d.size(); ++i) ASSERT_EQ(double(d[i]), d_ref[i]) << "diagonal entry " << i;
}

TEST_P(Spmv, MatchesReference) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  EB_LINALG_SKIP_WITHOUT_MATRIX(GetParam().matrix);
  with_precision(GetParam().precision, [&](auto t) { check_spmv<decltype(t)>(GetParam()); });
}

INSTANTIATE_TEST_SUITE_P(Formats, Spmv,
                         ::testing::ValuesIn(format_cases({"armadillo", "hand", "raptor", "box5", "random", "planted"})),
                         format_case_name);

// The sliced BCSR layout with each slice's steps split among W = 1, 2, 4, 8 warps (what the device
// picks for small matrices). Host subject: the CPU reference of each split against Eigen.
// Device subject: the kernel of each split against the CPU reference of the same split, and two
// products of the same split bit-identical (the partial sums are added in a fixed order). The
// planted matrix has a row of every block (steps far beyond W) and a diagonal-only row (fewer
// steps than W: warps with nothing to add); box5's last slice is partial. Tolerances as above.
struct SplitCase {
  std::string matrix;
  int warps;
  Precision precision;
};
class SlicedSplit : public ::testing::TestWithParam<SplitCase> {};

template <class T>
void check_split(const SplitCase& c) {
  const AssembledMatrix<T> A = cast_values<T>(problem(c.matrix).A);
  const std::vector<T> x = cast_vector<T>(random_vector(size_t(A.rows), 7));
  SlicedBcsr<T> s = make_sliced_bcsr(to_bcsr(A));
  s.warps_per_slice = c.warps;
  const auto op = make_sliced_bcsr_operator(s, kSubject);
  const std::vector<T> y = apply_from_host(*op, x);
  std::vector<double> y_ref;
  if (kSubject == Location::Device) {
    y_ref = cast_vector<double>(apply_from_host(*make_sliced_bcsr_operator(s, Location::Host), x));
    const std::vector<T> again = apply_from_host(*op, x);
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_EQ(std::memcmp(&y[i], &again[i], sizeof(T)), 0) << "entry " << i << " differs between two products";
  } else {
    const auto E = to_eigen(cast_values<double>(A));
    const Eigen::VectorXd ye = E * Eigen::Map<const Eigen::VectorXd>(cast_vector<double>(x).data(), A.rows);
    y_ref.assign(ye.data(), ye.data() + ye.size());
  }
  const double err = relative_error(y, y_ref);
  EXPECT_LE(err, c.precision == Precision::Fp64 ? 1e-12 : 1e-5) << op->name() << " on " << c.matrix;
  std::printf("[ measured ] %s %d warps per slice %s: relative error %.3e (%s)\n", c.matrix.c_str(), c.warps,
              to_string(c.precision).c_str(), err, op->name().c_str());
}

TEST_P(SlicedSplit, MatchesReference) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  EB_LINALG_SKIP_WITHOUT_MATRIX(GetParam().matrix);
  with_precision(GetParam().precision, [&](auto t) { check_split<decltype(t)>(GetParam()); });
}

std::vector<SplitCase> split_cases() {
  std::vector<SplitCase> out;
  for (const char* m : {"raptor", "box5", "planted"})
    for (int w : {1, 2, 4, 8})
      for (Precision p : {Precision::Fp32, Precision::Fp64}) out.push_back({m, w, p});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Warps, SlicedSplit, ::testing::ValuesIn(split_cases()),
                         [](const ::testing::TestParamInfo<SplitCase>& i) {
                           return case_label(i.param.matrix + "_w" + std::to_string(i.param.warps) + "_" +
                                             to_string(i.param.precision));
                         });

}  // namespace
}  // namespace eb::linalg::test
