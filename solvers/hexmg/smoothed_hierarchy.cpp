#include "solvers/hexmg/smoothed_hierarchy.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "assembly/hexmg/hexmg_kernels.h"
#include "solvers/hexmg/smoothed_kernels.h"

namespace eb::hexmg {
namespace {

// Rows of `m` (rows x cols) as a pattern with the blocks of each row, sorted by column.
BlockPattern pattern_of(int32_t rows, const std::vector<std::map<int32_t, std::array<double, 9>>>& m,
                        std::vector<double>* values) {
  BlockPattern p;
  p.rows = rows;
  for (int32_t i = 0; i < rows; ++i) {
    for (const auto& [j, b] : m[size_t(i)]) {
      p.col.push_back(j);
      if (values) values->insert(values->end(), b.begin(), b.end());
    }
    p.ptr.push_back(int32_t(p.col.size()));
  }
  return p;
}

// The pattern of the product A B (rows of A; B's rows indexed by A's columns), by the loops of
// spgemm_row.
BlockPattern product_pattern(const BlockPattern& A, const BlockPattern& B) {
  BlockPattern C;
  C.rows = A.rows;
  std::vector<int32_t> cols;
  for (int32_t i = 0; i < A.rows; ++i) {
    cols.clear();
    for (int32_t p = A.ptr[i]; p < A.ptr[i + 1]; ++p) {
      const int32_t k = A.col[size_t(p)];
      cols.insert(cols.end(), B.col.begin() + B.ptr[k], B.col.begin() + B.ptr[k + 1]);
    }
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    C.col.insert(C.col.end(), cols.begin(), cols.end());
    C.ptr.push_back(int32_t(C.col.size()));
  }
  return C;
}

// Greedy colouring of a symmetric pattern's graph, rows in order.
void colour_rows(const BlockPattern& A, std::vector<int32_t>& order, std::vector<int32_t>& begin) {
  std::vector<int32_t> colour(size_t(A.rows), -1);
  std::vector<int32_t> seen;
  int ncol = 0;
  for (int32_t i = 0; i < A.rows; ++i) {
    if (A.ptr[i + 1] == A.ptr[i]) continue;  // padding: no row to relax
    seen.assign(size_t(ncol) + 1, 0);
    for (int32_t p = A.ptr[i]; p < A.ptr[i + 1]; ++p) {
      const int32_t c = colour[size_t(A.col[size_t(p)])];
      if (c >= 0) seen[size_t(c)] = 1;
    }
    int32_t c = 0;
    while (seen[size_t(c)]) ++c;
    colour[size_t(i)] = c;
    ncol = std::max(ncol, c + 1);
  }
  begin.assign(size_t(ncol) + 1, 0);
  for (int32_t c : colour)
    if (c >= 0) ++begin[size_t(c) + 1];
  for (int c = 0; c < ncol; ++c) begin[size_t(c) + 1] += begin[size_t(c)];
  order.assign(size_t(begin.back()), 0);
  std::vector<int32_t> fill(begin.begin(), begin.end() - 1);
  for (int32_t i = 0; i < A.rows; ++i)
    if (colour[size_t(i)] >= 0) order[size_t(fill[size_t(colour[size_t(i)])]++)] = i;
}

}  // namespace

SmoothedPlan::GalerkinWork SmoothedPlan::galerkin_work(int l) const {
  const SmoothedLevel& S = levels[size_t(l)];
  const BlockPattern& Af = l == 1 ? A0 : levels[size_t(l - 1)].A;
  GalerkinWork w;
  for (int32_t i = 0; i < Af.rows; ++i)
    for (int32_t q = Af.ptr[size_t(i)]; q < Af.ptr[size_t(i) + 1]; ++q) {
      const int32_t k = Af.col[size_t(q)];
      w.ap += S.P.ptr[size_t(k) + 1] - S.P.ptr[size_t(k)];
    }
  for (int32_t i = 0; i < S.R.rows; ++i)
    for (int32_t q = S.R.ptr[size_t(i)]; q < S.R.ptr[size_t(i) + 1]; ++q) {
      const int32_t k = S.R.col[size_t(q)], e = S.AP.ptr[size_t(k) + 1];
      w.rap += e - lower_column(S.AP.col.data(), S.AP.ptr[size_t(k)], e, i);  // the upper triangle
    }
  return w;
}

double SmoothedPlan::operator_complexity() const {
  double s = double(A0.nnz());
  for (size_t l = 1; l < levels.size(); ++l) s += double(levels[l].A.nnz());
  return s / double(A0.nnz());
}

SmoothedPlan build_smoothed_plan(const Model& m, const SparseRows& A0) {
  SmoothedPlan plan;
  const Level& L0 = m.levels[0];
  plan.A0.rows = L0.n_padded;
  for (int32_t x = 0; x < L0.n_padded; ++x) {
    if (L0.nbr[size_t(x)][kCentre] >= 0)
      for (int l = 0; l < kStencil; ++l) {
        const int32_t y = L0.nbr[size_t(x)][size_t(l)];
        if (y >= 0) {
          plan.A0.col.push_back(y);
          plan.A0_offset.push_back(l);
        }
      }
    plan.A0.ptr.push_back(int32_t(plan.A0.col.size()));
  }
  // spgemm_row needs sorted columns only in its output pattern; A0 is an input, read in order.
  const int nl = m.n_levels();
  plan.levels.resize(size_t(nl));
  if (nl == 1) return plan;
  AlgebraicOptions o;
  o.prolongation_smoothing = 1;
  o.block_jacobi = true;
  const AlgebraicHierarchy h(m, A0, o);
  for (int l = 1; l < nl; ++l) {
    SmoothedLevel& S = plan.levels[size_t(l)];
    const Level& F = m.levels[size_t(l - 1)];
    const Level& C = m.levels[size_t(l)];
    S.n = C.n_padded;
    S.omega = h.omega(l - 1);
    const auto& fd = h.dofs(l - 1);
    const auto& cd = h.dofs(l);
    std::vector<std::map<int32_t, std::array<double, 9>>> pm(size_t(F.n_padded)), rm(size_t(C.n_padded));
    const SparseRows& P = h.P(l - 1);
    for (Eigen::Index r = 0; r < P.outerSize(); ++r)
      for (SparseRows::InnerIterator it(P, r); it; ++it) {
        const int64_t f = fd[size_t(r)], c = cd[size_t(it.col())];
        const int32_t xf = int32_t(f / 3), xc = int32_t(c / 3);
        const int df = int(f % 3), dc = int(c % 3);
        auto& pb = pm[size_t(xf)].try_emplace(xc, std::array<double, 9>{}).first->second;
        pb[size_t(3 * df + dc)] = it.value();
        auto& rb = rm[size_t(xc)].try_emplace(xf, std::array<double, 9>{}).first->second;
        rb[size_t(3 * dc + df)] = it.value();
      }
    S.P = pattern_of(F.n_padded, pm, &S.P_val);
    S.R = pattern_of(C.n_padded, rm, &S.R_val);
    S.dead.assign(size_t(C.n_padded), 7);
    for (int64_t c : cd) S.dead[size_t(c / 3)] &= uint8_t(~(1u << (c % 3)));
    const BlockPattern& Af = l == 1 ? plan.A0 : plan.levels[size_t(l - 1)].A;
    S.AP = product_pattern(Af, S.P);
    S.A = product_pattern(S.R, S.AP);
    // A_l = P^T A_{l-1} P is symmetric: the products compute its upper triangle, mirror_row the rest.
    S.A_mirror.assign(S.A.col.size(), -1);
    for (int32_t i = 0; i < S.A.rows; ++i)
      for (int32_t p = S.A.ptr[size_t(i)]; p < S.A.ptr[size_t(i) + 1]; ++p) {
        const int32_t j = S.A.col[size_t(p)];
        const int32_t t = find_column(S.A.col.data(), S.A.ptr[size_t(j)], S.A.ptr[size_t(j) + 1], i);
        if (t < 0) throw std::logic_error("hexmg smoothed hierarchy: level " + std::to_string(l) + " pattern not symmetric");
        S.A_mirror[size_t(p)] = t;
      }
    if (l + 1 < nl) colour_rows(S.A, S.colour_order, S.colour_begin);
  }
  return plan;
}

}  // namespace eb::hexmg
