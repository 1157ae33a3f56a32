#pragma once
// Node partitions for assembly by non-zeros in shared memory (Cecka, Lew & Darve 2011,
// Sec. 16.3.2, "SharedNZ"): one thread block assembles every non-zero of the rows of its nodes
// N_k, so it must hold in shared memory the element data of E_k, every element that touches a
// node of N_k. A partition is valid when |E_k| times the bytes staged per element fits the block's
// shared memory (the elements' nodal data is staged in the same slots and overwritten by the
// element data, so it adds nothing).
//
//   greedy  the paper's algorithm (written here; deterministic): every node starts as its own
//           partition; sweeping the nodes in order, a node's partition is united with the
//           adjacent partition (one holding a neighbour of the node) whose union needs the fewest
//           elements, if the union fits the budget; sweeps repeat until none unites anything.
//           The paper found it better than METIS for this purpose.
//   metis   METIS_PartGraphKway on the node graph (ELASTOBENCH_HAVE_METIS only), node weights the
//           number of elements at the node; METIS balances nodes, not |E_k|, so the part count
//           grows until every partition fits.
//
// Nodes no element uses have E = {} and no neighbour: they are gathered into one last partition
// (its block only writes their rows' zeros).
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace eb::mesh {

enum class NodePartitioner { Greedy, Metis };
NodePartitioner parse_node_partitioner(const std::string& name);  // "greedy" "metis"; InputError otherwise
const char* to_string(NodePartitioner p);

// What one block may stage: |E_k| * bytes_per_element <= shared_bytes.
struct PartitionBudget {
  std::size_t shared_bytes = 0;
  std::size_t bytes_per_element = 0;
  // The largest |E_k| the budget allows (InputError when bytes_per_element is 0).
  std::size_t max_elements() const;
};

// Compressed node -> element incidence: the elements of node n are elements[offsets[n] ..
// offsets[n+1]), increasing.
struct NodeElements {
  std::vector<int64_t> offsets{0};
  std::vector<int32_t> elements;
  std::size_t size() const { return offsets.size() - 1; }
  std::size_t count(std::size_t n) const { return std::size_t(offsets[n + 1] - offsets[n]); }
};
// InputError for a node id outside [0, num_nodes).
NodeElements node_elements(std::size_t num_nodes, const std::vector<std::array<int32_t, 4>>& tets);

struct NodePartition {
  // Partition k: its nodes N_k = nodes[node_ptr[k] .. node_ptr[k+1]) and its elements
  // E_k = elements[element_ptr[k] .. element_ptr[k+1]), both increasing.
  std::vector<int64_t> node_ptr{0};
  std::vector<int32_t> nodes;
  std::vector<int64_t> element_ptr{0};
  std::vector<int32_t> elements;
  std::vector<int32_t> part_of;  // per node: its partition
  std::size_t parts() const { return node_ptr.size() - 1; }
  std::size_t node_count(std::size_t k) const { return std::size_t(node_ptr[k + 1] - node_ptr[k]); }
  std::size_t element_count(std::size_t k) const { return std::size_t(element_ptr[k + 1] - element_ptr[k]); }
};

// InputError naming the node when one node's elements alone exceed the budget; for metis, when
// METIS was not compiled in.
NodePartition partition_nodes(std::size_t num_nodes, const std::vector<std::array<int32_t, 4>>& tets,
                              const PartitionBudget& budget, NodePartitioner method);
NodePartition greedy_node_partition(std::size_t num_nodes, const std::vector<std::array<int32_t, 4>>& tets,
                                    const PartitionBudget& budget);
NodePartition metis_node_partition(std::size_t num_nodes, const std::vector<std::array<int32_t, 4>>& tets,
                                   const PartitionBudget& budget);

struct PartitionStats {
  std::size_t parts = 0;
  std::size_t max_elements = 0;    // largest |E_k|
  double mean_elements = 0.0;      // mean |E_k|
  double mean_nodes = 0.0;         // mean |N_k|
  double redundancy = 0.0;         // sum |E_k| / |E|: how often an element is computed
};
PartitionStats partition_stats(const NodePartition& p, std::size_t num_elements);

}  // namespace eb::mesh
