// The device strategies of nr-gpu (sharednz and its -block, -2sm, -48k variants, coloured) against the CPU assembly of
// the same pattern, on seeded deformed states of the spheres and the hand, every value format,
// fp32 and fp64; repeated runs bit for bit (the deterministic ones); an inverted element reported once. Label gpu; skipped
// without a device.
#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
#include "solvers/nr_neohookean/sharednz_plan.h"
#include "test_sharednz_util.h"

namespace eb::nr_neohookean {
namespace {

using test::make_case;

const std::vector<std::string>& device_strategies() {
  static const std::vector<std::string> s{"sharednz", "sharednz-block", "sharednz-2sm", "sharednz-48k", "coloured"};
  return s;
}

#define EB_SKIP_WITHOUT_DEVICE()                                                       \
  do {                                                                                  \
    if (::eb::cuda_device_count() == 0)                                                 \
      GTEST_SKIP() << "no usable CUDA device: " << ::eb::cuda_device_info(0).reason;    \
  } while (0)

// One assembly on the device from the sentinel state (the host targets' scales), copied back.
template <class T>
test::Assembled<T> run_device(const test::StrategyCase<T>& c, AssemblyStrategy<T>& s) {
  test::Assembled<T> a = test::fresh(c);
  cuda::DeviceBuffer<T> values(a.values.size(), "test values"), force(a.force.size(), "test force"),
      x(c.x.size(), "test x");
  cuda::DeviceBuffer<ElementCheckSlot> checks(1, "test checks");
  values.upload(a.values);
  force.upload(a.force);
  x.upload(c.x);
  checks.upload(&a.checks, 1);
  test::Assembled<T> host_layout = test::fresh(c);
  AssemblyTargets<T> t = test::host_targets(c.map, host_layout);  // for the scales and segment sizes
  AssemblyTargets<T> d = t;
  d.values = {};
  int64_t start = 0;
  for (int64_t n : c.map.segment_sizes) {
    d.values.push(values.data() + start, n);
    start += n;
  }
  d.force = force.data();
  d.checks = checks.data();
  s.assemble(x.data(), d, nullptr);
  EB_CUDA_CHECK(cudaDeviceSynchronize());
  values.download(a.values.data(), a.values.size());
  force.download(a.force.data(), a.force.size());
  checks.download(&a.checks, 1);
  return a;
}

template <class T>
void expect_strategies_match_cpu(const mesh::TetMesh& m, const std::vector<linalg::Format>& formats,
                                 const std::string& mesh_name) {
  for (linalg::Format f : formats) {
    const auto c = make_case<T>(m, f, 21);
    const auto ref = test::cpu_reference(*c);
    ASSERT_EQ(ref.checks.inverted, 0u);
    const auto written = test::addressed(c->map);
    for (const std::string& name : device_strategies()) {
      auto s = make_strategy<T>(name, c->problem);
      ASSERT_EQ(s->location(), linalg::Location::Device);
      const std::string what = name + " " + mesh_name + " " + c->label + (sizeof(T) == 4 ? " fp32" : " fp64");
      test::expect_close(ref, run_device(*c, *s), written, test::tolerance<T>(), what);
      const AssemblyWork w = s->work();
      EXPECT_GE(w.bytes, compulsory_assembly_bytes(c->problem)) << what;
      EXPECT_GE(w.flops, double(c->problem.elements) * element_routine_flops()) << what;
      EXPECT_GT(s->device_bytes(), 0u) << what;
    }
  }
}

TEST(DeviceStrategies, EqualTheCpuAssemblyOnSpheres) {
  EB_SKIP_WITHOUT_DEVICE();
  // Every format on the two small spheres, two formats on the larger ones.
  for (int level = 0; level < 4; ++level) {
    const auto m = mesh::make_sphere_tet(level);
    const std::string name = "sphere" + std::to_string(level);
    const auto formats =
        level < 2 ? test::value_formats() : std::vector<linalg::Format>{linalg::Format::Coo, linalg::Format::Dhyb};
    expect_strategies_match_cpu<double>(m, formats, name);
    expect_strategies_match_cpu<float>(m, formats, name);
  }
}

TEST(DeviceStrategies, EqualTheCpuAssemblyOnTheHand) {
  EB_SKIP_WITHOUT_DEVICE();
  const auto dir = test::data_dir();
  if (dir.empty() || !std::filesystem::exists(dir / "camile_hand.mesh")) GTEST_SKIP() << "camile_hand.mesh absent";
  const auto m = mesh::read_tet_mesh(dir / "camile_hand.mesh");
  // fp32 only (fp64 is checked on the spheres): the plans of the hand take a second each.
  expect_strategies_match_cpu<float>(m, {linalg::Format::Dhyb}, "camile_hand");
}

TEST(DeviceStrategies, RepeatedRunsAreBitIdentical) {
  EB_SKIP_WITHOUT_DEVICE();
  const auto c = make_case<float>(mesh::make_sphere_tet(3), linalg::Format::Hyb, 9);
  for (const std::string& name : device_strategies()) {
    auto s = make_strategy<float>(name, c->problem);
    ASSERT_TRUE(s->deterministic()) << name;
    const auto first = run_device(*c, *s);
    for (int r = 0; r < 3; ++r) {
      const auto again = run_device(*c, *s);
      ASSERT_EQ(again.values, first.values) << name << " run " << r;
      ASSERT_EQ(again.force, first.force) << name << " run " << r;
    }
  }
}

TEST(DeviceStrategies, AnInvertedElementIsReportedOnce) {
  EB_SKIP_WITHOUT_DEVICE();
  const auto c = make_case<double>(mesh::make_sphere_tet(2), linalg::Format::Dcoo, 6);
  // S(e) negated: det F of that element only changes sign. The element that the most blocks of
  // SharedNZ's partitions (227 KB, fp64) compute, so that reporting it once is tested.
  std::vector<std::array<int32_t, 4>> tets(c->conn.size() / 4);
  for (std::size_t k = 0; k < tets.size(); ++k)
    for (std::size_t a = 0; a < 4; ++a) tets[k][a] = c->conn[4 * k + a];
  const auto part = mesh::greedy_node_partition(std::size_t(c->nodes), tets, sharednz_budget(227 * 1024, 8));
  std::vector<int> copies(tets.size(), 0);
  for (int32_t k : part.elements) ++copies[std::size_t(k)];
  const std::size_t e = std::size_t(std::max_element(copies.begin(), copies.end()) - copies.begin());
  ASSERT_GT(copies[e], 1);
  for (int q = 0; q < 9; ++q) c->supp[e * 9 + std::size_t(q)] *= -1;
  const auto ref = test::cpu_reference(*c);
  ASSERT_EQ(ref.checks.inverted, 1u);
  for (const std::string& name : device_strategies()) {
    auto s = make_strategy<double>(name, c->problem);
    const auto got = run_device(*c, *s);
    EXPECT_EQ(got.checks.inverted, 1u) << name;
    EXPECT_EQ(got.checks.first_inverted, int64_t(e)) << name;
    test::expect_close(ref, got, test::addressed(c->map), test::tolerance<double>(), name + " inverted");
  }
}

}  // namespace
}  // namespace eb::nr_neohookean
