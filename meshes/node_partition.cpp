#include "meshes/node_partition.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "meshes/errors.h"
#include "meshes/reorder.h"

#ifdef ELASTOBENCH_HAVE_METIS
#include <metis.h>
#endif

namespace eb::mesh {
namespace {

// A node whose own elements do not fit cannot be in any partition.
void check_stars(const NodeElements& inc, const PartitionBudget& budget) {
  const std::size_t cap = budget.max_elements();
  for (std::size_t v = 0; v < inc.size(); ++v)
    if (inc.count(v) > cap)
      throw InputError("node " + std::to_string(v) + " belongs to " + std::to_string(inc.count(v)) +
                       " elements, more than a partition may stage (" + std::to_string(cap) + " elements of " +
                       std::to_string(budget.bytes_per_element) + " bytes in " + std::to_string(budget.shared_bytes) +
                       " bytes of shared memory)");
}

// The partition from a label per node (labels in [0, labels)): partitions ordered by their lowest
// node, empty labels dropped, nodes without elements moved to one last partition.
NodePartition from_labels(const NodeElements& inc, const std::vector<int32_t>& label, std::size_t labels) {
  const std::size_t n = inc.size();
  std::vector<int32_t> rank(labels, -1);
  int32_t parts = 0;
  bool isolated = false;
  for (std::size_t v = 0; v < n; ++v) {
    if (inc.count(v) == 0) {
      isolated = true;
      continue;
    }
    if (rank[std::size_t(label[v])] < 0) rank[std::size_t(label[v])] = parts++;
  }
  const int32_t isolated_part = parts;
  NodePartition p;
  p.part_of.resize(n);
  for (std::size_t v = 0; v < n; ++v) p.part_of[v] = inc.count(v) == 0 ? isolated_part : rank[std::size_t(label[v])];
  const std::size_t total = std::size_t(parts) + (isolated ? 1 : 0);
  p.node_ptr.assign(total + 1, 0);
  for (std::size_t v = 0; v < n; ++v) ++p.node_ptr[std::size_t(p.part_of[v]) + 1];
  std::partial_sum(p.node_ptr.begin(), p.node_ptr.end(), p.node_ptr.begin());
  p.nodes.resize(n);
  std::vector<int64_t> fill(p.node_ptr.begin(), p.node_ptr.end() - 1);
  for (std::size_t v = 0; v < n; ++v) p.nodes[std::size_t(fill[std::size_t(p.part_of[v])]++)] = int32_t(v);
  std::vector<int32_t> e;
  for (std::size_t k = 0; k < total; ++k) {
    e.clear();
    for (int64_t i = p.node_ptr[k]; i < p.node_ptr[k + 1]; ++i) {
      const auto v = std::size_t(p.nodes[std::size_t(i)]);
      e.insert(e.end(), inc.elements.begin() + inc.offsets[v], inc.elements.begin() + inc.offsets[v + 1]);
    }
    std::sort(e.begin(), e.end());
    e.erase(std::unique(e.begin(), e.end()), e.end());
    p.elements.insert(p.elements.end(), e.begin(), e.end());
    p.element_ptr.push_back(int64_t(p.elements.size()));
  }
  return p;
}

std::size_t largest_element_count(const NodePartition& p) {
  std::size_t m = 0;
  for (std::size_t k = 0; k < p.parts(); ++k) m = std::max(m, p.element_count(k));
  return m;
}

}  // namespace

NodePartitioner parse_node_partitioner(const std::string& name) {
  if (name == "greedy") return NodePartitioner::Greedy;
  if (name == "metis") return NodePartitioner::Metis;
  throw InputError("node partitioner '" + name + "' is unknown (valid: greedy, metis)");
}

const char* to_string(NodePartitioner p) { return p == NodePartitioner::Metis ? "metis" : "greedy"; }

std::size_t PartitionBudget::max_elements() const {
  if (bytes_per_element == 0) throw InputError("partition budget: bytes_per_element must be positive");
  return shared_bytes / bytes_per_element;
}

NodeElements node_elements(std::size_t num_nodes, const std::vector<std::array<int32_t, 4>>& tets) {
  NodeElements inc;
  inc.offsets.assign(num_nodes + 1, 0);
  for (std::size_t e = 0; e < tets.size(); ++e)
    for (int32_t v : tets[e]) {
      if (v < 0 || std::size_t(v) >= num_nodes)
        throw InputError("element " + std::to_string(e) + " names node " + std::to_string(v) + " of " +
                         std::to_string(num_nodes));
      ++inc.offsets[std::size_t(v) + 1];
    }
  std::partial_sum(inc.offsets.begin(), inc.offsets.end(), inc.offsets.begin());
  inc.elements.resize(std::size_t(inc.offsets.back()));
  std::vector<int64_t> fill(inc.offsets.begin(), inc.offsets.end() - 1);
  // Elements in increasing order per node because e increases; a node repeated within one
  // element (a degenerate tet) would list it twice, so lists are deduplicated below.
  for (std::size_t e = 0; e < tets.size(); ++e)
    for (int32_t v : tets[e]) {
      auto& f = fill[std::size_t(v)];
      if (f > inc.offsets[std::size_t(v)] && inc.elements[std::size_t(f - 1)] == int32_t(e)) continue;
      inc.elements[std::size_t(f++)] = int32_t(e);
    }
  // Compact away the slots that repeated nodes left unused.
  int64_t out = 0;
  for (std::size_t v = 0; v < num_nodes; ++v) {
    const int64_t begin = inc.offsets[v], end = fill[v];
    inc.offsets[v] = out;
    for (int64_t i = begin; i < end; ++i) inc.elements[std::size_t(out++)] = inc.elements[std::size_t(i)];
  }
  inc.offsets[num_nodes] = out;
  inc.elements.resize(std::size_t(out));
  return inc;
}

NodePartition greedy_node_partition(std::size_t num_nodes, const std::vector<std::array<int32_t, 4>>& tets,
                                    const PartitionBudget& budget) {
  const NodeElements inc = node_elements(num_nodes, tets);
  check_stars(inc, budget);
  const std::size_t cap = budget.max_elements();
  const NodeGraph g = node_graph(num_nodes, tets);
  // Partition ids are node ids (the partition of node v starts as {v}); a union keeps the id of
  // the partition with more nodes.
  std::vector<int32_t> part(num_nodes);
  std::iota(part.begin(), part.end(), 0);
  std::vector<std::vector<int32_t>> members(num_nodes), elems(num_nodes);
  for (std::size_t v = 0; v < num_nodes; ++v) {
    members[v] = {int32_t(v)};
    elems[v].assign(inc.elements.begin() + inc.offsets[v], inc.elements.begin() + inc.offsets[v + 1]);
  }
  std::vector<int64_t> element_mark(tets.size(), -1), part_mark(num_nodes, -1);
  std::vector<int32_t> merged;
  int64_t stamp = 0;
  for (bool united = true; united;) {
    united = false;
    for (std::size_t v = 0; v < num_nodes; ++v) {
      const int32_t P = part[v];
      ++stamp;
      for (int32_t e : elems[std::size_t(P)]) element_mark[std::size_t(e)] = stamp;
      part_mark[std::size_t(P)] = stamp;
      int32_t best = -1;
      std::size_t best_size = cap + 1;
      for (int64_t k = g.offsets[v]; k < g.offsets[v + 1]; ++k) {
        const int32_t Q = part[std::size_t(g.neighbours[std::size_t(k)])];
        if (part_mark[std::size_t(Q)] == stamp) continue;  // P itself, or a partition seen already
        part_mark[std::size_t(Q)] = stamp;
        std::size_t shared = 0;
        for (int32_t e : elems[std::size_t(Q)]) shared += element_mark[std::size_t(e)] == stamp;
        const std::size_t size = elems[std::size_t(P)].size() + elems[std::size_t(Q)].size() - shared;
        if (size < best_size || (size == best_size && Q < best)) {
          best = Q;
          best_size = size;
        }
      }
      if (best < 0) continue;  // no adjacent partition fits
      int32_t keep = P, gone = best;
      if (members[std::size_t(gone)].size() > members[std::size_t(keep)].size()) std::swap(keep, gone);
      for (int32_t w : members[std::size_t(gone)]) part[std::size_t(w)] = keep;
      auto& km = members[std::size_t(keep)];
      km.insert(km.end(), members[std::size_t(gone)].begin(), members[std::size_t(gone)].end());
      merged.clear();
      std::set_union(elems[std::size_t(keep)].begin(), elems[std::size_t(keep)].end(), elems[std::size_t(gone)].begin(),
                     elems[std::size_t(gone)].end(), std::back_inserter(merged));
      elems[std::size_t(keep)].swap(merged);
      std::vector<int32_t>().swap(members[std::size_t(gone)]);
      std::vector<int32_t>().swap(elems[std::size_t(gone)]);
      united = true;
    }
  }
  return from_labels(inc, part, num_nodes);
}

#ifdef ELASTOBENCH_HAVE_METIS
NodePartition metis_node_partition(std::size_t num_nodes, const std::vector<std::array<int32_t, 4>>& tets,
                                   const PartitionBudget& budget) {
  const NodeElements inc = node_elements(num_nodes, tets);
  check_stars(inc, budget);
  const std::size_t cap = budget.max_elements();
  std::vector<int32_t> label(num_nodes, 0);
  if (num_nodes == 0) return from_labels(inc, label, 1);
  const NodeGraph g = node_graph(num_nodes, tets);
  std::vector<idx_t> xadj(g.offsets.begin(), g.offsets.end()), adjncy(g.neighbours.begin(), g.neighbours.end());
  if (adjncy.empty()) adjncy.push_back(0);  // METIS wants a valid pointer even for an edgeless graph
  std::vector<idx_t> vwgt(num_nodes), where(num_nodes);
  for (std::size_t v = 0; v < num_nodes; ++v) vwgt[v] = idx_t(std::max<std::size_t>(1, inc.count(v)));
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_SEED] = 1;  // METIS is randomized; a fixed seed makes the partition repeatable
  // Every element is in some E_k, so at least |E| / cap parts; more while one overflows, scaled
  // by how far the largest one is over the budget.
  std::size_t parts = std::max<std::size_t>(1, (tets.size() + cap - 1) / cap);
  for (;;) {
    if (parts >= num_nodes) {  // one node per partition: fits, by check_stars
      std::iota(label.begin(), label.end(), 0);
      return from_labels(inc, label, num_nodes);
    }
    if (parts == 1) {
      std::fill(label.begin(), label.end(), 0);
    } else {
      idx_t nv = idx_t(num_nodes), ncon = 1, nparts = idx_t(parts), objval = 0;
      const int status = METIS_PartGraphKway(&nv, &ncon, xadj.data(), adjncy.data(), vwgt.data(), nullptr, nullptr,
                                             &nparts, nullptr, nullptr, options, &objval, where.data());
      if (status != METIS_OK)
        throw RuntimeFailure("METIS_PartGraphKway failed (status " + std::to_string(status) + ") for " +
                             std::to_string(parts) + " parts");
      label.assign(where.begin(), where.end());
    }
    NodePartition p = from_labels(inc, label, parts);
    const std::size_t largest = largest_element_count(p);
    if (largest <= cap) return p;
    parts = std::max(parts + 1, std::size_t(std::ceil(double(parts) * double(largest) / double(cap))));
  }
}
#else
NodePartition metis_node_partition(std::size_t, const std::vector<std::array<int32_t, 4>>&, const PartitionBudget&) {
  throw InputError("METIS node partition is unavailable: METIS was not compiled in (build with libmetis-dev, "
                   "ELASTOBENCH_METIS=ON); use greedy");
}
#endif

NodePartition partition_nodes(std::size_t num_nodes, const std::vector<std::array<int32_t, 4>>& tets,
                              const PartitionBudget& budget, NodePartitioner method) {
  return method == NodePartitioner::Metis ? metis_node_partition(num_nodes, tets, budget)
                                          : greedy_node_partition(num_nodes, tets, budget);
}

PartitionStats partition_stats(const NodePartition& p, std::size_t num_elements) {
  PartitionStats s;
  s.parts = p.parts();
  s.max_elements = largest_element_count(p);
  if (s.parts > 0) {
    s.mean_elements = double(p.elements.size()) / double(s.parts);
    s.mean_nodes = double(p.nodes.size()) / double(s.parts);
  }
  if (num_elements > 0) s.redundancy = double(p.elements.size()) / double(num_elements);
  return s;
}

}  // namespace eb::mesh
