// The per-format element-entry -> value-position map (element_value_map.h).
#include "solvers/linalg/element_value_map.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <type_traits>

#include "meshes/errors.h"
#include "solvers/linalg/format_segments.h"

namespace eb::linalg {

namespace {

// Appends the stored entries of one format to per-row lists, positions shifted by `base`.
struct RowLists {
  std::vector<std::vector<std::pair<Index, int64_t>>> rows;
};

template <class T>
void add_entries(const CooMatrix<T>& m, int64_t base, RowLists& out) {
  for (size_t k = 0; k < m.val.size(); ++k) out.rows[size_t(m.row[k])].push_back({m.col[k], base + int64_t(k)});
}
template <class T>
void add_entries(const CsrMatrix<T>& m, int64_t base, RowLists& out) {
  for (Index r = 0; r < m.rows; ++r)
    for (Offset k = m.row_ptr[size_t(r)]; k < m.row_ptr[size_t(r) + 1]; ++k)
      out.rows[size_t(r)].push_back({m.col[size_t(k)], base + k});
}
template <class T>
void add_entries(const EllMatrix<T>& m, int64_t base, RowLists& out) {
  for (Index k = 0; k < m.width; ++k)
    for (Index r = 0; r < m.rows; ++r) {
      const int64_t idx = int64_t(k) * m.rows + r;
      if (m.col[size_t(idx)] >= 0) out.rows[size_t(r)].push_back({m.col[size_t(idx)], base + idx});
    }
}
template <class T>
void add_entries(const HybMatrix<T>& m, int64_t base, RowLists& out) {
  add_entries(m.ell, base, out);
  add_entries(m.coo, base + int64_t(m.ell.val.size()), out);
}
template <class M>
void add_entries(const DiagonalFirst<M>& m, int64_t base, RowLists& out) {
  for (size_t r = 0; r < m.diag.size(); ++r) out.rows[r].push_back({Index(r), base + int64_t(r)});
  add_entries(m.off, base + int64_t(m.diag.size()), out);
}
template <class T>
void add_entries(const BcsrMatrix<T>&, int64_t, RowLists&) {
  throw InputError("element value map: BCSR values are addressed per block (element_gather.h), not per entry");
}

}  // namespace

template <class T>
AssembledMatrix<T> element_pattern(Index nodes, int npe, const std::vector<int32_t>& connectivity) {
  const int64_t elements = int64_t(connectivity.size()) / npe;
  for (size_t k = 0; k < connectivity.size(); ++k)
    if (connectivity[k] < 0 || connectivity[k] >= nodes)
      throw InputError("element pattern: element " + std::to_string(k / size_t(npe)) + " names node " +
                       std::to_string(connectivity[k]) + ", outside [0, " + std::to_string(nodes) + ")");
  // Node adjacency, then every 3x3 block of it.
  std::vector<std::vector<Index>> adj(static_cast<size_t>(nodes));
  for (Index n = 0; n < nodes; ++n) adj[size_t(n)].push_back(n);
  for (int64_t e = 0; e < elements; ++e)
    for (int a = 0; a < npe; ++a)
      for (int b = 0; b < npe; ++b) adj[size_t(connectivity[size_t(e * npe + a)])].push_back(connectivity[size_t(e * npe + b)]);
  AssembledMatrix<T> m;
  m.rows = m.cols = 3 * nodes;
  for (auto& l : adj) {
    std::sort(l.begin(), l.end());
    l.erase(std::unique(l.begin(), l.end()), l.end());
  }
  size_t total = 0;
  for (const auto& l : adj) total += 9 * l.size();
  m.row.reserve(total);
  m.col.reserve(total);
  for (Index n = 0; n < nodes; ++n)
    for (int i = 0; i < 3; ++i)
      for (Index c : adj[size_t(n)])
        for (int j = 0; j < 3; ++j) {
          m.row.push_back(3 * n + i);
          m.col.push_back(3 * c + j);
        }
  m.val.assign(total, T(0));
  m.block = 3;
  return m;
}

template <class T>
ValueSegments<T> value_segments(AnyMatrix<T>& m) {
  if (format_of(m) == Format::Bcsr)
    throw InputError("value segments: BCSR values are addressed per block (element_gather.h), not per entry");
  return std::visit([&](auto& f) { return host_value_segments(f); }, m);
}

template <class T>
RowPositions row_positions(const AnyMatrix<T>& m) {
  RowLists lists;
  lists.rows.resize(size_t(rows_of(m)));
  std::visit([&](const auto& f) { add_entries(f, 0, lists); }, m);
  RowPositions rp;
  rp.row_ptr.assign(lists.rows.size() + 1, 0);
  for (size_t r = 0; r < lists.rows.size(); ++r) rp.row_ptr[r + 1] = rp.row_ptr[r] + Offset(lists.rows[r].size());
  rp.col.resize(size_t(rp.row_ptr.back()));
  rp.pos.resize(size_t(rp.row_ptr.back()));
  for (size_t r = 0; r < lists.rows.size(); ++r) {
    auto& l = lists.rows[r];
    std::sort(l.begin(), l.end());
    for (size_t k = 0; k < l.size(); ++k) {
      rp.col[size_t(rp.row_ptr[r]) + k] = l[k].first;
      rp.pos[size_t(rp.row_ptr[r]) + k] = l[k].second;
    }
  }
  return rp;
}

template <class T>
std::vector<int64_t> diagonal_positions(const AnyMatrix<T>& m) {
  const RowPositions rp = row_positions(m);
  std::vector<int64_t> d(rp.row_ptr.size() - 1, -1);
  for (size_t r = 0; r + 1 < rp.row_ptr.size(); ++r)
    for (Offset k = rp.row_ptr[r]; k < rp.row_ptr[r + 1]; ++k)
      if (rp.col[size_t(k)] == Index(r)) d[r] = rp.pos[size_t(k)];
  return d;
}

template <class T>
ElementValueMap make_element_value_map(const AnyMatrix<T>& pattern, int npe, const std::vector<int32_t>& connectivity,
                                       const std::vector<uint8_t>& constrained) {
  ElementValueMap map;
  map.format = format_of(pattern);
  map.rows = rows_of(pattern);
  map.nodes_per_element = npe;
  map.elements = int64_t(connectivity.size()) / npe;
  {
    AnyMatrix<T> copy = pattern;  // value_segments needs a mutable matrix; only the sizes are kept
    const ValueSegments<T> s = value_segments(copy);
    for (int k = 0; k < s.count; ++k) map.segment_sizes.push_back(s.end[k] - (k ? s.end[k - 1] : 0));
    map.value_count = s.size();
  }
  if (map.value_count > std::numeric_limits<int32_t>::max())
    throw InputError("element value map: " + std::to_string(map.value_count) + " values in the " +
                     to_string(map.format) + " pattern exceed the 32-bit positions (2^31 - 1)");
  const RowPositions rp = row_positions(pattern);
  const Index nodes = map.rows / 3;
  auto is_constrained = [&](Index dof) {
    return !constrained.empty() && (constrained[size_t(dof / 3)] >> (dof % 3) & 1);
  };
  auto find = [&](Index r, Index c) -> int64_t {
    const auto b = rp.col.begin() + rp.row_ptr[size_t(r)], e = rp.col.begin() + rp.row_ptr[size_t(r) + 1];
    const auto it = std::lower_bound(b, e, c);
    return (it != e && *it == c) ? rp.pos[size_t(it - rp.col.begin())] : -1;
  };
  map.diag.resize(size_t(map.rows));
  for (Index r = 0; r < map.rows; ++r) {
    const int64_t p = find(r, r);
    if (p < 0) throw InputError("element value map: row " + std::to_string(r) + " has no diagonal entry");
    map.diag[size_t(r)] = int32_t(p);
  }
  const int L = map.local_size();
  map.entry.assign(size_t(map.elements * L * L), -1);
  map.dof.assign(size_t(map.elements * L), -1);
  if (npe > 8) throw InputError("element value map: more than 8 nodes per element");
  for (size_t k = 0; k < connectivity.size(); ++k)
    if (connectivity[k] < 0 || connectivity[k] >= nodes)
      throw InputError("element value map: element " + std::to_string(k / size_t(npe)) + " names node " +
                       std::to_string(connectivity[k]) + ", outside the pattern's " + std::to_string(nodes));
  int64_t missing = -1;
#pragma omp parallel for schedule(static) reduction(max : missing)
  for (int64_t e = 0; e < map.elements; ++e) {
    Index dofs[3 * 8];
    for (int a = 0; a < npe; ++a)
      for (int i = 0; i < 3; ++i) dofs[3 * a + i] = 3 * connectivity[size_t(e * npe + a)] + i;
    for (int r = 0; r < L; ++r) {
      if (!is_constrained(dofs[r])) map.dof[size_t(e * L + r)] = dofs[r];
      for (int c = 0; c < L; ++c) {
        const bool keep = dofs[r] == dofs[c] || (!is_constrained(dofs[r]) && !is_constrained(dofs[c]));
        if (!keep) continue;
        const int64_t p = find(dofs[r], dofs[c]);
        if (p < 0) missing = std::max(missing, e);
        map.entry[size_t((e * L + r) * L + c)] = int32_t(p);
      }
    }
  }
  if (missing >= 0)
    throw InputError("element value map: element " + std::to_string(missing) + " has an entry the " +
                     to_string(map.format) + " pattern lacks");
  return map;
}

ValueContributions invert_element_value_map(const ElementValueMap& map) {
  ValueContributions c;
  auto invert = [](const std::vector<int32_t>& target, int64_t count, std::vector<int64_t>& ptr,
                   std::vector<int64_t>& src) {
    ptr.assign(size_t(count) + 1, 0);
    for (int32_t p : target)
      if (p >= 0) ++ptr[size_t(p) + 1];
    for (size_t k = 1; k < ptr.size(); ++k) ptr[k] += ptr[k - 1];
    src.resize(size_t(ptr.back()));
    std::vector<int64_t> fill(ptr.begin(), ptr.end() - 1);
    for (size_t q = 0; q < target.size(); ++q)
      if (target[q] >= 0) src[size_t(fill[size_t(target[q])]++)] = int64_t(q);
  };
  invert(map.entry, map.value_count, c.value_ptr, c.value_src);
  invert(map.dof, map.rows, c.row_ptr, c.row_src);
  return c;
}

template <class T>
void add_element_entries(const ElementValueMap& map, const T* local, const T* vec, ValueSegments<T> values, T* y) {
  const int L = map.local_size();
  if (local) {
    for (int64_t p = 0; p < values.size(); ++p) values.at(p) = T(0);
    for (int64_t e = 0; e < map.elements; ++e)
      for (int q = 0; q < L * L; ++q)
        if (const int32_t p = map.entry[size_t(e * L * L + q)]; p >= 0) values.at(p) += local[e * L * L + q];
  }
  if (vec) {
    std::fill(y, y + map.rows, T(0));
    for (int64_t e = 0; e < map.elements; ++e)
      for (int r = 0; r < L; ++r)
        if (const int32_t d = map.dof[size_t(e * L + r)]; d >= 0) y[d] += vec[e * L + r];
  }
}

#define EB_ELEMENT_VALUE_MAP_INSTANTIATIONS(T)                                                                 \
  template AssembledMatrix<T> element_pattern(Index, int, const std::vector<int32_t>&);                        \
  template ValueSegments<T> value_segments(AnyMatrix<T>&);                                                    \
  template RowPositions row_positions(const AnyMatrix<T>&);                                                   \
  template std::vector<int64_t> diagonal_positions(const AnyMatrix<T>&);                                      \
  template ElementValueMap make_element_value_map(const AnyMatrix<T>&, int, const std::vector<int32_t>&,     \
                                                  const std::vector<uint8_t>&);                               \
  template void add_element_entries(const ElementValueMap&, const T*, const T*, ValueSegments<T>, T*);
EB_ELEMENT_VALUE_MAP_INSTANTIATIONS(float)
EB_ELEMENT_VALUE_MAP_INSTANTIATIONS(double)

}  // namespace eb::linalg
