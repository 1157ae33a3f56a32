#pragma once
// Assembly of a global 3x3-block (BCSR) matrix and a global vector from per-element matrices and
// vectors whose pattern never changes, so that each time step only refreshes values:
//   - gather (Verschoor & Jalba 2012 Sec. 5.4; Cecka, Lew & Darve 2011's assembly by non-zero):
//     every matrix entry sums, from the array of local element matrices, the entries listed for
//     it; no two threads write one value, so no atomics and a fixed summation order;
//   - scatter: every element adds its entries into the matrix (atomic adds where elements run in
//     parallel), the comparison Verschoor argues against.
// The plan (pattern, the lists, the positions) is built once on the host from the connectivity;
// the CPU functions here are the reference of the device kernels that use the same plan.
//
// Element storage: element e's local matrix is L x L with L = 3 * nodes_per_element, row r =
// 3 a + i (node a, component i), stored element-major at local[e * L * L + r * L + c]; its
// vector at vec[e * L + r]. Dirichlet constraints: an entry whose row or column component is
// constrained is 0, except the diagonal entry of a constrained component, which keeps its sum
// (positive for an SPD element sum), so that the constrained unknowns decouple (their right-hand
// side is set to 0 by gather_vector, or to what the caller wants).
#include <array>
#include <cstdint>
#include <vector>

#include "assembly/hd.h"
#include "solvers/linalg/bcsr_slices.h"
#include "solvers/linalg/sparse_formats.h"

namespace eb::linalg {

struct BlockGatherPlan {
  Index nodes = 0;
  int64_t elements = 0;
  int nodes_per_element = 0;
  // The block pattern (BCSR: block rows = nodes, a block where two nodes share an element; the
  // diagonal block always), columns sorted within a row.
  std::vector<Offset> row_ptr;
  std::vector<Index> col;
  std::vector<Offset> diag_block;  // per node: the block index of its diagonal block
  // Per block: the element blocks adding to it, element-block id e * npe^2 + a * npe + b (element
  // e's block of local nodes a, b), in increasing id order.
  std::vector<Offset> contrib_ptr;
  std::vector<int64_t> contrib;
  // Per block: bit 3 i + j set when component (i, j) is kept (not zeroed by a constraint).
  std::vector<uint16_t> keep;
  // Per element: the block index of each of its npe^2 element blocks (scatter).
  std::vector<Offset> element_block;
  // Per node: the element slots e * npe + a whose vector entries add to it (vector gather), and
  // the constrained components (bit i), as given.
  std::vector<Offset> node_ptr;
  std::vector<int64_t> node_slot;
  std::vector<uint8_t> constrained;

  Offset blocks() const { return Offset(col.size()); }
  int local_size() const { return 3 * nodes_per_element; }
};

// connectivity: npe node ids per element; constrained: per node, bit i for component i (empty:
// none). Throws InputError for a node id outside [0, nodes).
BlockGatherPlan make_block_gather_plan(Index nodes, int nodes_per_element, const std::vector<int32_t>& connectivity,
                                       const std::vector<uint8_t>& constrained);

// The pattern as a BCSR matrix with zero values.
template <class T>
BcsrMatrix<T> pattern_matrix(const BlockGatherPlan& plan);

// m.val from the local matrices by gathering (plan order, OpenMP over blocks).
template <class T>
void gather_matrix(const BlockGatherPlan& plan, const T* local, BcsrMatrix<T>& m);
// m.val zeroed, then every element's entries added (OpenMP over elements, atomic adds).
template <class T>
void scatter_matrix(const BlockGatherPlan& plan, const T* local, BcsrMatrix<T>& m);
// y[3 n + i] = sum of the element vectors' entries of node n (0 for constrained components).
template <class T>
void gather_vector(const BlockGatherPlan& plan, const T* element_vectors, T* y);
// d[3 n + i] = diagonal entry of m (m in the plan's pattern).
template <class T>
void block_diagonal(const BlockGatherPlan& plan, const BcsrMatrix<T>& m, T* d);

// The device form of the gather in the sliced BCSR layout (bcsr_slices.h) of the plan's pattern:
// for every step of every slice (32 lanes, one block each), `substeps` rounds; in round s, lane l
// reads one contribution to its block, block[(sub_ptr[step] + s) * 32 + l] (-1: nothing), the
// offset of that element block's first value, and component c of the block adds
// local[block + component_offset[c]] where keep[step * 32 + l] has bit c; the sums land in
// val[step * 288 + c * 32 + l]. The offsets address local matrices stored block-major (see
// block_major_offset): element e's block ab = a * npe + b, component c = 3 i + j (row 3 a + i,
// column 3 b + j of its matrix) at local[(ab * elements + e) * 9 + c], so component_offset[c] = c
// and one index serves all 9 values (Fig. 2d stores an index per value: 9x the index bytes, as
// many bytes as the values themselves in fp32). Why block-major: the gather is bound by its
// scattered value loads, and a contribution's 9 values are then 36 contiguous bytes (fp32; 72 in
// fp64), 2 (fp64: 3) 32-byte sectors, where the entry-major layout (local[q * elements + e], the
// one-thread-per-element order) put them E values apart, 9 sectors. The matrix kernel still stores
// coalesced, through shared memory (bcsr_pcg_cuda.cu). The padding of a step to its longest list
// is the cost of contiguous index loads and value stores.
struct SlicedGatherIndex {
  std::vector<Offset> sub_ptr;           // steps + 1
  std::vector<int32_t> block;            // sub_ptr.back() * 32
  std::vector<uint16_t> keep;            // steps * 32: the components kept (Dirichlet masks)
  std::array<int32_t, 9> component_offset{};  // of value c of a block from its first value (c)
  std::vector<Offset> block_position;  // per plan block: step * 32 + lane in the sliced layout
  std::vector<Offset> diag_position;   // per scalar row 3 n + i: its diagonal entry's offset in val
  Offset padded_entries() const;       // block entries that are -1 (padding)
  double index_bytes() const;          // block, keep and sub_ptr as the device reads them
};
// One value of the sliced layout, for component c of lane `lane` of step `step`: the CPU
// reference (gather_sliced) and the CUDA kernel both call this, summing in the same order.
template <class T>
EB_HD T sliced_gather_value(const Offset* sub_ptr, const int32_t* block, const uint16_t* keep,
                            const int32_t* component_offset, const T* local, Offset step, int c, int lane) {
  T acc = T(0);
  if (keep[step * 32 + lane] >> c & 1) {
    const int64_t off = component_offset[c];
    const Offset end = sub_ptr[step + 1];
    // Unrolled on the device so that several independent index and value loads are in flight
    // per thread (the loop is latency-bound otherwise); the sum's order is unchanged.
#if defined(__CUDA_ARCH__)
#pragma unroll 4
#endif
    for (Offset s = sub_ptr[step]; s < end; ++s)
      if (const int32_t b = block[s * 32 + lane]; b >= 0) acc += local[int64_t(b) + off];
  }
  return acc;
}
// Offset of component c (= 3 i + j) of element e's block ab (= a * npe + b) in block-major local
// matrices of `elements` elements: the gather's index, k_matrix's and k_scatter's addresses.
EB_HD int64_t block_major_offset(int64_t elements, int64_t e, int ab, int c) {
  return (int64_t(ab) * elements + e) * 9 + c;
}
// Throws InputError if the block-major local matrices of the plan (9 npe^2 values per element)
// do not fit the 32-bit offsets of the device gather.
template <class T>
SlicedGatherIndex make_sliced_gather_index(const BlockGatherPlan& plan, const SlicedBcsr<T>& layout);

// The most elements of nodes_per_element nodes the sliced gather indexes: its offsets into the
// block-major local matrices are 32-bit (make_sliced_gather_index refuses more, naming this).
int64_t sliced_gather_max_elements(int nodes_per_element);

// The sliced layout (zero values) of the plan's pattern with each row's blocks reordered for the
// gather: the diagonal block first, then by decreasing number of contributions. A step of a slice
// then holds blocks with similar list lengths (all diagonals, with ~24 contributions each in a
// 6-tet lattice, share step 0 instead of padding the off-diagonal blocks' 2-6 to 24), which cuts
// the index padding; the SpMV does not depend on the order of a row's blocks.
template <class T>
SlicedBcsr<T> make_gather_layout(const BlockGatherPlan& plan, int sort_window = kDefaultSortWindow);

// Reference of the device gather: the sliced layout's val from block-major local matrices.
template <class T>
void gather_sliced(const SlicedGatherIndex& g, const T* local_block_major, SlicedBcsr<T>& s);

}  // namespace eb::linalg
