#include "solvers/linalg/element_gather.h"

#include <algorithm>
#include <limits>
#include <string>

#include "meshes/errors.h"
#include "solvers/linalg/spmv_cpu.h"

namespace eb::linalg {

BlockGatherPlan make_block_gather_plan(Index nodes, int npe, const std::vector<int32_t>& conn,
                                       const std::vector<uint8_t>& constrained) {
  if (npe < 1 || conn.size() % size_t(npe) != 0)
    throw InputError("element gather: connectivity of " + std::to_string(conn.size()) + " ids is not a multiple of " +
                     std::to_string(npe) + " nodes per element");
  if (!constrained.empty() && constrained.size() != size_t(nodes))
    throw InputError("element gather: " + std::to_string(constrained.size()) + " constraint flags for " +
                     std::to_string(nodes) + " nodes");
  BlockGatherPlan p;
  p.nodes = nodes;
  p.nodes_per_element = npe;
  p.elements = int64_t(conn.size() / size_t(npe));
  p.constrained = constrained.empty() ? std::vector<uint8_t>(size_t(nodes), 0) : constrained;
  for (size_t k = 0; k < conn.size(); ++k)
    if (conn[k] < 0 || conn[k] >= nodes)
      throw InputError("element gather: element " + std::to_string(k / size_t(npe)) + " names node " +
                       std::to_string(conn[k]) + ", outside [0, " + std::to_string(nodes) + ")");
  const int64_t E = p.elements;
  const int64_t nb = int64_t(npe) * npe;

  // Node -> element slots (counting sort: slots come out in increasing order per node).
  p.node_ptr.assign(size_t(nodes) + 1, 0);
  for (int32_t n : conn) ++p.node_ptr[size_t(n) + 1];
  for (Index n = 0; n < nodes; ++n) p.node_ptr[size_t(n) + 1] += p.node_ptr[size_t(n)];
  p.node_slot.resize(conn.size());
  {
    std::vector<Offset> next(p.node_ptr.begin(), p.node_ptr.end() - 1);
    for (size_t k = 0; k < conn.size(); ++k) p.node_slot[size_t(next[size_t(conn[k])]++)] = int64_t(k);
  }

  // Block pattern: per row node, the sorted unique nodes it shares an element with (itself too).
  p.row_ptr.assign(size_t(nodes) + 1, 0);
  std::vector<std::vector<Index>> cols(static_cast<size_t>(nodes));
#pragma omp parallel for schedule(dynamic, 256)
  for (Index n = 0; n < nodes; ++n) {
    auto& c = cols[size_t(n)];
    c.push_back(n);
    for (Offset s = p.node_ptr[size_t(n)]; s < p.node_ptr[size_t(n) + 1]; ++s) {
      const int64_t e = p.node_slot[size_t(s)] / npe;
      for (int b = 0; b < npe; ++b) c.push_back(conn[size_t(e * npe + b)]);
    }
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
  }
  for (Index n = 0; n < nodes; ++n) p.row_ptr[size_t(n) + 1] = p.row_ptr[size_t(n)] + Offset(cols[size_t(n)].size());
  p.col.resize(size_t(p.row_ptr.back()));
  p.diag_block.resize(size_t(nodes));
  for (Index n = 0; n < nodes; ++n) {
    const auto& c = cols[size_t(n)];
    std::copy(c.begin(), c.end(), p.col.begin() + p.row_ptr[size_t(n)]);
    p.diag_block[size_t(n)] = p.row_ptr[size_t(n)] + Offset(std::lower_bound(c.begin(), c.end(), n) - c.begin());
    std::vector<Index>().swap(cols[size_t(n)]);
  }

  // Element blocks -> matrix blocks.
  p.element_block.resize(size_t(E * nb));
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < E; ++e)
    for (int a = 0; a < npe; ++a) {
      const Index r = conn[size_t(e * npe + a)];
      const auto first = p.col.begin() + p.row_ptr[size_t(r)], last = p.col.begin() + p.row_ptr[size_t(r) + 1];
      for (int b = 0; b < npe; ++b)
        p.element_block[size_t(e * nb + a * npe + b)] =
            Offset(std::lower_bound(first, last, conn[size_t(e * npe + b)]) - p.col.begin());
    }

  // Matrix blocks -> element blocks (counting sort over the element-block ids, increasing).
  const Offset blocks = p.blocks();
  p.contrib_ptr.assign(size_t(blocks) + 1, 0);
  for (Offset b : p.element_block) ++p.contrib_ptr[size_t(b) + 1];
  for (Offset b = 0; b < blocks; ++b) p.contrib_ptr[size_t(b) + 1] += p.contrib_ptr[size_t(b)];
  p.contrib.resize(p.element_block.size());
  {
    std::vector<Offset> next(p.contrib_ptr.begin(), p.contrib_ptr.end() - 1);
    for (size_t k = 0; k < p.element_block.size(); ++k) p.contrib[size_t(next[size_t(p.element_block[k])]++)] = int64_t(k);
  }

  // Constraint masks.
  p.keep.resize(size_t(blocks));
  for (Index n = 0; n < nodes; ++n)
    for (Offset b = p.row_ptr[size_t(n)]; b < p.row_ptr[size_t(n) + 1]; ++b) {
      const Index m = p.col[size_t(b)];
      uint16_t keep = 0;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          const bool ci = p.constrained[size_t(n)] >> i & 1, cj = p.constrained[size_t(m)] >> j & 1;
          if (!(ci || cj) || (m == n && i == j)) keep = uint16_t(keep | 1u << (3 * i + j));
        }
      p.keep[size_t(b)] = keep;
    }
  return p;
}

template <class T>
BcsrMatrix<T> pattern_matrix(const BlockGatherPlan& plan) {
  BcsrMatrix<T> m;
  m.block_rows = m.block_cols = plan.nodes;
  m.row_ptr = plan.row_ptr;
  m.col = plan.col;
  m.val.assign(9 * plan.col.size(), T(0));
  return m;
}

namespace {
// Offset of entry (3 a + i, 3 b + j) of an element-major local matrix, from an element-block id.
inline int64_t local_entry(const BlockGatherPlan& p, int64_t element_block, int i, int j) {
  const int npe = p.nodes_per_element, L = 3 * npe;
  const int64_t nb = int64_t(npe) * npe;
  const int64_t e = element_block / nb;
  const int ab = int(element_block % nb), a = ab / npe, b = ab % npe;
  return e * L * L + int64_t(3 * a + i) * L + 3 * b + j;
}
}  // namespace

template <class T>
void gather_matrix(const BlockGatherPlan& p, const T* local, BcsrMatrix<T>& m) {
  const Offset blocks = p.blocks();
#pragma omp parallel for schedule(static) if (blocks >= kParallelMin / 9)
  for (Offset b = 0; b < blocks; ++b)
    for (int c = 0; c < 9; ++c) {
      T acc = T(0);
      if (p.keep[size_t(b)] >> c & 1)
        for (Offset k = p.contrib_ptr[size_t(b)]; k < p.contrib_ptr[size_t(b) + 1]; ++k)
          acc += local[local_entry(p, p.contrib[size_t(k)], c / 3, c % 3)];
      m.val[size_t(9 * b + c)] = acc;
    }
}

template <class T>
void scatter_matrix(const BlockGatherPlan& p, const T* local, BcsrMatrix<T>& m) {
  std::fill(m.val.begin(), m.val.end(), T(0));
  const int npe = p.nodes_per_element;
  const int64_t nb = int64_t(npe) * npe;
#pragma omp parallel for schedule(static)
  for (int64_t e = 0; e < p.elements; ++e)
    for (int ab = 0; ab < nb; ++ab) {
      const Offset b = p.element_block[size_t(e * nb + ab)];
      for (int c = 0; c < 9; ++c) {
        if (!(p.keep[size_t(b)] >> c & 1)) continue;
        const T v = local[local_entry(p, e * nb + ab, c / 3, c % 3)];
#pragma omp atomic
        m.val[size_t(9 * b + c)] += v;
      }
    }
}

template <class T>
void gather_vector(const BlockGatherPlan& p, const T* ev, T* y) {
  const int npe = p.nodes_per_element, L = 3 * npe;
#pragma omp parallel for schedule(static) if (p.nodes >= kParallelMin / 3)
  for (Index n = 0; n < p.nodes; ++n)
    for (int i = 0; i < 3; ++i) {
      T acc = T(0);
      if (!(p.constrained[size_t(n)] >> i & 1))
        for (Offset k = p.node_ptr[size_t(n)]; k < p.node_ptr[size_t(n) + 1]; ++k) {
          const int64_t slot = p.node_slot[size_t(k)];
          acc += ev[(slot / npe) * L + 3 * (slot % npe) + i];
        }
      y[3 * size_t(n) + size_t(i)] = acc;
    }
}

template <class T>
void block_diagonal(const BlockGatherPlan& p, const BcsrMatrix<T>& m, T* d) {
  for (Index n = 0; n < p.nodes; ++n)
    for (int i = 0; i < 3; ++i) d[3 * size_t(n) + size_t(i)] = m.val[size_t(9 * p.diag_block[size_t(n)] + 4 * i)];
}

Offset SlicedGatherIndex::padded_entries() const {
  return Offset(std::count(block.begin(), block.end(), -1));
}

double SlicedGatherIndex::index_bytes() const {
  return double(block.size()) * sizeof(int32_t) + double(keep.size()) * sizeof(uint16_t) +
         double(sub_ptr.size()) * sizeof(Offset);
}

int64_t sliced_gather_max_elements(int nodes_per_element) {
  // The largest offset is block_major_offset(E, E - 1, nb - 1, 8) = L^2 E - 1, L = 3 x nodes.
  const int64_t L = 3 * int64_t(nodes_per_element);
  return int64_t(std::numeric_limits<int32_t>::max()) / (L * L);
}

template <class T>
SlicedGatherIndex make_sliced_gather_index(const BlockGatherPlan& p, const SlicedBcsr<T>& s) {
  constexpr int C = SlicedBcsr<T>::kSliceRows;
  const int npe = p.nodes_per_element, L = 3 * npe;
  const int64_t nb = int64_t(npe) * npe;
  if (s.block_rows != p.nodes) throw std::logic_error("sliced gather: layout and plan differ in size");
  if (p.elements > sliced_gather_max_elements(npe))
    throw InputError("element gather: " + std::to_string(p.elements) + " elements of " + std::to_string(L * L) +
                     " local values exceed the 32-bit offsets of the device gather into the block-major local "
                     "matrices (at most " + std::to_string(sliced_gather_max_elements(npe)) + " elements)");
  SlicedGatherIndex g;
  const Offset steps = s.steps();
  // The plan's block at each (step, lane), found by column: the layout may order a row's blocks
  // differently from the plan (make_gather_layout does).
  std::vector<Offset> block_at(size_t(steps) * C, -1);
  g.block_position.assign(size_t(p.blocks()), -1);
  for (Index sl = 0; sl < s.slices(); ++sl)
    for (int l = 0; l < C; ++l) {
      const Index row = s.perm[size_t(sl) * C + size_t(l)];
      if (row < 0) continue;
      const auto first = p.col.begin() + p.row_ptr[size_t(row)], last = p.col.begin() + p.row_ptr[size_t(row) + 1];
      for (Offset step = s.slice_ptr[size_t(sl)]; step < s.slice_ptr[size_t(sl) + 1]; ++step) {
        const Index c = s.col[size_t(step * C + l)];
        if (c < 0) break;
        const auto it = std::lower_bound(first, last, c);
        if (it == last || *it != c) throw std::logic_error("sliced gather: the layout has a block the plan lacks");
        const Offset b = Offset(it - p.col.begin());
        block_at[size_t(step * C + l)] = b;
        g.block_position[size_t(b)] = step * C + l;
      }
    }
  if (std::count(g.block_position.begin(), g.block_position.end(), Offset(-1)))
    throw std::logic_error("sliced gather: the layout lacks a block of the plan");
  g.sub_ptr.assign(size_t(steps) + 1, 0);
  for (Offset st = 0; st < steps; ++st) {
    Offset width = 0;
    for (int l = 0; l < C; ++l)
      if (const Offset b = block_at[size_t(st * C + l)]; b >= 0)
        width = std::max(width, p.contrib_ptr[size_t(b) + 1] - p.contrib_ptr[size_t(b)]);
    g.sub_ptr[size_t(st) + 1] = g.sub_ptr[size_t(st)] + width;
  }
  g.block.assign(size_t(g.sub_ptr.back()) * C, -1);
  g.keep.assign(size_t(steps) * C, 0);
  for (int c = 0; c < 9; ++c) g.component_offset[size_t(c)] = int32_t(block_major_offset(p.elements, 0, 0, c));
  for (Offset st = 0; st < steps; ++st)
    for (int l = 0; l < C; ++l) {
      const Offset b = block_at[size_t(st * C + l)];
      if (b < 0) continue;
      g.keep[size_t(st * C + l)] = p.keep[size_t(b)];
      for (Offset k = p.contrib_ptr[size_t(b)]; k < p.contrib_ptr[size_t(b) + 1]; ++k) {
        const int64_t id = p.contrib[size_t(k)];  // e * npe^2 + ab
        const size_t sub = size_t(g.sub_ptr[size_t(st)] + (k - p.contrib_ptr[size_t(b)]));
        g.block[sub * C + size_t(l)] = int32_t(block_major_offset(p.elements, id / nb, int(id % nb), 0));
      }
    }
  g.diag_position.resize(3 * size_t(p.nodes));
  for (Index n = 0; n < p.nodes; ++n) {
    const Offset pos = g.block_position[size_t(p.diag_block[size_t(n)])];
    const Offset step = pos / C, lane = pos % C;
    for (int i = 0; i < 3; ++i) g.diag_position[3 * size_t(n) + size_t(i)] = step * 9 * C + (4 * i) * C + lane;
  }
  return g;
}

template <class T>
SlicedBcsr<T> make_gather_layout(const BlockGatherPlan& p, int sort_window) {
  BcsrMatrix<T> m = pattern_matrix<T>(p);
  for (Index r = 0; r < p.nodes; ++r) {
    const auto first = m.col.begin() + p.row_ptr[size_t(r)], last = m.col.begin() + p.row_ptr[size_t(r) + 1];
    auto count = [&](Index c) {
      const Offset b = Offset(std::lower_bound(p.col.begin() + p.row_ptr[size_t(r)],
                                               p.col.begin() + p.row_ptr[size_t(r) + 1], c) - p.col.begin());
      return p.contrib_ptr[size_t(b) + 1] - p.contrib_ptr[size_t(b)];
    };
    std::stable_sort(first, last, [&](Index a, Index b) {
      if ((a == r) != (b == r)) return a == r;
      return count(a) > count(b);
    });
  }
  return make_sliced_bcsr(m, sort_window);
}

template <class T>
void gather_sliced(const SlicedGatherIndex& g, const T* local_block_major, SlicedBcsr<T>& s) {
  constexpr int C = SlicedBcsr<T>::kSliceRows;
  const Offset steps = s.steps();
#pragma omp parallel for schedule(static)
  for (Offset st = 0; st < steps; ++st)
    for (int c = 0; c < 9; ++c)
      for (int l = 0; l < C; ++l)
        s.val[size_t(st) * 9 * C + size_t(c) * C + size_t(l)] = sliced_gather_value(
            g.sub_ptr.data(), g.block.data(), g.keep.data(), g.component_offset.data(), local_block_major, st, c, l);
}

#define EB_GATHER_INSTANTIATIONS(T)                                                                       \
  template BcsrMatrix<T> pattern_matrix(const BlockGatherPlan&);                                          \
  template void gather_matrix(const BlockGatherPlan&, const T*, BcsrMatrix<T>&);                          \
  template void scatter_matrix(const BlockGatherPlan&, const T*, BcsrMatrix<T>&);                         \
  template void gather_vector(const BlockGatherPlan&, const T*, T*);                                      \
  template void block_diagonal(const BlockGatherPlan&, const BcsrMatrix<T>&, T*);                         \
  template SlicedGatherIndex make_sliced_gather_index(const BlockGatherPlan&, const SlicedBcsr<T>&);     \
  template SlicedBcsr<T> make_gather_layout(const BlockGatherPlan&, int);                                \
  template void gather_sliced(const SlicedGatherIndex&, const T*, SlicedBcsr<T>&);
EB_GATHER_INSTANTIATIONS(float)
EB_GATHER_INSTANTIATIONS(double)

}  // namespace eb::linalg
