#pragma once
// The value arrays of one sparse matrix, host or device, seen as ONE flat "value space" so that
// a position computed once on the host (element_value_map.h) addresses a value in every format:
//   COO, CSR: [val];  HYB: [ell.val (width x rows, padding included), coo.val];
//   DCOO, DCSR: [diag, off.val];  DHYB: [diag, off.ell.val, off.coo.val].
// An assembly writes its sums through at() into the matrix's own arrays, in place: the pattern
// never changes, only the values. Plain pointers (no ownership), so the struct is passed by
// value to CUDA kernels.
#include <cstdint>

#include "assembly/hd.h"

namespace eb::linalg {

inline constexpr int kMaxValueSegments = 3;

template <class T>
struct ValueSegments {
  T* data[kMaxValueSegments] = {nullptr, nullptr, nullptr};
  // end[s]: one past the last flat position of segment s (segment s starts at end[s - 1], or 0).
  int64_t end[kMaxValueSegments] = {0, 0, 0};
  int count = 0;

  EB_HD int64_t size() const { return count > 0 ? end[count - 1] : 0; }
  EB_HD bool empty() const { return count == 0; }
  // The value at flat position p (0 <= p < size()).
  EB_HD T& at(int64_t p) const {
    if (p < end[0]) return data[0][p];
    if (count < 3 || p < end[1]) return data[1][p - end[0]];
    return data[2][p - end[1]];
  }
  // Appends an array of n values (host setup of a format's segments).
  void push(T* p, int64_t n) {
    data[count] = p;
    end[count] = (count > 0 ? end[count - 1] : 0) + n;
    ++count;
  }
};

}  // namespace eb::linalg
