#pragma once
// The parts of a TLED simulation that do not depend on the backend: mesh, boundary, time step,
// reporting. The OpenMP and CUDA backends derive from it.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "solvers/common/simulation.h"
#include "solvers/tled/tled_setup.h"

namespace eb::tled {

// One kernel of a step, run alone through TledSimulationBase::run_phase (the per-kernel
// CUDA-vs-CPU tests, tests/tled/test_kernels.cpp). Each works on the arrays as they are at the
// current step n = steps_done() (u^n in PhaseArray::u, u^{n-1} in u_prev), exactly as it does
// inside step n + 1.
enum class Phase {
  Element,   // forces of every element from u (Eqs. 8-11; hourglass: plus K_hg u): into fe (gather) or added to fnode
             // (atomic); beta read and raised (damage); det F of u counted into validity()
  Node,      // Eqs. 12 and 3: u^{n+1} from u, u_prev and fe (gather) or fnode (atomic, which is
             // then reset to 0), written over u_prev as the step does
  Boundary,  // Eqs. 13-14 at t_{n+1}: a R added to the free components of loaded nodes of
             // u_prev, prescribed components of u_prev set
};
std::string to_string(Phase p);

// The arrays the phases read and write, backend-neutral (values converted from and to the
// backend's precision): u, u_prev 3 per node (3 n + d); fe 3 per element slot, slot k E + e
// holding node k = 0..3 of element e (k = 0..7 with hourglass control; TledSetup's slot
// numbering; gather and hourglass assemblies only); fnode
// 3 per node (atomic assembly only); beta 1 per element (damage only).
enum class PhaseArray { u, u_prev, fe, fnode, beta };
std::string to_string(PhaseArray a);

class TledSimulationBase : public MeshSimulation {
 public:
  TledSimulationBase(TledSetup setup, Backend backend, Precision precision)
      : MeshSimulation(mesh::CellType::Hexahedron), setup_(std::move(setup)), backend_(backend), precision_(precision) {
    bind_mesh(setup_.nodes, setup_.connectivity, setup_.fixed_any);
  }

  double dt() const override { return setup_.dt; }
  WorkCounts work_per_step() const override { return tled_work_per_step(setup_, precision_); }
  ValidityCounts validity() const override { return counts_; }
  nlohmann::json details() const override;
  // Times each kernel on the current state without changing it (CUDA; null on the CPU). A
  // measurement with its own scratch memory, so it is kept out of details() and called by
  // whoever wants it once the timed run is over (the strbac2015 driver).
  virtual nlohmann::json kernel_profile() { return nullptr; }

  const TledSetup& setup() const { return setup_; }
  int64_t steps_done() const { return step_; }

  // Single kernel phases (see Phase): get/set an array, run one phase on the arrays as they are.
  // Nothing but the phase's outputs (and, for Element, validity()) changes; the step count stays.
  // Throw std::invalid_argument for an array this configuration does not have (has_array), a
  // wrong number of values or a phase that does not exist.
  bool has_array(PhaseArray a) const;
  size_t array_size(PhaseArray a) const;
  std::vector<double> get_array(PhaseArray a);
  void set_array(PhaseArray a, const std::vector<double>& values);
  void run_phase(Phase p);

 protected:
  // The backends' side of get_array/set_array/run_phase (arguments checked; run_phase_impl
  // returns when the phase has completed).
  virtual std::vector<double> read_array(PhaseArray a) = 0;
  virtual void write_array(PhaseArray a, const std::vector<double>& values) = 0;
  virtual void run_phase_impl(Phase p) = 0;
  // Backend-specific facts added to details().
  virtual void add_details(nlohmann::json& j) const { (void)j; }

  TledSetup setup_;
  Backend backend_;
  Precision precision_;
  int64_t step_ = 0;  // steps completed; the state is at t = step_ * dt
  // The element checks of every step (ValidityCounts::add). The element formula (Eq. 18, J^{-2/3})
  // needs J > 0, so det F <= 0 is the threshold; the run goes on and the runner judges it
  // (solvers/common/validity.h).
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
// Device bytes the CUDA backend allocates for `setup` in `precision` (every buffer it uploads:
// its device_bytes()), from the host setup alone; make_tled_cuda checks it against the device's
// free memory and RunOptions::gpu_memory_limit before the first allocation.
std::size_t estimate_device_bytes(const TledSetup& setup, Precision precision);
#endif

}  // namespace eb::tled
