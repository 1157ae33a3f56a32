#pragma once
// SharedNZ (Cecka, Lew & Darve 2011, Sec. 16.3.2): assembly by non-zeros with the element data
// staged in shared memory. The nodes are partitioned (meshes/node_partition.h) so that the
// elements E_k touching the nodes N_k of partition k fit one thread block's shared memory; block k
//   1. scatters the nodal data of N̄_k (the nodes of E_k) into per-element slots through the
//      scatter array of Fig. 16.6 (per node: its global number, then the slots that need it),
//   2. computes every element of E_k (one thread per slot, the element routine of
//      assembly/tet/neo_hookean.h), overwriting its slot with the element data: the force (12)
//      and the upper triangle of the symmetric tangent (78), the paper's 90 values,
//   3. sums every non-zero of the rows of N_k, and every force entry of N_k, from the slots
//      through the reduction array of Alg. 2 (per entry: its sources in shared memory, then its
//      target), writing each value once, in place, at the position the per-format value map
//      (solvers/linalg/element_value_map.h) gives. No atomics: the sums' order is fixed.
// Both arrays are packed per block with LPT (longest list first, to the least loaded thread) into
// column-major matrices of `threads` rows, read coalesced. The cost of the method is the
// recomputation of the elements of E_k shared by several partitions (PartitionStats::redundancy),
// which the shared-memory size bounds: an H100 block may opt into 227 KB where Fermi had 48 KB.
//
// Layout of a block's shared memory (S = |E_k| slots): value q of slot j at q * S + j, so that
// consecutive threads touch consecutive words. Staging: q = 3 a + i holds component i of the
// element's node a (12 values); element data: q < 12 the force, q = 12 + tri(r, c) the tangent
// entry (r, c), r <= c. A slot's element data only overwrites its own staged positions, which the
// thread computing it has already read: no barrier is needed between the two.
//
// The host reference (sharednz_reference) runs the very same phase functions
// (sharednz_phases.h) block by block, thread by thread, so the plan is tested without a device.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "meshes/node_partition.h"
#include "solvers/nr_neohookean/assembly_strategy.h"

namespace eb::nr_neohookean {

inline constexpr int kSharedNzThreads = 256;      // rows of the packed arrays = threads per block (at most)
inline constexpr int kStagedValuesPerElement = 90;  // 12 force + 78 symmetric tangent
inline constexpr std::size_t kFermiSharedBytes = 48 * 1024;

// Index of tangent entry (r, c), r <= c < 12, in the packed upper triangle (0 .. 77).
EB_HD constexpr int upper_index(int r, int c) { return 12 * r - r * (r - 1) / 2 + (c - r); }
// Shared position of element entry (r, c) (any order) of slot j in a block of S slots.
EB_HD constexpr int64_t staged_tangent(int r, int c, int64_t j, int64_t S) {
  return (12 + (r <= c ? upper_index(r, c) : upper_index(c, r))) * S + j;
}

// A source of a node-block reduction list (SharedNzPlan::block_lists), stored + 1: slot j, a
// force flag, the local nodes a (row) and b (column).
EB_HD constexpr int32_t block_source(int64_t j, bool force, int a, int b) {
  return int32_t((j << 5) | (force ? 16 : 0) | (a << 2) | b);
}

struct SharedNzPlan {
  int threads = kSharedNzThreads;
  int64_t rows = 0;         // 3 * nodes: force entries
  int64_t value_count = 0;  // reduction targets >= value_count are force entries
  // Block k's slots (its elements E_k, increasing) are slot_ptr[k] .. slot_ptr[k+1).
  std::vector<int64_t> slot_ptr{0};
  std::vector<int32_t> slot_element;
  // The element a slot reports to the element checks (det F), -1 when another block does: each
  // element is reported once, by the block of its node 0.
  std::vector<int32_t> slot_record;
  // Scatter array of block k: scatter[scatter_ptr[k] .. scatter_ptr[k+1]), a multiple of
  // `threads`, entry col * threads + tid read by thread tid: -(m + 1) loads node m, t + 1 stores
  // it at shared positions t, t + S, t + 2 S; 0 is padding.
  std::vector<int64_t> scatter_ptr{0};
  std::vector<int32_t> scatter;
  // Reduction array, same packing: s + 1 adds shared value s; -(p + 1) writes the sum to value
  // position p (p < value_count) or force entry p - value_count, and restarts it; 0 is padding.
  //
  // block_lists (the variant sharednz-block; Sec. 16.5's "n_f x n_f blocks"): one list per node
  // pair (n of N_k, m of N̄_k) instead of one per value, its sources block_source(j, false, a, b)
  // + 1, one per element holding both, summing the 3 x 3 block of the pair at once, then 9
  // targets; one list per node n of N_k for its force, sources block_source(j, true, a, 0) + 1,
  // then 3 targets. Targets: -(p + 1) (a value), -(value_count + row + 1) (a force entry),
  // -(value_count + rows + row + 1) (a force entry set to 0: constrained), INT32_MIN (a value the
  // map drops: nothing written). One source index per element and node pair instead of nine.
  bool block_lists = false;
  std::vector<int64_t> reduce_ptr{0};
  std::vector<int32_t> reduce;
  mesh::PartitionStats partition;
  int64_t max_slots = 0;        // largest |E_k|: the dynamic shared memory is sized for it
  int64_t node_loads = 0;       // scatter lists (pieces): nodal data read from global memory
  int64_t reduce_sources = 0;   // shared values summed (block lists: 9 or 3 per source)

  int64_t blocks() const { return int64_t(slot_ptr.size()) - 1; }
  int64_t slots() const { return slot_ptr.back(); }
  std::size_t shared_bytes(std::size_t value_bytes) const {
    return std::size_t(max_slots) * kStagedValuesPerElement * value_bytes;
  }
  // What the device copy holds: the index arrays and `supp_values` S(e) values per slot.
  std::size_t device_bytes(std::size_t value_bytes, int supp_values) const {
    return sizeof(int64_t) * (slot_ptr.size() + scatter_ptr.size() + reduce_ptr.size()) +
           sizeof(int32_t) * (slot_record.size() + scatter.size() + reduce.size()) +
           value_bytes * std::size_t(supp_values) * std::size_t(slots());
  }
};

// The partition budget of SharedNZ for `shared_bytes` per block and values of `value_bytes`.
mesh::PartitionBudget sharednz_budget(std::size_t shared_bytes, std::size_t value_bytes);

// The plan of a partition (partition_nodes with sharednz_budget) of the problem's mesh.
// InputError when the map is not a 4-node map of this mesh, or when value positions and force
// entries together pass the 2^31 - 1 targets of the int32 reduction array.
SharedNzPlan make_sharednz_plan(int64_t nodes, const std::vector<int32_t>& connectivity,
                                const linalg::ElementValueMap& map, const mesh::NodePartition& partition,
                                bool block_lists = false, int threads = kSharedNzThreads);

// Per-slot supplemental data, slot-major by value (value q of slot s at q * slots + s) so that
// a block's threads read it coalesced: the paper's "separate array ... ordered such that they can
// be read by the elements with coalesced reads".
template <class T>
std::vector<T> slot_supplemental(const std::vector<int32_t>& slot_element, const std::vector<T>& supplemental,
                                 tet::SupplementalForm form);

// Read-only index loads (the texture path on the device).
EB_HD int32_t load_index(const int32_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

// The element routine of slot s, S(e) read from slot_supplemental's layout: the body that the
// slot-based strategies (SharedNZ, coloured) share. Reports to `checks` when record >= 0.
template <class T>
EB_HD void slot_element_routine(const T xe[4][3], const T* supp, int64_t slots, int64_t s, tet::SupplementalForm form,
                                tet::Lame<T> lame, T f[12], T K[144], ElementCheckSlot* checks, int64_t record) {
  T Sd[9];
  const int ns = tet::supplemental_size(form);
  for (int q = 0; q < ns; ++q) Sd[q] = supp[q * slots + s];
  const tet::Tet4Reference<T> ref = tet::reference_from_supplemental(Sd, form);
  T det_f;
  const tet::TetStatus st = tet::neo_hookean_element_force_tangent(ref, xe, lame, f, K, &det_f);
  if (checks && record >= 0) record_element(checks, record, st, double(det_f));
}

// The host reference: the device kernel's phases run block by block (out on the host).
template <class T>
void sharednz_reference(const SharedNzPlan& plan, const std::vector<T>& slot_supp, tet::SupplementalForm form,
                        tet::Lame<T> lame, const T* x, const AssemblyTargets<T>& out);

}  // namespace eb::nr_neohookean
