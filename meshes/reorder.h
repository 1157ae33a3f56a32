#pragma once
// Node renumbering for locality: a sparse matrix-vector product over a mesh reads, for row i, the
// vector entries of i's neighbours; when neighbours have nearby numbers those reads hit the same
// cache lines. Files come numbered by whatever generator wrote them (the raptor meshes have a
// node bandwidth close to the node count); renumbering fixes that once, at load time.
//
//   rcm    reverse Cuthill-McKee (written here; deterministic): breadth-first levels from a
//          pseudo-peripheral node, neighbours taken by increasing degree, order reversed. It
//          minimizes the bandwidth heuristically.
//   metis  METIS_NodeND nested dissection (ELASTOBENCH_HAVE_METIS only): a fill-reducing order
//          that keeps each subdomain's nodes together but puts separators last, so its bandwidth
//          stays large while its mean neighbour distance drops (`mesh info` prints both).
//   none   the file's order.
//
// An order is a permutation `order` with order[new] = old (the node that takes number `new`).
// Two nodes are adjacent when an element holds both (all pairs of an element: the stiffness
// matrix couples every pair of an element's nodes). Nodes no element uses are isolated; RCM
// keeps them in the order, as singleton components.
#include <cstdint>
#include <string>
#include <vector>

#include "meshes/mesh.h"
#include "meshes/mesh_io.h"

namespace eb::mesh {

enum class NodeOrdering { None, Rcm, Metis };
NodeOrdering parse_node_ordering(const std::string& name);  // "none" "rcm" "metis"; InputError otherwise
const char* to_string(NodeOrdering o);
bool have_metis();

// Compressed adjacency lists: the neighbours of node i are neighbours[offsets[i] .. offsets[i+1]),
// sorted, without i itself.
struct NodeGraph {
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> neighbours;
  size_t size() const { return offsets.size() - 1; }
  size_t degree(size_t i) const { return size_t(offsets[i + 1] - offsets[i]); }
};

NodeGraph node_graph(size_t num_nodes, const std::vector<std::array<int32_t, 4>>& tets);
NodeGraph node_graph(size_t num_nodes, const std::vector<std::array<int32_t, 8>>& hexes);
// Every cell of the file: tetrahedra, hexahedra and triangles.
NodeGraph node_graph(const MeshFile& m);

std::vector<int32_t> rcm_order(const NodeGraph& g);
// Throws InputError when METIS was not compiled in.
std::vector<int32_t> metis_order(const NodeGraph& g);
std::vector<int32_t> node_order(const NodeGraph& g, NodeOrdering method);  // None: identity

bool is_permutation(const std::vector<int32_t>& order, size_t n);
std::vector<int32_t> inverse_permutation(const std::vector<int32_t>& order);

struct OrderingStats {
  size_t bandwidth = 0;        // max |new(i) - new(j)| over adjacent i, j
  double mean_distance = 0.0;  // mean |new(i) - new(j)| over adjacent pairs
};
// `order` empty: the numbering as stored.
OrderingStats ordering_stats(const NodeGraph& g, const std::vector<int32_t>& order = {});

// Renumber nodes: nodes move to their new places and every element (and boundary triangle) is
// rewritten; element order and materials are kept. InputError unless `order` is a permutation
// of the node indices.
void apply_node_order(MeshFile& m, const std::vector<int32_t>& order);
void apply_node_order(TetMesh& m, const std::vector<int32_t>& order);
void apply_node_order(HexMesh& m, const std::vector<int32_t>& order);

// node_graph + node_order + apply_node_order; returns the order applied (identity for None).
std::vector<int32_t> reorder_nodes(MeshFile& m, NodeOrdering method);
std::vector<int32_t> reorder_nodes(TetMesh& m, NodeOrdering method);

}  // namespace eb::mesh
