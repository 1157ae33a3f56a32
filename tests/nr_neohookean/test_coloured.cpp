// The coloured assembly's plan (solvers/nr_neohookean/coloured_plan.h) on the host: a valid
// colouring, one assigning write per value and force entry, and the host reference (the kernel's
// element function in the kernel's order) equal to the CPU assembly of the same pattern.
#include <set>

#include "solvers/nr_neohookean/coloured_plan.h"
#include "solvers/nr_neohookean/sharednz_plan.h"
#include "test_sharednz_util.h"

namespace eb::nr_neohookean {
namespace {

using test::make_case;

template <class T>
test::Assembled<T> run_reference(const test::StrategyCase<T>& c, const ColouredPlan& plan) {
  test::Assembled<T> a = test::fresh(c);
  coloured_reference(plan, slot_supplemental(plan.slot_element, c.supp, c.problem.form), c.problem.form, c.problem.lame,
                     c.x.data(), test::host_targets(c.map, a));
  return a;
}

TEST(ColouredPlan, NoTwoElementsOfAColourShareANode) {
  for (int level = 0; level < 4; ++level) {
    const auto m = mesh::make_sphere_tet(level);
    std::vector<int32_t> conn;
    for (const auto& e : m.elems) conn.insert(conn.end(), e.begin(), e.end());
    const std::vector<int32_t> colour = element_colouring(int64_t(m.nodes.size()), conn);
    ASSERT_EQ(colour.size(), m.elems.size());
    const int colours = *std::max_element(colour.begin(), colour.end()) + 1;
    std::vector<std::set<int32_t>> used(static_cast<std::size_t>(colours));
    for (std::size_t e = 0; e < m.elems.size(); ++e) {
      ASSERT_GE(colour[e], 0);
      for (int32_t v : m.elems[e]) ASSERT_TRUE(used[std::size_t(colour[e])].insert(v).second) << "element " << e;
    }
    // First fit: at most one colour more than the largest number of elements meeting one
    // element's nodes, before it.
    EXPECT_LT(colours, 100) << "level " << level;
  }
}

TEST(ColouredPlan, OneAssigningWritePerEntryBeforeEveryAdd) {
  const auto c = make_case<double>(mesh::make_sphere_tet(2), linalg::Format::Dcsr, 4);
  const ColouredPlan plan = make_coloured_plan(c->nodes, c->conn, c->map);
  const auto written = test::addressed(c->map);
  const std::size_t slots = std::size_t(plan.slots());
  std::vector<int64_t> first(std::size_t(c->map.value_count), -1);
  std::vector<int> assigns(std::size_t(c->map.value_count), 0);
  for (std::size_t s = 0; s < slots; ++s)
    for (std::size_t q = 0; q < 144; ++q) {
      const int32_t p = plan.entry[q * slots + s];
      if (p == 0) continue;
      const std::size_t pos = std::size_t(p > 0 ? p - 1 : -int64_t(p) - 1);
      if (p < 0) {
        ++assigns[pos];
        ASSERT_EQ(first[pos], -1) << "position " << pos << " assigned after an add";
      }
      if (first[pos] < 0) {
        ASSERT_LT(p, 0) << "position " << pos << " added to before its assignment";
        first[pos] = int64_t(s);
      }
    }
  for (std::size_t p = 0; p < written.size(); ++p) ASSERT_EQ(assigns[p], written[p] ? 1 : 0) << "position " << p;
  std::vector<int> row_writes(std::size_t(plan.rows), 0);
  for (int32_t d : plan.force)
    if (d < 0) ++row_writes[std::size_t(-int64_t(d) - 1)];
  for (int32_t r : plan.zero_rows) ++row_writes[std::size_t(r)];
  for (std::size_t r = 0; r < row_writes.size(); ++r) ASSERT_EQ(row_writes[r], 1) << "force row " << r;
}

template <class T>
void expect_reference_matches_cpu(const mesh::TetMesh& m, const std::vector<linalg::Format>& formats,
                                  tet::SupplementalForm form) {
  for (linalg::Format f : formats) {
    const auto c = make_case<T>(m, f, 8, form);
    const auto ref = test::cpu_reference(*c);
    ASSERT_EQ(ref.checks.inverted, 0u);
    test::expect_close(ref, run_reference(*c, make_coloured_plan(c->nodes, c->conn, c->map)), test::addressed(c->map),
                       test::tolerance<T>(), c->label);
  }
}

TEST(ColouredPlan, HostReferenceEqualsCpuAssembly) {
  for (int level = 0; level < 3; ++level) {
    SCOPED_TRACE("level " + std::to_string(level));
    const auto m = mesh::make_sphere_tet(level);
    const auto formats =
        level < 2 ? test::value_formats() : std::vector<linalg::Format>{linalg::Format::Coo, linalg::Format::Dcsr};
    expect_reference_matches_cpu<double>(m, formats, tet::SupplementalForm::Full9);
    expect_reference_matches_cpu<float>(m, formats, tet::SupplementalForm::Full9);
  }
  expect_reference_matches_cpu<double>(mesh::make_sphere_tet(2), {linalg::Format::Hyb}, tet::SupplementalForm::Qr6);
  const auto dir = test::data_dir();
  if (dir.empty() || !std::filesystem::exists(dir / "camile_hand.mesh")) GTEST_SKIP() << "camile_hand.mesh absent";
  expect_reference_matches_cpu<float>(mesh::read_tet_mesh(dir / "camile_hand.mesh"), {linalg::Format::Csr},
                                      tet::SupplementalForm::Full9);
}

TEST(ColouredPlan, RefusesAMapOfAnotherMesh) {
  const auto a = make_case<double>(mesh::make_sphere_tet(0), linalg::Format::Csr, 1);
  const auto b = make_case<double>(mesh::make_sphere_tet(1), linalg::Format::Csr, 1);
  EXPECT_THROW(make_coloured_plan(a->nodes, a->conn, b->map), InputError);
}

}  // namespace
}  // namespace eb::nr_neohookean
