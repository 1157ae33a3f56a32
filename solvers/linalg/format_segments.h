#pragma once
// The value arrays of a host format as ValueSegments (value_segments.h order), for an assembly that
// refills a matrix in place. BCSR is addressed per block (element_gather.h) and has none here.
#include <cstdint>
#include <type_traits>

#include "solvers/linalg/sparse_formats.h"
#include "solvers/linalg/value_segments.h"

namespace eb::linalg {

template <class T>
void append_segments(CooMatrix<T>& m, ValueSegments<T>& s) { s.push(m.val.data(), int64_t(m.val.size())); }
template <class T>
void append_segments(CsrMatrix<T>& m, ValueSegments<T>& s) { s.push(m.val.data(), int64_t(m.val.size())); }
template <class T>
void append_segments(EllMatrix<T>& m, ValueSegments<T>& s) { s.push(m.val.data(), int64_t(m.val.size())); }
template <class T>
void append_segments(HybMatrix<T>& m, ValueSegments<T>& s) {
  append_segments(m.ell, s);
  append_segments(m.coo, s);
}
template <class M>
void append_segments(DiagonalFirst<M>& m, ValueSegments<typename M::value_type>& s) {
  s.push(m.diag.data(), int64_t(m.diag.size()));
  append_segments(m.off, s);
}
// BCSR: no segments (empty result).
template <class T>
void append_segments(BcsrMatrix<T>&, ValueSegments<T>&) {}

template <class M>
ValueSegments<typename M::value_type> host_value_segments(M& m) {
  ValueSegments<typename M::value_type> s;
  append_segments(m, s);
  return s;
}

}  // namespace eb::linalg
