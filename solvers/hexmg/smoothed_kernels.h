#pragma once
// Per-row functions of hexmg's smoothed hierarchy (smoothed_hierarchy.h): the numeric Galerkin
// product, multicolour block Gauss-Seidel, residual, restriction and prolongation over rows of
// 3x3 blocks. The OpenMP backend (hexmg_cpu.cpp) loops over rows with them; the CUDA backend
// runs one thread per row on the same functions, so a kernel differs from its oracle only where
// the compilers contract a multiply-add differently.
#include <cstdint>

#include "assembly/hexmg/hex_element.h"
#include "assembly/hexmg/hexmg_kernels.h"

namespace eb::hexmg {

// Rows of 3x3 blocks (block sparse rows, columns sorted within a row). Entry p of a row holds the
// block at value index blk[p] (p itself when blk is null); component k (row-major) of value index
// q is v(q, k). So one view reads a level's own block matrix (v = {val, 9, 1}) and the simulation
// level's stencil in place: the CPU's 243 coefficients per slot (blk = 27 x + l, v = {A, 9, 1})
// and the GPU's structure of arrays (blk = x + 9 l n, v = {A, 1, n}).
template <class T>
struct BlockRows {
  int32_t rows = 0;
  const int32_t* ptr = nullptr;  // rows + 1 offsets
  const int32_t* col = nullptr;
  const int32_t* blk = nullptr;
  Strided<T> v;
  EB_HD int64_t index(int32_t p) const { return blk ? int64_t(blk[p]) : int64_t(p); }
};

// First position in the sorted columns [b, e) of a row whose column is >= c (e if none).
EB_HD int32_t lower_column(const int32_t* col, int32_t b, int32_t e, int32_t c) {
  while (b < e) {
    const int32_t m = b + (e - b) / 2;
    if (col[m] < c)
      b = m + 1;
    else
      e = m;
  }
  return b;
}

// Position of column c in the sorted columns [b, e) of a row (-1 if absent).
EB_HD int32_t find_column(const int32_t* col, int32_t b, int32_t e, int32_t c) {
  const int32_t p = lower_column(col, b, e, c);
  return (p < e && col[p] == c) ? p : -1;
}

// Row i of C = A B on C's fixed pattern (a superset of the product's), columns >= `first` only
// (0: the whole row): C_iJ = sum over the entries k of A's row i, in order, of A_ik B_kJ, each B
// row in order. The fixed order makes the sum deterministic; the pattern was built by the same
// loops (smoothed_hierarchy.cpp). B's rows and C's have sorted columns and C's row holds every
// column of a B row met, so C's position of B's next column is found by walking forward from the
// last one (no search per block product).
template <class T>
EB_HD void spgemm_row(int32_t i, const BlockRows<const T>& A, const BlockRows<const T>& B, const BlockRows<T>& C,
                      int32_t first = 0) {
  const int32_t ce = C.ptr[i + 1];
  const int32_t cb = first > 0 ? lower_column(C.col, C.ptr[i], ce, first) : C.ptr[i];
  for (int32_t q = cb; q < ce; ++q)
    for (int k = 0; k < 9; ++k) C.v(C.index(q), k) = T(0);
  for (int32_t p = A.ptr[i]; p < A.ptr[i + 1]; ++p) {
    const int64_t ia = A.index(p);
    T a[9];
    for (int k = 0; k < 9; ++k) a[k] = A.v(ia, k);
    const int32_t kr = A.col[p], se = B.ptr[kr + 1];
    int32_t q = cb;
    for (int32_t s = first > 0 ? lower_column(B.col, B.ptr[kr], se, first) : B.ptr[kr]; s < se; ++s) {
      const int64_t ib = B.index(s);
      while (C.col[q] < B.col[s]) ++q;
      const int64_t ic = C.index(q);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c)
          C.v(ic, 3 * r + c) += a[3 * r] * B.v(ib, c) + a[3 * r + 1] * B.v(ib, 3 + c) + a[3 * r + 2] * B.v(ib, 6 + c);
    }
  }
}

// The entries of row i of a symmetric C left of the diagonal from its upper triangle, computed
// by spgemm_row with first = i: C_ij = C_ji^T, C_ji at entry mirror[p] of entry p.
template <class T>
EB_HD void mirror_row(int32_t i, const int32_t* mirror, const BlockRows<T>& C) {
  for (int32_t p = C.ptr[i]; p < C.ptr[i + 1] && C.col[p] < i; ++p) {
    const int64_t d = C.index(p), u = C.index(mirror[p]);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) C.v(d, 3 * r + c) = C.v(u, 3 * c + r);
  }
}

// sum over the entries of row i except the diagonal block of A_iJ x_J, and the diagonal block's
// value index (-1 if the row has none). `part` of `parts` takes the row's entries part, part +
// parts, ...: a CUDA warp splits a long coarse row (hundreds of blocks) over its lanes and adds the
// lanes' sums; one thread (part 0 of 1) takes them all, in order.
template <class T>
EB_HD int64_t offdiag_row(int32_t i, const BlockRows<const T>& A, const Strided<const T>& x, T* s, int part = 0,
                          int parts = 1) {
  s[0] = s[1] = s[2] = T(0);
  int64_t diag = -1;
  for (int32_t p = A.ptr[i] + part; p < A.ptr[i + 1]; p += parts) {
    const int32_t j = A.col[p];
    const int64_t q = A.index(p);
    if (j == i) {
      diag = q;
      continue;
    }
    const T x0 = x(j, 0), x1 = x(j, 1), x2 = x(j, 2);
    for (int r = 0; r < 3; ++r) s[r] += A.v(q, 3 * r) * x0 + A.v(q, 3 * r + 1) * x1 + A.v(q, 3 * r + 2) * x2;
  }
  return diag;
}

// The diagonal block of a coarse row with its dead components (bit d of `dead`: no coarse
// function, a zero row and column of A) replaced by identity rows, so that it is invertible.
template <class T>
EB_HD void masked_diagonal(const BlockRows<const T>& A, int64_t q, uint8_t dead, T* D) {
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      const bool dr = dead & (1u << r), dc = dead & (1u << c);
      D[3 * r + c] = (dr || dc) ? T(r == c ? 1 : 0) : A.v(q, 3 * r + c);
    }
}

// Block Gauss-Seidel update of row i: u_i = D_i^-1 (b_i - sum_{j != i} A_ij u_j), dead components
// and rows without a diagonal (padding) kept at 0. Rows of one colour share no entry, so a
// colour's rows may run in any order or at once. block_gs_finish is the update from the row's
// off-diagonal sum s and diagonal index q (offdiag_row), block_gs_row the whole row.
template <class T>
EB_HD void block_gs_finish(int32_t i, int64_t q, const T* s, const BlockRows<const T>& A, const uint8_t* dead,
                           const Strided<const T>& b, const Strided<T>& u) {
  if (q < 0) return;
  T D[9], r[3], x[3];
  masked_diagonal(A, q, dead[i], D);
  for (int d = 0; d < 3; ++d) r[d] = (dead[i] & (1u << d)) ? T(0) : b(i, d) - s[d];
  solve3(D, r, x);
  for (int d = 0; d < 3; ++d) u(i, d) = x[d];
}

template <class T>
EB_HD void block_gs_row(int32_t i, const BlockRows<const T>& A, const uint8_t* dead, const Strided<const T>& b,
                        const Strided<T>& u) {
  T s[3];
  const Strided<const T> uc{u.p, u.vs, u.cs};
  block_gs_finish(i, offdiag_row(i, A, uc, s), s, A, dead, b, u);
}

// r_i = b_i - (A u)_i; returns |r_i|^2. block_residual_finish from the row's off-diagonal sum s and
// diagonal index q (offdiag_row), block_residual_row the whole row.
template <class T>
EB_HD T block_residual_finish(int32_t i, int64_t q, const T* s, const BlockRows<const T>& A, const Strided<const T>& b,
                              const Strided<const T>& u, const Strided<T>& r) {
  T n2 = 0;
  for (int d = 0; d < 3; ++d) {
    const T ad = q < 0 ? T(0) : A.v(q, 3 * d) * u(i, 0) + A.v(q, 3 * d + 1) * u(i, 1) + A.v(q, 3 * d + 2) * u(i, 2);
    const T rd = q < 0 ? T(0) : b(i, d) - s[d] - ad;
    r(i, d) = rd;
    n2 += rd * rd;
  }
  return n2;
}

template <class T>
EB_HD T block_residual_row(int32_t i, const BlockRows<const T>& A, const Strided<const T>& b, const Strided<const T>& u,
                           const Strided<T>& r) {
  T s[3];
  return block_residual_finish(i, offdiag_row(i, A, u, s), s, A, b, u, r);
}

// y_i = (A x)_i with identity rows for dead components and rows without a diagonal (the coarsest
// CG's operator: SPD on all 3 n unknowns; the identity rows keep x = b = 0 there).
template <class T>
EB_HD void block_apply_row(int32_t i, const BlockRows<const T>& A, const uint8_t* dead, const Strided<const T>& x,
                           const Strided<T>& y) {
  T s[3];
  const int64_t q = offdiag_row(i, A, x, s);
  for (int d = 0; d < 3; ++d) {
    if (q < 0 || (dead[i] & (1u << d))) {
      y(i, d) = x(i, d);
      continue;
    }
    y(i, d) = s[d] + A.v(q, 3 * d) * x(i, 0) + A.v(q, 3 * d + 1) * x(i, 1) + A.v(q, 3 * d + 2) * x(i, 2);
  }
}

// Diagonal entry of component d of row i for the coarsest CG's Jacobi preconditioner (1 where
// block_apply_row has an identity row).
template <class T>
EB_HD T block_diagonal_entry(int32_t i, int d, const BlockRows<const T>& A, const uint8_t* dead) {
  if (dead[i] & (1u << d)) return T(1);
  const int32_t p = find_column(A.col, A.ptr[i], A.ptr[i + 1], i);
  return p < 0 ? T(1) : A.v(A.index(p), 4 * d);
}

// y_i = sum_j M_ij x_j over row i of M (restriction with M = R = P^T: y = b of the coarse level;
// the caller zeroes the coarse u), or y_i += it (prolongation with M = P: y = u of the fine level).
template <class T>
EB_HD void block_gather_row(int32_t i, const BlockRows<const T>& M, const Strided<const T>& x, const Strided<T>& y,
                            bool accumulate) {
  T s[3] = {0, 0, 0};
  for (int32_t p = M.ptr[i]; p < M.ptr[i + 1]; ++p) {
    const int64_t q = M.index(p);
    const int32_t j = M.col[p];
    const T x0 = x(j, 0), x1 = x(j, 1), x2 = x(j, 2);
    for (int r = 0; r < 3; ++r) s[r] += M.v(q, 3 * r) * x0 + M.v(q, 3 * r + 1) * x1 + M.v(q, 3 * r + 2) * x2;
  }
  for (int d = 0; d < 3; ++d) y(i, d) = accumulate ? y(i, d) + s[d] : s[d];
}

}  // namespace eb::hexmg
