// Node partitions for SharedNZ (meshes/node_partition.h): every node in exactly one partition,
// the budget kept, E_k exactly the elements touching N_k, the greedy result maximal.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "meshes/errors.h"
#include "meshes/mesh_io.h"
#include "meshes/node_partition.h"
#include "meshes/reorder.h"
#include "meshes/sphere.h"
#include "mesh_test_util.h"

namespace eb::mesh {
namespace {

// The budgets SharedNZ uses on an H100 (227 KB opt-in per block; 90 staged values per element:
// the 78 of the symmetric 12 x 12 tangent and the 12 of the force), and Fermi's 48 KB.
PartitionBudget h100_fp32() { return {227 * 1024, 90 * 4}; }
PartitionBudget h100_fp64() { return {227 * 1024, 90 * 8}; }
PartitionBudget fermi_fp32() { return {48 * 1024, 90 * 4}; }

std::vector<NodePartitioner> available_partitioners() {
  std::vector<NodePartitioner> p{NodePartitioner::Greedy};
  if (have_metis()) p.push_back(NodePartitioner::Metis);
  return p;
}

// Checks every invariant of a partition against the mesh, independently of how it was built.
void expect_valid(const NodePartition& p, const TetMesh& m, const PartitionBudget& budget) {
  const std::size_t n = m.nodes.size();
  ASSERT_EQ(p.part_of.size(), n);
  ASSERT_EQ(p.node_ptr.size(), p.parts() + 1);
  ASSERT_EQ(p.element_ptr.size(), p.parts() + 1);
  ASSERT_EQ(std::size_t(p.node_ptr.back()), p.nodes.size());
  ASSERT_EQ(std::size_t(p.element_ptr.back()), p.elements.size());
  std::vector<int> seen(n, 0);
  for (int32_t v : p.nodes) {
    ASSERT_GE(v, 0);
    ASSERT_LT(std::size_t(v), n);
    ++seen[std::size_t(v)];
  }
  for (std::size_t v = 0; v < n; ++v) ASSERT_EQ(seen[v], 1) << "node " << v;
  // Elements of each node, counted from the connectivity.
  std::vector<std::set<int32_t>> at(n);
  for (std::size_t e = 0; e < m.elems.size(); ++e)
    for (int32_t v : m.elems[e]) at[std::size_t(v)].insert(int32_t(e));
  const std::size_t cap = budget.max_elements();
  for (std::size_t k = 0; k < p.parts(); ++k) {
    ASSERT_GT(p.node_count(k), 0u) << "partition " << k;
    std::set<int32_t> expected;
    for (int64_t i = p.node_ptr[k]; i < p.node_ptr[k + 1]; ++i) {
      const auto v = std::size_t(p.nodes[std::size_t(i)]);
      ASSERT_EQ(p.part_of[v], int32_t(k));
      if (i > p.node_ptr[k]) ASSERT_LT(p.nodes[std::size_t(i - 1)], p.nodes[std::size_t(i)]);
      expected.insert(at[v].begin(), at[v].end());
    }
    const std::vector<int32_t> got(p.elements.begin() + p.element_ptr[k], p.elements.begin() + p.element_ptr[k + 1]);
    ASSERT_EQ(got, std::vector<int32_t>(expected.begin(), expected.end())) << "partition " << k;
    ASSERT_LE(got.size(), cap) << "partition " << k;
  }
}

// When the greedy pass stops, no node can unite its partition with an adjacent one.
void expect_greedy_maximal(const NodePartition& p, const TetMesh& m, const PartitionBudget& budget) {
  const NodeGraph g = node_graph(m.nodes.size(), m.elems);
  auto elems_of = [&](int32_t k) {
    return std::set<int32_t>(p.elements.begin() + p.element_ptr[std::size_t(k)],
                             p.elements.begin() + p.element_ptr[std::size_t(k) + 1]);
  };
  std::set<std::pair<int32_t, int32_t>> checked;
  for (std::size_t v = 0; v < m.nodes.size(); ++v)
    for (int64_t i = g.offsets[v]; i < g.offsets[v + 1]; ++i) {
      const int32_t P = p.part_of[v], Q = p.part_of[std::size_t(g.neighbours[std::size_t(i)])];
      if (P == Q || !checked.insert({std::min(P, Q), std::max(P, Q)}).second) continue;
      auto u = elems_of(P);
      const auto q = elems_of(Q);
      u.insert(q.begin(), q.end());
      ASSERT_GT(u.size(), budget.max_elements()) << "partitions " << P << " and " << Q << " would fit together";
    }
}

TEST(NodePartition, TwoTetsByHand) {
  // Two tetrahedra sharing the face (1, 2, 3); node 5 belongs to nothing.
  TetMesh m;
  m.nodes.resize(6);
  m.elems = {{0, 1, 2, 3}, {1, 2, 3, 4}};
  const NodeElements inc = node_elements(6, m.elems);
  EXPECT_EQ(inc.count(0), 1u);
  EXPECT_EQ(inc.count(1), 2u);
  EXPECT_EQ(inc.count(5), 0u);
  // A budget of one element cannot hold node 1's two.
  try {
    greedy_node_partition(6, m.elems, {100, 100});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("node 1 belongs to 2 elements"), std::string::npos) << e.what();
  }
  // Two elements: every node of the mesh fits one partition; node 5 gets its own, empty one.
  const PartitionBudget two{200, 100};
  const NodePartition p = greedy_node_partition(6, m.elems, two);
  ASSERT_EQ(p.parts(), 2u);
  EXPECT_EQ(std::vector<int32_t>(p.nodes.begin(), p.nodes.begin() + 5), (std::vector<int32_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(p.element_count(0), 2u);
  EXPECT_EQ(p.element_count(1), 0u);
  EXPECT_EQ(p.part_of[5], 1);
  expect_valid(p, m, two);
}

TEST(NodePartition, SpheresAllPartitionersAndBudgets) {
  for (int level = 0; level < 4; ++level) {
    const TetMesh m = make_sphere_tet(level);
    for (const PartitionBudget& budget : {h100_fp32(), h100_fp64(), fermi_fp32()})
      for (NodePartitioner method : available_partitioners()) {
        SCOPED_TRACE("level " + std::to_string(level) + " " + to_string(method) + " budget " +
                     std::to_string(budget.max_elements()));
        const NodePartition p = partition_nodes(m.nodes.size(), m.elems, budget, method);
        expect_valid(p, m, budget);
        if (method == NodePartitioner::Greedy) expect_greedy_maximal(p, m, budget);
        const PartitionStats s = partition_stats(p, m.elems.size());
        EXPECT_GE(s.redundancy, 1.0);
        if (m.elems.size() <= budget.max_elements()) EXPECT_EQ(p.parts(), 1u);
      }
  }
}

TEST(NodePartition, LargerSharedMemoryMeansFewerRecomputedElements) {
  // The point of the H100's 227 KB against Fermi's 48 KB: larger partitions, fewer halo elements
  // computed twice.
  const TetMesh m = make_sphere_tet(3);
  const auto fermi = partition_stats(greedy_node_partition(m.nodes.size(), m.elems, fermi_fp32()), m.elems.size());
  const auto h100 = partition_stats(greedy_node_partition(m.nodes.size(), m.elems, h100_fp32()), m.elems.size());
  EXPECT_GT(h100.mean_nodes, 3.0 * fermi.mean_nodes);
  EXPECT_LT(h100.redundancy, fermi.redundancy);
}

TEST(NodePartition, GreedyIsRepeatable) {
  const TetMesh m = make_sphere_tet(2);
  const NodePartition a = greedy_node_partition(m.nodes.size(), m.elems, h100_fp64());
  const NodePartition b = greedy_node_partition(m.nodes.size(), m.elems, h100_fp64());
  EXPECT_EQ(a.part_of, b.part_of);
  EXPECT_EQ(a.elements, b.elements);
}

TEST(NodePartition, MetisOrAMessage) {
  const TetMesh m = make_sphere_tet(1);
  if (!have_metis()) {
    EXPECT_THROW(metis_node_partition(m.nodes.size(), m.elems, h100_fp32()), InputError);
    GTEST_SKIP() << "METIS not compiled in";
  }
  const PartitionBudget small{64 * 90 * 4, 90 * 4};  // 64 elements: several parts on 1080 tets
  const NodePartition p = metis_node_partition(m.nodes.size(), m.elems, small);
  expect_valid(p, m, small);
  EXPECT_GT(p.parts(), 1u);
  EXPECT_EQ(metis_node_partition(m.nodes.size(), m.elems, small).part_of, p.part_of);  // fixed seed
}

TEST(NodePartition, ParseNamesAndBadInput) {
  EXPECT_EQ(parse_node_partitioner("greedy"), NodePartitioner::Greedy);
  EXPECT_EQ(parse_node_partitioner("metis"), NodePartitioner::Metis);
  EXPECT_THROW(parse_node_partitioner("kway"), InputError);
  EXPECT_THROW((PartitionBudget{1024, 0}.max_elements()), InputError);
  EXPECT_THROW(node_elements(3, {{0, 1, 2, 3}}), InputError);
}

TEST(NodePartition, CamileHand) {
  const auto dir = test::data_dir();
  if (dir.empty() || !std::filesystem::exists(dir / "camile_hand.mesh")) GTEST_SKIP() << "camile_hand.mesh absent";
  const TetMesh m = read_tet_mesh(dir / "camile_hand.mesh");
  for (const PartitionBudget& budget : {h100_fp32(), h100_fp64()})
    for (NodePartitioner method : available_partitioners()) {
      SCOPED_TRACE(std::string(to_string(method)) + " budget " + std::to_string(budget.max_elements()));
      const NodePartition p = partition_nodes(m.nodes.size(), m.elems, budget, method);
      expect_valid(p, m, budget);
      const PartitionStats s = partition_stats(p, m.elems.size());
      std::printf("camile_hand %s, %zu elements per block: %zu parts, mean |N_k| %.1f, mean |E_k| %.1f, max %zu, "
                  "redundancy %.2f\n",
                  to_string(method), budget.max_elements(), s.parts, s.mean_nodes, s.mean_elements, s.max_elements,
                  s.redundancy);
    }
}

}  // namespace
}  // namespace eb::mesh
