// Conversions between the assembled description and every format. Each to_X walks the sorted
// description once; each to_assembled emits entries in (row, col) order directly and falls back to
// a sort only for hand-made input that is not in canonical order.
#include "solvers/linalg/sparse_formats.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "meshes/errors.h"

namespace eb::linalg {

namespace {

const std::vector<std::pair<Format, const char*>>& format_names() {
  static const std::vector<std::pair<Format, const char*>> names = {
      {Format::Coo, "coo"},   {Format::Csr, "csr"},   {Format::Bcsr, "bcsr"}, {Format::Ell, "ell"},
      {Format::Hyb, "hyb"},   {Format::Dcoo, "dcoo"}, {Format::Dcsr, "dcsr"}, {Format::Dhyb, "dhyb"}};
  return names;
}

// Start of each row's entries in a (row-sorted) description: rows + 1 offsets.
template <class T>
std::vector<Offset> row_starts(const AssembledMatrix<T>& a) {
  std::vector<Offset> ptr(size_t(a.rows) + 1, 0);
  for (Index r : a.row) ++ptr[size_t(r) + 1];
  std::partial_sum(ptr.begin(), ptr.end(), ptr.begin());
  return ptr;
}

std::vector<Offset> lengths_from_starts(const std::vector<Offset>& ptr) {
  std::vector<Offset> len(ptr.size() - 1);
  for (size_t i = 0; i + 1 < ptr.size(); ++i) len[i] = ptr[i + 1] - ptr[i];
  return len;
}

// An empty description of the given size, with room for `reserve` entries.
template <class T>
AssembledMatrix<T> shell(Index rows, Index cols, size_t reserve) {
  AssembledMatrix<T> a;
  a.rows = rows;
  a.cols = cols;
  a.row.reserve(reserve);
  a.col.reserve(reserve);
  a.val.reserve(reserve);
  return a;
}

// Appends one entry to a description under construction.
template <class T>
void push(AssembledMatrix<T>& a, Index r, Index c, T v) {
  a.row.push_back(r);
  a.col.push_back(c);
  a.val.push_back(v);
}

// Finishes a description built entry by entry: re-sorts (summing duplicates) only when the input
// was not already canonical, then records the block structure.
template <class T>
AssembledMatrix<T> canonical(AssembledMatrix<T> a) {
  bool sorted = true;
  for (size_t k = 1; k < a.val.size() && sorted; ++k)
    sorted = a.row[k - 1] < a.row[k] || (a.row[k - 1] == a.row[k] && a.col[k - 1] < a.col[k]);
  if (!sorted) {
    std::vector<Triplet<T>> t(a.val.size());
    for (size_t k = 0; k < t.size(); ++k) t[k] = {a.row[k], a.col[k], a.val[k]};
    return assemble_from_triplets(a.rows, a.cols, std::move(t));
  }
  a.block = detect_block_size(a);
  return a;
}

template <class T>
void require_square(const AssembledMatrix<T>& a, const char* what) {
  if (a.rows != a.cols)
    throw InputError(std::string(what) + " needs a square matrix, got " + std::to_string(a.rows) + " x " +
                     std::to_string(a.cols));
}

// Splits a square description into its diagonal and the off-diagonal rest; every diagonal entry
// must be in the pattern (else the D-format could not give the pattern back). Rows are counted,
// then copied in parallel: a set-up's pattern reaches 10^9 entries.
template <class T>
std::pair<std::vector<T>, AssembledMatrix<T>> split_diagonal(const AssembledMatrix<T>& a, const char* what) {
  require_square(a, what);
  const std::vector<Offset> ptr = row_starts(a);
  const int64_t rows = a.rows;
  std::vector<T> diag(size_t(rows), T(0));
  std::vector<Offset> off_ptr(size_t(rows) + 1, 0);
  int64_t missing = std::numeric_limits<int64_t>::max();  // the first row without a diagonal
#pragma omp parallel for schedule(static) reduction(min : missing)
  for (int64_t i = 0; i < rows; ++i) {
    bool seen = false;
    for (Offset k = ptr[size_t(i)]; k < ptr[size_t(i) + 1]; ++k)
      if (a.col[size_t(k)] == Index(i)) {
        diag[size_t(i)] = a.val[size_t(k)];
        seen = true;
      }
    off_ptr[size_t(i) + 1] = ptr[size_t(i) + 1] - ptr[size_t(i)] - (seen ? 1 : 0);
    if (!seen) missing = std::min(missing, i);
  }
  if (missing != std::numeric_limits<int64_t>::max())
    throw InputError(std::string(what) + " needs every diagonal entry in the pattern: row " + std::to_string(missing) +
                     " has none");
  std::partial_sum(off_ptr.begin(), off_ptr.end(), off_ptr.begin());
  AssembledMatrix<T> off;
  off.rows = a.rows;
  off.cols = a.cols;
  off.row.resize(size_t(off_ptr.back()));
  off.col.resize(size_t(off_ptr.back()));
  off.val.resize(size_t(off_ptr.back()));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < rows; ++i) {
    size_t q = size_t(off_ptr[size_t(i)]);
    for (Offset k = ptr[size_t(i)]; k < ptr[size_t(i) + 1]; ++k)
      if (a.col[size_t(k)] != Index(i)) {
        off.row[q] = Index(i);
        off.col[q] = a.col[size_t(k)];
        off.val[q++] = a.val[size_t(k)];
      }
  }
  off.block = 1;
  return {std::move(diag), std::move(off)};
}

// Puts the diagonal back into an off-diagonal description, each at its column position.
template <class T>
AssembledMatrix<T> merge_diagonal(const std::vector<T>& diag, const AssembledMatrix<T>& off) {
  AssembledMatrix<T> a = shell<T>(off.rows, off.cols, off.nnz() + diag.size());
  size_t k = 0;
  for (Index i = 0; i < off.rows; ++i) {
    bool placed = false;
    for (; k < off.nnz() && off.row[k] == i; ++k) {
      if (!placed && off.col[k] > i) {
        push(a, i, i, diag[size_t(i)]);
        placed = true;
      }
      push(a, i, off.col[k], off.val[k]);
    }
    if (!placed) push(a, i, i, diag[size_t(i)]);
  }
  return canonical(std::move(a));
}

template <class T>
std::size_t coo_bytes(const CooMatrix<T>& m) {
  return m.nnz() * (2 * sizeof(Index) + sizeof(T));
}

}  // namespace

std::string to_string(Format f) {
  for (const auto& [fmt, name] : format_names())
    if (fmt == f) return name;
  return "unknown";
}

Format format_from_string(const std::string& name) {
  std::string choices;
  for (const auto& [fmt, n] : format_names()) {
    if (name == n) return fmt;
    choices += (choices.empty() ? "" : ", ") + std::string(n);
  }
  throw InputError("unknown sparse format '" + name + "' (choices: " + choices + ")");
}

const std::vector<Format>& all_formats() {
  static const std::vector<Format> all = {Format::Coo, Format::Csr,  Format::Bcsr, Format::Ell,
                                          Format::Hyb, Format::Dcoo, Format::Dcsr, Format::Dhyb};
  return all;
}

bool is_diagonal_first(Format f) { return f == Format::Dcoo || f == Format::Dcsr || f == Format::Dhyb; }

template <class T>
AssembledMatrix<T> assemble_from_triplets(Index rows, Index cols, std::vector<Triplet<T>> t) {
  if (rows < 0 || cols < 0) throw InputError("sparse matrix: negative dimensions");
  for (size_t k = 0; k < t.size(); ++k)
    if (t[k].row < 0 || t[k].row >= rows || t[k].col < 0 || t[k].col >= cols)
      throw InputError("sparse matrix: entry " + std::to_string(k) + " at (" + std::to_string(t[k].row) + ", " +
                       std::to_string(t[k].col) + ") lies outside " + std::to_string(rows) + " x " +
                       std::to_string(cols));
  // Stable, so that duplicates are summed in their input order (reproducible sums).
  std::stable_sort(t.begin(), t.end(),
                   [](const Triplet<T>& a, const Triplet<T>& b) { return a.row != b.row ? a.row < b.row : a.col < b.col; });
  AssembledMatrix<T> a;
  a.rows = rows;
  a.cols = cols;
  for (size_t k = 0; k < t.size(); ++k) {
    if (!a.val.empty() && a.row.back() == t[k].row && a.col.back() == t[k].col)
      a.val.back() += t[k].val;
    else
      push(a, t[k].row, t[k].col, t[k].val);
  }
  a.block = detect_block_size(a);
  return a;
}

template <class T>
int detect_block_size(const AssembledMatrix<T>& a, Index* first_violation) {
  auto fail = [&](Index row) {
    if (first_violation) *first_violation = row;
    return 1;
  };
  if (a.rows % 3 != 0 || a.cols % 3 != 0) return fail(0);
  const std::vector<Offset> ptr = row_starts(a);
  for (Index br = 0; br < a.rows / 3; ++br) {
    const Offset s0 = ptr[size_t(3 * br)], n0 = ptr[size_t(3 * br) + 1] - s0;
    if (n0 % 3 != 0) return fail(3 * br);
    for (Offset k = 0; k < n0; k += 3) {
      const Index c = a.col[size_t(s0 + k)];
      if (c % 3 != 0 || a.col[size_t(s0 + k + 1)] != c + 1 || a.col[size_t(s0 + k + 2)] != c + 2) return fail(3 * br);
    }
    for (int r = 1; r < 3; ++r) {
      const Offset s = ptr[size_t(3 * br + r)];
      if (ptr[size_t(3 * br + r) + 1] - s != n0 ||
          !std::equal(a.col.begin() + s, a.col.begin() + s + n0, a.col.begin() + s0))
        return fail(3 * br + r);
    }
  }
  if (first_violation) *first_violation = -1;
  return 3;
}

Index hyb_default_width(const std::vector<Offset>& len) {
  if (len.empty()) return 0;
  // count[k] = rows with at least k entries; the widest K whose column is at least 1/3 full.
  const Offset longest = *std::max_element(len.begin(), len.end());
  std::vector<Offset> at_least(size_t(longest) + 2, 0);
  for (Offset l : len) ++at_least[size_t(l)];
  for (Offset k = longest; k > 0; --k) at_least[size_t(k) - 1] += at_least[size_t(k)];
  const Offset need = std::max<Offset>(1, Offset(len.size()) / 3);
  Index width = 0;
  for (Offset k = 1; k <= longest; ++k)
    if (at_least[size_t(k)] >= need) width = Index(k);
  return width;
}

// ---- to formats ----

template <class T>
CooMatrix<T> to_coo(const AssembledMatrix<T>& a) {
  return CooMatrix<T>{a.rows, a.cols, a.row, a.col, a.val};
}

template <class T>
CsrMatrix<T> to_csr(const AssembledMatrix<T>& a) {
  return CsrMatrix<T>{a.rows, a.cols, row_starts(a), a.col, a.val};
}

template <class T>
BcsrMatrix<T> to_bcsr(const AssembledMatrix<T>& a) {
  Index bad = -1;
  if (detect_block_size(a, &bad) != 3) {
    if (a.rows % 3 != 0 || a.cols % 3 != 0)
      throw InputError("BCSR needs dimensions that are multiples of 3, got " + std::to_string(a.rows) + " x " +
                       std::to_string(a.cols));
    throw InputError("BCSR needs a pattern of whole 3x3 blocks: row " + std::to_string(bad) +
                     " does not match its block row");
  }
  const std::vector<Offset> ptr = row_starts(a);
  BcsrMatrix<T> m;
  m.block_rows = a.rows / 3;
  m.block_cols = a.cols / 3;
  m.row_ptr.assign(size_t(m.block_rows) + 1, 0);
  for (Index br = 0; br < m.block_rows; ++br)
    m.row_ptr[size_t(br) + 1] = m.row_ptr[size_t(br)] + (ptr[size_t(3 * br) + 1] - ptr[size_t(3 * br)]) / 3;
  m.col.resize(size_t(m.row_ptr.back()));
  m.val.resize(9 * m.col.size());
  for (Index br = 0; br < m.block_rows; ++br) {
    const Offset nb = m.row_ptr[size_t(br) + 1] - m.row_ptr[size_t(br)];
    for (Offset j = 0; j < nb; ++j) {
      const size_t blk = size_t(m.row_ptr[size_t(br)] + j);
      m.col[blk] = a.col[size_t(ptr[size_t(3 * br)] + 3 * j)] / 3;
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) m.val[9 * blk + size_t(3 * r + c)] = a.val[size_t(ptr[size_t(3 * br + r)] + 3 * j + c)];
    }
  }
  return m;
}

// The first `width` entries of every row as ELL (column-major), rows in parallel.
template <class T>
EllMatrix<T> ell_head(const AssembledMatrix<T>& a, const std::vector<Offset>& ptr, Index width) {
  EllMatrix<T> m;
  m.rows = a.rows;
  m.cols = a.cols;
  m.width = width;
  m.col.assign(size_t(width) * size_t(a.rows), Index(-1));
  m.val.assign(size_t(width) * size_t(a.rows), T(0));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < int64_t(a.rows); ++i) {
    const Offset len = std::min<Offset>(ptr[size_t(i) + 1] - ptr[size_t(i)], width);
    for (Offset k = 0; k < len; ++k) {
      const size_t slot = size_t(k) * size_t(a.rows) + size_t(i);
      m.col[slot] = a.col[size_t(ptr[size_t(i)] + k)];
      m.val[slot] = a.val[size_t(ptr[size_t(i)] + k)];
    }
  }
  return m;
}

template <class T>
EllMatrix<T> to_ell(const AssembledMatrix<T>& a, Index width) {
  const std::vector<Offset> ptr = row_starts(a);
  const std::vector<Offset> len = lengths_from_starts(ptr);
  const Offset longest = len.empty() ? 0 : *std::max_element(len.begin(), len.end());
  if (width < 0) width = Index(longest);
  if (width < longest)
    throw InputError("ELL width " + std::to_string(width) + " is smaller than the longest row (" +
                     std::to_string(longest) + " entries, row " +
                     std::to_string(std::max_element(len.begin(), len.end()) - len.begin()) + ")");
  return ell_head(a, ptr, width);
}

template <class T>
HybMatrix<T> to_hyb(const AssembledMatrix<T>& a, Index width) {
  const std::vector<Offset> ptr = row_starts(a);
  const std::vector<Offset> len = lengths_from_starts(ptr);
  if (width < 0) width = hyb_default_width(len);
  HybMatrix<T> m;
  // The ELL part is the description cut at `width` entries per row; the rest, in order, is COO.
  m.ell = ell_head(a, ptr, width);
  std::vector<Offset> tail(len.size() + 1, 0);
  for (size_t i = 0; i < len.size(); ++i) tail[i + 1] = tail[i] + std::max<Offset>(0, len[i] - width);
  m.coo.rows = a.rows;
  m.coo.cols = a.cols;
  m.coo.row.resize(size_t(tail.back()));
  m.coo.col.resize(size_t(tail.back()));
  m.coo.val.resize(size_t(tail.back()));
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < int64_t(a.rows); ++i)
    for (Offset k = width; k < len[size_t(i)]; ++k) {
      const size_t q = size_t(tail[size_t(i)] + k - width), e = size_t(ptr[size_t(i)] + k);
      m.coo.row[q] = a.row[e];
      m.coo.col[q] = a.col[e];
      m.coo.val[q] = a.val[e];
    }
  return m;
}

template <class T>
DcooMatrix<T> to_dcoo(const AssembledMatrix<T>& a) {
  auto [diag, off] = split_diagonal(a, "DCOO");
  return DcooMatrix<T>{std::move(diag), to_coo(off)};
}

template <class T>
DcsrMatrix<T> to_dcsr(const AssembledMatrix<T>& a) {
  auto [diag, off] = split_diagonal(a, "DCSR");
  return DcsrMatrix<T>{std::move(diag), to_csr(off)};
}

template <class T>
DhybMatrix<T> to_dhyb(const AssembledMatrix<T>& a, Index width) {
  auto [diag, off] = split_diagonal(a, "DHYB");
  return DhybMatrix<T>{std::move(diag), to_hyb(off, width)};
}

// ---- back to the description ----

template <class T>
AssembledMatrix<T> to_assembled(const CooMatrix<T>& m) {
  AssembledMatrix<T> a = shell<T>(m.rows, m.cols, 0);
  a.row = m.row;
  a.col = m.col;
  a.val = m.val;
  return canonical(std::move(a));
}

template <class T>
AssembledMatrix<T> to_assembled(const CsrMatrix<T>& m) {
  AssembledMatrix<T> a = shell<T>(m.rows, m.cols, 0);
  a.row.resize(m.nnz());
  for (Index i = 0; i < m.rows; ++i)
    std::fill(a.row.begin() + m.row_ptr[size_t(i)], a.row.begin() + m.row_ptr[size_t(i) + 1], i);
  a.col = m.col;
  a.val = m.val;
  return canonical(std::move(a));
}

template <class T>
AssembledMatrix<T> to_assembled(const BcsrMatrix<T>& m) {
  AssembledMatrix<T> a = shell<T>(3 * m.block_rows, 3 * m.block_cols, m.nnz());
  for (Index br = 0; br < m.block_rows; ++br)
    for (int r = 0; r < 3; ++r)
      for (Offset b = m.row_ptr[size_t(br)]; b < m.row_ptr[size_t(br) + 1]; ++b)
        for (int c = 0; c < 3; ++c) push(a, 3 * br + r, 3 * m.col[size_t(b)] + c, m.val[9 * size_t(b) + size_t(3 * r + c)]);
  return canonical(std::move(a));
}

template <class T>
AssembledMatrix<T> to_assembled(const EllMatrix<T>& m) {
  AssembledMatrix<T> a = shell<T>(m.rows, m.cols, m.val.size());
  for (Index i = 0; i < m.rows; ++i)
    for (Index k = 0; k < m.width; ++k) {
      const size_t slot = size_t(k) * size_t(m.rows) + size_t(i);
      if (m.col[slot] >= 0) push(a, i, m.col[slot], m.val[slot]);
    }
  return canonical(std::move(a));
}

template <class T>
AssembledMatrix<T> to_assembled(const HybMatrix<T>& m) {
  AssembledMatrix<T> a = shell<T>(m.ell.rows, m.ell.cols, m.ell.val.size() + m.coo.nnz());
  size_t k = 0;  // COO cursor (row-sorted)
  for (Index i = 0; i < m.ell.rows; ++i) {
    for (Index j = 0; j < m.ell.width; ++j) {
      const size_t slot = size_t(j) * size_t(m.ell.rows) + size_t(i);
      if (m.ell.col[slot] >= 0) push(a, i, m.ell.col[slot], m.ell.val[slot]);
    }
    for (; k < m.coo.nnz() && m.coo.row[k] == i; ++k) push(a, i, m.coo.col[k], m.coo.val[k]);
  }
  // COO entries left over (an unsorted hand-made COO part) still count.
  for (; k < m.coo.nnz(); ++k) push(a, m.coo.row[k], m.coo.col[k], m.coo.val[k]);
  return canonical(std::move(a));
}

template <class M>
AssembledMatrix<typename M::value_type> to_assembled(const DiagonalFirst<M>& m) {
  return merge_diagonal(m.diag, to_assembled(m.off));
}


template <class T>
AnyMatrix<T> make_format(const AssembledMatrix<T>& a, Format f) {
  switch (f) {
    case Format::Coo: return to_coo(a);
    case Format::Csr: return to_csr(a);
    case Format::Bcsr: return to_bcsr(a);
    case Format::Ell: return to_ell(a);
    case Format::Hyb: return to_hyb(a);
    case Format::Dcoo: return to_dcoo(a);
    case Format::Dcsr: return to_dcsr(a);
    case Format::Dhyb: return to_dhyb(a);
  }
  throw std::logic_error("make_format: unknown format");
}

template <class T>
Format format_of(const AnyMatrix<T>& m) {
  return all_formats()[m.index()];  // the variant lists the formats in enum order
}

template <class T>
AssembledMatrix<T> to_assembled(const AnyMatrix<T>& m) {
  return std::visit([](const auto& x) { return to_assembled(x); }, m);
}

// ---- sizes ----

template <class T>
std::size_t storage_bytes(const CooMatrix<T>& m) {
  return coo_bytes(m);
}
template <class T>
std::size_t storage_bytes(const CsrMatrix<T>& m) {
  return m.row_ptr.size() * sizeof(Offset) + m.nnz() * (sizeof(Index) + sizeof(T));
}
template <class T>
std::size_t storage_bytes(const BcsrMatrix<T>& m) {
  return m.row_ptr.size() * sizeof(Offset) + m.blocks() * (sizeof(Index) + 9 * sizeof(T));
}
template <class T>
std::size_t storage_bytes(const EllMatrix<T>& m) {
  return m.col.size() * (sizeof(Index) + sizeof(T));
}
template <class T>
std::size_t storage_bytes(const HybMatrix<T>& m) {
  return storage_bytes(m.ell) + coo_bytes(m.coo);
}
template <class M>
std::size_t storage_bytes(const DiagonalFirst<M>& m) {
  return m.diag.size() * sizeof(typename M::value_type) + storage_bytes(m.off);
}
template <class T>
std::size_t storage_bytes(const AnyMatrix<T>& m) {
  return std::visit([](const auto& x) { return storage_bytes(x); }, m);
}

#define EB_LINALG_INSTANTIATE(T)                                                                   \
  template AssembledMatrix<T> assemble_from_triplets(Index, Index, std::vector<Triplet<T>>);       \
  template int detect_block_size(const AssembledMatrix<T>&, Index*);                               \
  template CooMatrix<T> to_coo(const AssembledMatrix<T>&);                                         \
  template CsrMatrix<T> to_csr(const AssembledMatrix<T>&);                                         \
  template BcsrMatrix<T> to_bcsr(const AssembledMatrix<T>&);                                       \
  template EllMatrix<T> to_ell(const AssembledMatrix<T>&, Index);                                  \
  template HybMatrix<T> to_hyb(const AssembledMatrix<T>&, Index);                                  \
  template DcooMatrix<T> to_dcoo(const AssembledMatrix<T>&);                                       \
  template DcsrMatrix<T> to_dcsr(const AssembledMatrix<T>&);                                       \
  template DhybMatrix<T> to_dhyb(const AssembledMatrix<T>&, Index);                                \
  template AssembledMatrix<T> to_assembled(const CooMatrix<T>&);                                   \
  template AssembledMatrix<T> to_assembled(const CsrMatrix<T>&);                                   \
  template AssembledMatrix<T> to_assembled(const BcsrMatrix<T>&);                                  \
  template AssembledMatrix<T> to_assembled(const EllMatrix<T>&);                                   \
  template AssembledMatrix<T> to_assembled(const HybMatrix<T>&);                                   \
  template AssembledMatrix<T> to_assembled(const DcooMatrix<T>&);                                  \
  template AssembledMatrix<T> to_assembled(const DcsrMatrix<T>&);                                  \
  template AssembledMatrix<T> to_assembled(const DhybMatrix<T>&);                                  \
  template AnyMatrix<T> make_format(const AssembledMatrix<T>&, Format);                            \
  template Format format_of(const AnyMatrix<T>&);                                                  \
  template AssembledMatrix<T> to_assembled(const AnyMatrix<T>&);                                   \
  template std::size_t storage_bytes(const CooMatrix<T>&);                                         \
  template std::size_t storage_bytes(const CsrMatrix<T>&);                                         \
  template std::size_t storage_bytes(const BcsrMatrix<T>&);                                        \
  template std::size_t storage_bytes(const EllMatrix<T>&);                                         \
  template std::size_t storage_bytes(const HybMatrix<T>&);                                         \
  template std::size_t storage_bytes(const DcooMatrix<T>&);                                        \
  template std::size_t storage_bytes(const DcsrMatrix<T>&);                                        \
  template std::size_t storage_bytes(const DhybMatrix<T>&);                                        \
  template std::size_t storage_bytes(const AnyMatrix<T>&);

EB_LINALG_INSTANTIATE(float)
EB_LINALG_INSTANTIATE(double)
#undef EB_LINALG_INSTANTIATE

}  // namespace eb::linalg
