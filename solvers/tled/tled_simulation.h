#pragma once
// The parts of a TLED simulation that do not depend on the backend: mesh, boundary, time step,
// reporting. The OpenMP and CUDA backends derive from it.
#include <memory>
#include <string>

#include "solvers/common/simulation.h"
#include "solvers/tled/tled_setup.h"

namespace eb::tled {

class TledSimulationBase : public Simulation {
 public:
  TledSimulationBase(TledSetup setup, Backend backend, Precision precision)
      : s_(std::move(setup)), backend_(backend), precision_(precision) {}

  const std::vector<mesh::Vec3>& nodes() const override { return s_.nodes; }
  mesh::CellType cell_type() const override { return mesh::CellType::Hexahedron; }
  const std::vector<int32_t>& connectivity() const override { return s_.connectivity; }
  const std::vector<uint8_t>& fixed_nodes() const override { return s_.fixed_any; }
  double dt() const override { return s_.dt; }
  WorkCounts work_per_step() const override { return tled_work_per_step(s_, precision_); }
  nlohmann::json details() const override;

  const TledSetup& setup() const { return s_; }
  int64_t steps_done() const { return step_; }

 protected:
  // Backend-specific facts added to details().
  virtual void add_details(nlohmann::json& j) const { (void)j; }
  // Throws RuntimeFailure naming the element and step where det F <= 0 or became NaN.
  [[noreturn]] void report_inverted(int64_t element, int64_t step, double J) const;

  TledSetup s_;
  Backend backend_;
  Precision precision_;
  int64_t step_ = 0;  // steps completed; the state is at t = step_ * dt
};

std::unique_ptr<Simulation> make_tled_cpu(const Scenario& scenario, const RunOptions& options);
#if defined(ELASTOBENCH_HAVE_CUDA)
std::unique_ptr<Simulation> make_tled_cuda(const Scenario& scenario, const RunOptions& options);
#endif

}  // namespace eb::tled
