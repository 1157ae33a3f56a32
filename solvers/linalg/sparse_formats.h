#pragma once
// Sparse matrix formats on the host (std::vector containers, no CUDA types), all built from one
// assembled description and convertible into each other through it.
//
// The assembled description (AssembledMatrix) is a canonical COO: entries sorted by (row, col),
// no duplicates, explicit zeros kept (the pattern is the assembly's, so that a matrix whose values
// change keeps its pattern, and so that every conversion round-trips exactly). Its `block` field
// says whether the pattern is made of whole aligned 3x3 blocks (then BCSR is possible).
//
// Formats (Bell & Garland 2008; Cecka, Lew & Darve 2011, Sec. 16.3-16.4; Verschoor & Jalba 2012):
//   COO   row, col, val per entry, sorted by row then column.
//   CSR   row_ptr (rows + 1), col, val.
//   BCSR  3x3 blocks: block row_ptr, block col, 9 values per block (row-major within the block).
//   ELL   fixed width K per row, column-major (entry k of row i at k * rows + i, so that one
//         thread per row reads coalesced); padding has col = -1 and value 0.
//   HYB   ELL of width K plus COO for the entries of rows longer than K.
//   DCOO, DCSR, DHYB   the diagonal first, in its own array (one per row), then the off-diagonal
//         entries in COO/CSR/HYB: the Jacobi preconditioner and a diagonal shift read it
//         directly. Every diagonal entry must be in the pattern.
//
// Index types: row/column indices are int32 (2^31 - 1 rows); offsets into the entry arrays are
// int64 (a 10M-DOF stiffness has ~4.5e8 entries, 50M would pass 2^31).
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <variant>
#include <vector>

namespace eb::linalg {

using Index = int32_t;
using Offset = int64_t;

enum class Format { Coo, Csr, Bcsr, Ell, Hyb, Dcoo, Dcsr, Dhyb };
std::string to_string(Format f);
// Throws InputError naming the choices for an unknown name (coo, csr, bcsr, ell, hyb, dcoo, dcsr, dhyb).
Format format_from_string(const std::string& name);
const std::vector<Format>& all_formats();
bool is_diagonal_first(Format f);

template <class T>
struct Triplet {
  Index row, col;
  T val;
};

template <class T>
struct AssembledMatrix {
  using value_type = T;
  Index rows = 0, cols = 0;
  std::vector<Index> row, col;  // sorted by (row, col), unique
  std::vector<T> val;
  int block = 1;  // 3: the pattern is a union of whole 3x3 blocks at multiples of 3
  std::size_t nnz() const { return val.size(); }
};

template <class T>
struct CooMatrix {
  using value_type = T;
  Index rows = 0, cols = 0;
  std::vector<Index> row, col;
  std::vector<T> val;
  std::size_t nnz() const { return val.size(); }
};

template <class T>
struct CsrMatrix {
  using value_type = T;
  Index rows = 0, cols = 0;
  std::vector<Offset> row_ptr;
  std::vector<Index> col;
  std::vector<T> val;
  std::size_t nnz() const { return val.size(); }
};

template <class T>
struct BcsrMatrix {
  using value_type = T;
  static constexpr int kBlockSize = 3;  // 3 x 3 blocks: a node's three displacements
  Index block_rows = 0, block_cols = 0;
  std::vector<Offset> row_ptr;  // block_rows + 1, in blocks
  std::vector<Index> col;       // block column per block
  std::vector<T> val;           // 9 per block, row-major within the block
  std::size_t blocks() const { return col.size(); }
  std::size_t nnz() const { return val.size(); }
};

template <class T>
struct EllMatrix {
  using value_type = T;
  Index rows = 0, cols = 0;
  Index width = 0;
  std::vector<Index> col;  // width * rows, column-major, -1 = padding
  std::vector<T> val;      // width * rows, column-major, 0 at padding
};

template <class T>
struct HybMatrix {
  using value_type = T;
  EllMatrix<T> ell;
  CooMatrix<T> coo;  // entries beyond the ELL width, sorted by (row, col)
};

// DCOO, DCSR, DHYB: the diagonal (one entry per row), then the off-diagonal part in format M.
template <class M>
struct DiagonalFirst {
  using value_type = typename M::value_type;
  std::vector<value_type> diag;
  M off;
};
template <class T>
using DcooMatrix = DiagonalFirst<CooMatrix<T>>;
template <class T>
using DcsrMatrix = DiagonalFirst<CsrMatrix<T>>;
template <class T>
using DhybMatrix = DiagonalFirst<HybMatrix<T>>;

// Exact (bitwise for the values' ==) equality, used by the round-trip tests.
template <class T>
bool operator==(const AssembledMatrix<T>& a, const AssembledMatrix<T>& b) {
  return std::tie(a.rows, a.cols, a.row, a.col, a.val, a.block) == std::tie(b.rows, b.cols, b.row, b.col, b.val, b.block);
}
template <class T>
bool operator==(const CooMatrix<T>& a, const CooMatrix<T>& b) {
  return std::tie(a.rows, a.cols, a.row, a.col, a.val) == std::tie(b.rows, b.cols, b.row, b.col, b.val);
}
template <class T>
bool operator==(const CsrMatrix<T>& a, const CsrMatrix<T>& b) {
  return std::tie(a.rows, a.cols, a.row_ptr, a.col, a.val) == std::tie(b.rows, b.cols, b.row_ptr, b.col, b.val);
}
template <class T>
bool operator==(const BcsrMatrix<T>& a, const BcsrMatrix<T>& b) {
  return std::tie(a.block_rows, a.block_cols, a.row_ptr, a.col, a.val) ==
         std::tie(b.block_rows, b.block_cols, b.row_ptr, b.col, b.val);
}
template <class T>
bool operator==(const EllMatrix<T>& a, const EllMatrix<T>& b) {
  return std::tie(a.rows, a.cols, a.width, a.col, a.val) == std::tie(b.rows, b.cols, b.width, b.col, b.val);
}
template <class T>
bool operator==(const HybMatrix<T>& a, const HybMatrix<T>& b) {
  return a.ell == b.ell && a.coo == b.coo;
}
template <class M>
bool operator==(const DiagonalFirst<M>& a, const DiagonalFirst<M>& b) {
  return a.diag == b.diag && a.off == b.off;
}

// ---- the assembled description ----

// Sorts the triplets, sums duplicates (an assembly's element contributions) and detects the 3x3
// block structure. Throws InputError for an index outside [0, rows) x [0, cols).
template <class T>
AssembledMatrix<T> assemble_from_triplets(Index rows, Index cols, std::vector<Triplet<T>> triplets);

// 3 when rows, cols are multiples of 3 and every present entry's whole aligned 3x3 block is
// present; 1 otherwise. `first_violation` (optional) receives the first scalar row that breaks it.
template <class T>
int detect_block_size(const AssembledMatrix<T>& a, Index* first_violation = nullptr);

// The same matrix in another precision (values rounded once).
template <class To, class From>
AssembledMatrix<To> cast_values(const AssembledMatrix<From>& a) {
  AssembledMatrix<To> r;
  r.rows = a.rows;
  r.cols = a.cols;
  r.row = a.row;
  r.col = a.col;
  r.block = a.block;
  r.val.assign(a.val.begin(), a.val.end());
  return r;
}

// HYB's ELL width when none is given: the largest K such that at least a third of the rows have
// K or more entries (Bell & Garland's rule without their 4096-row floor), so that each ELL column
// is at least a third full; the rest goes to COO.
Index hyb_default_width(const std::vector<Offset>& row_lengths);

// ---- conversions: every format from the description and back ----
// Throw InputError: BCSR from a pattern that is not 3x3-blocked (naming the first row that breaks
// it), a D-format from a non-square matrix or one whose row N has no diagonal entry, ELL from a
// width smaller than the longest row.

template <class T> CooMatrix<T> to_coo(const AssembledMatrix<T>& a);
template <class T> CsrMatrix<T> to_csr(const AssembledMatrix<T>& a);
template <class T> BcsrMatrix<T> to_bcsr(const AssembledMatrix<T>& a);
template <class T> EllMatrix<T> to_ell(const AssembledMatrix<T>& a, Index width = -1);  // -1: longest row
template <class T> HybMatrix<T> to_hyb(const AssembledMatrix<T>& a, Index ell_width = -1);  // -1: default rule
template <class T> DcooMatrix<T> to_dcoo(const AssembledMatrix<T>& a);
template <class T> DcsrMatrix<T> to_dcsr(const AssembledMatrix<T>& a);
template <class T> DhybMatrix<T> to_dhyb(const AssembledMatrix<T>& a, Index ell_width = -1);

template <class T> AssembledMatrix<T> to_assembled(const CooMatrix<T>& m);
template <class T> AssembledMatrix<T> to_assembled(const CsrMatrix<T>& m);
template <class T> AssembledMatrix<T> to_assembled(const BcsrMatrix<T>& m);
template <class T> AssembledMatrix<T> to_assembled(const EllMatrix<T>& m);
template <class T> AssembledMatrix<T> to_assembled(const HybMatrix<T>& m);
template <class M> AssembledMatrix<typename M::value_type> to_assembled(const DiagonalFirst<M>& m);

// from_assembled<M>(a): the format M of `a` (default widths), so that any format converts into
// any other: convert<To>(from).
template <class M>
M from_assembled(const AssembledMatrix<typename M::value_type>& a) {
  using T = typename M::value_type;
  if constexpr (std::is_same_v<M, CooMatrix<T>>) return to_coo(a);
  else if constexpr (std::is_same_v<M, CsrMatrix<T>>) return to_csr(a);
  else if constexpr (std::is_same_v<M, BcsrMatrix<T>>) return to_bcsr(a);
  else if constexpr (std::is_same_v<M, EllMatrix<T>>) return to_ell(a);
  else if constexpr (std::is_same_v<M, HybMatrix<T>>) return to_hyb(a);
  else if constexpr (std::is_same_v<M, DcooMatrix<T>>) return to_dcoo(a);
  else if constexpr (std::is_same_v<M, DcsrMatrix<T>>) return to_dcsr(a);
  else return to_dhyb(a);
}
template <class To, class From>
To convert(const From& m) {
  return from_assembled<To>(to_assembled(m));
}

// A matrix in a format chosen at run time.
template <class T>
using AnyMatrix = std::variant<CooMatrix<T>, CsrMatrix<T>, BcsrMatrix<T>, EllMatrix<T>, HybMatrix<T>, DcooMatrix<T>,
                               DcsrMatrix<T>, DhybMatrix<T>>;
template <class T>
AnyMatrix<T> make_format(const AssembledMatrix<T>& a, Format f);
template <class T>
Format format_of(const AnyMatrix<T>& m);
template <class T>
AssembledMatrix<T> to_assembled(const AnyMatrix<T>& m);

// ---- sizes ----
// Square dimension (rows) of each format.
template <class T> Index rows_of(const CooMatrix<T>& m) { return m.rows; }
template <class T> Index rows_of(const CsrMatrix<T>& m) { return m.rows; }
template <class T> Index rows_of(const BcsrMatrix<T>& m) { return 3 * m.block_rows; }
template <class T> Index rows_of(const EllMatrix<T>& m) { return m.rows; }
template <class T> Index rows_of(const HybMatrix<T>& m) { return m.ell.rows; }
template <class M> Index rows_of(const DiagonalFirst<M>& m) { return rows_of(m.off); }

template <class T>
Index rows_of(const AnyMatrix<T>& a) {
  return std::visit([](const auto& m) { return rows_of(m); }, a);
}

// Bytes of the format's own arrays (each once, ELL padding included): with x and y once, the
// compulsory bytes of one SpMV (PERF_NOTES.md states the convention).
template <class T> std::size_t storage_bytes(const CooMatrix<T>& m);
template <class T> std::size_t storage_bytes(const CsrMatrix<T>& m);
template <class T> std::size_t storage_bytes(const BcsrMatrix<T>& m);
template <class T> std::size_t storage_bytes(const EllMatrix<T>& m);
template <class T> std::size_t storage_bytes(const HybMatrix<T>& m);
template <class M> std::size_t storage_bytes(const DiagonalFirst<M>& m);
template <class T> std::size_t storage_bytes(const AnyMatrix<T>& m);

}  // namespace eb::linalg
