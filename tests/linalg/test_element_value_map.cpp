// The per-format element-entry -> value-position map (element_value_map.h): for every format,
// values written through the map equal the direct assembly (triplets summed, then converted), the
// Dirichlet rule holds, and the inverted map reproduces the element-order sums bit for bit.
#include <gtest/gtest.h>

#include "meshes/box.h"
#include "meshes/errors.h"
#include "solvers/linalg/element_gather.h"
#include "solvers/linalg/element_value_map.h"
#include "solvers/linalg/linear_operator.h"
#include "tests/linalg/linalg_test_util.h"

namespace eb::linalg {
namespace {

struct SmallMesh {
  Index nodes;
  std::vector<int32_t> conn;
};

SmallMesh box_mesh() {
  const mesh::TetMesh m = mesh::make_box_tet({0, 0, 0}, {1, 1, 1}, {3, 2, 2}, 6);
  SmallMesh s{Index(m.nodes.size()), {}};
  for (const auto& e : m.elems) s.conn.insert(s.conn.end(), e.begin(), e.end());
  return s;
}

AssembledMatrix<double> direct_assembly(const SmallMesh& m, const std::vector<double>& local,
                                        const std::vector<uint8_t>& constrained) {
  std::vector<Triplet<double>> t;
  auto fixed = [&](Index d) { return !constrained.empty() && (constrained[size_t(d / 3)] >> (d % 3) & 1); };
  const size_t E = m.conn.size() / 4;
  for (size_t e = 0; e < E; ++e)
    for (int r = 0; r < 12; ++r)
      for (int c = 0; c < 12; ++c) {
        const Index gr = 3 * m.conn[4 * e + size_t(r / 3)] + r % 3, gc = 3 * m.conn[4 * e + size_t(c / 3)] + c % 3;
        const bool keep = gr == gc || (!fixed(gr) && !fixed(gc));
        t.push_back({gr, gc, keep ? local[(e * 12 + size_t(r)) * 12 + size_t(c)] : 0.0});
      }
  return assemble_from_triplets(3 * m.nodes, 3 * m.nodes, std::move(t));
}

class ElementValueMapTest : public ::testing::TestWithParam<Format> {};

TEST_P(ElementValueMapTest, MatchesDirectAssembly) {
  const SmallMesh m = box_mesh();
  const size_t E = m.conn.size() / 4;
  std::vector<uint8_t> constrained(size_t(m.nodes), 0);
  constrained[0] = 7;
  constrained[5] = 2;
  const auto local = test::random_vector(E * 144, 1), vec = test::random_vector(E * 12, 2);
  const AssembledMatrix<double> pattern = element_pattern<double>(m.nodes, 4, m.conn);
  AnyMatrix<double> a = make_format(pattern, GetParam());
  const ElementValueMap map = make_element_value_map(a, 4, m.conn, constrained);
  EXPECT_EQ(map.value_count, value_segments(a).size());
  std::vector<double> y(size_t(3 * m.nodes));
  add_element_entries(map, local.data(), vec.data(), value_segments(a), y.data());

  // The direct assembly, in the same format, must hold the same values (the same sums in a
  // different order: to rounding).
  const AssembledMatrix<double> ref = direct_assembly(m, local, constrained);
  const AssembledMatrix<double> got = to_assembled(a);
  ASSERT_EQ(got.row, ref.row);
  ASSERT_EQ(got.col, ref.col);
  for (size_t k = 0; k < ref.val.size(); ++k) EXPECT_NEAR(got.val[k], ref.val[k], 1e-12) << k;
  // Vector: sums per unconstrained row, 0 on constrained rows.
  for (Index d = 0; d < 3 * m.nodes; ++d) {
    double s = 0;
    const bool fixed = constrained[size_t(d / 3)] >> (d % 3) & 1;
    for (size_t e = 0; e < E; ++e)
      for (int r = 0; r < 12; ++r)
        if (3 * m.conn[4 * e + size_t(r / 3)] + r % 3 == d) s += vec[e * 12 + size_t(r)];
    EXPECT_NEAR(y[size_t(d)], fixed ? 0.0 : s, 1e-12) << d;
  }
  // The diagonal positions address the diagonal.
  std::vector<double> diag(size_t(3 * m.nodes));
  diagonal(a, diag.data());
  const auto seg = value_segments(a);
  for (Index d = 0; d < 3 * m.nodes; ++d) EXPECT_EQ(seg.at(map.diag[size_t(d)]), diag[size_t(d)]);
  EXPECT_EQ(diagonal_positions(a), std::vector<int64_t>(map.diag.begin(), map.diag.end()));

  // The inverted map sums in element order: bit for bit what add_element_entries gave.
  const ValueContributions inv = invert_element_value_map(map);
  for (int64_t q = 0; q < map.value_count; ++q) {
    if (inv.value_ptr[size_t(q)] == inv.value_ptr[size_t(q) + 1]) continue;
    double s = 0;
    for (int64_t k = inv.value_ptr[size_t(q)]; k < inv.value_ptr[size_t(q) + 1]; ++k) s += local[size_t(inv.value_src[size_t(k)])];
    EXPECT_EQ(s, seg.at(q));
  }
}

TEST_P(ElementValueMapTest, HostOperatorRefilledInPlace) {
  const SmallMesh m = box_mesh();
  const AssembledMatrix<double> pattern = element_pattern<double>(m.nodes, 4, m.conn);
  auto op = make_matrix_operator(pattern, GetParam(), Location::Host);
  const ElementValueMap map = make_element_value_map(make_format(pattern, GetParam()), 4, m.conn, {});
  const auto local = test::random_vector(m.conn.size() / 4 * 144, 3);
  std::vector<double> y(size_t(3 * m.nodes));
  add_element_entries<double>(map, local.data(), nullptr, op->values(), y.data());
  const std::vector<double> d = diagonal_from_host(*op);
  for (size_t r = 0; r < d.size(); ++r) EXPECT_EQ(d[r], op->values().at(map.diag[r]));
  EXPECT_NE(d[0], 0.0);
}

INSTANTIATE_TEST_SUITE_P(Formats, ElementValueMapTest,
                         ::testing::Values(Format::Coo, Format::Csr, Format::Ell, Format::Hyb, Format::Dcoo,
                                           Format::Dcsr, Format::Dhyb),
                         [](const auto& info) { return to_string(info.param); });

TEST(ElementValueMap, RefusesBcsrAndMissingEntries) {
  const SmallMesh m = box_mesh();
  const AssembledMatrix<double> pattern = element_pattern<double>(m.nodes, 4, m.conn);
  EXPECT_THROW(make_element_value_map(make_format(pattern, Format::Bcsr), 4, m.conn, {}), InputError);
  // A pattern without the coupling of element 0's first two nodes.
  AssembledMatrix<double> diag_only;
  diag_only.rows = diag_only.cols = 3 * m.nodes;
  for (Index r = 0; r < 3 * m.nodes; ++r) {
    diag_only.row.push_back(r);
    diag_only.col.push_back(r);
    diag_only.val.push_back(0);
  }
  EXPECT_THROW(make_element_value_map(make_format(diag_only, Format::Csr), 4, m.conn, {}), InputError);
}

}  // namespace
}  // namespace eb::linalg

// The device gather's 32-bit offsets reach L^2 E - 1 (L = 3 x nodes per element): the limit
// that make_sliced_gather_index enforces and the head-to-head scale part plans with.
TEST(ElementGather, MaxElementsIsTheLastCountWhoseOffsetsFitInt32) {
  for (int npe : {4, 8}) {
    const int64_t l2 = int64_t(3 * npe) * (3 * npe);
    const int64_t e = eb::linalg::sliced_gather_max_elements(npe);
    EXPECT_LE(l2 * e - 1, int64_t(INT32_MAX)) << npe;
    EXPECT_GT(l2 * (e + 1) - 1, int64_t(INT32_MAX)) << npe;
  }
  EXPECT_EQ(eb::linalg::sliced_gather_max_elements(4), 14913080);
}
