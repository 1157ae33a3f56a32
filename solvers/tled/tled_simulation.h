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
  ValidityCounts validity() const override { return counts_; }
  nlohmann::json details() const override;
  // Times each kernel on the current state without changing it (CUDA; null on the CPU). A
  // measurement with its own scratch memory, so it is kept out of details() and called by
  // whoever wants it once the timed run is over (the strbac2015 driver).
  virtual nlohmann::json kernel_profile() { return nullptr; }

  const TledSetup& setup() const { return s_; }
  int64_t steps_done() const { return step_; }

 protected:
  // Backend-specific facts added to details().
  virtual void add_details(nlohmann::json& j) const { (void)j; }
  // Adds one step's element checks to counts_: `inverted` elements with det F <= 0 (the lowest
  // index first_inverted), the smallest finite det F, and the lowest element whose det F was
  // not a number (-1: none). The element formula (Eq. 18, J^{-2/3}) needs J > 0, so det F <= 0
  // is the threshold; the run goes on and the runner judges it (solvers/common/validity.h).
  void record_checks(int64_t step, int64_t inverted, int64_t first_inverted, double min_det_f,
                     int64_t first_nonfinite);

  TledSetup s_;
  Backend backend_;
  Precision precision_;
  int64_t step_ = 0;  // steps completed; the state is at t = step_ * dt
  ValidityCounts counts_ = initial_counts();

 private:
  static ValidityCounts initial_counts() {
    ValidityCounts c;
    c.det_f_checked = true;
    c.inverted_threshold = 0.0;
    return c;
  }
};

std::unique_ptr<Simulation> make_tled_cpu(const Scenario& scenario, const RunOptions& options);
#if defined(ELASTOBENCH_HAVE_CUDA)
std::unique_ptr<Simulation> make_tled_cuda(const Scenario& scenario, const RunOptions& options);
#endif

}  // namespace eb::tled
