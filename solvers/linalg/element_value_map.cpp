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

// Calls f(row, col, position) for every stored entry of one format (padding left out), positions
// shifted by `base`, from OpenMP threads in no fixed order: f must be thread-safe.
template <class T, class F>
void for_each_entry(const CooMatrix<T>& m, int64_t base, F&& f) {
#pragma omp parallel for schedule(static)
  for (int64_t k = 0; k < int64_t(m.val.size()); ++k) f(m.row[size_t(k)], m.col[size_t(k)], base + k);
}
template <class T, class F>
void for_each_entry(const CsrMatrix<T>& m, int64_t base, F&& f) {
#pragma omp parallel for schedule(static)
  for (Index r = 0; r < m.rows; ++r)
    for (Offset k = m.row_ptr[size_t(r)]; k < m.row_ptr[size_t(r) + 1]; ++k) f(r, m.col[size_t(k)], base + k);
}
template <class T, class F>
void for_each_entry(const EllMatrix<T>& m, int64_t base, F&& f) {
#pragma omp parallel for schedule(static)
  for (Index r = 0; r < m.rows; ++r)
    for (Index k = 0; k < m.width; ++k) {
      const int64_t idx = int64_t(k) * m.rows + r;
      if (m.col[size_t(idx)] >= 0) f(r, m.col[size_t(idx)], base + idx);
    }
}
template <class T, class F>
void for_each_entry(const HybMatrix<T>& m, int64_t base, F&& f) {
  for_each_entry(m.ell, base, f);
  for_each_entry(m.coo, base + int64_t(m.ell.val.size()), f);
}
template <class M, class F>
void for_each_entry(const DiagonalFirst<M>& m, int64_t base, F&& f) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < int64_t(m.diag.size()); ++r) f(Index(r), Index(r), base + r);
  for_each_entry(m.off, base + int64_t(m.diag.size()), f);
}
template <class T, class F>
void for_each_entry(const BcsrMatrix<T>&, int64_t, F&&) {
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
  // Node -> element incidence (flat), then each node's sorted neighbours, counted in one parallel
  // pass and written in a second: at 10^8 elements the per-node vectors this replaced spent most
  // of the set-up in serial allocation.
  const size_t N = size_t(nodes);
  std::vector<int64_t> inc_ptr(N + 1, 0);
  for (int32_t n : connectivity) ++inc_ptr[size_t(n) + 1];
  std::partial_sum(inc_ptr.begin(), inc_ptr.end(), inc_ptr.begin());
  std::vector<int64_t> inc(connectivity.size());
  {
    std::vector<int64_t> fill(inc_ptr.begin(), inc_ptr.end() - 1);
    for (int64_t e = 0; e < elements; ++e)
      for (int a = 0; a < npe; ++a) inc[size_t(fill[size_t(connectivity[size_t(e * npe + a)])]++)] = e;
  }
  auto neighbours = [&](size_t n, std::vector<Index>& buf) {
    buf.clear();
    buf.push_back(Index(n));
    for (int64_t k = inc_ptr[n]; k < inc_ptr[n + 1]; ++k)
      for (int b = 0; b < npe; ++b) buf.push_back(connectivity[size_t(inc[size_t(k)] * npe + b)]);
    std::sort(buf.begin(), buf.end());
    buf.erase(std::unique(buf.begin(), buf.end()), buf.end());
  };
  std::vector<int64_t> start(N + 1, 0);  // 9 x the node blocks before node n
#pragma omp parallel
  {
    std::vector<Index> buf;
#pragma omp for schedule(dynamic, 1024)
    for (int64_t n = 0; n < int64_t(N); ++n) {
      neighbours(size_t(n), buf);
      start[size_t(n) + 1] = 9 * int64_t(buf.size());
    }
  }
  std::partial_sum(start.begin(), start.end(), start.begin());
  AssembledMatrix<T> m;
  m.rows = m.cols = 3 * nodes;
  const size_t total = size_t(start[N]);
  m.row.resize(total);
  m.col.resize(total);
  m.val.resize(total);
#pragma omp parallel
  {
    std::vector<Index> buf;
#pragma omp for schedule(dynamic, 1024)
    for (int64_t n = 0; n < int64_t(N); ++n) {
      neighbours(size_t(n), buf);
      size_t k = size_t(start[size_t(n)]);
      for (int i = 0; i < 3; ++i)
        for (Index c : buf)
          for (int j = 0; j < 3; ++j, ++k) {
            m.row[k] = Index(3 * n + i);
            m.col[k] = 3 * c + j;
            m.val[k] = T(0);
          }
    }
  }
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
  // Counted per row and written per row by all threads (atomic cursors), then each row sorted by
  // column, which also makes the result independent of the order the threads wrote in. Flat
  // arrays and parallel passes: at 10^7 elements the serial version was most of the map's time.
  RowPositions rp;
  const size_t rows = size_t(rows_of(m));
  rp.row_ptr.assign(rows + 1, 0);
  Offset* count = rp.row_ptr.data() + 1;
  std::visit(
      [&](const auto& f) {
        for_each_entry(f, 0, [&](Index r, Index, int64_t) {
#pragma omp atomic
          ++count[r];
        });
      },
      m);
  std::partial_sum(rp.row_ptr.begin(), rp.row_ptr.end(), rp.row_ptr.begin());
  rp.col.resize(size_t(rp.row_ptr.back()));
  rp.pos.resize(size_t(rp.row_ptr.back()));
  {
    std::vector<Offset> fill(rp.row_ptr.begin(), rp.row_ptr.end() - 1);
    std::visit(
        [&](const auto& f) {
          for_each_entry(f, 0, [&](Index r, Index c, int64_t p) {
            Offset k;
#pragma omp atomic capture
            k = fill[size_t(r)]++;
            rp.col[size_t(k)] = c;
            rp.pos[size_t(k)] = p;
          });
        },
        m);
  }
#pragma omp parallel
  {
    std::vector<std::pair<Index, int64_t>> row;
#pragma omp for schedule(dynamic, 4096)
    for (int64_t r = 0; r < int64_t(rows); ++r) {
      const size_t b = size_t(rp.row_ptr[size_t(r)]), e = size_t(rp.row_ptr[size_t(r) + 1]);
      bool sorted = true;
      for (size_t k = b + 1; k < e && sorted; ++k) sorted = rp.col[k - 1] < rp.col[k];
      if (sorted) continue;
      row.clear();
      for (size_t k = b; k < e; ++k) row.push_back({rp.col[k], rp.pos[k]});
      std::sort(row.begin(), row.end());
      for (size_t k = b; k < e; ++k) {
        rp.col[k] = row[k - b].first;
        rp.pos[k] = row[k - b].second;
      }
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
    // Only the sizes are read: no copy of a pattern that can hold tens of GB.
    const ValueSegments<T> s = value_segments(const_cast<AnyMatrix<T>&>(pattern));
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
      // A node's three columns sit side by side in a row of the node-block pattern: one search
      // per node, then the next two checked in place (a search again where they are not there).
      const size_t row_begin = size_t(rp.row_ptr[size_t(dofs[r])]), row_end = size_t(rp.row_ptr[size_t(dofs[r]) + 1]);
      for (int a = 0; a < npe; ++a) {
        size_t k = row_end;
        for (int i = 0; i < 3; ++i) {
          const int c = 3 * a + i;
          const bool keep = dofs[r] == dofs[c] || (!is_constrained(dofs[r]) && !is_constrained(dofs[c]));
          if (!keep) continue;
          if (k < row_end) ++k;
          if (k >= row_end || rp.col[k] != dofs[c])
            k = size_t(std::lower_bound(rp.col.begin() + row_begin, rp.col.begin() + row_end, dofs[c]) - rp.col.begin());
          const int64_t p = (k < row_end && rp.col[k] == dofs[c]) ? rp.pos[k] : -1;
          if (p < 0) missing = std::max(missing, e);
          map.entry[size_t((e * L + r) * L + c)] = int32_t(p);
        }
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
