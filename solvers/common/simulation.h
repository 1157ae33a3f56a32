#pragma once
// The interface every method/backend/precision implements, and the types it reports with.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "meshes/mesh.h"
#include "meshes/vtk_io.h"
#include "solvers/common/scenario.h"
#include "solvers/common/timers.h"

namespace eb {

enum class Backend { Cpu, Cuda };
enum class Precision { Fp32, Fp64 };
std::string to_string(Backend b);
std::string to_string(Precision p);
Backend parse_backend(const std::string& s);      // throws InputError listing the valid names
Precision parse_precision(const std::string& s);

// How to run (the scenario says what to run).
struct RunOptions {
  Backend backend = Backend::Cpu;
  Precision precision = Precision::Fp64;
  int threads = 0;  // CPU threads; 0 = all the machine has
  int device = 0;   // CUDA device ordinal
  // CUDA: the most device memory a run may take, in bytes (0: no limit of its own). A backend
  // refuses work whose estimate exceeds it, or the device's free memory, before allocating
  // (require_device_memory, solvers/common/cuda_info.h); `run --gpu-memory-limit` sets it.
  std::size_t gpu_memory_limit = 0;
  std::filesystem::path data_dir;
};

// What `WorkCounts::bytes` counts. A bandwidth figure means nothing without it: a method that
// counts every byte its kernels request (cache re-reads included) can report more than the
// memory system delivers, so a fraction of STREAM triad is only honest with Compulsory bytes
// (or bytes measured in DRAM, which a method cannot count for itself).
enum class BytesConvention {
  Unstated,
  Compulsory,  // each array once per kernel: the DRAM traffic when nothing is re-read from DRAM
  Requested,   // every byte the kernels request, re-reads from caches included
};
std::string to_string(BytesConvention c);  // "unstated", "compulsory", "requested"

// Work one step does, counted by the method from its kernels (0 = not counted).
struct WorkCounts {
  double flops = 0.0;
  double bytes = 0.0;
  BytesConvention bytes_convention = BytesConvention::Unstated;
};

// The solve of the last step (or load step). A method with one level (a linear solve, or a
// fixed number of cycles, per step) fills the first block; a two-level method (Newton
// iterations around linear solves) fills both, and the first block then describes the linear
// solves: iterations summed over the step's outer iterations, residuals of the last one.
struct SolverStats {
  int iterations = 0;             // inner iterations in the last step (CG iterations, V-cycles...); 0: no solve
  double initial_residual = 0.0;  // of the last step's linear system, before the solve
  double final_residual = 0.0;    // after it, in the same (absolute) norm: not divided by initial_residual
  // Whether the last solve met its tolerance. Set only by a solve that stops on a tolerance
  // (a method's tolerance option); empty for a fixed number of iterations or cycles, where there is no
  // tolerance to meet and the residual reduction reached is the measure, and for explicit
  // methods (no solve). Test it with has_value(): `if (converged)` asks whether it is set.
  std::optional<bool> converged;
  // final / initial residual of the last solve; NaN when there was none (initial_residual 0).
  double reduction() const;

  // The outer (nonlinear) level; outer_iterations 0: a method with one level.
  int outer_iterations = 0;
  double outer_initial_residual = 0.0;  // nonlinear residual at the start of the step
  double outer_final_residual = 0.0;    // after the last outer iteration, same norm
  std::optional<bool> outer_converged;  // whether the outer iteration met its tolerance
  std::vector<int> inner_per_outer;     // inner iterations of each outer iteration (they sum to `iterations`)
  double outer_reduction() const;       // NaN when there was no outer level
  // The verdict on the step: the outer level's when there is one (a linear solve inside a
  // Newton iteration may stop early by design), else the inner one's.
  std::optional<bool> step_converged() const { return outer_iterations > 0 ? outer_converged : converged; }
};

// What a method's element pass found in one state (det F of every element).
struct ElementChecks {
  int64_t inverted = 0;         // elements at or below the method's inverted_threshold
  int64_t first_inverted = -1;  // the lowest such element; -1: none
  double min_det_f = std::numeric_limits<double>::infinity();  // smallest finite det F
  int64_t first_nonfinite = -1;  // the lowest element whose det F is not finite; -1: none
};

// What makes a state invalid, accumulated by the method over every step it has taken (the
// runner samples only every few steps, so a method counts inside advance()). Element indices
// are in the order of connectivity(); a step number names the state it produced (step 0 is the
// initial state). The runner adds the checks it can make from the outside (non-finite values,
// growth beyond a scenario-relative bound) and decides validity (solvers/common/validity.h).
struct ValidityCounts {
  // Elements whose volume ratio det F is at or below `inverted_threshold` (inverted, or so
  // compressed that the method's element formula no longer holds); one count per element-step.
  bool det_f_checked = false;       // the method computes det F and fills the next five fields
  double inverted_threshold = 0.0;  // the method's stated threshold on det F
  int64_t inverted_element_steps = 0;
  int64_t first_inverted_step = -1;
  int64_t first_inverted_element = -1;
  // Smallest finite det F seen; +infinity until one is computed (a state in tension has det F
  // above 1, so no finite start value would do).
  double min_det_f = std::numeric_limits<double>::infinity();
  // Linear or nonlinear solves that did not meet their tolerance (tolerance modes only: a
  // fixed-iteration solve cannot fail, it reports its reduction in SolverStats instead).
  int64_t solver_failures = 0;
  int64_t first_solver_failure_step = -1;
  // Non-finite values met by the method itself (forces, stresses, F).
  int64_t nonfinite_steps = 0;
  int64_t first_nonfinite_step = -1;
  int64_t first_nonfinite_element = -1;

  // Adds the element checks of one state (the state of step `step`); every method counts through
  // this one function, so the fields mean the same in every method's summary.
  void add(int64_t step, const ElementChecks& checks);
};


class Simulation {
 public:
  virtual ~Simulation() = default;

  // Reference configuration as simulated (after any reordering the method does).
  virtual const std::vector<mesh::Vec3>& nodes() const = 0;
  virtual mesh::CellType cell_type() const = 0;
  virtual const std::vector<int32_t>& connectivity() const = 0;  // flat, VTK node order
  virtual const std::vector<uint8_t>& fixed_nodes() const = 0;   // 1 where any component is constrained

  // The time step; 0 for a method without time stepping (MethodInfo::dynamic false).
  virtual double dt() const { return 0.0; }
  // Advances `steps` time steps (methods with time stepping). Returns only when the work is
  // complete (device synchronized), so host wall-clock around it is valid. Records per-phase
  // times into timings().
  virtual void advance(int steps);
  // Static solves (time.mode = "static", methods whose MethodInfo::static_solve is set): brings
  // the current state to equilibrium under `load_factor` x every load at its full value (load
  // curves do not apply; prescribed displacements are scaled likewise), starting from the
  // current state, to the scenario's static.tolerance within static.max_iterations. Returns when
  // the work is complete; solver_stats() then describes this solve and validity() counts it.
  virtual void solve_static(double load_factor);
  // Current displacement and velocity, 3 values per node (x, y, z interleaved), in metres.
  virtual void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) = 0;
  // Per-element fields of the current state for output (names from mesh::field).
  virtual void cell_fields(std::vector<mesh::Field>& out) { (void)out; }

  virtual WorkCounts work_per_step() const { return {}; }
  virtual SolverStats solver_stats() const { return {}; }
  // Accumulated over all steps so far (see ValidityCounts); cheap enough to call after every
  // advance() (the runner does), and without side effects on the state or its timings.
  virtual ValidityCounts validity() const { return {}; }
  virtual std::size_t device_bytes() const { return 0; }
  // Method-specific facts for summary.json (variant, regime, multigrid levels...). No side
  // effects: no allocation, no kernel launch, no measurement (those belong to the caller).
  virtual nlohmann::json details() const { return nlohmann::json::object(); }

  PhaseTimes& timings() { return timings_; }
  const PhaseTimes& timings() const { return timings_; }

 protected:
  PhaseTimes timings_;
};

// The base of every method's simulation: the reference mesh as simulated, which the method keeps
// in its own setup (reordered, in its own numbering) and binds here once, in its constructor.
class MeshSimulation : public Simulation {
 public:
  const std::vector<mesh::Vec3>& nodes() const final { return *nodes_; }
  mesh::CellType cell_type() const final { return cell_type_; }
  const std::vector<int32_t>& connectivity() const final { return *connectivity_; }
  const std::vector<uint8_t>& fixed_nodes() const final { return *fixed_nodes_; }

 protected:
  explicit MeshSimulation(mesh::CellType cell_type) : cell_type_(cell_type) {}
  // The arrays must live as long as the simulation (members of the derived class).
  void bind_mesh(const std::vector<mesh::Vec3>& nodes, const std::vector<int32_t>& connectivity,
                 const std::vector<uint8_t>& fixed_nodes) {
    nodes_ = &nodes;
    connectivity_ = &connectivity;
    fixed_nodes_ = &fixed_nodes;
  }

 private:
  mesh::CellType cell_type_;
  const std::vector<mesh::Vec3>* nodes_ = nullptr;
  const std::vector<int32_t>* connectivity_ = nullptr;
  const std::vector<uint8_t>* fixed_nodes_ = nullptr;
};

}  // namespace eb
