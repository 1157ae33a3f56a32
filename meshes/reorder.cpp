#include "meshes/reorder.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "meshes/errors.h"

#ifdef ELASTOBENCH_HAVE_METIS
#include <metis.h>
#endif

namespace eb::mesh {
namespace {

// Adds every pair of each element's nodes, both ways, then sorts and deduplicates per node.
class GraphBuilder {
 public:
  explicit GraphBuilder(size_t n) : lists_(n) {}
  template <size_t N>
  void add(const std::vector<std::array<int32_t, N>>& elems) {
    for (const auto& e : elems)
      for (size_t a = 0; a < N; ++a)
        for (size_t b = 0; b < N; ++b)
          if (e[a] != e[b]) lists_[size_t(e[a])].push_back(e[b]);
  }
  NodeGraph finish() {
    NodeGraph g;
    g.offsets.reserve(lists_.size() + 1);
    for (auto& l : lists_) {
      std::sort(l.begin(), l.end());
      l.erase(std::unique(l.begin(), l.end()), l.end());
      g.neighbours.insert(g.neighbours.end(), l.begin(), l.end());
      g.offsets.push_back(int64_t(g.neighbours.size()));
      std::vector<int32_t>().swap(l);
    }
    return g;
  }

 private:
  std::vector<std::vector<int32_t>> lists_;
};

// Breadth-first level structure from `root` within its component: `levels` holds the nodes in
// visiting order, `level_start[k]` where level k begins. Uses and resets `mark`.
struct Levels {
  std::vector<int32_t> nodes;
  std::vector<size_t> level_start;
  size_t depth() const { return level_start.size(); }
};

Levels level_structure(const NodeGraph& g, int32_t root, std::vector<char>& mark) {
  Levels L;
  L.nodes.push_back(root);
  mark[size_t(root)] = 1;
  size_t begin = 0;
  while (begin < L.nodes.size()) {
    const size_t end = L.nodes.size();
    L.level_start.push_back(begin);
    for (size_t i = begin; i < end; ++i) {
      const auto v = size_t(L.nodes[i]);
      for (int64_t k = g.offsets[v]; k < g.offsets[v + 1]; ++k) {
        const int32_t w = g.neighbours[size_t(k)];
        if (!mark[size_t(w)]) {
          mark[size_t(w)] = 1;
          L.nodes.push_back(w);
        }
      }
    }
    begin = end;
  }
  for (int32_t v : L.nodes) mark[size_t(v)] = 0;
  return L;
}

// George and Liu's pseudo-peripheral node: move to a minimum-degree node of the last level as
// long as that lengthens the level structure (the eccentricity grows).
int32_t pseudo_peripheral_node(const NodeGraph& g, int32_t start, std::vector<char>& mark) {
  int32_t root = start;
  Levels L = level_structure(g, root, mark);
  for (;;) {
    int32_t best = -1;
    for (size_t i = L.level_start.back(); i < L.nodes.size(); ++i) {
      const int32_t v = L.nodes[i];
      if (best < 0 || g.degree(size_t(v)) < g.degree(size_t(best)) ||
          (g.degree(size_t(v)) == g.degree(size_t(best)) && v < best))
        best = v;
    }
    Levels next = level_structure(g, best, mark);
    if (next.depth() <= L.depth()) return root;
    root = best;
    L = std::move(next);
  }
}

template <typename Elems>
void renumber_elements(Elems& elems, const std::vector<int32_t>& old_to_new) {
  for (auto& e : elems)
    for (auto& v : e) v = old_to_new[size_t(v)];
}

void check_order(const std::vector<int32_t>& order, size_t n) {
  if (!is_permutation(order, n))
    throw InputError("node order of size " + std::to_string(order.size()) + " is not a permutation of 0.." +
                     std::to_string(n == 0 ? 0 : n - 1));
}

std::vector<Vec3> permuted_nodes(const std::vector<Vec3>& nodes, const std::vector<int32_t>& order) {
  std::vector<Vec3> out(nodes.size());
  for (size_t k = 0; k < order.size(); ++k) out[k] = nodes[size_t(order[k])];
  return out;
}

template <typename Mesh>
void apply_to_volume(Mesh& m, const std::vector<int32_t>& order) {
  check_order(order, m.nodes.size());
  renumber_elements(m.elems, inverse_permutation(order));
  m.nodes = permuted_nodes(m.nodes, order);
}

}  // namespace

NodeOrdering parse_node_ordering(const std::string& name) {
  if (name == "none") return NodeOrdering::None;
  if (name == "rcm") return NodeOrdering::Rcm;
  if (name == "metis") return NodeOrdering::Metis;
  throw InputError("node ordering '" + name + "' is unknown (valid: none, rcm, metis)");
}

const char* to_string(NodeOrdering o) {
  switch (o) {
    case NodeOrdering::Rcm: return "rcm";
    case NodeOrdering::Metis: return "metis";
    default: return "none";
  }
}

NodeGraph node_graph(size_t num_nodes, const std::vector<std::array<int32_t, 4>>& tets) {
  GraphBuilder b(num_nodes);
  b.add(tets);
  return b.finish();
}

NodeGraph node_graph(size_t num_nodes, const std::vector<std::array<int32_t, 8>>& hexes) {
  GraphBuilder b(num_nodes);
  b.add(hexes);
  return b.finish();
}

NodeGraph node_graph(const MeshFile& m) {
  GraphBuilder b(m.nodes.size());
  b.add(m.tets);
  b.add(m.hexes);
  b.add(m.tris);
  return b.finish();
}

std::vector<int32_t> rcm_order(const NodeGraph& g) {
  const size_t n = g.size();
  std::vector<int32_t> order;
  order.reserve(n);
  std::vector<char> placed(n, 0), mark(n, 0);
  std::vector<int32_t> fresh;
  // Components in order of their lowest-numbered node, each from its pseudo-peripheral node.
  for (size_t s = 0; s < n; ++s) {
    if (placed[s]) continue;
    const int32_t root = pseudo_peripheral_node(g, int32_t(s), mark);
    size_t head = order.size();
    order.push_back(root);
    placed[size_t(root)] = 1;
    while (head < order.size()) {
      const auto v = size_t(order[head++]);
      fresh.clear();
      for (int64_t k = g.offsets[v]; k < g.offsets[v + 1]; ++k) {
        const int32_t w = g.neighbours[size_t(k)];
        if (!placed[size_t(w)]) {
          placed[size_t(w)] = 1;
          fresh.push_back(w);
        }
      }
      // Ties broken by node number, so the order depends on nothing but the graph.
      std::sort(fresh.begin(), fresh.end(), [&](int32_t a, int32_t b) {
        return g.degree(size_t(a)) != g.degree(size_t(b)) ? g.degree(size_t(a)) < g.degree(size_t(b)) : a < b;
      });
      order.insert(order.end(), fresh.begin(), fresh.end());
    }
  }
  std::reverse(order.begin(), order.end());
  return order;
}

#ifdef ELASTOBENCH_HAVE_METIS
bool have_metis() { return true; }

std::vector<int32_t> metis_order(const NodeGraph& g) {
  const size_t n = g.size();
  if (n == 0) return {};
  std::vector<idx_t> xadj(g.offsets.begin(), g.offsets.end()), adjncy(g.neighbours.begin(), g.neighbours.end());
  std::vector<idx_t> perm(n), iperm(n);
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_NUMBERING] = 0;
  options[METIS_OPTION_SEED] = 1;  // METIS is randomized; a fixed seed makes the order repeatable
  idx_t nv = idx_t(n);
  if (adjncy.empty()) adjncy.push_back(0);  // METIS wants a valid pointer even for an edgeless graph
  const int status = METIS_NodeND(&nv, xadj.data(), adjncy.data(), nullptr, options, perm.data(), iperm.data());
  if (status != METIS_OK) throw RuntimeFailure("METIS_NodeND failed (status " + std::to_string(status) + ")");
  // METIS: row i of the permuted matrix is row perm[i] of the original, i.e. perm[new] = old.
  return std::vector<int32_t>(perm.begin(), perm.end());
}
#else
bool have_metis() { return false; }

std::vector<int32_t> metis_order(const NodeGraph&) {
  throw InputError("METIS ordering is unavailable: METIS was not compiled in (build with libmetis-dev, "
                   "ELASTOBENCH_METIS=ON); use rcm");
}
#endif

std::vector<int32_t> node_order(const NodeGraph& g, NodeOrdering method) {
  if (method == NodeOrdering::Rcm) return rcm_order(g);
  if (method == NodeOrdering::Metis) return metis_order(g);
  std::vector<int32_t> identity(g.size());
  std::iota(identity.begin(), identity.end(), 0);
  return identity;
}

bool is_permutation(const std::vector<int32_t>& order, size_t n) {
  if (order.size() != n) return false;
  std::vector<char> seen(n, 0);
  for (int32_t v : order) {
    if (v < 0 || size_t(v) >= n || seen[size_t(v)]) return false;
    seen[size_t(v)] = 1;
  }
  return true;
}

std::vector<int32_t> inverse_permutation(const std::vector<int32_t>& order) {
  std::vector<int32_t> inv(order.size());
  for (size_t k = 0; k < order.size(); ++k) inv[size_t(order[k])] = int32_t(k);
  return inv;
}

OrderingStats ordering_stats(const NodeGraph& g, const std::vector<int32_t>& order) {
  std::vector<int32_t> position;
  if (!order.empty()) {
    check_order(order, g.size());
    position = inverse_permutation(order);
  }
  const auto at = [&](size_t v) { return position.empty() ? int64_t(v) : int64_t(position[v]); };
  OrderingStats s;
  double sum = 0;
  for (size_t v = 0; v < g.size(); ++v)
    for (int64_t k = g.offsets[v]; k < g.offsets[v + 1]; ++k) {
      const auto d = size_t(std::llabs(at(v) - at(size_t(g.neighbours[size_t(k)]))));
      s.bandwidth = std::max(s.bandwidth, d);
      sum += double(d);
    }
  if (!g.neighbours.empty()) s.mean_distance = sum / double(g.neighbours.size());
  return s;
}

void apply_node_order(MeshFile& m, const std::vector<int32_t>& order) {
  check_order(order, m.nodes.size());
  const auto old_to_new = inverse_permutation(order);
  renumber_elements(m.tets, old_to_new);
  renumber_elements(m.hexes, old_to_new);
  renumber_elements(m.tris, old_to_new);
  m.nodes = permuted_nodes(m.nodes, order);
}

void apply_node_order(TetMesh& m, const std::vector<int32_t>& order) { apply_to_volume(m, order); }
void apply_node_order(HexMesh& m, const std::vector<int32_t>& order) { apply_to_volume(m, order); }

std::vector<int32_t> reorder_nodes(MeshFile& m, NodeOrdering method) {
  auto order = node_order(node_graph(m), method);
  apply_node_order(m, order);
  return order;
}

std::vector<int32_t> reorder_nodes(TetMesh& m, NodeOrdering method) {
  auto order = node_order(node_graph(m.nodes.size(), m.elems), method);
  apply_node_order(m, order);
  return order;
}

}  // namespace eb::mesh
