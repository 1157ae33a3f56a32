#include "solvers/linalg/bcsr_slices.h"

#include <algorithm>
#include <numeric>

namespace eb::linalg {

template <class T>
SlicedBcsr<T> make_sliced_bcsr(const BcsrMatrix<T>& m, int sort_window) {
  constexpr int C = SlicedBcsr<T>::kSliceRows;
  SlicedBcsr<T> s;
  s.block_rows = m.block_rows;
  s.block_cols = m.block_cols;
  s.sort_window = sort_window;
  const Index nslices = (m.block_rows + C - 1) / C;
  auto len = [&](Index br) { return m.row_ptr[size_t(br) + 1] - m.row_ptr[size_t(br)]; };

  std::vector<Index> order(size_t(nslices) * C, Index(-1));
  std::iota(order.begin(), order.begin() + m.block_rows, Index(0));
  if (sort_window > 1) {
    const size_t w = size_t(sort_window) * C;
    for (size_t start = 0; start < size_t(m.block_rows); start += w) {
      const auto first = order.begin() + Offset(start);
      const auto last = order.begin() + Offset(std::min(start + w, size_t(m.block_rows)));
      std::stable_sort(first, last, [&](Index a, Index b) { return len(a) > len(b); });
    }
  }
  s.perm = order;
  s.slice_ptr.assign(size_t(nslices) + 1, 0);
  for (Index sl = 0; sl < nslices; ++sl) {
    Offset width = 0;
    for (int l = 0; l < C; ++l)
      if (Index br = order[size_t(sl) * C + size_t(l)]; br >= 0) width = std::max(width, len(br));
    s.slice_ptr[size_t(sl) + 1] = s.slice_ptr[size_t(sl)] + width;
  }
  s.col.assign(size_t(s.steps()) * C, Index(-1));
  s.val.assign(size_t(s.steps()) * 9 * C, T(0));
  for (Index sl = 0; sl < nslices; ++sl)
    for (int l = 0; l < C; ++l) {
      const Index br = order[size_t(sl) * C + size_t(l)];
      if (br < 0) continue;
      for (Offset j = 0; j < len(br); ++j) {
        const size_t step = size_t(s.slice_ptr[size_t(sl)] + j);
        const size_t blk = size_t(m.row_ptr[size_t(br)] + j);
        s.col[step * C + size_t(l)] = m.col[blk];
        for (int c = 0; c < 9; ++c) s.val[step * 9 * C + size_t(c) * C + size_t(l)] = m.val[9 * blk + size_t(c)];
      }
    }
  return s;
}

template <class T>
BcsrMatrix<T> to_bcsr(const SlicedBcsr<T>& s) {
  constexpr int C = SlicedBcsr<T>::kSliceRows;
  BcsrMatrix<T> m;
  m.block_rows = s.block_rows;
  m.block_cols = s.block_cols;
  // Slot of each block row, then its length (the non-padding prefix of its lane).
  std::vector<size_t> slot(size_t(s.block_rows));
  for (size_t k = 0; k < s.perm.size(); ++k)
    if (s.perm[k] >= 0) slot[size_t(s.perm[k])] = k;
  auto lane_len = [&](size_t k) {
    const size_t sl = k / C, l = k % C;
    Offset n = 0;
    for (Offset st = s.slice_ptr[sl]; st < s.slice_ptr[sl + 1] && s.col[size_t(st) * C + l] >= 0; ++st) ++n;
    return n;
  };
  m.row_ptr.assign(size_t(s.block_rows) + 1, 0);
  for (Index br = 0; br < s.block_rows; ++br) m.row_ptr[size_t(br) + 1] = m.row_ptr[size_t(br)] + lane_len(slot[size_t(br)]);
  m.col.resize(size_t(m.row_ptr.back()));
  m.val.resize(9 * m.col.size());
  for (Index br = 0; br < s.block_rows; ++br) {
    const size_t sl = slot[size_t(br)] / C, l = slot[size_t(br)] % C;
    for (Offset j = 0; j < m.row_ptr[size_t(br) + 1] - m.row_ptr[size_t(br)]; ++j) {
      const size_t step = size_t(s.slice_ptr[sl] + j), blk = size_t(m.row_ptr[size_t(br)] + j);
      m.col[blk] = s.col[step * C + l];
      for (int c = 0; c < 9; ++c) m.val[9 * blk + size_t(c)] = s.val[step * 9 * C + size_t(c) * C + l];
    }
  }
  return m;
}

int choose_warps_per_slice(Index slices, Offset steps, int multiprocessors) {
  // One warp per slice leaves the loads' latency exposed when there are few slices per SM (too
  // few warps in flight); splitting a slice among warps restores the parallelism at the price of
  // a shared-memory sum, which pays while slices are few (bench_sparse spmv/cuda/bcsr_w*, PERF_NOTES.md).
  const double mean_steps = slices > 0 ? double(steps) / double(slices) : 0.0;
  int w = double(slices) < 6.0 * multiprocessors ? 8 : 4;
  while (w > 1 && mean_steps < w) w /= 2;  // at least one step per warp on average
  return w;
}

std::size_t sliced_bcsr_product_blocks(Index slices, int warps_per_slice) {
  const int w = warps_per_slice;
  const Index per_block = w == 2 || w == 4 || w == 8 ? kBcsrSplitWarps / w : kBcsrWarps;
  return std::max<std::size_t>(std::size_t((slices + per_block - 1) / per_block), 1);
}

template <class T>
std::size_t storage_bytes(const SlicedBcsr<T>& s) {
  return s.perm.size() * sizeof(Index) + s.slice_ptr.size() * sizeof(Offset) + s.col.size() * sizeof(Index) +
         s.val.size() * sizeof(T);
}

template <class T>
Offset padding_blocks(const SlicedBcsr<T>& s) {
  return Offset(std::count(s.col.begin(), s.col.end(), Index(-1)));
}

#define EB_LINALG_INSTANTIATE(T)                                          \
  template SlicedBcsr<T> make_sliced_bcsr(const BcsrMatrix<T>&, int);     \
  template BcsrMatrix<T> to_bcsr(const SlicedBcsr<T>&);                   \
  template std::size_t storage_bytes(const SlicedBcsr<T>&);               \
  template Offset padding_blocks(const SlicedBcsr<T>&);
EB_LINALG_INSTANTIATE(float)
EB_LINALG_INSTANTIATE(double)
#undef EB_LINALG_INSTANTIATE

}  // namespace eb::linalg
