#pragma once
// The backend-independent part of a hexmg simulation: the model, output views, work counts,
// solver statistics and output fields. The OpenMP (hexmg_cpu.cpp) and CUDA (hexmg_cuda.cu)
// backends derive from it.
#include <cmath>
#include <limits>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "assembly/hexmg/hexmg_kernels.h"
#include "solvers/common/simulation.h"
#include "solvers/hexmg/hexmg_model.h"

namespace eb::hexmg {

struct SmoothedPlan;  // smoothed_hierarchy.h

// det F of element e's average deformation gradient: the volume ratio whose minimum validity()
// reports. element_rotation computes the same F but returns only its status, and the formula
// file is shared with work on the solver, so both backends call this beside it (the corners are
// cache hits by then).
template <class T>
EB_HD T element_volume_ratio(int64_t e, const FineView<T>& f) {
  T u[8][3];
  for (int c = 0; c < 8; ++c)
    for (int d = 0; d < 3; ++d) u[c][d] = f.u0(f.ev(e, c), d);
  T F[9];
  average_deformation_gradient(u, f.h, F);
  return det3(F);
}

// The element_rotation status that a volume ratio alone implies (polar_rotation's tests on F:
// a finite F has a finite det).
template <class T>
EB_HD int volume_status(T det) {
  if (!(det - det == T(0))) return kRotationNonFinite;
  return det <= T(kInvertedVolumeRatio) ? kRotationKeptPrevious : kRotationOk;
}

// One kernel phase of a step, run alone through HexmgSimulation::run_phase (the per-kernel
// CUDA-vs-CPU tests, tests/hexmg/test_kernels.cpp). Levels as in Model::levels.
enum class PhaseKind {
  Rotations,     // R from u0 (the current R is the previous rotation kept for det F <= 0.05)
  FineAssembly,  // level-0 A, b (and u = 0, the increment's initial guess) from u0, v0, a0, R
  Galerkin,      // A of `level` (>= 1) from A of level - 1
  SmoothColour,  // one Gauss-Seidel colour `colour` (0..7) on `level`: u from A, b, u
  SmoothSweep,   // the 8 colours in order on `level` (one smoothing sweep)
  Residual,      // r = b - A u on `level`
  Restrict,      // b and u (= 0) of level + 1 from r of `level`
  Interpolate,   // u of `level` += interpolated u of level + 1
  CoarseSolve,   // Jacobi-PCG on the coarsest level from its u (to its tolerance)
  Update,        // Newmark: u0, v0, a0 from the level-0 increment u
};
struct Phase {
  PhaseKind kind = PhaseKind::Rotations;
  int level = 0;
  int colour = 0;
};
std::string to_string(const Phase& p);

// The arrays a phase reads and writes, backend-neutral and slot-ordered (the model's numbering,
// padding slots included): A 243 per slot of `level` (block l row-major at 9 l), b, u, r 3 per
// slot of `level`; u0, v0, a0 3 per level-0 slot; R 9 per element (row-major, elements in
// connectivity() order). Values are converted from and to the backend's precision.
enum class PhaseArray { A, b, u, r, u0, v0, a0, R };
std::string to_string(PhaseArray a);

// FLOPs and bytes of one kernel over one time step (the paper's Table 3 counts: every byte a
// kernel reads or writes, cache hits included, i.e. "effective" traffic), and the bytes it
// must move at least (each array touched once; "compulsory").
struct KernelWork {
  std::string kernel;
  double flops = 0;
  double bytes = 0;
  double compulsory_bytes = 0;
  double launches = 0;  // kernel launches per step on the GPU
};

// Per-kernel counts of one step. `cycles` and `coarse_iterations` may be fractional means.
std::vector<KernelWork> work_breakdown(const Model& m, int scalar_bytes, double cycles, double coarse_iterations);

// Per-step statistics a study (Fig. 11) reads: residual after each V-cycle or CG iteration with
// its time since the solve began.
struct ConvergenceTrace {
  std::vector<double> seconds;
  std::vector<double> residual;  // |r| (2-norm over all components)
};

class HexmgSimulation : public MeshSimulation {
 public:
  HexmgSimulation(Model model, Backend backend, Precision precision)
      : MeshSimulation(mesh::CellType::Hexahedron), m_(std::move(model)), backend_(backend), precision_(precision) {
    bind_mesh(m_.nodes, m_.connectivity, m_.fixed_any);
  }

  double dt() const override { return m_.dt; }
  WorkCounts work_per_step() const override;
  SolverStats solver_stats() const override;
  ValidityCounts validity() const override;
  nlohmann::json details() const override;
  void cell_fields(std::vector<mesh::Field>& out) override;

  const Model& model() const { return m_; }
  std::vector<KernelWork> kernel_work() const;
  int64_t steps_done() const { return step_; }
  // Element rotations (9 per element, row-major), current.
  virtual std::vector<double> rotations() = 0;
  // Displacement per level-0 slot (3 per slot, padding included), current (within an open step:
  // u_old + the current increment).
  virtual std::vector<double> slot_displacement() = 0;
  // Mean V-cycles (or CG iterations) and coarsest-CG iterations per step so far.
  double mean_cycles() const { return solves_ ? double(cycles_sum_) / solves_ : m_.solver.cycles; }
  virtual double mean_coarse_iterations() const = 0;

  // Stepwise access (tests, Fig. 11 study): begin_step() assembles the next step's system on
  // every level (rotations, Eq. 9, Eqs. 10-11) with u = previous solution as initial guess;
  // vcycle() runs one V-cycle; system_residual() is |b - A u| on the simulation level;
  // end_step() applies the Newmark update. advance() is begin/solve/end per step.
  virtual void begin_step() = 0;
  // Overwrites the displacement (and velocity; empty = 0) per level-0 slot; acceleration = 0.
  virtual void set_state(const std::vector<double>& slot_u, const std::vector<double>& slot_v) = 0;
  virtual void vcycle() = 0;
  // Resets the open step's increment to its initial guess 0 (to solve the same system again).
  virtual void restart_solve() = 0;
  virtual double system_residual() = 0;
  virtual void end_step() = 0;
  // Jacobi-preconditioned CG on the assembled level-0 system from the current increment, at most
  // `iterations` iterations or `max_seconds`, recording |r| after each (CPU only; Fig. 11). The
  // trace has one entry for the start and one per iteration (seconds since the call began); the
  // solve stops after the first entry at or past max_seconds. The CPU backend runs the shared
  // solver of solvers/linalg/cg.h (CgOptions::on_iteration records the trace and stops it).
  virtual ConvergenceTrace jacobi_pcg(int iterations, double rel_tolerance, double max_seconds = 1e30);
  // Level-0 system as (row, col, value) in slot-component numbering 3 slot + d, its right-hand
  // side and current solution; the unknown is the step's increment du = u - u_old.
  struct Triplet {
    int64_t row, col;
    double value;
  };
  virtual void export_system(std::vector<Triplet>& A, std::vector<double>& b, std::vector<double>& u) = 0;

  // Elastic forces of the current state, f = sum_e R K (R^T x - p) per level-0 slot (3 per
  // slot), with the rotations as they are (tests: patch test, rigid rotation).
  std::vector<double> elastic_forces(const std::vector<double>& slot_u, const std::vector<double>& R) const;

  // Single kernel phases (see PhaseKind): get/set an array, run one phase on the arrays as they
  // are. FineAssembly uses the load factors of the next step (the one begin_step would open);
  // Rotations counts kept rotations and det F into validity() as a step would; nothing else
  // changes the step count or the statistics. Throw std::invalid_argument for a level, colour
  // or size that does not exist.
  std::vector<double> get_array(PhaseArray a, int level = 0);
  void set_array(PhaseArray a, int level, const std::vector<double>& values);
  void run_phase(const Phase& p);
  // Entries of an array (padding included).
  size_t array_size(PhaseArray a, int level) const;

  // The smoothed hierarchy of the smoothed-* variants (smoothed_hierarchy.h), phase by phase for
  // the tests (CPU functions against CUDA kernels): its plan (null for the other variants); its
  // arrays, backend-neutral (A and AP: 9 per entry of the plan's pattern of level l >= 1, row-
  // major blocks; b, u, r: 3 per slot of level l, level 0 the simulation level's); its phases.
  // InputError for a variant without the hierarchy; std::invalid_argument for a level or size that
  // does not exist.
  enum class SmoothedArray { A, AP, b, u, r };
  enum class SmoothedPhaseKind {
    Galerkin,       // A_l = R_l A_{l-1} P_l, l >= 1 (AP_l too)
    Sweep,          // one Gauss-Seidel sweep on level l (level 0: the 8 colours; coarse: the greedy colours)
    SweepBackward,  // the same, colours in reverse
    Residual,       // r = b - A u on level l
    Restrict,       // b_l = R_l r_{l-1}, u_l = 0 (l >= 1)
    Prolong,        // u_{l-1} += P_l u_l (l >= 1)
    CoarseSolve,    // Jacobi-PCG on the coarsest level (l = last)
    Cycle,          // one V-cycle from level 0's b and u (symmetric for smoothed-pcg)
  };
  virtual const SmoothedPlan* smoothed_plan() const { return nullptr; }
  virtual std::vector<double> smoothed_array(SmoothedArray a, int level);
  virtual void set_smoothed_array(SmoothedArray a, int level, const std::vector<double>& values);
  virtual void run_smoothed_phase(SmoothedPhaseKind k, int level);

 protected:
  // Per-slot (3 per slot) displacement and velocity to per-node output arrays.
  void slots_to_nodes(const std::vector<double>& su, const std::vector<double>& sv, std::vector<double>& u,
                      std::vector<double>& v) const {
    const size_t n = m_.nodes.size();
    u.resize(3 * n);
    v.resize(3 * n);
    for (size_t i = 0; i < n; ++i) {
      const size_t s = size_t(m_.slot_of_node[i]);
      for (int d = 0; d < 3; ++d) {
        u[3 * i + d] = su[3 * s + d];
        v[3 * i + d] = sv[3 * s + d];
      }
    }
  }
  // Level-0 stencil coefficients (coefficient c of slot x at A[x vs + c cs]) as triplets.
  template <class T>
  void level0_triplets(const T* A, int64_t vs, int64_t cs, std::vector<Triplet>& out) const {
    const Level& L = m_.levels[0];
    out.clear();
    for (int64_t x = 0; x < L.n_padded; ++x) {
      if (L.nbr[x][13] < 0) {  // padding slot: identity keeps the exported matrix regular
        for (int d = 0; d < 3; ++d) out.push_back({3 * x + d, 3 * x + d, 1.0});
        continue;
      }
      for (int l = 0; l < 27; ++l) {
        const int32_t y = L.nbr[x][l];
        if (y < 0) continue;
        for (int k = 0; k < 9; ++k) {
          const double v = double(A[x * vs + (9 * l + k) * cs]);
          if (v != 0.0) out.push_back({3 * x + k / 3, 3 * int64_t(y) + k % 3, v});
        }
      }
    }
  }
  // Backend computes |b - A u0| and |b - A u| of the last step's system (u0 = initial guess).
  virtual void last_step_residuals(double& initial, double& final_) = 0;
  virtual void add_details(nlohmann::json& j) const { (void)j; }
  // The backends' side of get_array/set_array/run_phase (arguments checked; run_phase_impl
  // returns when the phase has completed).
  virtual std::vector<double> read_array(PhaseArray a, int level) = 0;
  virtual void write_array(PhaseArray a, int level, const std::vector<double>& values) = 0;
  virtual void run_phase_impl(const Phase& p) = 0;
  // det F over the elements of the current state u0 (ElementChecks: inverted means at or below
  // kInvertedVolumeRatio), on demand: the rotations of step k check the state of step k - 1, so
  // validity() checks the latest state itself (outside the timed steps, reading only; not
  // accumulated, since the next step's rotations will count that state).
  virtual ElementChecks check_volumes() = 0;
  // Accounting shared by the backends. A step number names the state it produced (the
  // rotations of step k see the state of step k - 1).
  void record_solve(bool converged) {
    last_converged_ = converged;
    if (!converged && solver_failures_++ == 0) first_solver_failure_step_ = step_ + 1;
  }
  // A solve to a relative tolerance took `iterations` from |r| = r0 to r.
  void record_tolerance_solve(int iterations, double r0, double r, double tolerance) {
    cycles_sum_ += iterations;
    ++solves_;
    last_iterations_ = iterations;
    have_trace_residuals_ = true;
    trace_initial_ = r0;
    trace_final_ = r;
    record_solve(std::isfinite(r) && r <= tolerance * r0);
  }
  // The element checks of the state of step `state_step` (ValidityCounts::add), into `counts`.
  // A run counts one non-finite state: advance() stops at the first (diverged()), and a later
  // check of the same diverged run finds nothing new.
  static void add_checks(ValidityCounts& counts, ElementChecks c, int64_t state_step) {
    if (counts.nonfinite_steps > 0) c.first_nonfinite = -1;
    counts.add(state_step, c);
  }
  void record_checks(const ElementChecks& c, int64_t state_step) { add_checks(element_counts_, c, state_step); }
  // A non-finite F has been met: the state has diverged, and advance() takes no further steps
  // (the runner stops on validity().nonfinite_steps and keeps the run's files).
  bool diverged() const { return element_counts_.nonfinite_steps > 0; }
  // smoothed-*: whether the step after state `step` recomputes the Galerkin coarse operators:
  // every hexmg.galerkin_every steps from step 0, and always when none were computed yet (a run
  // that starts later). Both backends ask this one function, so they refresh on the same steps.
  bool galerkin_due(int64_t step) const { return !have_galerkin_ || step % m_.solver.galerkin_every == 0; }
  bool have_galerkin_ = false;

  Model m_;
  Backend backend_;
  Precision precision_;
  int64_t step_ = 0;
  int64_t cycles_sum_ = 0, solves_ = 0;
  int last_iterations_ = 0;
  bool last_converged_ = true;
  bool have_trace_residuals_ = false;  // tolerance mode: residuals recorded during the solve
  double trace_initial_ = 0, trace_final_ = 0;
  // What the steps' rotations found (det F of states 0 .. steps - 1): the element-check fields
  // of ValidityCounts; an element-step is inverted when its rotation was kept (det F <= 0.05).
  ValidityCounts element_counts_;
  int64_t solver_failures_ = 0, first_solver_failure_step_ = -1;

 private:
  void check_phase(const Phase& p) const;
};

std::unique_ptr<Simulation> make_hexmg_cpu(const Scenario& scenario, const RunOptions& options);
#if defined(ELASTOBENCH_HAVE_CUDA)
std::unique_ptr<Simulation> make_hexmg_cuda(const Scenario& scenario, const RunOptions& options);
// Device bytes the CUDA backend allocates for `model` in `precision` on `device` (every buffer of
// its constructor: its device_bytes()), from the host model alone (the coarsest CG's layout
// depends on the device's shared memory); the factory checks it against the device's free
// memory and RunOptions::gpu_memory_limit before the first allocation.
std::size_t estimate_device_bytes(const Model& model, Precision precision, int device = 0);
#endif

// Direct access for tests and the experiment driver (same objects the factories return).
std::unique_ptr<HexmgSimulation> make_hexmg(const Scenario& scenario, const RunOptions& options);

}  // namespace eb::hexmg
