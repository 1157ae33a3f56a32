// The device-memory estimate (issue 12): estimate_device_bytes, which the CUDA factory checks
// against the device's free memory and RunOptions::gpu_memory_limit before its first
// allocation, against what the backend then holds (device_bytes() and the tracked allocations):
// actual <= estimate <= 1.25 actual in both precisions, on hierarchies the contract scene (one
// level, tests/contract/test_device_memory.cpp, which also checks the refusal of a limit below
// the estimate) does not have: a cube of three levels with the coarsest CG's blocks in shared
// memory and partly forced into the global overflow (hexmg.coarse_shared_slots, as
// test_coarse_overflow.cpp does), and a beam of two levels. CUDA build only (test_hexmg_gpu).
#include <memory>
#include <string>

#include "solvers/hexmg/hexmg_model.h"
#include "tests/common/device_memory_test_util.h"
#include "tests/hexmg/hexmg_test_util.h"

namespace eb::hexmg::test {
namespace {

struct MemoryCase {
  Precision precision;
  std::string shape;   // cube, beam
  std::string coarse;  // the coarsest CG: smem, overflow (blocks partly in global memory)
};

std::string case_name(const ::testing::TestParamInfo<MemoryCase>& info) {
  return to_string(info.param.precision) + "_" + info.param.shape + "_" + info.param.coarse;
}

Scenario scenario_of(const MemoryCase& c) {
  Scenario sc = c.shape == "beam" ? clamped_cube(8, {"mesh.size=[0.4, 0.1, 0.05]", "mesh.element_size=0.0125"})
                                  : clamped_cube(16);
  // Read by the estimate and the constructor alike.
  if (c.coarse == "overflow") sc.method_options["hexmg"]["coarse_shared_slots"] = 2;
  return sc;
}

class DeviceMemory : public ::testing::TestWithParam<MemoryCase> {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device";
    c_ = GetParam();
    sc_ = scenario_of(c_);
    const Model model = build_model(sc_, eb::test::cuda_options(c_.precision));
    ASSERT_GE(model.n_levels(), 2);
    estimate_ = estimate_device_bytes(model, c_.precision, 0);
    make_ = [this](std::size_t limit) -> std::unique_ptr<Simulation> {
      return make_hexmg(sc_, eb::test::cuda_options(c_.precision, limit));
    };
  }
  MemoryCase c_;
  Scenario sc_;
  std::size_t estimate_ = 0;
  eb::test::MakeWithLimit make_;
};

TEST_P(DeviceMemory, EstimateBoundsWhatIsAllocated) {
  const auto a = eb::test::expect_estimate_bounds_allocation(estimate_, make_);
  EXPECT_EQ(a.sim->device_bytes(), a.held);
  const int global_slots = a.sim->details().value("coarse_cg_global_warp_slots", -2);
  if (c_.coarse == "overflow") EXPECT_GT(global_slots, 0) << a.sim->details().dump();
  EXPECT_GE(global_slots, 0) << a.sim->details().dump();  // the warp-slot layout exists
}

std::vector<MemoryCase> memory_cases() {
  std::vector<MemoryCase> out;
  for (Precision p : {Precision::Fp32, Precision::Fp64}) {
    out.push_back({p, "cube", "smem"});
    out.push_back({p, "cube", "overflow"});
    out.push_back({p, "beam", "smem"});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Cases, DeviceMemory, ::testing::ValuesIn(memory_cases()), case_name);

}  // namespace
}  // namespace eb::hexmg::test
