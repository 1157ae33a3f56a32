// CG and Jacobi-PCG (solvers/linalg/cg.h) on clamped linear-elastic stiffness matrices of real tet
// meshes and of the benchmark's cantilever, against Eigen (fp64): ConjugateGradient with the same
// preconditioner (same stopping rule ||r|| <= tol ||b||, so the iteration counts must agree), a
// direct solve (SimplicialLDLT), and, with a fixed iteration count, Eigen's iterate after the same
// number of steps (the two implementations then compute the same Krylov iterate).
// Compiled for the host (test_linalg) and the device (test_linalg_gpu) subject.
//
// Tolerances. fp64 solves to tol = 1e-10 (relative recurrence residual). Checked: the true residual
// ||b - A x|| / ||b|| of the subject (computed in fp64) <= 1e-9 (10 tol: the recurrence and true
// residuals drift apart by ~eps kappa, ~1e-11 here); the error against LDLT and against Eigen's CG
// iterate, relative in the energy norm ||e||_A / ||x||_A, <= 1e-8 (for CG the energy error is
// bounded by sqrt(kappa) times the relative residual: sqrt(kappa) <= 100 for these matrices); the
// iteration counts within 0.2% + 5 of Eigen's (both stop on the same rule: rounding alone moves
// the count, by 1-2 on the cantilever and the raptor, by 1 (PCG, ~3,300 steps) and 2-5 (plain CG,
// ~6,600 steps, 2 or 1 threads) on the armadillo). fp32 solves to 1e-5 (the cantilever, kappa ~1e4):
// the true residual w.r.t. the fp32-rounded matrix <= 1e-4 (the recurrence drifts by ~eps32
// kappa), the energy error vs LDLT <= 1e-3, iteration counts within 25% + 5 of Eigen's fp64 count
// (rounding delays CG in fp32). Fixed count (30 steps): the iterate equals Eigen's to 1e-10 (fp64)
// or 1e-3 (fp32), and lowers the energy below that of x = 0. The single-reduction iteration
// (CgOptions::single_reduction) passes the same checks, with the wider fp64 tolerance-solve
// bounds stated in check_tolerance.
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCholesky>

#include <cmath>
#include <limits>
#include <tuple>

#include "meshes/errors.h"
#include "solvers/linalg/cg.h"
#include "tests/linalg/linalg_cases.h"

namespace eb::linalg::test {
namespace {

using EigenMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor>;

struct CgCase {
  std::string matrix;
  Format format;
  Precision precision;
  Preconditioner preconditioner;
  bool single_reduction = false;  // CgOptions::single_reduction On (else Off)
};

std::string label(const CgCase& c) {
  return case_label(c.matrix + "_" + to_string(c.format) + "_" +
                    (c.preconditioner == Preconditioner::Jacobi ? "pcg" : "cg") + (c.single_reduction ? "_sr" : "") +
                    "_" + to_string(c.precision));
}
std::string name_of(const ::testing::TestParamInfo<CgCase>& i) { return label(i.param); }
void PrintTo(const CgCase& c, std::ostream* os) { *os << label(c); }

Eigen::VectorXd as_eigen(const std::vector<double>& v) { return Eigen::Map<const Eigen::VectorXd>(v.data(), Eigen::Index(v.size())); }

// ||u - v||_A / ||v||_A.
double energy_error(const EigenMatrix& A, const Eigen::VectorXd& u, const Eigen::VectorXd& v) {
  const Eigen::VectorXd e = u - v;
  return std::sqrt(e.dot(A * e) / v.dot(A * v));
}

// Eigen's CG with the same preconditioner; returns its iterate and iteration count.
// One thread: Eigen's OpenMP sparse product pays a parallel region per CG step, which on a
// loaded 2-core CI machine costs more than the whole product.
std::pair<Eigen::VectorXd, int> eigen_cg(const EigenMatrix& A, const Eigen::VectorXd& b, Preconditioner pre,
                                         double tol, int max_iterations) {
  Eigen::setNbThreads(1);
  auto run = [&](auto& solver) {
    solver.setTolerance(tol);
    solver.setMaxIterations(max_iterations);
    solver.compute(A);
    Eigen::VectorXd x = solver.solveWithGuess(b, Eigen::VectorXd::Zero(b.size()));
    return std::make_pair(x, int(solver.iterations()));
  };
  if (pre == Preconditioner::Jacobi) {
    Eigen::ConjugateGradient<EigenMatrix, Eigen::Lower | Eigen::Upper, Eigen::DiagonalPreconditioner<double>> s;
    return run(s);
  }
  Eigen::ConjugateGradient<EigenMatrix, Eigen::Lower | Eigen::Upper, Eigen::IdentityPreconditioner> s;
  return run(s);
}

class Cg : public ::testing::TestWithParam<CgCase> {};
class CgFixed : public ::testing::TestWithParam<CgCase> {};

template <class T>
void check_tolerance(const CgCase& c) {
  const NamedProblem& P = problem(c.matrix);
  const bool fp64 = c.precision == Precision::Fp64;
  const AssembledMatrix<T> A = cast_values<T>(P.A);
  const EigenMatrix E = to_eigen(cast_values<double>(A));  // the subject's own (rounded) matrix
  const std::vector<T> b = cast_vector<T>(P.b);
  const Eigen::VectorXd be = as_eigen(cast_vector<double>(b));
  const auto op = make_matrix_operator(A, c.format, kSubject);

  CgOptions o;
  o.preconditioner = c.preconditioner;
  o.single_reduction = c.single_reduction ? SingleReduction::On : SingleReduction::Off;
  o.tolerance = fp64 ? 1e-10 : 1e-5;
  o.max_iterations = 20000;
  std::vector<T> x(b.size(), T(0));
  const CgResult res = cg_solve_from_host(*op, b, x, o);
  ASSERT_EQ(res.status, CgStatus::Converged) << to_string(res.status) << " after " << res.iterations;
  ASSERT_EQ(res.residuals.size(), size_t(res.iterations) + 1);
  EXPECT_LE(res.final_residual(), o.tolerance * res.rhs_norm);
  EXPECT_NEAR(res.rhs_norm, be.norm(), 1e-12 * be.norm());

  const Eigen::VectorXd xe = as_eigen(cast_vector<double>(x));
  const double true_residual = (be - E * xe).norm() / be.norm();
  const Eigen::VectorXd x_direct = Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>>(E).solve(be);
  const auto [x_eigen, eigen_iterations] = eigen_cg(E, be, c.preconditioner, fp64 ? o.tolerance : 1e-5, 20000);
  const double vs_direct = energy_error(E, xe, x_direct);
  const double vs_eigen_cg = energy_error(E, xe, x_eigen);
  std::printf("[ measured ] %s: %d iterations (Eigen CG %d), true residual %.3e, energy error vs LDLT %.3e, vs Eigen CG %.3e\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(), res.iterations, eigen_iterations,
              true_residual, vs_direct, vs_eigen_cg);
  // The single reduction's recurrence for A p adds rounding of its own: on the raptor (kappa ~1e8)
  // its true residual ends 1.2x standard CG's (1.08e-9 against 9.1e-10) after 1.4% more iterations
  // (3,811 against 3,758; Eigen 3,759). A build without VTK, whose own .vtu reader gives the raptor,
  // needs 3,841 (2.2% more than Eigen; true residual 1.02e-9): so its fp64 bounds are 2e-9 and 4% + 5.
  const bool sr = c.single_reduction;
  EXPECT_LE(true_residual, fp64 ? (sr ? 2e-9 : 1e-9) : 1e-4);
  EXPECT_LE(vs_direct, fp64 ? 1e-8 : 1e-3);
  EXPECT_LE(vs_eigen_cg, fp64 ? 1e-8 : 1e-3);
  const double slack = fp64 ? (sr ? 0.04 : 0.002) * eigen_iterations + 5 : 0.25 * eigen_iterations + 5;
  EXPECT_LE(std::abs(res.iterations - eigen_iterations), slack);
}

// A fixed count (tolerance 0): the same Krylov iterate as Eigen's after the same number of steps.
template <class T>
void check_fixed_count(const CgCase& c) {
  const NamedProblem& P = problem(c.matrix);
  const bool fp64 = c.precision == Precision::Fp64;
  const AssembledMatrix<T> A = cast_values<T>(P.A);
  const EigenMatrix E = to_eigen(cast_values<double>(A));
  const std::vector<T> b = cast_vector<T>(P.b);
  const auto op = make_matrix_operator(A, c.format, kSubject);
  CgOptions o;
  o.preconditioner = c.preconditioner;
  o.single_reduction = c.single_reduction ? SingleReduction::On : SingleReduction::Off;
  o.tolerance = 0;
  o.max_iterations = 30;
  o.check_every = 7;  // not a divisor of 30: the last chunk runs past the limit as no-ops
  std::vector<T> x(b.size(), T(0));
  const CgResult res = cg_solve_from_host(*op, b, x, o);
  EXPECT_EQ(res.status, CgStatus::IterationLimit);
  ASSERT_EQ(res.iterations, 30);
  ASSERT_EQ(res.residuals.size(), 31u);
  const Eigen::VectorXd be = as_eigen(cast_vector<double>(b));
  const auto [x_eigen, it] = eigen_cg(E, be, c.preconditioner, 0.0, 30);
  ASSERT_EQ(it, 30);
  const double diff = (as_eigen(cast_vector<double>(x)) - x_eigen).norm() / x_eigen.norm();
  const double r_eigen = (be - E * x_eigen).norm();
  // Eigen's residual is the true one of its iterate, ours the recurrence: they agree to rounding.
  const double r_diff = std::abs(res.final_residual() - r_eigen) / r_eigen;
  std::printf("[ measured ] %s: iterate vs Eigen %.3e, final residual vs Eigen %.3e\n",
              ::testing::UnitTest::GetInstance()->current_test_info()->name(), diff, r_diff);
  EXPECT_LE(diff, fp64 ? 1e-10 : 1e-3);
  EXPECT_LE(r_diff, fp64 ? 1e-6 : 1e-1);
  // CG minimizes the energy 1/2 x.Ax - b.x over the Krylov space: below its value 0 at x = 0.
  const Eigen::VectorXd xe = as_eigen(cast_vector<double>(x));
  EXPECT_LT(0.5 * xe.dot(E * xe) - be.dot(xe), 0.0);
}

TEST_P(Cg, ReachesToleranceAndAgreesWithEigen) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  EB_LINALG_SKIP_WITHOUT_MATRIX(GetParam().matrix);
  with_precision(GetParam().precision, [&](auto t) { check_tolerance<decltype(t)>(GetParam()); });
}

TEST_P(CgFixed, MatchesEigenIterate) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  EB_LINALG_SKIP_WITHOUT_MATRIX(GetParam().matrix);
  with_precision(GetParam().precision, [&](auto t) { check_fixed_count<decltype(t)>(GetParam()); });
}

// Solves to the tolerance: the cantilever in every variant; the raptor (a real mesh, clamped at
// its feet: ~3,700 PCG iterations, kappa ~1e8) in fp64 PCG only. In fp32 its recurrence residual
// does reach 1e-5, but the true residual stalls near 1 (eps32 kappa >> 1): no fp32 tolerance
// solve is asserted there. The armadillo (40K DOFs, fixed base) in fp64 BCSR with plain CG and
// with Jacobi-PCG (~6,600 and ~3,300 iterations): the slowest cases of the suite (9 s and 5 s of
// CPU time on one thread, Eigen's CG and LDLT included; 41 s and 31 s under ctest -j2 on 2 cores
// at a load of 8), run by ctest as linalg_cg_armadillo_{cg,pcg} with the label `long`
// (tests/linalg/CMakeLists.txt), not by discovery.
std::vector<CgCase> tolerance_cases() {
  std::vector<CgCase> out;
  for (Precision p : {Precision::Fp32, Precision::Fp64})
    for (Preconditioner pre : {Preconditioner::None, Preconditioner::Jacobi}) out.push_back({"box6", Format::Csr, p, pre});
  out.push_back({"box5", Format::Dhyb, Precision::Fp64, Preconditioner::Jacobi});
  out.push_back({"raptor", Format::Bcsr, Precision::Fp64, Preconditioner::Jacobi});
  for (Preconditioner pre : {Preconditioner::None, Preconditioner::Jacobi})
    out.push_back({"armadillo", Format::Bcsr, Precision::Fp64, pre});
  // Single reduction: CSR (the device's product and dot in two kernels) and BCSR (fused into one).
  for (Precision p : {Precision::Fp32, Precision::Fp64})
    for (Format f : {Format::Csr, Format::Bcsr})
      for (Preconditioner pre : {Preconditioner::None, Preconditioner::Jacobi}) out.push_back({"box6", f, p, pre, true});
  out.push_back({"raptor", Format::Bcsr, Precision::Fp64, Preconditioner::Jacobi, true});
  return out;
}
std::vector<CgCase> fixed_count_cases() {
  std::vector<CgCase> out;
  for (Precision p : {Precision::Fp32, Precision::Fp64})
    for (Preconditioner pre : {Preconditioner::None, Preconditioner::Jacobi}) {
      out.push_back({"box6", Format::Csr, p, pre});
      out.push_back({"raptor", Format::Bcsr, p, pre});
    }
  out.push_back({"armadillo", Format::Bcsr, Precision::Fp64, Preconditioner::Jacobi});
  out.push_back({"box5", Format::Coo, Precision::Fp64, Preconditioner::Jacobi});
  for (Precision p : {Precision::Fp32, Precision::Fp64})
    for (Preconditioner pre : {Preconditioner::None, Preconditioner::Jacobi}) {
      out.push_back({"box6", Format::Csr, p, pre, true});
      out.push_back({"raptor", Format::Bcsr, p, pre, true});
    }
  return out;
}
INSTANTIATE_TEST_SUITE_P(Solve, Cg, ::testing::ValuesIn(tolerance_cases()), name_of);
INSTANTIATE_TEST_SUITE_P(Solve, CgFixed, ::testing::ValuesIn(fixed_count_cases()), name_of);

// Stopping and failure paths, per precision and iteration (standard, single reduction).
class CgEdge : public ::testing::TestWithParam<std::tuple<Precision, bool>> {};

template <class T>
void check_edges(bool single_reduction) {
  const NamedProblem& P = problem("box6");
  const AssembledMatrix<T> A = cast_values<T>(P.A);
  const auto op = make_matrix_operator(A, Format::Bcsr, kSubject);
  const size_t n = size_t(A.rows);
  CgOptions o;
  o.tolerance = 1e-4;
  o.max_iterations = 500;
  o.single_reduction = single_reduction ? SingleReduction::On : SingleReduction::Off;
  {  // b = 0 from x = 0: nothing to do
    std::vector<T> b(n, T(0)), x(n, T(0));
    const CgResult r = cg_solve_from_host(*op, b, x, o);
    EXPECT_EQ(r.status, CgStatus::Converged);
    EXPECT_EQ(r.iterations, 0);
    EXPECT_EQ(x, std::vector<T>(n, T(0)));
  }
  {  // no iterations allowed
    CgOptions z = o;
    z.max_iterations = 0;
    std::vector<T> b = cast_vector<T>(P.b), x(n, T(0));
    const CgResult r = cg_solve_from_host(*op, b, x, z);
    EXPECT_EQ(r.status, CgStatus::IterationLimit);
    EXPECT_EQ(r.iterations, 0);
    EXPECT_EQ(r.residuals.size(), 1u);
  }
  {  // the initial guess is the solution of its own right-hand side: converged at once
    std::vector<T> x0 = cast_vector<T>(random_vector(n, 4));
    std::vector<T> b = apply_from_host(*op, x0), x = x0;
    const CgResult r = cg_solve_from_host(*op, b, x, o);
    EXPECT_EQ(r.status, CgStatus::Converged);
    EXPECT_LE(r.iterations, 1);
  }
  {  // a NaN in b
    std::vector<T> b = cast_vector<T>(P.b), x(n, T(0));
    b[n / 2] = std::numeric_limits<T>::quiet_NaN();
    const CgResult r = cg_solve_from_host(*op, b, x, o);
    EXPECT_EQ(r.status, CgStatus::NonFinite);
  }
  // -A: plain CG breaks down at the first p.Ap < 0; Jacobi refuses the negative diagonal.
  AssembledMatrix<T> neg = A;
  for (T& v : neg.val) v = -v;
  const auto nop = make_matrix_operator(neg, Format::Bcsr, kSubject);
  {
    CgOptions plain = o;
    plain.preconditioner = Preconditioner::None;
    std::vector<T> b = cast_vector<T>(P.b), x(n, T(0));
    const CgResult r = cg_solve_from_host(*nop, b, x, plain);
    EXPECT_EQ(r.status, CgStatus::Breakdown);
    EXPECT_EQ(r.iterations, 0);
  }
  try {
    std::vector<T> b = cast_vector<T>(P.b), x(n, T(0));
    cg_solve_from_host(*nop, b, x, o);
    ADD_FAILURE() << "Jacobi accepted a negative diagonal";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("row 0"), std::string::npos) << e.what();
  }
  CgOptions bad = o;
  bad.check_every = 0;
  EXPECT_THROW(CgSolver<T>(*op, bad), InputError);
  bad = o;
  bad.tolerance = -1;
  EXPECT_THROW(CgSolver<T>(*op, bad), InputError);
}

TEST_P(CgEdge, StopsAndFailsCleanly) {
  EB_LINALG_SKIP_WITHOUT_DEVICE();
  const auto [precision, single_reduction] = GetParam();
  with_precision(precision, [&](auto t) { check_edges<decltype(t)>(single_reduction); });
}
INSTANTIATE_TEST_SUITE_P(Precisions, CgEdge,
                         ::testing::Combine(::testing::Values(Precision::Fp32, Precision::Fp64), ::testing::Bool()),
                         [](const auto& i) {
                           return to_string(std::get<0>(i.param)) + (std::get<1>(i.param) ? "_sr" : "");
                         });

}  // namespace
}  // namespace eb::linalg::test
