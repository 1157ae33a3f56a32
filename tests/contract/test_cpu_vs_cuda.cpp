// Every CUDA implementation agrees with the CPU implementation of the same method, variant and
// precision (the CPU backend is the readable oracle; a CUDA entry without one fails) after 20
// steps of the contract scene, advanced in chunks of 1, 7 and 12 steps (single steps and batches,
// which some backends launch as one CUDA graph).
//
// Tolerances, relative to the largest value of the CPU run:
//  - fp64: 1e-9 on displacements and velocities. The backends compute the same formulas in
//    other summation orders (reductions, atomics) and contractions (FMA on the device), and the
//    device's CG may run another iteration with the same iterates in exact arithmetic (the single
//    reduction, linalg::choose_cg_plan); 20 steps of fixed-count or tolerance solves carry each
//    step's rounding into the next state (on the H100: bcsr-pcg 2.2e-10, hexmg tolerance 1.3e-10
//    in v), while a wrong load factor, a missing term or a wrong layout fail by orders of magnitude.
//  - fp32: the CUDA run is as close to the CPU fp64 run as the CPU fp32 run is (within 4x, the
//    rounding of independent summation orders, + 1e-6), i.e. it loses no accuracy of its own. A
//    fixed fp32 tolerance would not do for every method: under co-rotation the elastic forces
//    cancel to the strain (~1e-4 on the sagging beam), so fp32 keeps ~eps32 / strain ~ 1e-3 of
//    the state (CPU fp32 against CPU fp64 on this scene: hexmg 1e-3, bcsr-pcg 4e-4, tled 7e-5).
//    A variant whose summation order changes from run to run (atomics: VariantInfo::deterministic
//    false) has an fp32 error that moves with it, and the CPU run may be the luckier one (bcsr-pcg
//    scatter on the H100: CUDA 4.3e-4 against CPU 6.4e-5 in one run, within 4x in another), so
//    there the bound is that precision itself, 2e-3, as in test_options.cpp.
#include <algorithm>
#include <cstdio>

#include "tests/contract/contract_util.h"

namespace eb::contract {
namespace {

State twenty_steps(const Impl& i, const Scenario& sc) {
  auto sim = make(i, sc);
  for (int chunk : {1, 7, 12}) sim->advance(chunk);
  return state_of(*sim);
}

class CpuVsCuda : public ::testing::TestWithParam<Impl> {};

TEST_P(CpuVsCuda, SmallSceneAgreesWithTheCpuBackend) {
  const Impl gpu = GetParam();
  EB_CONTRACT_SKIP_WITHOUT_DEVICE(gpu);
  Impl cpu = gpu;
  cpu.backend = Backend::Cpu;
  // A variant that exists only on the GPU (an assembly strategy of a GPU algorithm, nr-neohookean's
  // GlobalNZ) is checked against the method's default variant on the CPU: the same model, solved
  // by the readable oracle.
  const auto& all = methods().entries();
  if (std::none_of(all.begin(), all.end(), [&](const MethodEntry& e) {
        return e.method == cpu.method && e.variant == cpu.variant && e.backend == Backend::Cpu;
      }))
    cpu.variant = gpu.info().variants.front().name;
  ASSERT_NO_THROW(cpu.entry()) << label(gpu) << " has no CPU implementation to be checked against";
  const Scenario sc = scene();
  const State g = twenty_steps(gpu, sc), c = twenty_steps(cpu, sc);
  ASSERT_GT(max_abs(c.u), 0.0) << "the scene did not move";
  const double du = relative_difference(g.u, c.u), dv = relative_difference(g.v, c.v);
  std::printf("%s: largest displacement %.3e m; CUDA against CPU: u %.2e, v %.2e relative\n", label(gpu).c_str(),
              max_abs(c.u), du, dv);
  if (gpu.precision == Precision::Fp64) {
    EXPECT_LE(du, 1e-9);
    EXPECT_LE(dv, 1e-9);
    return;
  }
  Impl ref = cpu;
  ref.precision = Precision::Fp64;
  ASSERT_NO_THROW(ref.entry()) << label(gpu) << ": no CPU fp64 implementation to measure fp32's error against";
  const State r = twenty_steps(ref, sc);
  const double e_gpu = relative_difference(g.u, r.u), e_cpu = relative_difference(c.u, r.u);
  std::printf("fp32 against CPU fp64: CUDA %.2e, CPU %.2e\n", e_gpu, e_cpu);
  const double bound = gpu.variant_info().deterministic ? 4 * e_cpu + 1e-6 : std::max(4 * e_cpu + 1e-6, 2e-3);
  EXPECT_LE(e_gpu, bound);
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CpuVsCuda);
INSTANTIATE_TEST_SUITE_P(Cuda, CpuVsCuda, ::testing::ValuesIn(impls(Backend::Cuda)), impl_name);

}  // namespace
}  // namespace eb::contract
