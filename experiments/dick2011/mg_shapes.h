#pragma once
// Voxel shapes built to expose how the geometric multigrid of Dick et al. 2011 (Sec. 3.2: coarse
// cells are every 2^3 block that covers at least one finer cell) converges on features that are
// thin compared with its coarse cells: a solid cube, sphere and L-shape (no thin features), an
// upright plate 1, 2, 4 or 8 voxels thick, and two blocks joined by a bar one voxel thick.
// Each is clamped on z = 0 and loaded across its thin direction (-x).
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "meshes/mesh.h"
#include "solvers/common/scenario.h"
#include "solvers/hexmg/algebraic_hierarchy.h"

namespace eb::dick2011 {

struct MgShape {
  std::string name;
  std::string description;
  mesh::VoxelMesh voxels;
};

// The shapes, with voxel edge `h` metres.
std::vector<MgShape> mg_shapes(double h);

// Scenario overrides (on the bunny scenario, i.e. its material and time step) that run a shape
// whose hexahedra were written to `mesh_file`: clamped on z = 0, gravity along -x.
std::vector<std::string> mg_shape_overrides(const std::string& mesh_file);

// ---- Energy-norm factors per iteration (run_shapes, issue 9) ----------------------------------
// The corrected coarse-grid constructions measured beside the paper's: the paper's trilinear P0
// smoothed by one block-Jacobi step, exact Galerkin operators on every level
// (solvers/hexmg/algebraic_hierarchy.h), CPU fp64. "smoothed_p" keeps the paper's cycle (2 forward
// / 1 forward Gauss-Seidel sweeps); "smoothed_p_pcg" is MG-PCG, CG preconditioned by a symmetric
// V-cycle (2 forward / 2 backward sweeps), so its rows are CG iterations, not V-cycles.
struct FactorVariant {
  std::string name;
  hexmg::AlgebraicOptions options;
  bool pcg = false;
};
std::vector<FactorVariant> factor_variants();

// What the energy error e_k = u_k - x is measured against. Direct: x from Eigen's sparse LDL^T
// (SimplicialLDLT, fp64) with one step of iterative refinement; its fill makes it infeasible on
// the larger bunnies (269K hexahedra: hours and ~55 GB). MgPcg: x from CG preconditioned by the
// symmetric smoothed-P V-cycle (the smoothed_p_pcg hierarchy) from zero until its recurrence
// residual fell to pcg_tolerance |b| (the true |b - A x| / |b| stops at a few 1e-13 in fp64, the
// refined direct solve's level too). Both agree to a few 1e-14 of ||x||_A on the shapes, so an
// energy error below energy_floor ||x||_A is not measurable: its factor is left out (NaN).
enum class FactorReference { Direct, MgPcg };
std::string to_string(FactorReference r);

struct FactorStudyOptions {
  FactorReference reference = FactorReference::Direct;
  // Direct only: also solve the MG-PCG reference and measure every row against it too
  // (FactorRow::energy_factor_check), to show that both references give the same factors.
  bool cross_check = false;
  // > 0: chooses by model size instead, overriding `reference` and `cross_check`: Direct with the
  // cross-check up to this many hexahedra, MgPcg above.
  int64_t direct_max_elements = 0;
  double pcg_tolerance = 1e-13;
  int pcg_max_iterations = 200;
  int max_iterations = 30;       // per construction
  double residual_stop = 1e-10;  // a construction stops once |b - A u_k| <= residual_stop |b - A u_0|
  double energy_floor = 1e-11;   // energy factors only while ||e_k||_A > energy_floor ||e_0||_A
  int threads = 1;               // the paper construction's CPU backend
  std::filesystem::path data_dir;  // for a scenario whose mesh comes from the data folder
};

struct FactorRow {
  std::string variant;  // "paper" or a factor_variants() name
  int iteration = 0;    // V-cycle or CG iteration, from 1
  double residual_factor = 0;
  double energy_factor = 0;      // ||e_k||_A / ||e_k-1||_A; NaN once ||e_k||_A is below the energy floor
  double energy_error = 0;       // ||e_k||_A / ||e_0||_A (as measured, also below the floor)
  double relative_residual = 0;  // |r_k| / |r_0|
  double energy_factor_check = std::numeric_limits<double>::quiet_NaN();  // against the MG-PCG reference (cross_check)
  double operator_complexity = 0, work_per_cycle = 0;
};

struct FactorStudy {
  int64_t elements = 0;
  int64_t system_size = 0;  // level-0 rows: 3 per slot, padding and Dirichlet rows included
  int levels = 0;
  FactorReference reference = FactorReference::Direct;
  double reference_residual = 0;    // |b - A x| / |b| of the reference the rows are measured against
  int pcg_iterations = 0;           // of the MG-PCG reference (primary or check; 0 if none)
  double pcg_residual = 0;          // its |b - A x| / |b|
  double max_check_difference = 0;  // max over rows (energy factor measured) of |energy_factor - energy_factor_check|
  double reference_seconds = 0, seconds = 0;
  std::vector<FactorRow> rows;  // paper, then factor_variants() in order
};

// The first step from rest of `scenario` on hexmg's CPU backend in fp64: its level-0 system
// A u = b from u_0 = 0, iterated by the paper's V-cycle (the simulation itself) and by each of
// factor_variants() until the residual fell by residual_stop or max_iterations; per iteration the
// residual and energy-norm error factors. Operator complexity and work per cycle (matrix entries
// read per cycle / nnz(A_0); a CG iteration adds one A_0 product) come from AlgebraicHierarchy,
// for the paper rows from its unsmoothed form, whose operators are the paper's.
FactorStudy measure_factors(const Scenario& scenario, const FactorStudyOptions& options);

}  // namespace eb::dick2011
