#pragma once
// The interface every method/backend/precision implements, and the types it reports with.
#include <cstdint>
#include <filesystem>
#include <memory>
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
  std::filesystem::path data_dir;
};

// Work one step does, counted by the method from its kernels (0 = not counted).
struct WorkCounts {
  double flops = 0.0;
  double bytes = 0.0;
};

struct SolverStats {
  int iterations = 0;            // inner iterations in the last step (CG iterations, V-cycles...)
  double initial_residual = 0.0; // of the last step's linear system
  double final_residual = 0.0;
  bool converged = true;
};

class Simulation {
 public:
  virtual ~Simulation() = default;

  // Reference configuration as simulated (after any reordering the method does).
  virtual const std::vector<mesh::Vec3>& nodes() const = 0;
  virtual mesh::CellType cell_type() const = 0;
  virtual const std::vector<int32_t>& connectivity() const = 0;  // flat, VTK node order
  virtual const std::vector<uint8_t>& fixed_nodes() const = 0;   // 1 where any component is constrained

  virtual double dt() const = 0;
  // Advances `steps` time steps. Returns only when the work is complete (device synchronized),
  // so host wall-clock around it is valid. Records per-phase times into timings().
  virtual void advance(int steps) = 0;
  // Current displacement and velocity, 3 values per node (x, y, z interleaved), in metres.
  virtual void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) = 0;
  // Per-element fields of the current state for output (names from mesh::field).
  virtual void cell_fields(std::vector<mesh::Field>& out) { (void)out; }

  virtual WorkCounts work_per_step() const { return {}; }
  virtual SolverStats solver_stats() const { return {}; }
  virtual std::size_t device_bytes() const { return 0; }
  // Method-specific facts for summary.json (variant, regime, multigrid levels...).
  virtual nlohmann::json details() const { return nlohmann::json::object(); }

  PhaseTimes& timings() { return timings_; }
  const PhaseTimes& timings() const { return timings_; }

 protected:
  PhaseTimes timings_;
};

}  // namespace eb
