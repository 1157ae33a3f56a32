#pragma once
// Coloured assembly, the modern comparison the paper did not have: the elements are coloured so
// that no two elements of a colour share a node (greedy first-fit in element order), then one
// launch per colour runs one thread per element, which adds its force and tangent straight into
// the values at the positions of the per-format value map (solvers/linalg/element_value_map.h).
// Within a colour no two threads address one value (a value's row and column nodes both belong to
// every element that adds to it), so there are no atomics, and the colours run in a fixed order,
// so every sum has a fixed order: deterministic, bit for bit.
//
// No zeroing pass: for each value position (and force entry) the first element to reach it, in
// colour order, assigns instead of adding; the plan marks those entries. Force entries no element
// writes (constrained rows, unused nodes) are listed and set to 0.
//
// Per element, in colour order ("slots"), all arrays slot-minor (value q of slot s at
// q * slots + s) so that a warp reads them coalesced: the 4 node ids, S(e), the 144 tangent
// positions and the 12 force rows, each encoded as p + 1 (add), -(p + 1) (assign) or 0 (dropped).
// The host reference (coloured_reference) runs the same element function in the same order.
//
#include <cstddef>
#include <cstdint>
#include <vector>

#include "solvers/nr_neohookean/assembly_strategy.h"
#include "solvers/nr_neohookean/sharednz_plan.h"

namespace eb::nr_neohookean {

struct ColouredPlan {
  int64_t rows = 0;  // 3 * nodes
  std::vector<int64_t> colour_ptr{0};  // slots of colour c: colour_ptr[c] .. colour_ptr[c+1)
  std::vector<int32_t> slot_element;   // elements by colour, increasing within a colour
  std::vector<int32_t> conn;           // 4 * slots
  std::vector<int32_t> entry;          // 144 * slots
  std::vector<int32_t> force;          // 12 * slots
  std::vector<int32_t> zero_rows;      // force entries no element writes

  int colours() const { return int(colour_ptr.size()) - 1; }
  int64_t slots() const { return colour_ptr.back(); }
};

// Greedy first-fit element colouring: colour[e] is the smallest colour of no element before e
// that shares a node with e. InputError for a node id outside [0, nodes).
std::vector<int32_t> element_colouring(int64_t nodes, const std::vector<int32_t>& connectivity);

// InputError when the map is not a 4-node map of this mesh.
ColouredPlan make_coloured_plan(int64_t nodes, const std::vector<int32_t>& connectivity,
                                const linalg::ElementValueMap& map);

// Slot s's element data into the values: the kernel's body and the host reference's.
template <class T>
struct ColouredArgs {
  const int32_t* conn = nullptr;
  const int32_t* entry = nullptr;
  const int32_t* force_row = nullptr;
  const int32_t* element = nullptr;
  const T* supp = nullptr;  // slot-minor S(e)
  int64_t slots = 0;
  tet::SupplementalForm form = tet::SupplementalForm::Full9;
  tet::Lame<T> lame{};
  const T* x = nullptr;
  AssemblyTargets<T> out{};
};

// The arguments over the plan's arrays as `A` holds them (std::vector or DeviceBuffer).
template <class T, class A32, class AT>
ColouredArgs<T> coloured_args(const ColouredPlan& plan, const A32& conn, const A32& entry, const A32& force_row,
                              const A32& element, const AT& supp, tet::SupplementalForm form, tet::Lame<T> lame) {
  ColouredArgs<T> a;
  a.conn = conn.data();
  a.entry = entry.data();
  a.force_row = force_row.data();
  a.element = element.data();
  a.supp = supp.data();
  a.slots = plan.slots();
  a.form = form;
  a.lame = lame;
  return a;
}

// Slot s's n entries v into their targets (positions encoded as in the plan: p + 1 add, -(p + 1)
// assign, 0 none), in batches: all the batch's positions are loaded, then the old values, then the
// new ones stored. Entry by entry, every load would wait for the previous store (the compiler
// cannot tell that the positions differ; they do, within one element), which serialized 144 round
// trips to memory per element.
template <class T, int n, class Target>
EB_HD void coloured_add(const int32_t* pos, int64_t slots, int64_t s, const T* v, T scale, Target target) {
  constexpr int kBatch = 12;
  static_assert(n % kBatch == 0, "batches of 12 entries");
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int q0 = 0; q0 < n; q0 += kBatch) {
    int32_t p[kBatch];
    T old[kBatch];
    for (int u = 0; u < kBatch; ++u) p[u] = load_index(pos + (q0 + u) * slots + s);
    for (int u = 0; u < kBatch; ++u) old[u] = p[u] > 0 ? target(p[u] - 1) : T(0);
    for (int u = 0; u < kBatch; ++u) {
      if (p[u] == 0) continue;
      const int64_t at = (p[u] > 0 ? int64_t(p[u]) : -int64_t(p[u])) - 1;
      target(at) = p[u] > 0 ? old[u] + scale * v[q0 + u] : scale * v[q0 + u];
    }
  }
}

template <class T>
EB_HD void coloured_element(const ColouredArgs<T>& a, int64_t s) {
  T xe[4][3];
  for (int n = 0; n < 4; ++n) {
    const int64_t v = a.conn[n * a.slots + s];
    for (int i = 0; i < 3; ++i) xe[n][i] = a.x[3 * v + i];
  }
  T f[12], K[144];
  slot_element_routine(xe, a.supp, a.slots, s, a.form, a.lame, f, K, a.out.checks, int64_t(a.element[s]));
  coloured_add<T, 12>(a.force_row, a.slots, s, f, a.out.force_scale,
                               [&](int64_t row) -> T& { return a.out.force[row]; });
  coloured_add<T, 144>(a.entry, a.slots, s, K, a.out.tangent_scale,
                                [&](int64_t p) -> T& { return a.out.values.at(p); });
}

template <class T>
void coloured_reference(const ColouredPlan& plan, const std::vector<T>& slot_supp, tet::SupplementalForm form,
                        tet::Lame<T> lame, const T* x, const AssemblyTargets<T>& out);

}  // namespace eb::nr_neohookean
