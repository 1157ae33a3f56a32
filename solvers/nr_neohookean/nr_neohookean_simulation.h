#pragma once
// The backend-independent part of nr-neohookean: the time step (midpoint rule, Eqs. 4-5, solved by
// Newton-Raphson with the exact tangent m (1/dt + c/2) + dt/4 K(mid)), static load steps, loads,
// prescribed motion, validity and statistics. The engines (nr_neohookean_engine.h) run the stages.
//
// Note on Eq. 6: the paper writes the tangent as m/dt + dt/2 dP; the derivative of Eq. 4's
// h(phi^{k+1}) = m (phi^{k+1} - phi^k)/dt + dt/2 f((phi^{k+1} + phi^k)/2) has dt/4 K (the chain rule
// through the midpoint). With dt/2 Newton still converges, but linearly; this method takes the
// exact derivative, so Newton converges quadratically (tests/nr_neohookean/test_newton.cpp).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "solvers/common/simulation.h"
#include "solvers/nr_neohookean/nr_neohookean_engine.h"
#include "solvers/nr_neohookean/nr_neohookean_setup.h"

namespace eb::nr_neohookean {

// One step's (or static load step's) Newton record.
struct StepRecord {
  int64_t step = 0;
  std::vector<double> residuals;  // ||p - h||_2 (static: ||f_ext - f||) after each assembly, the first before any update
  std::vector<int> cg_iterations; // per Newton iteration
  int halvings = 0;               // Newton steps halved because they inverted an element
  bool converged = false;
  // Converged at the residual's rounding floor rather than by a tolerance (NrSim::newton): the
  // residual stopped falling below sqrt(eps) x the run's load scale.
  bool at_rounding = false;
  std::string failure;            // why not: "nr_max_iterations", "inverted element 12", "cg non-finite"...
};

class NrSimulation : public MeshSimulation {
 public:
  explicit NrSimulation(NrSetup setup, Backend backend, Precision precision);
  double dt() const override { return setup_.dt; }
  void advance(int steps) override = 0;
  void solve_static(double load_factor) override = 0;
  void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) override = 0;
  SolverStats solver_stats() const override { return stats_; }
  ValidityCounts validity() const override { return counts_; }
  // Mean work of the steps so far, compulsory bytes: per assembly the strategy's work(), per CG
  // iteration one product (the format's arrays, x and y once) and 13 vector passes (as
  // solvers/linalg/PERF_NOTES.md counts them), per Newton iteration ~8 vector passes.
  WorkCounts work_per_step() const override;
  nlohmann::json details() const override;
  std::size_t device_bytes() const override;

  const NrSetup& setup() const { return setup_; }
  const std::vector<StepRecord>& history() const { return history_; }
  // The tangent and force at `positions` (3 per node, in the model's node order) with the given
  // scale of K and no mass: values in the format's flat value space, for tests.
  virtual void assemble_at(const std::vector<double>& positions, std::vector<double>& values,
                           std::vector<double>& force) = 0;
  virtual double time_spmv_ms(int repeats) = 0;
  // Sets the state (u, v; 3 per node) for tests; momentum p = m v.
  virtual void set_state(const std::vector<double>& u, const std::vector<double>& v) = 0;
  // The CG configuration that ran ("DCG_CPU (dcsr (host))", ...).
  virtual std::string cg_name() const = 0;
  // One assembly's work (the strategy's AssemblyWork) and the bytes of one product.
  virtual AssemblyWork assembly_work() const = 0;
  virtual double spmv_bytes() const = 0;
  virtual std::size_t value_bytes() const = 0;
  // Seconds per set-up stage, in order ("engine: plan" is inside "engine"); details()'s setup_s.
  virtual std::vector<std::pair<std::string, double>> setup_seconds() const { return setup_.setup_s; }

 protected:
  // The external force at time t (curves at t) or at `static_factor` of the full loads (>= 0).
  std::vector<double> external_force(double t, double static_factor) const;
  // Positions of the prescribed components at time t (or static factor), as (dof, value).
  void prescribed_positions(double t, double static_factor, std::vector<int32_t>& dof, std::vector<double>& val) const;
  void record_failure(const StepRecord& r);

  NrSetup setup_;
  Backend backend_;
  Precision precision_;
  int64_t step_ = 0;
  SolverStats stats_;
  ValidityCounts counts_;
  std::vector<StepRecord> history_;
  int64_t assemblies_ = 0, cg_iterations_total_ = 0, newton_total_ = 0, steps_total_ = 0;
  std::vector<double> last_fext_;
};

std::unique_ptr<NrSimulation> make_nr_simulation(const Scenario& scenario, const RunOptions& options);
std::unique_ptr<Simulation> make_nr_neohookean(const Scenario& scenario, const RunOptions& options);
#if defined(ELASTOBENCH_HAVE_CUDA)
std::size_t estimate_device_bytes(const Scenario& scenario, const RunOptions& options);
#endif

}  // namespace eb::nr_neohookean
