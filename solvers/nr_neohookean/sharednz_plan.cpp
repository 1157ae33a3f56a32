#include "solvers/nr_neohookean/sharednz_plan.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <limits>
#include <queue>
#include <string>
#include <utility>

#include "meshes/errors.h"
#include "solvers/nr_neohookean/sharednz_phases.h"

namespace eb::nr_neohookean {
namespace {

// Lists of int32 entries, flat: list l is items[begin[l] .. begin[l+1]).
struct Lists {
  std::vector<int64_t> begin{0};
  std::vector<int32_t> items;
  void close() { begin.push_back(int64_t(items.size())); }
  std::size_t size() const { return begin.size() - 1; }
  int64_t length(std::size_t l) const { return begin[l + 1] - begin[l]; }
};

// Largest-processing-time packing (Graham 1969, the paper's [16]): lists by decreasing length
// (ties in list order) each go to the row with the least entries so far (ties: lowest row), so the
// rows end near the same length. The rows are appended to `out` column-major (entry c of row r at
// c * rows + r), padded with 0 to the longest row.
void pack_lpt(const Lists& lists, int rows, std::vector<int32_t>& out) {
  std::vector<std::size_t> order(lists.size());
  for (std::size_t l = 0; l < order.size(); ++l) order[l] = l;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return lists.length(a) > lists.length(b); });
  using Load = std::pair<int64_t, int>;  // (entries so far, row)
  std::priority_queue<Load, std::vector<Load>, std::greater<Load>> heap;
  for (int r = 0; r < rows; ++r) heap.push({0, r});
  std::vector<std::pair<int, int64_t>> place(lists.size());  // (row, first column) per list
  int64_t columns = 0;
  for (std::size_t l : order) {
    const Load least = heap.top();
    heap.pop();
    place[l] = {least.second, least.first};
    const int64_t load = least.first + lists.length(l);
    columns = std::max(columns, load);
    heap.push({load, least.second});
  }
  const std::size_t base = out.size();
  out.resize(base + std::size_t(columns) * std::size_t(rows), 0);
  for (std::size_t l = 0; l < lists.size(); ++l)
    for (int64_t t = 0; t < lists.length(l); ++t)
      out[base + std::size_t((place[l].second + t) * rows + place[l].first)] = lists.items[std::size_t(lists.begin[l] + t)];
}

// Cuts scatter lists into pieces of at most `threads`-th of the block's entries (at least one
// target each), every piece loading its node again. Without it a block with fewer nodes than
// threads (all of them at Fermi's 48 KB, most at 227 KB) packs one list per row, and the array is
// as long as the longest list (a node in ~30 slots) times the threads: mostly padding.
Lists split_scatter(const Lists& lists, int threads) {
  const int64_t piece = std::max<int64_t>(2, (int64_t(lists.items.size()) + threads - 1) / threads);
  Lists out;
  for (std::size_t l = 0; l < lists.size(); ++l) {
    const int64_t b = lists.begin[l], e = lists.begin[l + 1];
    for (int64_t t = b + 1; t < e;) {
      out.items.push_back(lists.items[std::size_t(b)]);
      for (int64_t n = 1; n < piece && t < e; ++n) out.items.push_back(lists.items[std::size_t(t++)]);
      out.close();
    }
  }
  return out;
}

// A (key, value) pair as one integer, sorted by key then value: value + 1 in the low bits (0 for
// "no value"). Values are shared-memory positions, below 90 slots' worth of a block.
constexpr int kValueBits = 20;
uint64_t pair_key(int64_t key, int64_t value) { return uint64_t(key) << kValueBits | uint64_t(value + 1); }

// Groups the pairs by key into lists: per key, `head(key)` (if not 0) first, then its values + 1,
// then `tail(key)` (if not 0), as the scatter and reduction arrays want them.
template <class Head, class Tail>
Lists group(std::vector<uint64_t>& pairs, Head head, Tail tail) {
  std::sort(pairs.begin(), pairs.end());
  Lists lists;
  constexpr uint64_t mask = (uint64_t(1) << kValueBits) - 1;
  for (std::size_t i = 0; i < pairs.size();) {
    const int64_t key = int64_t(pairs[i] >> kValueBits);
    if (const int32_t h = head(key)) lists.items.push_back(h);
    for (; i < pairs.size() && int64_t(pairs[i] >> kValueBits) == key; ++i)
      if (const auto v = int32_t(pairs[i] & mask)) lists.items.push_back(v);
    if (const int32_t t = tail(key)) lists.items.push_back(t);
    lists.close();
  }
  return lists;
}

void check_inputs(int64_t nodes, const std::vector<int32_t>& conn, const linalg::ElementValueMap& map,
                  const mesh::NodePartition& partition) {
  const int64_t E = int64_t(conn.size() / 4);
  if (conn.size() % 4 != 0) throw InputError("SharedNZ: connectivity is not 4 nodes per element");
  if (map.nodes_per_element != 4 || map.elements != E || int64_t(map.entry.size()) != E * 144 ||
      int64_t(map.dof.size()) != E * 12)
    throw InputError("SharedNZ: the value map is not a 4-node map of this mesh (" + std::to_string(map.elements) +
                     " elements, " + std::to_string(E) + " in the mesh)");
  if (int64_t(partition.part_of.size()) != nodes)
    throw InputError("SharedNZ: the node partition has " + std::to_string(partition.part_of.size()) +
                     " nodes, the mesh " + std::to_string(nodes));
  if (map.value_count + 6 * nodes >= int64_t(std::numeric_limits<int32_t>::max()))
    throw InputError("SharedNZ: " + std::to_string(map.value_count) + " values and " + std::to_string(3 * nodes) +
                     " force entries pass the 2^31 - 1 targets of the reduction array");
}

// The reduction lists of block k by value: per value position of a row of N_k and per force entry
// of N_k, its shared sources; force entries with none (constrained rows, unused nodes) are
// written 0.
Lists value_reduce_lists(const std::vector<int32_t>& conn, const linalg::ElementValueMap& map,
                         const mesh::NodePartition& partition, std::size_t k, std::vector<uint64_t>& pairs,
                         int64_t& sources) {
  const int32_t* elems = partition.elements.data() + partition.element_ptr[k];
  const int64_t S = int64_t(partition.element_count(k));
  pairs.clear();
  for (int64_t i = partition.node_ptr[k]; i < partition.node_ptr[k + 1]; ++i)
    for (int c = 0; c < 3; ++c) pairs.push_back(pair_key(map.value_count + 3 * int64_t(partition.nodes[std::size_t(i)]) + c, -1));
  for (int64_t j = 0; j < S; ++j) {
    const int64_t e = elems[j];
    for (int a = 0; a < 4; ++a) {
      if (partition.part_of[std::size_t(conn[std::size_t(4 * e + a)])] != int32_t(k)) continue;
      for (int i = 0; i < 3; ++i) {
        const int r = 3 * a + i;
        if (const int32_t d = map.dof[std::size_t(e * 12 + r)]; d >= 0) {
          pairs.push_back(pair_key(map.value_count + d, r * S + j));
          ++sources;
        }
        for (int c = 0; c < 12; ++c)
          if (const int32_t p = map.entry[std::size_t((e * 12 + r) * 12 + c)]; p >= 0) {
            pairs.push_back(pair_key(p, staged_tangent(r, c, j, S)));
            ++sources;
          }
      }
    }
  }
  return group(pairs, [](int64_t) { return int32_t(0); }, [](int64_t t) { return int32_t(-(t + 1)); });
}

// The reduction lists of block k by node pairs (SharedNzPlan::block_lists): per node n of N_k
// and node m of N̄_k sharing an element, one source per such element (slot j, local nodes a of n
// and b of m) for the 3 x 3 values of (n, m); per node n of N_k, one source per element (slot j,
// local node a) for its 3 force entries. Lists whose 9 values are all dropped are left out.
Lists block_reduce_lists(const std::vector<int32_t>& conn, const linalg::ElementValueMap& map,
                         const mesh::NodePartition& partition, std::size_t k, int64_t rows,
                         std::vector<int32_t>& local, std::vector<uint64_t>& pairs, int64_t& sources) {
  const int32_t* elems = partition.elements.data() + partition.element_ptr[k];
  const int64_t S = int64_t(partition.element_count(k));
  const int32_t* own = partition.nodes.data() + partition.node_ptr[k];
  const int64_t own_count = int64_t(partition.node_count(k));
  // Local numbers: N_k first (their own order), then the other nodes of N̄_k as met.
  std::vector<int32_t> numbered(own, own + own_count);
  for (int64_t i = 0; i < own_count; ++i) local[std::size_t(own[i])] = int32_t(i);
  for (int64_t j = 0; j < S; ++j)
    for (int b = 0; b < 4; ++b)
      if (const int32_t m = conn[std::size_t(4 * elems[j] + b)]; local[std::size_t(m)] < 0) {
        local[std::size_t(m)] = int32_t(numbered.size());
        numbered.push_back(m);
      }
  const int64_t nbar = int64_t(numbered.size());
  // Keys: force lists 0 .. own_count - 1, pair lists own_count + n nbar + m.
  pairs.clear();
  for (int64_t i = 0; i < own_count; ++i) pairs.push_back(pair_key(i, -1));
  for (int64_t j = 0; j < S; ++j) {
    const int32_t* en = conn.data() + 4 * elems[j];
    for (int a = 0; a < 4; ++a) {
      if (partition.part_of[std::size_t(en[a])] != int32_t(k)) continue;
      const int64_t n = local[std::size_t(en[a])];
      pairs.push_back(pair_key(n, block_source(j, true, a, 0)));
      for (int b = 0; b < 4; ++b)
        pairs.push_back(pair_key(own_count + n * nbar + local[std::size_t(en[b])], block_source(j, false, a, b)));
    }
  }
  for (int32_t m : numbered) local[std::size_t(m)] = -1;
  std::sort(pairs.begin(), pairs.end());
  constexpr uint64_t mask = (uint64_t(1) << kValueBits) - 1;
  Lists lists;
  for (std::size_t i = 0; i < pairs.size();) {
    const int64_t key = int64_t(pairs[i] >> kValueBits);
    const std::size_t first = i;
    for (; i < pairs.size() && int64_t(pairs[i] >> kValueBits) == key; ++i) {
    }
    // A representative source (any element of the list gives the same positions); -1: a node
    // without elements (its force list holds only the -1 marker entry).
    int32_t rep = -1;
    for (std::size_t q = first; q < i && rep < 0; ++q) rep = int32_t(pairs[q] & mask) - 1;
    int32_t targets[9];
    int count = 0;
    bool any = false;
    if (key < own_count) {
      const int64_t n = own[key];
      for (int c = 0; c < 3; ++c) {
        const int32_t d = rep < 0 ? 0 : map.dof[std::size_t(elems[rep >> 5] * 12 + 3 * ((rep >> 2) & 3) + c)];
        targets[count++] = int32_t(-(map.value_count + (d >= 0 ? 3 * n + c : rows + 3 * n + c) + 1));
      }
      any = true;
    } else {
      const int64_t e = elems[rep >> 5];
      const int a = (rep >> 2) & 3, b = rep & 3;
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) {
          const int32_t p = map.entry[std::size_t((e * 12 + 3 * a + r) * 12 + 3 * b + c)];
          targets[count++] = p >= 0 ? -(p + 1) : std::numeric_limits<int32_t>::min();
          any = any || p >= 0;
        }
    }
    if (!any) continue;
    for (std::size_t q = first; q < i; ++q)
      if (const auto v = int32_t(pairs[q] & mask)) {
        lists.items.push_back(v);
        sources += key < own_count ? 3 : 9;
      }
    lists.items.insert(lists.items.end(), targets, targets + count);
    lists.close();
  }
  return lists;
}

}  // namespace

mesh::PartitionBudget sharednz_budget(std::size_t shared_bytes, std::size_t value_bytes) {
  return {shared_bytes, std::size_t(kStagedValuesPerElement) * value_bytes};
}

SharedNzPlan make_sharednz_plan(int64_t nodes, const std::vector<int32_t>& conn, const linalg::ElementValueMap& map,
                                const mesh::NodePartition& partition, bool block_lists, int threads) {
  check_inputs(nodes, conn, map, partition);
  if (threads < 32 || threads > kSharedNzThreads || threads % 32 != 0)
    throw InputError("SharedNZ: " + std::to_string(threads) + " threads per block (a multiple of 32 up to " +
                     std::to_string(kSharedNzThreads) + ")");
  const int64_t E = int64_t(conn.size() / 4);
  SharedNzPlan plan;
  plan.threads = threads;
  plan.block_lists = block_lists;
  plan.rows = 3 * nodes;
  plan.value_count = map.value_count;
  plan.partition = mesh::partition_stats(partition, std::size_t(E));
  const std::size_t parts = partition.parts();
  // The slots are the partition's element lists, in order.
  plan.slot_ptr.assign(partition.element_ptr.begin(), partition.element_ptr.end());
  plan.slot_element.assign(partition.elements.begin(), partition.elements.end());
  plan.slot_record.resize(plan.slot_element.size());
  int64_t too_large = -1;
#pragma omp parallel for schedule(dynamic, 64) reduction(max : too_large)
  for (std::size_t k = 0; k < parts; ++k) {
    const int64_t S = int64_t(partition.element_count(k));
    if (kStagedValuesPerElement * S >= (int64_t(1) << kValueBits) - 1) too_large = std::max(too_large, S);
    for (int64_t s = plan.slot_ptr[k]; s < plan.slot_ptr[k + 1]; ++s) {
      const int32_t e = plan.slot_element[std::size_t(s)];
      plan.slot_record[std::size_t(s)] = partition.part_of[std::size_t(conn[std::size_t(4 * e)])] == int32_t(k) ? e : -1;
    }
  }
  if (too_large >= 0)
    throw InputError("SharedNZ: a partition of " + std::to_string(too_large) + " elements passes the plan's index range");
  for (std::size_t k = 0; k < parts; ++k) plan.max_slots = std::max(plan.max_slots, int64_t(partition.element_count(k)));
  // The blocks' packed arrays are independent: built in parallel, then concatenated in order.
  struct BlockArrays {
    std::vector<int32_t> scatter, reduce;
    int64_t node_loads = 0, sources = 0;
  };
  std::vector<BlockArrays> per(parts);
#pragma omp parallel
  {
    std::vector<uint64_t> pairs;
    std::vector<int32_t> local(block_lists ? std::size_t(nodes) : 0, -1);
#pragma omp for schedule(dynamic, 4)
    for (std::size_t k = 0; k < parts; ++k) {
      const int32_t* elems = partition.elements.data() + partition.element_ptr[k];
      const int64_t S = int64_t(partition.element_count(k));
      BlockArrays& out = per[k];
      // Scatter lists: per node of N̄_k, the staging position 3 a S + j of each slot j holding it.
      pairs.clear();
      for (int64_t j = 0; j < S; ++j)
        for (int a = 0; a < 4; ++a) pairs.push_back(pair_key(conn[std::size_t(4 * elems[j] + a)], 3 * a * S + j));
      const Lists scatter = split_scatter(
          group(pairs, [](int64_t m) { return int32_t(-(m + 1)); }, [](int64_t) { return int32_t(0); }), plan.threads);
      out.node_loads = int64_t(scatter.size());
      pack_lpt(scatter, plan.threads, out.scatter);
      pack_lpt(block_lists ? block_reduce_lists(conn, map, partition, k, plan.rows, local, pairs, out.sources)
                           : value_reduce_lists(conn, map, partition, k, pairs, out.sources),
               plan.threads, out.reduce);
    }
  }
  // Concatenated in block order: offsets first, then the copies in parallel (at 10^8 elements
  // the arrays hold GBs, and appending them one block at a time was serial).
  plan.scatter_ptr.resize(parts + 1);
  plan.reduce_ptr.resize(parts + 1);
  for (std::size_t k = 0; k < parts; ++k) {
    plan.scatter_ptr[k + 1] = plan.scatter_ptr[k] + int64_t(per[k].scatter.size());
    plan.reduce_ptr[k + 1] = plan.reduce_ptr[k] + int64_t(per[k].reduce.size());
    plan.node_loads += per[k].node_loads;
    plan.reduce_sources += per[k].sources;
  }
  plan.scatter.resize(std::size_t(plan.scatter_ptr[parts]));
  plan.reduce.resize(std::size_t(plan.reduce_ptr[parts]));
#pragma omp parallel for schedule(dynamic, 64)
  for (std::size_t k = 0; k < parts; ++k) {
    std::copy(per[k].scatter.begin(), per[k].scatter.end(), plan.scatter.begin() + plan.scatter_ptr[k]);
    std::copy(per[k].reduce.begin(), per[k].reduce.end(), plan.reduce.begin() + plan.reduce_ptr[k]);
    per[k] = BlockArrays();
  }
  return plan;
}

template <class T>
std::vector<T> slot_supplemental(const std::vector<int32_t>& slot_element, const std::vector<T>& supplemental,
                                 tet::SupplementalForm form) {
  const std::size_t ns = std::size_t(tet::supplemental_size(form)), slots = slot_element.size();
  std::vector<T> out(ns * slots);
  for (std::size_t s = 0; s < slots; ++s)
    for (std::size_t q = 0; q < ns; ++q) out[q * slots + s] = supplemental[std::size_t(slot_element[s]) * ns + q];
  return out;
}

template <class T>
void sharednz_reference(const SharedNzPlan& plan, const std::vector<T>& slot_supp, tet::SupplementalForm form,
                        tet::Lame<T> lame, const T* x, const AssemblyTargets<T>& out) {
  SharedNzArgs<T> a = sharednz_args(plan, plan.slot_ptr, plan.slot_record, slot_supp, plan.scatter_ptr, plan.scatter,
                                    plan.reduce_ptr, plan.reduce, form, lame);
  a.x = x;
  a.out = out;
  std::vector<T> sm;
  for (int64_t k = 0; k < plan.blocks(); ++k) {
    const int64_t S = plan.slot_ptr[std::size_t(k) + 1] - plan.slot_ptr[std::size_t(k)];
    // NaN where nothing was staged: a plan that misses a position shows in the results.
    sm.assign(std::size_t(S) * kStagedValuesPerElement, std::numeric_limits<T>::quiet_NaN());
    for (int tid = 0; tid < plan.threads; ++tid) sharednz_scatter(a, k, tid, plan.threads, sm.data());
    for (int64_t j = 0; j < S; ++j) sharednz_element(a, k, j, sm.data());
    for (int tid = 0; tid < plan.threads; ++tid)
      if (plan.block_lists)
        sharednz_reduce_blocks(a, k, tid, plan.threads, sm.data());
      else
        sharednz_reduce(a, k, tid, plan.threads, sm.data());
  }
}

template std::vector<float> slot_supplemental(const std::vector<int32_t>&, const std::vector<float>&,
                                              tet::SupplementalForm);
template std::vector<double> slot_supplemental(const std::vector<int32_t>&, const std::vector<double>&,
                                               tet::SupplementalForm);
template void sharednz_reference(const SharedNzPlan&, const std::vector<float>&, tet::SupplementalForm,
                                 tet::Lame<float>, const float*, const AssemblyTargets<float>&);
template void sharednz_reference(const SharedNzPlan&, const std::vector<double>&, tet::SupplementalForm,
                                 tet::Lame<double>, const double*, const AssemblyTargets<double>&);

}  // namespace eb::nr_neohookean
