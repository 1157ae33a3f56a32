#include "solvers/hexmg/algebraic_hierarchy.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace eb::hexmg {
namespace {

// lambda_max of D^-1 A by power iteration on the similar D^-1/2 A D^-1/2. An underestimate of a
// few percent only makes omega slightly larger, and 4/3 leaves margin to the 2/lambda_max at
// which the smoother of P would amplify the highest mode.
double lambda_max_jacobi(const SparseRows& A) {
  const Eigen::Index n = A.rows();
  Eigen::VectorXd s(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double d = A.coeff(i, i);
    s[i] = d > 0 ? 1.0 / std::sqrt(d) : 0.0;
  }
  std::mt19937_64 rng(12345);  // fixed seed: the hierarchy must be reproducible
  std::uniform_real_distribution<double> U(-1.0, 1.0);
  Eigen::VectorXd x(n), y(n);
  for (Eigen::Index i = 0; i < n; ++i) x[i] = U(rng);
  double lambda = 0;
  for (int it = 0; it < 40; ++it) {
    x /= x.norm();
    y = s.asDiagonal() * (A * (s.asDiagonal() * x));
    lambda = x.dot(y);
    x = y;
  }
  return lambda;
}

// Rows `rows` of M (a selection, in order).
SparseRows select_rows(const SparseRows& M, const std::vector<int64_t>& rows) {
  SparseRows S(Eigen::Index(rows.size()), M.rows());
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) t.emplace_back(Eigen::Index(i), Eigen::Index(rows[i]), 1.0);
  S.setFromTriplets(t.begin(), t.end());
  return S * M;
}

// Columns `cols` of M (a selection, in order).
SparseRows select_cols(const SparseRows& M, const std::vector<int64_t>& cols) {
  SparseRows S(M.cols(), Eigen::Index(cols.size()));
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(cols.size());
  for (size_t j = 0; j < cols.size(); ++j) t.emplace_back(Eigen::Index(cols[j]), Eigen::Index(j), 1.0);
  S.setFromTriplets(t.begin(), t.end());
  return M * S;
}

}  // namespace

SparseRows geometric_prolongation(const Model& m, int level) {
  if (level < 0 || level + 1 >= m.n_levels()) throw std::invalid_argument("geometric_prolongation: no coarser level");
  const Level& F = m.levels[level];
  const Level& C = m.levels[level + 1];
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(size_t(F.n_real) * 3 * 8);
  for (int32_t x = 0; x < F.n_padded; ++x) {
    if (F.nbr[x][13] < 0) continue;
    int count = 0;
    for (int p = 0; p < 8; ++p) count += F.parent[x][p] >= 0;
    const uint8_t dead = F.dead.empty() ? 0 : F.dead[x];
    for (int p = 0; p < 8; ++p) {
      const int32_t y = F.parent[x][p];
      if (y < 0) continue;
      for (int d = 0; d < 3; ++d)
        if (!(dead & (1u << d))) t.emplace_back(3 * int64_t(x) + d, 3 * int64_t(y) + d, 1.0 / count);
    }
  }
  SparseRows P(3 * Eigen::Index(F.n_padded), 3 * Eigen::Index(C.n_padded));
  P.setFromTriplets(t.begin(), t.end());
  return P;
}

AlgebraicHierarchy::AlgebraicHierarchy(const Model& m, const SparseRows& A0, const AlgebraicOptions& o) : opt_(o) {
  const int64_t n0 = 3 * int64_t(m.levels[0].n_padded);
  if (A0.rows() != n0 || A0.cols() != n0) throw std::invalid_argument("AlgebraicHierarchy: A0 is not the model's level-0 system");
  const int nl = o.max_levels > 0 ? std::min(o.max_levels, m.n_levels()) : m.n_levels();
  levels_.resize(nl);
  levels_[0].A = A0;
  levels_[0].dof.resize(size_t(n0));
  for (int64_t i = 0; i < n0; ++i) levels_[0].dof[size_t(i)] = i;
  for (int l = 0; l + 1 < nl; ++l) {
    Level& F = levels_[l];
    Level& C = levels_[l + 1];
    // Coarse unknowns: components that some fine unknown interpolates from. The smoothed P has
    // the same nonzero columns (A times a zero column is zero), so this is decided on P0.
    SparseRows P = select_rows(geometric_prolongation(m, l), F.dof);
    std::vector<char> used(size_t(P.cols()), 0);
    for (Eigen::Index i = 0; i < P.outerSize(); ++i)
      for (SparseRows::InnerIterator it(P, i); it; ++it)
        if (it.value() != 0) used[size_t(it.col())] = 1;
    for (size_t j = 0; j < used.size(); ++j)
      if (used[j]) C.dof.push_back(int64_t(j));
    P = select_cols(P, C.dof);
    // Rows that P0 leaves zero (padding, Dirichlet components) stay zero after smoothing, so a
    // coarse correction never moves a prescribed value.
    std::vector<char> zero_row(size_t(P.rows()), 1);
    for (Eigen::Index i = 0; i < P.outerSize(); ++i)
      if (P.outerIndexPtr()[i + 1] > P.outerIndexPtr()[i]) zero_row[size_t(i)] = 0;
    if (o.prolongation_smoothing > 0 && o.block_jacobi) {
      set_blocks(F);
      std::vector<Eigen::Triplet<double>> t;
      for (size_t g = 0; g + 1 < F.block.size(); ++g) {
        const int64_t s0 = F.block[g], k = F.block[g + 1] - s0;
        for (int64_t a = 0; a < k; ++a)
          for (int64_t c = 0; c < k; ++c)
            if (!zero_row[size_t(s0 + a)]) t.emplace_back(s0 + a, s0 + c, F.block_inverse[g](a, c));
      }
      SparseRows Binv(F.A.rows(), F.A.cols());
      Binv.setFromTriplets(t.begin(), t.end());
      const SparseRows BA = Binv * F.A;
      // Power iteration on B^-1 A (similar to the symmetric B^-1/2 A B^-1/2, real spectrum).
      std::mt19937_64 rng(12345);
      std::uniform_real_distribution<double> U(-1.0, 1.0);
      Eigen::VectorXd x(F.A.rows()), y;
      for (Eigen::Index i = 0; i < x.size(); ++i) x[i] = U(rng);
      double lambda = 0;
      for (int it = 0; it < 40; ++it) {
        x /= x.norm();
        y = BA * x;
        lambda = x.dot(y);
        x = y;
      }
      F.omega = o.omega_scale / lambda;
      for (int k = 0; k < o.prolongation_smoothing; ++k) {
        const SparseRows AP = BA * P;
        P = P - F.omega * AP;
        P.prune(1.0, 1e-14);
      }
    } else if (o.prolongation_smoothing > 0) {
      F.omega = o.omega_scale / lambda_max_jacobi(F.A);
      Eigen::VectorXd dinv(F.A.rows());
      for (Eigen::Index i = 0; i < F.A.rows(); ++i) {
        const double d = F.A.coeff(i, i);
        dinv[i] = (d > 0 && !zero_row[size_t(i)]) ? F.omega / d : 0.0;
      }
      for (int k = 0; k < o.prolongation_smoothing; ++k) {
        const SparseRows AP = F.A * P;
        P = P - dinv.asDiagonal() * AP;
        P.prune(1.0, 1e-14);
      }
    }
    F.P = P;
    F.R = P.transpose();
    const SparseRows AP = F.A * P;
    C.A = F.R * AP;
  }
  for (Level& L : levels_) set_blocks(L);
  const SparseRows& Ac = levels_.back().A;
  const Eigen::MatrixXd dense(Ac);
  coarse_ldlt_.compute(dense);
  // A pivot d_i that is a tiny fraction of its unknown's own diagonal entry means that unknown's
  // coarse function is (numerically) a combination of those already eliminated: the coarse
  // functions restricted to the voxels are linearly dependent. The restricted right-hand side
  // P^T r lies in the range of P^T A P, so dropping those pivots still solves the system, and the
  // dropped null-space component vanishes under P.
  const Eigen::VectorXd diag = coarse_ldlt_.transpositionsP() * dense.diagonal();
  const Eigen::VectorXd D = coarse_ldlt_.vectorD();
  coarse_dinv_.resize(D.size());
  null_pivots_ = 0;
  for (Eigen::Index i = 0; i < D.size(); ++i) {
    if (D[i] > 1e-10 * std::abs(diag[i]) && diag[i] > 0) {
      coarse_dinv_[i] = 1.0 / D[i];
    } else {
      coarse_dinv_[i] = 0.0;
      ++null_pivots_;
    }
  }
}

void AlgebraicHierarchy::set_blocks(Level& L) const {
  L.block.clear();
  L.block_inverse.clear();
  const size_t n = L.dof.size();
  for (size_t i = 0; i < n;) {
    size_t e = i + 1;
    while (e < n && L.dof[e] / 3 == L.dof[i] / 3) ++e;
    const int k = int(e - i);
    Eigen::MatrixXd B(k, k);
    for (int a = 0; a < k; ++a)
      for (int c = 0; c < k; ++c) B(a, c) = L.A.coeff(Eigen::Index(i + a), Eigen::Index(i + c));
    // A vertex's block is SPD unless its coarse functions are dependent; the pseudo-inverse then
    // relaxes only the range, which a consistent system needs.
    const Eigen::MatrixXd Bi = B.completeOrthogonalDecomposition().pseudoInverse();
    Eigen::Matrix3d inv = Eigen::Matrix3d::Zero();
    inv.topLeftCorner(k, k) = Bi;
    L.block.push_back(int64_t(i));
    L.block_inverse.push_back(inv);
    i = e;
  }
  L.block.push_back(int64_t(n));
}

void AlgebraicHierarchy::gauss_seidel(const Level& L, const Eigen::VectorXd& b, Eigen::VectorXd& u, bool backward) const {
  const int64_t nb = int64_t(L.block_inverse.size());
  const double* val = L.A.valuePtr();
  const int* col = L.A.innerIndexPtr();
  const int* start = L.A.outerIndexPtr();
  for (int64_t q = 0; q < nb; ++q) {
    const int64_t g = backward ? nb - 1 - q : q;
    const int64_t s = L.block[size_t(g)], e = L.block[size_t(g) + 1];
    Eigen::Vector3d r = Eigen::Vector3d::Zero();
    for (int64_t i = s; i < e; ++i) {
      double acc = b[i];
      for (int p = start[i]; p < start[i + 1]; ++p) {
        const int64_t j = col[p];
        if (j < s || j >= e) acc -= val[p] * u[j];
      }
      r[i - s] = acc;
    }
    const Eigen::Vector3d x = L.block_inverse[size_t(g)] * r;
    for (int64_t i = s; i < e; ++i) u[i] = x[i - s];
  }
}

void AlgebraicHierarchy::coarsest_solve(const Eigen::VectorXd& b, Eigen::VectorXd& u) const {
  const auto& f = coarse_ldlt_;
  Eigen::VectorXd y = f.transpositionsP() * (b - levels_.back().A * u);
  f.matrixL().solveInPlace(y);
  y = coarse_dinv_.asDiagonal() * y;
  f.matrixU().solveInPlace(y);
  const Eigen::VectorXd du = f.transpositionsP().transpose() * y;
  u += du;
}

void AlgebraicHierarchy::cycle(int l, const Eigen::VectorXd& b, Eigen::VectorXd& u) const {
  if (l == n_levels() - 1) {
    coarsest_solve(b, u);
    return;
  }
  const Level& L = levels_[l];
  for (int i = 0; i < opt_.pre_smooth; ++i) gauss_seidel(L, b, u, false);
  const Eigen::VectorXd bc = L.R * (b - L.A * u);
  Eigen::VectorXd uc = Eigen::VectorXd::Zero(bc.size());
  cycle(l + 1, bc, uc);
  u += L.P * uc;
  for (int i = 0; i < opt_.post_smooth; ++i) gauss_seidel(L, b, u, opt_.symmetric);
}

void AlgebraicHierarchy::vcycle(const Eigen::VectorXd& b, Eigen::VectorXd& u) const { cycle(0, b, u); }

double AlgebraicHierarchy::operator_complexity() const {
  double s = 0;
  for (const Level& L : levels_) s += double(L.A.nonZeros());
  return s / double(levels_[0].A.nonZeros());
}

double AlgebraicHierarchy::work_per_cycle() const {
  double s = 0;
  for (int l = 0; l + 1 < n_levels(); ++l) {
    const Level& L = levels_[l];
    s += double(opt_.pre_smooth + opt_.post_smooth + 1) * double(L.A.nonZeros()) + 2.0 * double(L.P.nonZeros());
  }
  const double nc = double(levels_.back().dof.size());
  s += nc * nc;  // the two triangular solves of the dense factor
  return s / double(levels_[0].A.nonZeros());
}

}  // namespace eb::hexmg
