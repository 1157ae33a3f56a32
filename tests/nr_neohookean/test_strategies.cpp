// Every assembly strategy of this binary's backend, in every format and both precisions, against
// the fp64 reference written from the element library (nr_test_util.h): fp64 to rounding, fp32 to
// single precision (Cecka et al.'s Table 16.1 measure, relative L2 over the entries); the strategies
// deterministic by their flag; S(e) in 9 and 6 values giving the same tangent.
#include "tests/nr_neohookean/nr_test_util.h"

namespace eb::nr_neohookean::test {
namespace {

struct Case {
  std::string strategy;
  linalg::Format format;
  Precision precision;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const StrategyInfo& s : assembly_strategies()) {
    const bool device = s.location == linalg::Location::Device;
    if (device != (kBackend == Backend::Cuda)) continue;
    for (linalg::Format f : {linalg::Format::Coo, linalg::Format::Csr, linalg::Format::Hyb, linalg::Format::Dcoo,
                             linalg::Format::Dcsr, linalg::Format::Dhyb})
      for (Precision p : {Precision::Fp32, Precision::Fp64}) out.push_back({s.name, f, p});
  }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  std::string s = i.param.strategy + "_" + linalg::to_string(i.param.format) + "_" + to_string(i.param.precision);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

NrSetup setup_for(linalg::Format f, const std::string& supplemental = "full9") {
  return build_nr_setup(cube(3, {"nr-neohookean.format=" + linalg::to_string(f),
                                 "nr-neohookean.supplemental=" + supplemental}),
                        run_options(kBackend, Precision::Fp64));
}

StrategyRun run(const Case& c, const NrSetup& s, const std::vector<double>& x, int repeats = 0, int threads = 1) {
  return c.precision == Precision::Fp32 ? run_strategy<float>(c.strategy, s, x, repeats, threads)
                                        : run_strategy<double>(c.strategy, s, x, repeats, threads);
}

class Strategy : public ::testing::TestWithParam<Case> {};

TEST_P(Strategy, MatchesReferenceAssembly) {
  EB_NR_SKIP_WITHOUT_DEVICE();
  const Case c = GetParam();
  const NrSetup s = setup_for(c.format);
  const std::vector<double> x = perturbed_positions(s, 0.1, 7);
  std::vector<double> ref_force;
  const linalg::AssembledMatrix<double> ref = reference_tangent(s, x, ref_force);
  const StrategyRun r = run(c, s, x);
  EXPECT_EQ(r.checks.inverted, 0);
  const linalg::AssembledMatrix<double> got = from_flat(s, c.format, r.values);
  ASSERT_EQ(got.row, ref.row);
  ASSERT_EQ(got.col, ref.col);
  const double tol = c.precision == Precision::Fp64 ? 1e-13 : 2e-6;
  EXPECT_LT(relative_l2(got.val, ref.val), tol);
  EXPECT_LT(relative_l2(r.force, ref_force), c.precision == Precision::Fp64 ? 1e-12 : 1e-5);
  // Values the map drops (ELL padding) stay 0.
  const linalg::ValueContributions inv = linalg::invert_element_value_map(s.map);
  for (int64_t q = 0; q < s.map.value_count; ++q)
    if (inv.value_ptr[size_t(q)] == inv.value_ptr[size_t(q) + 1]) EXPECT_EQ(r.values[size_t(q)], 0.0) << q;
}

TEST_P(Strategy, RepeatsBitForBitWhenDeterministic) {
  EB_NR_SKIP_WITHOUT_DEVICE();
  const Case c = GetParam();
  if (!find_strategy(c.strategy).deterministic) GTEST_SKIP() << c.strategy << " states it is not deterministic";
  const NrSetup s = setup_for(c.format);
  const std::vector<double> x = perturbed_positions(s, 0.1, 8);
  const StrategyRun a = run(c, s, x), b = run(c, s, x, 0, 2);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.force, b.force);
}

INSTANTIATE_TEST_SUITE_P(All, Strategy, ::testing::ValuesIn(cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Strategy);

#if !defined(EB_NR_TEST_CUDA)
// AssemblyCPU and AssemblyCPU_Opt on one thread add in the same order: the same bits.
TEST(HostStrategies, CpuAndCpuOptAgreeBitForBit) {
  const NrSetup s = setup_for(linalg::Format::Dhyb);
  const std::vector<double> x = perturbed_positions(s, 0.1, 9);
  const StrategyRun a = run_strategy<double>("cpu", s, x, 0), b = run_strategy<double>("cpu-opt", s, x, 0);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.force, b.force);
}

// 16.4.2's compressed S(e): the same tangent and force as Dm^{-1}, to rounding.
TEST(Supplemental, Qr6MatchesFull9) {
  const NrSetup s9 = setup_for(linalg::Format::Csr, "full9"), s6 = setup_for(linalg::Format::Csr, "qr6");
  const std::vector<double> x = perturbed_positions(s9, 0.15, 10);
  const StrategyRun a = run_strategy<double>("cpu-opt", s9, x, 0), b = run_strategy<double>("cpu-opt", s6, x, 0);
  EXPECT_LT(relative_l2(b.values, a.values), 1e-13);
  EXPECT_LT(relative_l2(b.force, a.force), 1e-12);
  // and the element data really are 6 and 9 values
  EXPECT_EQ(s6.supplemental.size(), size_t(6 * s6.num_elements));
  EXPECT_EQ(s9.supplemental.size(), size_t(9 * s9.num_elements));
}

// An inverted element is reported (count and first index), never silently assembled.
TEST(HostStrategies, ReportsInvertedElement) {
  const NrSetup s = setup_for(linalg::Format::Csr);
  std::vector<double> x = perturbed_positions(s, 0.0, 1);
  // Move node 1 of element 0 through the opposite face: element 0 (at least) inverts.
  const int32_t* c = &s.connectivity[0];
  for (int d = 0; d < 3; ++d) {
    const double face = (x[3 * size_t(c[0]) + d] + x[3 * size_t(c[2]) + d] + x[3 * size_t(c[3]) + d]) / 3;
    x[3 * size_t(c[1]) + d] = 2 * face - x[3 * size_t(c[1]) + d];
  }
  const StrategyRun r = run_strategy<double>("cpu-opt", s, x, 0);
  EXPECT_GE(r.checks.inverted, 1);
  EXPECT_EQ(r.checks.first_inverted, 0);
  EXPECT_LT(r.checks.min_det_f, 0.0);
}
#endif

}  // namespace
}  // namespace eb::nr_neohookean::test

namespace eb::nr_neohookean::test {
namespace {

// Table 16.1: the fp32 tangent of every strategy of this binary against the fp64 host assembly on
// the four unit spheres (relative L2 over the entries), at a smooth deformation. The paper's
// errors are 1e-8 to 2e-7 and grow as 1/h; ours grow likewise (fp32 positions: eps / h), to a few
// 1e-6 at 16.9K tets (the experiment tabulates them). Every strategy agrees with AssemblyCPU_Opt
// in fp32 to a few ulps of the largest entry.
TEST(Table16_1, Fp32TangentErrorOnTheSpheres) {
  EB_NR_SKIP_WITHOUT_DEVICE();
  for (int level = 0; level < 4; ++level) {
    const NrSetup s = build_nr_setup(load_scenario("cecka-sphere", {"mesh.refinement=" + std::to_string(level),
                                                                   "nr-neohookean.format=hyb"}),
                                     run_options(kBackend, Precision::Fp64));
    std::vector<double> x(size_t(3 * s.num_nodes));
    for (size_t n = 0; n < size_t(s.num_nodes); ++n)
      for (int d = 0; d < 3; ++d) x[3 * n + size_t(d)] = s.nodes[n][size_t(d)] * (d == 0 ? 1.1 : 1.0);
    const StrategyRun ref = run_strategy<double>("cpu-opt", s, x, 0);
    const StrategyRun cpu32 = run_strategy<float>("cpu-opt", s, x, 0);
    double kmax = 0;
    for (double v : ref.values) kmax = std::max(kmax, std::abs(v));
    for (const StrategyInfo& info : assembly_strategies()) {
      if ((info.location == linalg::Location::Device) != (kBackend == Backend::Cuda)) continue;
      const StrategyRun r = run_strategy<float>(info.name, s, x, 0);
      const double err = relative_l2(r.values, ref.values);
      double agree = 0;
      for (size_t k = 0; k < r.values.size(); ++k) agree = std::max(agree, std::abs(r.values[k] - cpu32.values[k]));
      std::printf("Table 16.1 sphere %d (%lld/%lld): %s fp32 error %.3g, max diff to cpu-opt %.3g of max |K|\n", level,
                  (long long)s.num_nodes, (long long)s.num_elements, info.name.c_str(), err, agree / kmax);
      EXPECT_LT(err, 2e-5) << info.name << " sphere " << level;
      EXPECT_LT(agree / kmax, 1e-5) << info.name << " sphere " << level;
    }
  }
}

}  // namespace
}  // namespace eb::nr_neohookean::test
