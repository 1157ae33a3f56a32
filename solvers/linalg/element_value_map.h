#pragma once
// Where each entry of each element's local matrix and vector lands in a sparse matrix of a fixed
// pattern, for every value-addressed format (COO, CSR, ELL, HYB, DCOO, DCSR, DHYB): the location
// matrix L(e, d) of Cecka, Lew & Darve 2011 (Alg. 1) composed with the format's map K(i, j) ->
// value index (their Sec. 16.3 assumption), computed once on the host. An assembly then writes
// values in place, A.at(entry[...]) += K_e(r, c), without searching the pattern, on either
// backend (AssemblyCPU_Opt's "precomputed locations"; the GPU strategies invert it into their
// reduction lists). Positions are in the flat value space of value_segments.h.
//
// Dirichlet constraints, as in element_gather.h: an entry whose row or column component is
// constrained is dropped (position -1) except the diagonal entry of a constrained component, which
// keeps its sum, so the constrained unknowns decouple; a constrained row's vector entry is dropped
// (dof -1): the caller's right-hand side there is 0.
//
// Positions are int32 (4 bytes per entry: the map is read once per assembly by every strategy, and
// the element-entry array is the largest the method keeps): a pattern whose value space exceeds
// 2^31 - 1 values is refused with InputError.
#include <cstdint>
#include <vector>

#include "solvers/linalg/sparse_formats.h"
#include "solvers/linalg/value_segments.h"

namespace eb::linalg {

struct ElementValueMap {
  Format format = Format::Csr;
  Index rows = 0;
  int nodes_per_element = 0;
  int64_t elements = 0;
  int64_t value_count = 0;             // the flat value space, padding included
  std::vector<int64_t> segment_sizes;  // of the format's value arrays, in value_segments.h order
  // entry[(e * L + r) * L + c]: flat position of element e's local entry (r, c), r = 3 a + i
  // (local node a, component i), L = 3 * nodes_per_element; -1 where dropped.
  std::vector<int32_t> entry;
  // dof[e * L + r]: the global row 3 n + i of element e's local row r; -1 where constrained.
  std::vector<int32_t> dof;
  // diag[row]: flat position of the diagonal entry of every row (all present: 3x3 node blocks).
  std::vector<int32_t> diag;
  int local_size() const { return 3 * nodes_per_element; }
};

// The node-block pattern of a mesh (every 3x3 block of two nodes sharing an element, diagonal
// blocks included) with zero values: the one pattern every format and strategy fills.
// InputError for a node id outside [0, nodes).
template <class T>
AssembledMatrix<T> element_pattern(Index nodes, int nodes_per_element, const std::vector<int32_t>& connectivity);

// The value arrays of a host matrix (Coo, Csr, Ell, Hyb, Dcoo, Dcsr, Dhyb); InputError for Bcsr
// (its values are addressed per block: element_gather.h).
template <class T>
ValueSegments<T> value_segments(AnyMatrix<T>& m);

// Per row, every stored entry's column and flat position, columns increasing (padding left out):
// the format's map K(i, j), used by make_element_value_map and by tests.
struct RowPositions {
  std::vector<Offset> row_ptr;
  std::vector<Index> col;
  std::vector<int64_t> pos;
};
template <class T>
RowPositions row_positions(const AnyMatrix<T>& m);

// Flat position of every row's diagonal entry (-1 where the pattern has none).
template <class T>
std::vector<int64_t> diagonal_positions(const AnyMatrix<T>& m);

// The map of `pattern` (a format of element_pattern's matrix, or any pattern holding every
// element's entries). constrained: per node, bit i for component i (empty: none). InputError: an
// element entry missing from the pattern (naming the element), Bcsr, or a value space over 2^31-1.
template <class T>
ElementValueMap make_element_value_map(const AnyMatrix<T>& pattern, int nodes_per_element,
                                       const std::vector<int32_t>& connectivity,
                                       const std::vector<uint8_t>& constrained);

// The map inverted: for every flat value position, the element entries (e * L * L + r * L + c)
// that add to it, increasing (so a sum over the list is the element-order sum of Algorithm 1, bit
// for bit); for every row, the element vector entries (e * L + r) likewise. The reduction lists
// of assembly by non-zero (Cecka et al. 16.3.1) before any packing.
struct ValueContributions {
  std::vector<int64_t> value_ptr;  // value_count + 1
  std::vector<int64_t> value_src;
  std::vector<int64_t> row_ptr;    // rows + 1
  std::vector<int64_t> row_src;
};
ValueContributions invert_element_value_map(const ElementValueMap& map);

// The reference use of the map (Algorithm 1 with precomputed locations): values zeroed, then
// every element's local matrix (local[e * L * L + r * L + c]) and vector (vec[e * L + r]) added,
// elements in order; either pointer may be null. One thread: the CPU strategies parallelize it.
template <class T>
void add_element_entries(const ElementValueMap& map, const T* local, const T* vec, ValueSegments<T> values, T* y);

}  // namespace eb::linalg
