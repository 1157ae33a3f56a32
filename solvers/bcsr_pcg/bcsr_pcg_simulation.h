#pragma once
// The backend-independent part of bcsr-pcg: the order of a step's phases (Algorithm 1), static
// solves, validity and reporting. The OpenMP and CUDA backends implement the phases.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "solvers/bcsr_pcg/bcsr_pcg_element.h"
#include "solvers/bcsr_pcg/bcsr_pcg_setup.h"
#include "solvers/common/simulation.h"
#include "solvers/linalg/cg.h"
#include "solvers/tet_model/static_newton.h"

namespace eb::bcsr_pcg {

// The phases of a step, also run one at a time by the per-kernel tests (run_phase).
enum class Phase {
  Rotation,   // R_e and det F of every element from u
  Matrix,     // local K^t_e and F^t_e from R, u, v (coefficients of the last set_coefficients)
  Update,     // the global matrix (gather or scatter) and right-hand side from the local ones
  Solve,      // Jacobi-PCG on the global system: the unknown starts from and returns in `sol`
  Integrate,  // a time step's end: v = sol, u += dt sol
  Increment,  // a static iteration's end: u += sol
};
std::string to_string(Phase p);
const char* phase_name(Phase p);  // the same, as a static string (PhaseTimes keys)

// Arrays the phases read and write, converted to and from double (the tests' view): u, v, sol
// (3 per node), R (9 per element), local (144 per element, element-major), local_rhs (12 per
// element), matrix (BCSR values in the plan's pattern, 9 per block, row-major), rhs (3 per node).
// Between steps sol holds the velocity (the warm start); setting v sets sol too.
enum class PhaseArray { u, v, sol, R, local, local_rhs, matrix, rhs };
std::string to_string(PhaseArray a);

class BcsrPcgSimulation : public MeshSimulation {
 public:
  BcsrPcgSimulation(BcsrPcgSetup setup, Backend backend, Precision precision);

  double dt() const override { return setup_.dt; }
  void advance(int steps) override;
  void solve_static(double load_factor) override;
  WorkCounts work_per_step() const override;
  SolverStats solver_stats() const override { return stats_; }
  // counts_, plus the check of the current state when copy_state_to_host made one that no step
  // has repeated yet (a step's Rotation checks the state it starts from, so the last state of a
  // run is otherwise never checked).
  ValidityCounts validity() const override;
  nlohmann::json details() const override;

  const BcsrPcgSetup& setup() const { return setup_; }
  int64_t steps_done() const { return step_; }

  // ---- one phase at a time (tests) ----
  // The coefficients Matrix uses; a time step sets dynamic_coefficients(), a static iteration
  // static_coefficients(load_factor).
  ElementCoefficients<double> dynamic_coefficients() const;
  ElementCoefficients<double> static_coefficients(double load_factor) const;
  virtual void set_coefficients(const ElementCoefficients<double>& k) = 0;
  // Loads added to the right-hand side by Update: the curve factors at time t, times `scale`.
  void set_load_time(double t, double scale);
  virtual std::vector<double> get_array(PhaseArray a) = 0;
  virtual void set_array(PhaseArray a, const std::vector<double>& values) = 0;
  // Runs one phase on the arrays as they are; Solve returns its CG result (else an empty one).
  virtual linalg::CgResult run_phase(Phase p) = 0;
  // Which CG the Solve phase runs: the time step's ([bcsr-pcg] cg_*) or the static iterations'.
  virtual void use_static_solver(bool on) = 0;
  // The static solver's relative tolerance and iteration cap from now on (the static Newton
  // iteration's forcing term; a backend rebuilds its solver only when they change).
  virtual void set_static_cg(double tolerance, int max_iterations) = 0;
  // ||rhs||_2 of the last Update (the residual of a static iteration).
  virtual double rhs_norm() = 0;
  // One product of the current global matrix with sol, alone: the median of `repeats` timings
  // (ms), for the paper's SpMV figure. On the device each timing is a batch of kSpmvBatch products
  // back to back between two CUDA events, divided by the batch (one launch alone would add the
  // events' and the launch's few microseconds to a kernel of tens; bench_sparse times the same way).
  static constexpr int kSpmvBatch = 10;
  virtual double time_spmv_ms(int repeats) = 0;

 protected:
  // A whole dynamic step (backends may fuse or capture it): the default runs the phases.
  virtual void step_impl();
  // Called by the backends' Rotation with the step's element checks.
  void record_checks(const ElementChecks& checks) { counts_.add(checks_step_, checks); }
  // The same checks of the current state (step_), made when the state is copied out; they count
  // until a step starts from this state and records them itself.
  void record_state_checks(const ElementChecks& checks);
  bool state_checked() const { return state_checks_step_ == step_; }
  // Phase timings of the backend; the CG result of the step's solve.
  void record_solve(const linalg::CgResult& r);
  virtual void add_details(nlohmann::json& j) const { (void)j; }
  // Values the Update phase needs for the loads: factor per curve (curve order of the setup).
  std::vector<double> load_factors_;
  double load_scale_ = 1.0;
  // Sizes of the matrix layout the backend updates (for work_per_step).
  // index_bytes_: what the update reads to find the local values (device: one int32 per block
  // contribution and step padding, plus masks; CPU: the plan's contribution list).
  double layout_entries_ = 0, index_entries_ = 0, index_bytes_ = 0, spmv_bytes_ = 0;

  BcsrPcgSetup setup_;
  Backend backend_;
  Precision precision_;
  int64_t step_ = 0;
  ElementChecks state_checks_;
  int64_t state_checks_step_ = -1;
  int64_t checks_step_ = 1;  // the step the next record_checks counts for (the one being computed)
  SolverStats stats_;
  ValidityCounts counts_;
  int64_t cg_iterations_total_ = 0, solves_ = 0;
  tet::StaticNewtonTrace newton_trace_;  // the last static solve's
};

std::unique_ptr<Simulation> make_bcsr_pcg_cpu(const Scenario& scenario, const RunOptions& options);
#if defined(ELASTOBENCH_HAVE_CUDA)
std::unique_ptr<Simulation> make_bcsr_pcg_cuda(const Scenario& scenario, const RunOptions& options);
// Device bytes the CUDA backend allocates for `setup` in `precision` on `device`: its buffers and
// sliced matrix (device_bytes()) and its two CG solvers' vectors, from the host setup alone (it
// builds the sliced layout on the host, as the backend does); the factory checks it against the
// device's free memory and RunOptions::gpu_memory_limit before the first allocation.
std::size_t estimate_device_bytes(const BcsrPcgSetup& setup, Precision precision, int device = 0);
#endif
// The concrete simulation (tests use the phase interface).
std::unique_ptr<BcsrPcgSimulation> make_bcsr_pcg(const Scenario& scenario, const RunOptions& options);

}  // namespace eb::bcsr_pcg
