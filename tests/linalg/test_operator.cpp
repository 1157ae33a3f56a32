// A matrix-free operator behind the same interface as the formats: the element-by-element product
// y = sum_e K_e x_e of a clamped tet stiffness (HostFunctionOperator), against the assembled
// matrix. The solver sees no difference: CG on either gives the same iterates up to rounding.
// Host only.
#include "meshes/errors.h"
#include "solvers/linalg/cg.h"
#include "tests/linalg/linalg_cases.h"

namespace eb::linalg::test {
namespace {

struct Clamped {
  mesh::TetMesh mesh;
  std::vector<Index> base;
  AssembledMatrix<double> K;  // assembled and clamped
};

Clamped clamped_box() {
  Clamped c;
  c.mesh = box_cantilever(12, 6);
  c.base = base_nodes(c.mesh, 0, 0.05);
  BcsrMatrix<double> K = tet_stiffness(c.mesh);
  clamp_nodes(K, c.base);
  c.K = to_assembled(K);
  return c;
}

// The clamped operator without a matrix: free DOFs see K restricted to the free DOFs, clamped DOFs
// the scaled identity (the mean unclamped diagonal, as clamp_nodes puts it).
std::unique_ptr<LinearOperator<double>> matrix_free(const Clamped& c) {
  const size_t n = 3 * c.mesh.nodes.size();
  auto Ke = std::make_shared<std::vector<std::array<double, 144>>>();
  for (size_t e = 0; e < c.mesh.elems.size(); ++e) Ke->push_back(tet_element_stiffness(c.mesh, e));
  auto fixed = std::make_shared<std::vector<char>>(n, 0);
  for (Index v : c.base)
    for (int i = 0; i < 3; ++i) (*fixed)[3 * size_t(v) + size_t(i)] = 1;
  std::vector<double> diag(n, 0.0);
  for (size_t e = 0; e < c.mesh.elems.size(); ++e)
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) diag[3 * size_t(c.mesh.elems[e][size_t(a)]) + size_t(i)] += (*Ke)[e][size_t(13 * (3 * a + i))];
  double mean = 0;
  for (double d : diag) mean += d;
  mean /= double(n);
  for (size_t i = 0; i < n; ++i)
    if ((*fixed)[i]) diag[i] = mean;
  const auto* elems = &c.mesh.elems;
  auto apply = [Ke, fixed, elems, mean, n](const double* x, double* y) {
    std::fill(y, y + n, 0.0);
    for (size_t e = 0; e < elems->size(); ++e) {
      double xe[12];
      for (int a = 0; a < 4; ++a)
        for (int i = 0; i < 3; ++i) {
          const size_t dof = 3 * size_t((*elems)[e][size_t(a)]) + size_t(i);
          xe[3 * a + i] = (*fixed)[dof] ? 0.0 : x[dof];
        }
      for (int a = 0; a < 4; ++a)
        for (int i = 0; i < 3; ++i) {
          const size_t dof = 3 * size_t((*elems)[e][size_t(a)]) + size_t(i);
          if ((*fixed)[dof]) continue;
          double s = 0;
          for (int k = 0; k < 12; ++k) s += (*Ke)[e][size_t(12 * (3 * a + i) + k)] * xe[k];
          y[dof] += s;
        }
    }
    for (size_t i = 0; i < n; ++i)
      if ((*fixed)[i]) y[i] = mean * x[i];
  };
  return std::make_unique<HostFunctionOperator<double>>(Index(n), apply, diag, "element-by-element (host)");
}

TEST(MatrixFreeOperator, ProductAndDiagonalMatchAssembled) {
  const Clamped c = clamped_box();
  const auto mf = matrix_free(c);
  const auto assembled = make_matrix_operator(c.K, Format::Bcsr, Location::Host);
  ASSERT_EQ(mf->rows(), assembled->rows());
  const std::vector<double> x = random_vector(size_t(mf->rows()), 21);
  EXPECT_LE(relative_error(apply_from_host(*mf, x), apply_from_host(*assembled, x)), 1e-13);
  EXPECT_LE(relative_error(diagonal_from_host(*mf), diagonal_from_host(*assembled)), 1e-14);
}

TEST(MatrixFreeOperator, CgSeesTheSameOperator) {
  const Clamped c = clamped_box();
  const auto mf = matrix_free(c);
  const auto assembled = make_matrix_operator(c.K, Format::Dcsr, Location::Host);
  const ElasticProblem p = clamped_problem(c.mesh, "box6", 0);
  CgOptions o;
  o.tolerance = 1e-10;
  std::vector<double> x_mf(p.b.size(), 0.0), x_as(p.b.size(), 0.0);
  const CgResult r_mf = cg_solve_from_host(*mf, p.b, x_mf, o);
  const CgResult r_as = cg_solve_from_host(*assembled, p.b, x_as, o);
  ASSERT_TRUE(r_mf.converged());
  ASSERT_TRUE(r_as.converged());
  EXPECT_LE(std::abs(r_mf.iterations - r_as.iterations), 1);
  EXPECT_LE(relative_error(x_mf, x_as), 1e-8);
}

TEST(MatrixFreeOperator, RefusesAWrongDiagonal) {
  EXPECT_THROW(HostFunctionOperator<double>(3, [](const double*, double*) {}, std::vector<double>(2), "bad"), InputError);
}

}  // namespace
}  // namespace eb::linalg::test
