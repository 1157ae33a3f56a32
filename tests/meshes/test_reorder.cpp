// Node reordering (meshes/reorder.h): permutations, mesh invariants, bandwidth reduction.
#include <algorithm>
#include <numeric>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "meshes/box.h"
#include "meshes/errors.h"
#include "meshes/geometry.h"
#include "meshes/reorder.h"

namespace eb::mesh {
namespace {

// A structured box whose node numbering is shuffled (seeded), as an unordered file would have it.
TetMesh shuffled_box(const std::array<int, 3>& n, unsigned seed) {
  TetMesh m = make_box_tet({0, 0, 0}, {1.0, 1.0, 1.0}, n, 6);
  std::vector<int32_t> order(m.nodes.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  apply_node_order(m, order);
  return m;
}

std::vector<double> sorted_volumes(const TetMesh& m) {
  std::vector<double> v;
  for (const auto& t : m.elems) {
    const auto x = gather(m.nodes, t);
    v.push_back(tet_signed_volume(x[0], x[1], x[2], x[3]));
  }
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<NodeOrdering> available_orderings() {
  std::vector<NodeOrdering> o{NodeOrdering::None, NodeOrdering::Rcm};
  if (have_metis()) o.push_back(NodeOrdering::Metis);
  return o;
}

TEST(Reorder, GraphOfOneTetAndBandwidthByHand) {
  // A tetrahedron couples every pair of its corners; node 3 is used by nothing.
  const NodeGraph g = node_graph(5, std::vector<std::array<int32_t, 4>>{{0, 1, 2, 4}});
  ASSERT_EQ(g.size(), 5u);
  EXPECT_EQ(g.degree(0), 3u);
  EXPECT_EQ(g.degree(3), 0u);  // unused node: isolated
  EXPECT_EQ(ordering_stats(g).bandwidth, 4u);  // nodes 0 and 4 are adjacent
  // 6 ordered pairs of |i-j| in {1,2,4,1,3,2} -> mean (1+2+4+1+3+2)/6.
  EXPECT_DOUBLE_EQ(ordering_stats(g).mean_distance, 13.0 / 6.0);
  const auto order = rcm_order(g);
  EXPECT_TRUE(is_permutation(order, 5));
  EXPECT_EQ(ordering_stats(g, order).bandwidth, 3u);  // the four used nodes end up consecutive
}

TEST(Reorder, PermutationIsABijectionAndMeshIsTheSameUpToRenaming) {
  const TetMesh original = shuffled_box({5, 4, 3}, 7);
  for (NodeOrdering method : available_orderings()) {
    SCOPED_TRACE(to_string(method));
    TetMesh m = original;
    const auto order = reorder_nodes(m, method);
    ASSERT_TRUE(is_permutation(order, original.nodes.size()));
    const auto inverse = inverse_permutation(order);
    for (size_t k = 0; k < order.size(); ++k) ASSERT_EQ(inverse[size_t(order[k])], int32_t(k));
    ASSERT_EQ(m.elems.size(), original.elems.size());
    for (size_t e = 0; e < m.elems.size(); ++e)
      for (size_t c = 0; c < 4; ++c) {
        // Element e names the same point as before, under its new number.
        ASSERT_EQ(order[size_t(m.elems[e][c])], original.elems[e][c]);
        ASSERT_EQ(m.nodes[size_t(m.elems[e][c])], original.nodes[size_t(original.elems[e][c])]);
      }
    EXPECT_EQ(sorted_volumes(m), sorted_volumes(original));
    EXPECT_EQ(m.material, original.material);
  }
}

TEST(Reorder, RcmCutsTheBandwidthOfAShuffledBox) {
  const std::array<int, 3> n{8, 8, 24};  // 9 x 9 x 25 nodes
  const TetMesh natural = make_box_tet({0, 0, 0}, {1.0, 1.0, 3.0}, n, 6);
  const size_t natural_bw = ordering_stats(node_graph(natural.nodes.size(), natural.elems)).bandwidth;
  TetMesh m = shuffled_box(n, 11);
  const NodeGraph g = node_graph(m.nodes.size(), m.elems);
  const OrderingStats before = ordering_stats(g);
  const auto order = rcm_order(g);
  const OrderingStats after = ordering_stats(g, order);
  EXPECT_GT(before.bandwidth, m.nodes.size() / 2);  // the shuffle destroyed all locality
  EXPECT_LT(after.bandwidth, before.bandwidth / 5);
  // Within twice the lattice order's bandwidth (one x-y layer plus a row, 91 here).
  EXPECT_LE(after.bandwidth, 2 * natural_bw);
  EXPECT_LT(after.mean_distance, before.mean_distance / 5);
  // Deterministic: the same graph gives the same order; the reordered mesh reports it.
  EXPECT_EQ(rcm_order(g), order);
  apply_node_order(m, order);
  EXPECT_EQ(ordering_stats(node_graph(m.nodes.size(), m.elems)).bandwidth, after.bandwidth);
}

TEST(Reorder, MetisKeepsNeighboursCloseOnAverage) {
  const TetMesh m = shuffled_box({8, 8, 8}, 3);
  const NodeGraph g = node_graph(m.nodes.size(), m.elems);
  if (!have_metis()) {
    EXPECT_THROW(metis_order(g), InputError);
    GTEST_SKIP() << "METIS not compiled in";
  }
  const auto order = metis_order(g);
  ASSERT_TRUE(is_permutation(order, m.nodes.size()));
  // Nested dissection puts separators last, so the gain is smaller than RCM's (measured on this
  // 729-node box: 96 against 245 shuffled); read as new -> old the other way round it would
  // stay as random as the shuffle.
  EXPECT_LT(ordering_stats(g, order).mean_distance, ordering_stats(g).mean_distance / 2);
  EXPECT_EQ(metis_order(g), order);  // fixed seed
}

TEST(Reorder, ComponentsUnusedNodesAndFileBoundaryData) {
  // Two separate tets, an unused node between them and a boundary triangle on the second.
  MeshFile f;
  f.nodes = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {9, 9, 9}, {5, 0, 0}, {6, 0, 0}, {5, 1, 0}, {5, 0, 1}};
  f.tets = {{5, 6, 7, 8}, {0, 1, 2, 3}};
  f.tet_material = {2, 1};
  f.tris = {{5, 7, 6}};
  const MeshFile original = f;
  const auto order = reorder_nodes(f, NodeOrdering::Rcm);
  ASSERT_TRUE(is_permutation(order, 9));
  for (size_t c = 0; c < 3; ++c)
    EXPECT_EQ(f.nodes[size_t(f.tris[0][c])], original.nodes[size_t(original.tris[0][c])]);
  EXPECT_EQ(f.tet_material, original.tet_material);
  // Each component is numbered contiguously.
  for (const auto& t : f.tets) {
    const auto [lo, hi] = std::minmax_element(t.begin(), t.end());
    EXPECT_EQ(*hi - *lo, 3);
  }
}

TEST(Reorder, RejectsWhatIsNotAPermutation) {
  TetMesh m = make_box_tet({0, 0, 0}, {1, 1, 1}, {1, 1, 1}, 6);
  std::vector<int32_t> bad(m.nodes.size(), 0);
  EXPECT_FALSE(is_permutation(bad, m.nodes.size()));
  EXPECT_THROW(apply_node_order(m, bad), InputError);
  EXPECT_THROW(apply_node_order(m, std::vector<int32_t>{0, 1}), InputError);
  EXPECT_THROW(parse_node_ordering("amd"), InputError);
  EXPECT_EQ(parse_node_ordering("rcm"), NodeOrdering::Rcm);
}

}  // namespace
}  // namespace eb::mesh
