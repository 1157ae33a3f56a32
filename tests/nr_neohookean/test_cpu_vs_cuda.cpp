// The CUDA configurations of Fig. 16.8 against the CPU one, step by step: all-GPU (GlobalNZ,
// NR_GPU, DCG_GPU) and mixed (AssemblyCPU_Opt on the host, DCG_GPU), five dynamic steps of the
// compressed cube (prescribed motion, Newton with several iterations per step), per precision;
// and the backward-Euler integrator's steps (nr-neohookean.integrator) likewise.
#include "tests/nr_neohookean/nr_test_util.h"

namespace eb::nr_neohookean::test {
namespace {

std::vector<double> five_steps(Backend b, Precision p, const char* strategy, linalg::Format f, const char* integrator) {
  // fp64: tight tolerances; fp32: the precision's default Newton tolerance (1e-5: fp32 cannot
  // reach much below it on this cube) and CG to 1e-6.
  Scenario sc = cube(4, {"time.dt=0.05", "nr-neohookean.format=" + linalg::to_string(f),
                         p == Precision::Fp64 ? "nr-neohookean.nr_tolerance=1e-9" : "nr-neohookean.nr_tolerance=0",
                         p == Precision::Fp64 ? "nr-neohookean.cg_tolerance=1e-10" : "nr-neohookean.cg_tolerance=1e-6",
                         std::string("nr-neohookean.integrator=\"") + integrator + "\""});
  sc.solver.variant = strategy;
  auto sim = make_nr_simulation(sc, run_options(b, p));
  sim->advance(5);
  for (const StepRecord& r : sim->history()) EXPECT_TRUE(r.converged) << r.failure;
  std::vector<double> u, v;
  sim->copy_state_to_host(u, v);
  return u;
}

double rel_max(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, m = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    d = std::max(d, std::abs(a[k] - b[k]));
    m = std::max(m, std::abs(b[k]));
  }
  return d / m;
}

struct Config {
  const char* strategy;
  linalg::Format format;
  Precision precision;
  const char* integrator = "midpoint";
};

class CpuVsCuda : public ::testing::TestWithParam<Config> {};

TEST_P(CpuVsCuda, FiveStepsAgree) {
  EB_NR_SKIP_WITHOUT_DEVICE();
  const Config c = GetParam();
  const std::vector<double> ref = five_steps(Backend::Cpu, c.precision, "cpu-opt", c.format, c.integrator);
  const std::vector<double> got = five_steps(Backend::Cuda, c.precision, c.strategy, c.format, c.integrator);
  // fp64: the Newton and CG tolerances; fp32: single precision through the Newton solve.
  EXPECT_LT(rel_max(got, ref), c.precision == Precision::Fp64 ? 1e-7 : 1e-3);
}

#if defined(EB_NR_TEST_CUDA)
INSTANTIATE_TEST_SUITE_P(
    Configs, CpuVsCuda,
    ::testing::Values(Config{"globalnz", linalg::Format::Dhyb, Precision::Fp64},
                      Config{"globalnz", linalg::Format::Dhyb, Precision::Fp32},
                      Config{"globalnz", linalg::Format::Csr, Precision::Fp64},
                      Config{"globalnz", linalg::Format::Dcoo, Precision::Fp64},
                      Config{"cpu-opt", linalg::Format::Dhyb, Precision::Fp64},
                      Config{"cpu-opt", linalg::Format::Dhyb, Precision::Fp32},
                      Config{"globalnz", linalg::Format::Dhyb, Precision::Fp64, "backward-euler"},
                      Config{"globalnz", linalg::Format::Dhyb, Precision::Fp32, "backward-euler"},
                      Config{"sharednz", linalg::Format::Dhyb, Precision::Fp64, "backward-euler"}),
    [](const auto& i) {
      const std::string s = i.param.strategy;
      return std::string(s == "cpu-opt" ? "mixed" : s == "sharednz" ? "sharednz" : "allgpu") + "_" +
             linalg::to_string(i.param.format) + "_" + to_string(i.param.precision) +
             (std::string(i.param.integrator) == "midpoint" ? "" : "_backward_euler");
    });
#endif
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CpuVsCuda);

// The set-up names its stages in details() (the scale part reports them), in the order they ran;
// a device engine reports the bytes its buffers hold, so the scale part can skip the estimate.
TEST(NrSetupStages, DetailsNameEveryStageAndTheDeviceBytes) {
  EB_NR_SKIP_WITHOUT_DEVICE();
  Scenario sc = cube(4, {});
#if defined(EB_NR_TEST_CUDA)
  sc.solver.variant = "sharednz";
  const std::vector<std::string> want = {"model", "pattern", "format", "map", "engine: partition", "engine: plan",
                                         "engine: upload", "engine", "state"};
#else
  const std::vector<std::string> want = {"model", "pattern", "format", "map", "engine", "state"};
#endif
  const std::size_t tracked_before = cuda_tracked_bytes();
  auto sim = make_nr_simulation(sc, run_options(kBackend, Precision::Fp64));
  const nlohmann::json laps = sim->details().at("setup_s");
  std::vector<std::string> got;
  for (const auto& lap : laps) {
    got.push_back(lap.at("stage").get<std::string>());
    const double s = lap.at("seconds").get<double>();
    EXPECT_TRUE(std::isfinite(s) && s >= 0) << got.back() << ": " << s;
  }
  EXPECT_EQ(got, want);
#if defined(EB_NR_TEST_CUDA)
  EXPECT_GT(sim->device_bytes(), 0u);
  EXPECT_EQ(sim->device_bytes(), cuda_tracked_bytes() - tracked_before);
#else
  EXPECT_EQ(sim->device_bytes(), 0u);
  EXPECT_EQ(tracked_before, cuda_tracked_bytes());
#endif
}

}  // namespace
}  // namespace eb::nr_neohookean::test
