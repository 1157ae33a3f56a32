// SharedNZ's plan (solvers/nr_neohookean/sharednz_plan.h) on the host: its arrays cover every
// value and force entry once, respect the shared-memory budget, and the host reference (the
// kernel's phases run block by block) equals the CPU assembly of the same pattern.
#include <climits>
#include <map>
#include <omp.h>
#include <set>

#include "meshes/node_partition.h"
#include "meshes/reorder.h"
#include "solvers/nr_neohookean/nr_neohookean_setup.h"
#include "solvers/nr_neohookean/sharednz_plan.h"
#include "test_sharednz_util.h"

namespace eb::nr_neohookean {
namespace {

using test::make_case;

constexpr std::size_t kH100Shared = 227 * 1024;

mesh::NodePartition partition_of(const test::StrategyCase<double>& c, std::size_t shared, std::size_t value_bytes) {
  std::vector<std::array<int32_t, 4>> tets(c.conn.size() / 4);
  for (std::size_t e = 0; e < tets.size(); ++e)
    for (std::size_t a = 0; a < 4; ++a) tets[e][a] = c.conn[4 * e + a];
  return mesh::greedy_node_partition(std::size_t(c.nodes), tets, sharednz_budget(shared, value_bytes));
}

template <class T>
SharedNzPlan plan_of(const test::StrategyCase<T>& c, std::size_t shared, bool block_lists = false,
                     int threads = kSharedNzThreads, mesh::NodePartitioner by = mesh::NodePartitioner::Greedy) {
  std::vector<std::array<int32_t, 4>> tets(c.conn.size() / 4);
  for (std::size_t e = 0; e < tets.size(); ++e)
    for (std::size_t a = 0; a < 4; ++a) tets[e][a] = c.conn[4 * e + a];
  const auto p = mesh::partition_nodes(std::size_t(c.nodes), tets, sharednz_budget(shared, sizeof(T)), by);
  return make_sharednz_plan(c.nodes, c.conn, c.map, p, block_lists, threads);
}

const char* lists_name(bool block_lists) { return block_lists ? " block lists" : " value lists"; }

template <class T>
test::Assembled<T> run_reference(const test::StrategyCase<T>& c, const SharedNzPlan& plan) {
  test::Assembled<T> a = test::fresh(c);
  sharednz_reference(plan, slot_supplemental(plan.slot_element, c.supp, c.problem.form), c.problem.form,
                     c.problem.lame, c.x.data(), test::host_targets(c.map, a));
  return a;
}

TEST(SharedNzPlan, UpperIndexPacksTheTriangle) {
  std::set<int> seen;
  for (int r = 0; r < 12; ++r)
    for (int c = r; c < 12; ++c) seen.insert(upper_index(r, c));
  EXPECT_EQ(seen.size(), 78u);
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), 77);
}

TEST(SharedNzPlan, ArraysCoverEveryEntryOnceWithinTheBudget) {
  for (int level = 0; level < 4; ++level)
    for (std::size_t shared : {kH100Shared, kFermiSharedBytes})
      for (bool block_lists : {false, true}) {
        SCOPED_TRACE("level " + std::to_string(level) + " shared " + std::to_string(shared) + lists_name(block_lists));
        const auto c = make_case<double>(mesh::make_sphere_tet(level), linalg::Format::Dhyb, 11);
        const SharedNzPlan plan = plan_of(*c, shared, block_lists);
        ASSERT_LE(plan.shared_bytes(sizeof(double)), shared);
        const auto written = test::addressed(c->map);
        std::vector<int> target(std::size_t(plan.value_count + plan.rows), 0);
        std::vector<int> recorded(c->conn.size() / 4, 0);
        for (int64_t k = 0; k < plan.blocks(); ++k) {
          const int64_t S = plan.slot_ptr[std::size_t(k) + 1] - plan.slot_ptr[std::size_t(k)];
          for (int64_t s = plan.slot_ptr[std::size_t(k)]; s < plan.slot_ptr[std::size_t(k) + 1]; ++s)
            if (plan.slot_record[std::size_t(s)] >= 0) ++recorded[std::size_t(plan.slot_record[std::size_t(s)])];
          // Packed arrays: whole columns; each thread's row begins its first list properly.
          for (const auto* arr : {&plan.scatter_ptr, &plan.reduce_ptr})
            ASSERT_EQ(((*arr)[std::size_t(k) + 1] - (*arr)[std::size_t(k)]) % plan.threads, 0);
          std::set<int64_t> staged;
          for (int tid = 0; tid < plan.threads; ++tid) {
            bool loaded = false;
            for (int64_t i = plan.scatter_ptr[std::size_t(k)] + tid; i < plan.scatter_ptr[std::size_t(k) + 1];
                 i += plan.threads) {
              const int32_t v = plan.scatter[std::size_t(i)];
              if (v < 0) loaded = true;
              if (v > 0) {
                ASSERT_TRUE(loaded) << "block " << k << " thread " << tid << " stores before loading a node";
                ASSERT_LT(int64_t(v) - 1, 12 * S);
                ASSERT_TRUE(staged.insert(int64_t(v) - 1).second) << "staging position stored twice";
              }
            }
            int pending = 0;  // block lists: targets still due in the current list
            for (int64_t i = plan.reduce_ptr[std::size_t(k)] + tid; i < plan.reduce_ptr[std::size_t(k) + 1];
                 i += plan.threads) {
              const int32_t v = plan.reduce[std::size_t(i)];
              if (v > 0) {
                ASSERT_EQ(pending, 0) << "block " << k << ": a source inside a list's targets";
                if (block_lists)
                  ASSERT_LT(int64_t(v - 1) >> 5, S);
                else
                  ASSERT_LT(int64_t(v) - 1, kStagedValuesPerElement * S);
              }
              if (v >= 0) continue;
              int64_t t = v == INT32_MIN ? -1 : -int64_t(v) - 1;
              if (block_lists && pending == 0) pending = t >= plan.value_count ? 3 : 9;
              if (block_lists) --pending;
              if (t >= plan.value_count + plan.rows) t -= plan.rows;  // a force entry set to 0
              if (t >= 0) ++target[std::size_t(t)];
            }
            ASSERT_EQ(pending, 0);
          }
          EXPECT_EQ(int64_t(staged.size()), 4 * S) << "block " << k << ": every slot's four nodes staged";
        }
        for (int64_t p = 0; p < plan.value_count; ++p)
          ASSERT_EQ(target[std::size_t(p)], written[std::size_t(p)] ? 1 : 0) << "value position " << p;
        for (int64_t r = 0; r < plan.rows; ++r) ASSERT_EQ(target[std::size_t(plan.value_count + r)], 1) << "force row " << r;
        for (std::size_t e = 0; e < recorded.size(); ++e) ASSERT_EQ(recorded[e], 1) << "element " << e;
      }
}

template <class T>
void expect_reference_matches_cpu(const mesh::TetMesh& m, const std::vector<linalg::Format>& formats,
                                  const std::vector<std::size_t>& budgets, tet::SupplementalForm form,
                                  mesh::NodePartitioner by = mesh::NodePartitioner::Greedy) {
  for (linalg::Format f : formats) {
    const auto c = make_case<T>(m, f, 5, form);
    const auto ref = test::cpu_reference(*c);
    ASSERT_EQ(ref.checks.inverted, 0u);
    for (std::size_t shared : budgets)
      for (bool block_lists : {false, true}) {
        if (block_lists && shared != kH100Shared) continue;  // sharednz-block's budget only
        const SharedNzPlan plan = plan_of(*c, shared, block_lists, kSharedNzThreads, by);
        test::expect_close(ref, run_reference(*c, plan), test::addressed(c->map), test::tolerance<T>(),
                           c->label + " " + mesh::to_string(by) + " shared " + std::to_string(shared) + " blocks " + std::to_string(plan.blocks()) +
                               lists_name(block_lists));
      }
  }
}

TEST(SharedNzPlan, HostReferenceEqualsCpuAssemblyOnSpheres) {
  // Every format on the two small spheres (one and several blocks), two on the third.
  for (int level = 0; level < 3; ++level) {
    SCOPED_TRACE("level " + std::to_string(level));
    const auto m = mesh::make_sphere_tet(level);
    const auto formats =
        level < 2 ? test::value_formats() : std::vector<linalg::Format>{linalg::Format::Csr, linalg::Format::Dhyb};
    expect_reference_matches_cpu<double>(m, formats, {kH100Shared, kFermiSharedBytes}, tet::SupplementalForm::Full9);
    expect_reference_matches_cpu<float>(m, formats, {kH100Shared, kFermiSharedBytes}, tet::SupplementalForm::Full9);
  }
  expect_reference_matches_cpu<double>(mesh::make_sphere_tet(2), {linalg::Format::Ell}, {kH100Shared},
                                       tet::SupplementalForm::Qr6);
  // sharednz-2sm's plans: 128 rows (threads) per block.
  const auto c = make_case<float>(mesh::make_sphere_tet(2), linalg::Format::Dcsr, 12);
  const SharedNzPlan half = plan_of(*c, 113 * 1024, false, 128);
  EXPECT_EQ(half.threads, 128);
  test::expect_close(test::cpu_reference(*c), run_reference(*c, half), test::addressed(c->map), test::tolerance<float>(),
                     "128 threads");
  EXPECT_THROW(plan_of(*c, 113 * 1024, false, 100), InputError);
}

TEST(SharedNzPlan, HostReferenceEqualsCpuAssemblyOnTheHand) {
  const auto dir = test::data_dir();
  if (dir.empty() || !std::filesystem::exists(dir / "camile_hand.mesh")) GTEST_SKIP() << "camile_hand.mesh absent";
  const auto m = mesh::read_tet_mesh(dir / "camile_hand.mesh");
  expect_reference_matches_cpu<float>(m, {linalg::Format::Dhyb}, {kH100Shared}, tet::SupplementalForm::Full9);
}

// nr-neohookean.partitioner = "metis": the same equality with METIS's partitions.
TEST(SharedNzPlan, HostReferenceWithMetisPartitionsEqualsCpuAssembly) {
  if (!mesh::have_metis()) GTEST_SKIP() << "METIS not compiled in";
  const auto sphere = mesh::make_sphere_tet(2);
  expect_reference_matches_cpu<double>(sphere, {linalg::Format::Csr, linalg::Format::Dhyb},
                                       {kH100Shared, kFermiSharedBytes}, tet::SupplementalForm::Full9,
                                       mesh::NodePartitioner::Metis);
  expect_reference_matches_cpu<float>(sphere, {linalg::Format::Dcoo}, {kH100Shared}, tet::SupplementalForm::Full9,
                                      mesh::NodePartitioner::Metis);
  const auto dir = test::data_dir();
  if (dir.empty() || !std::filesystem::exists(dir / "camile_hand.mesh")) GTEST_SKIP() << "camile_hand.mesh absent";
  expect_reference_matches_cpu<float>(mesh::read_tet_mesh(dir / "camile_hand.mesh"), {linalg::Format::Dhyb},
                                      {kH100Shared}, tet::SupplementalForm::Full9, mesh::NodePartitioner::Metis);
}

// The option is validated: an unknown partitioner, and metis in a build without METIS, name the key.
TEST(SharedNzPlan, PartitionerOptionIsValidated) {
  NrOptions o;
  o.partitioner = "spectral";
  try {
    validate_nr_options(o);
    FAIL() << "unknown partitioner accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nr-neohookean.partitioner"), std::string::npos) << e.what();
  }
  o.partitioner = "metis";
  if (mesh::have_metis()) {
    EXPECT_NO_THROW(validate_nr_options(o));
  } else {
    try {
      validate_nr_options(o);
      FAIL() << "metis accepted without METIS";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("nr-neohookean.partitioner"), std::string::npos) << e.what();
    }
  }
}

TEST(SharedNzPlan, AnInvertedElementIsReportedOnceThoughComputedByManyBlocks) {
  const auto c = make_case<double>(mesh::make_sphere_tet(2), linalg::Format::Csr, 3);
  // The element of most partitions: its det F negated by negating its S(e).
  const SharedNzPlan plan0 = plan_of(*c, kFermiSharedBytes);
  std::map<int32_t, int> copies;
  for (int32_t e : plan0.slot_element) ++copies[e];
  const auto most = std::max_element(copies.begin(), copies.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  ASSERT_GT(most->second, 1);
  for (int q = 0; q < 9; ++q) c->supp[std::size_t(most->first) * 9 + std::size_t(q)] *= -1;
  const auto ref = test::cpu_reference(*c);
  ASSERT_EQ(ref.checks.inverted, 1u);
  ASSERT_EQ(ref.checks.first_inverted, most->first);
  for (bool block_lists : {false, true})
    test::expect_close(ref, run_reference(*c, plan_of(*c, kFermiSharedBytes, block_lists)), test::addressed(c->map),
                       test::tolerance<double>(), std::string("inverted element") + lists_name(block_lists));
}

TEST(SharedNzPlan, SameArraysWhateverTheThreadCount) {
  const auto c = make_case<float>(mesh::make_sphere_tet(2), linalg::Format::Hyb, 2);
  for (bool block_lists : {false, true}) {
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    const SharedNzPlan one = plan_of(*c, kFermiSharedBytes, block_lists);
    omp_set_num_threads(std::max(2, threads));
    const SharedNzPlan many = plan_of(*c, kFermiSharedBytes, block_lists);
    omp_set_num_threads(threads);
    EXPECT_EQ(one.scatter, many.scatter);
    EXPECT_EQ(one.reduce, many.reduce);
    EXPECT_EQ(one.reduce_ptr, many.reduce_ptr);
  }
}

TEST(SharedNzPlan, RefusesAMapOfAnotherMesh) {
  const auto a = make_case<double>(mesh::make_sphere_tet(0), linalg::Format::Csr, 1);
  const auto b = make_case<double>(mesh::make_sphere_tet(1), linalg::Format::Csr, 1);
  EXPECT_THROW(make_sharednz_plan(a->nodes, a->conn, b->map, partition_of(*a, kH100Shared, 8)), InputError);
}

}  // namespace
}  // namespace eb::nr_neohookean
