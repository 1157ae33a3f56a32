#pragma once
// The device-memory checks (issue 12) that the contract tests (tests/contract/
// test_device_memory.cpp, every CUDA entry) and the method-specific ones (tests/<method>/
// test_device_memory.cpp: hierarchies, options and features the contract scene lacks) share: a
// method's estimate_device_bytes against what its CUDA backend then allocates, and its factory
// refusing a limit one byte below the estimate before allocating anything. CUDA builds only; the
// callers skip without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "meshes/errors.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/simulation.h"

namespace eb::test {

// A CUDA run in precision `p` with RunOptions::gpu_memory_limit = limit (0: none).
inline RunOptions cuda_options(Precision p, std::size_t limit = 0) {
  RunOptions o;
  o.backend = Backend::Cuda;
  o.precision = p;
  o.threads = 1;
  o.gpu_memory_limit = limit;
  return o;
}

// Builds the simulation with RunOptions::gpu_memory_limit = limit (0: none).
using MakeWithLimit = std::function<std::unique_ptr<Simulation>(std::size_t limit)>;

struct Allocated {
  std::unique_ptr<Simulation> sim;
  std::size_t before = 0;  // device bytes the process held before the construction
  std::size_t held = 0;    // ... and what the construction added
};

// actual <= estimate <= 1.25 actual, actual being the larger of the simulation's device_bytes()
// and the tracked peak of its construction (which also counts buffers a backend leaves out of
// device_bytes(), such as bcsr-pcg's CG vectors).
inline Allocated expect_estimate_bounds_allocation(std::size_t estimate, const MakeWithLimit& make) {
  Allocated a;
  a.before = cuda_tracked_bytes();
  cuda_reset_peak_tracked_bytes();
  a.sim = make(0);
  a.held = cuda_tracked_bytes() - a.before;
  const std::size_t peak = cuda_peak_tracked_bytes() - a.before;
  const std::size_t actual = std::max(a.sim->device_bytes(), peak);
  EXPECT_GE(a.held, a.sim->device_bytes());
  EXPECT_GT(actual, 0u);
  EXPECT_LE(actual, estimate) << "the estimate is below what was allocated";
  EXPECT_LE(double(estimate), 1.25 * double(actual)) << "estimate " << estimate << ", allocated " << actual;
  return a;
}

// A limit one byte below the estimate is refused with a RuntimeFailure naming `label` (e.g.
// "tled cuda fp32"), the estimate and the option, before anything is allocated; a limit of
// exactly the estimate is not.
inline void expect_refused_below_estimate(std::size_t estimate, const std::string& label, const MakeWithLimit& make) {
  const std::size_t before = cuda_tracked_bytes();
  cuda_reset_peak_tracked_bytes();
  try {
    make(estimate - 1);
    ADD_FAILURE() << "a limit one byte below the estimate was accepted";
  } catch (const RuntimeFailure& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(label + " "), std::string::npos) << msg;
    EXPECT_NE(msg.find("needs an estimated"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--gpu-memory-limit"), std::string::npos) << msg;
  }
  EXPECT_EQ(cuda_peak_tracked_bytes(), before) << "the refused run allocated device memory";
  const auto sim = make(estimate);
  EXPECT_LE(sim->device_bytes(), estimate);
}

}  // namespace eb::test
