#pragma once
// The backend-independent part of corot-cg: the order of a frame's stages (compute forces, the
// CG solve, the integration, the displacement mapping: Campo Fig. 4.1), static solves, the
// random-impulse schedule, validity and reporting. The OpenMP and CUDA backends implement the
// stages.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "solvers/common/random_impulse.h"
#include "solvers/common/simulation.h"
#include "solvers/corot_cg/corot_cg_setup.h"
#include "solvers/linalg/cg.h"

namespace eb::corot_cg {

// A frame's stages, also run one at a time by the tests (run_stage).
enum class Stage {
  Forces,     // rotations and det F from u; b, the operator's diagonal and the ground contacts
  Solve,      // CG on A dv = b from dv = 0 (the tolerance and iteration count of the mode)
  Integrate,  // v += dv, u += h v (a static iteration: u += dv)
  Mapping,    // the render surface's positions from u (Campo Eq. 4.6)
};
const char* stage_name(Stage s);  // PhaseTimes keys: "forces", "cg", "integrate", "mapping"

// Arrays of the stages, converted to and from double: u, v, dv (3 per node), b (3 per node), R
// (9 per element, row-major per element), diag (3 per node, the operator's unmasked diagonal),
// render (3 per render vertex).
enum class StageArray { u, v, dv, b, R, diag, render };

class CorotCgSimulation : public MeshSimulation {
 public:
  CorotCgSimulation(CorotCgSetup setup, Backend backend, Precision precision);

  double dt() const override { return setup_.dt; }
  void advance(int steps) override;
  void solve_static(double load_factor) override;
  WorkCounts work_per_step() const override;
  SolverStats solver_stats() const override { return stats_; }
  ValidityCounts validity() const override;
  nlohmann::json details() const override;

  const CorotCgSetup& setup() const { return setup_; }
  int64_t steps_done() const { return step_; }

  // ---- one stage at a time (tests) ----
  // The coefficients of the operator and right-hand side (rayleigh.h); a time step sets
  // rayleigh_euler(dt, alpha, beta), a static iteration static_coefficients().
  virtual void set_coefficients(const RayleighEuler<double>& k) = 0;
  // The external loads of the next Forces: curve factors at time t times `scale`, gravity times
  // gravity_scale, and the impulse (node, force) if any.
  void set_loads(double t, double scale, double gravity_scale, const std::optional<Impulse>& impulse);
  virtual std::vector<double> get_array(StageArray a) = 0;
  virtual void set_array(StageArray a, const std::vector<double>& values) = 0;
  virtual linalg::CgResult run_stage(Stage s) = 0;
  // y = A p with the current coefficients, rotations and contacts (the CG's operator, masked).
  virtual std::vector<double> apply_operator(const std::vector<double>& p) = 0;
  // Which CG Solve runs: the time step's or the static iterations'.
  virtual void use_static_solver(bool on) = 0;
  // The static solver's relative tolerance and cap from now on (the static Newton iteration's
  // forcing term; a backend rebuilds its solver only when they change).
  virtual void set_static_cg(double tolerance, int max_iterations) = 0;
  // Median ms of `repeats` batches of kProductBatch operator products (device: CUDA events).
  static constexpr int kProductBatch = 10;
  virtual double time_product_ms(int repeats) = 0;
  // CUDA: per kernel of a frame, its launch shape, attributes (registers, shared memory),
  // theoretical occupancy (occupancy API) and median duration over `repeats` event-timed batches
  // (Campo Tables 5.4/5.5); the CPU has no kernels (an empty array).
  virtual nlohmann::json kernel_table(int repeats) {
    (void)repeats;
    return nlohmann::json::array();
  }

 protected:
  virtual void frame();  // one dynamic frame through the stages (backends may capture it)
  void record_checks(const ElementChecks& checks) { counts_.add(checks_step_, checks); }
  void record_solve(const linalg::CgResult& r);
  virtual void add_details(nlohmann::json& j) const { (void)j; }
  // What the next Forces applies: factors per curve, gravity's scale, impulse.
  std::vector<double> curve_factors_;
  double gravity_scale_ = 1.0;
  std::optional<Impulse> impulse_;
  // Applied impulses so far (frame, node, force), for details() and the schedule test.
  std::vector<Impulse> applied_impulses_;

  CorotCgSetup setup_;
  Backend backend_;
  Precision precision_;
  int64_t step_ = 0;
  int64_t checks_step_ = 0;
  SolverStats stats_;
  ValidityCounts counts_;
  int64_t cg_iterations_total_ = 0, solves_ = 0, tolerance_met_ = 0;
  double last_residual_ = 0;
};

std::unique_ptr<Simulation> make_corot_cg_cpu(const Scenario& scenario, const RunOptions& options);
#if defined(ELASTOBENCH_HAVE_CUDA)
std::unique_ptr<Simulation> make_corot_cg_cuda(const Scenario& scenario, const RunOptions& options);
// Device bytes the CUDA backend allocates for `setup` in `precision` (its arrays and the CG's
// vectors), checked against the device's free memory and RunOptions::gpu_memory_limit first.
std::size_t estimate_device_bytes(const CorotCgSetup& setup, Precision precision, int device = 0);
#endif
// The concrete simulation (tests use the stage interface).
std::unique_ptr<CorotCgSimulation> make_corot_cg(const Scenario& scenario, const RunOptions& options);

}  // namespace eb::corot_cg
