#pragma once
// The hexmg simulation model (Dick et al. 2011, Secs. 3.2 and 4.1/4.3), built once on the host
// and shared by both backends: the voxel lattice of the hexahedral mesh, the octree hierarchy
// built bottom-up, the per-level vertex numbering (8 Gauss-Seidel colour subsets, each ordered
// lexicographically with x fastest and padded to a multiple of 32), the index structures
// (27 stencil neighbours, 27 children, 8 parents per vertex; 8 vertices per element and 8
// incident elements per vertex), per-element materials, lumped masses and the boundary.
// Index arrays are stored array-of-structures here; the CUDA backend transposes them.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "meshes/mesh.h"
#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"

namespace eb::hexmg {

struct SmoothedPlan;  // smoothed_hierarchy.h

constexpr int kColourAlign = 32;            // each colour subset starts at a multiple of 32
constexpr int kCoarsestMaxVertices = 512;   // the hierarchy stops below this (Sec. 4.2.7)

struct Level {
  int32_t n_real = 0;     // vertices
  int32_t n_padded = 0;   // slots including padding (a multiple of 32)
  std::array<int32_t, 9> colour_begin{};          // slot ranges of the 8 colours, [8] = n_padded
  std::vector<std::array<int32_t, 3>> coord;      // lattice coordinate per slot (padding: -1)
  std::vector<std::array<int32_t, 27>> nbr;       // stencil neighbours (nbr[x][13] = x; padding -1)
  std::vector<std::array<int32_t, 27>> child;     // finer-level vertex at 2x + k (empty on level 0)
  std::vector<std::array<int32_t, 8>> parent;     // coarser vertices interpolated from (empty on the coarsest)
  std::vector<uint8_t> dead;                      // components without an equation
  int64_t cells = 0;                              // hexahedra of this level (octree cells)
};

// The [hexmg] section of a scenario (solvers/common/method_options.h): --set hexmg.cycles=1.
struct HexmgOptions {
  int cycles = 2;                 // V-cycles per step (variant vcycle)
  int pre_smooth = 2;             // 8-colour Gauss-Seidel sweeps before the coarse-grid correction
  int post_smooth = 1;            // ... and after it
  double tolerance = 1e-6;        // relative residual (variants tolerance and jacobi-pcg)
  int max_iterations = 100;       // V-cycles or CG iterations at most (variants tolerance and jacobi-pcg)
  bool corotated = true;          // false: plain linear elasticity (R = I)
  bool profile = false;           // CUDA: kernels launched one by one (no graph), each group timed with
                                  // events (Table 3's GPU time shares)
  bool gs_thread_per_vertex = false;  // CUDA Gauss-Seidel with one thread per vertex (the paper's: 13)
  // CUDA launch choices that change when and by which thread a value is computed, never the
  // arithmetic (tests/hexmg/test_launch_variants.cpp checks the results bit for bit):
  bool programmatic_dependent_launch = true;  // kernels overlap their predecessor's tail (sm_90)
  bool lattice_order = true;  // coarse-grid assembly and restriction over vertices in lattice order
                              // (false: colour-subset order, the paper's)
  // CUDA coarsest CG: at most this many warp-slots of off-diagonal blocks per warp in shared
  // memory, the rest read from a global copy (-1: as many as fit). Fewer reach the global path,
  // which otherwise only fp64 at the largest bunny sizes takes, at small sizes (its tests).
  int coarse_shared_slots = -1;
  // smoothed-*: the Galerkin coarse operators are recomputed every this many steps (step 0 always);
  // the steps between cycle with the last ones and the current fine operator (smoothed_hierarchy.h).
  // 1: exact every step. The default from the bunny's measurements (PERF_NOTES.md).
  int galerkin_every = 16;
};
template <class V> void visit(V& v, HexmgOptions& o) {
  v("cycles", o.cycles);
  v("pre_smooth", o.pre_smooth);
  v("post_smooth", o.post_smooth);
  v("tolerance", o.tolerance);
  v("max_iterations", o.max_iterations);
  v("corotated", o.corotated);
  v("profile", o.profile);
  v("gs_thread_per_vertex", o.gs_thread_per_vertex);
  v("programmatic_dependent_launch", o.programmatic_dependent_launch);
  v("lattice_order", o.lattice_order);
  v("coarse_shared_slots", o.coarse_shared_slots);
  v("galerkin_every", o.galerkin_every);
}
void validate_hexmg_options(const HexmgOptions& o);  // InputError naming the hexmg.KEY

// The variants (solver.variant): how the linear system of a step is solved.
struct HexmgVariant {
  std::string name, summary;
  bool tolerance_mode, jacobi_pcg;
  bool cuda;  // has a CUDA implementation
  // The keys of the [hexmg] section that apply to the variant (VariantInfo::keys): the registry
  // refuses the others, naming the key (hexmg.cycles with jacobi-pcg, say).
  std::vector<std::string> keys;
  // The smoothed hierarchy (smoothed_hierarchy.h) instead of the paper's coarse grids; with
  // mg_pcg, CG preconditioned by its symmetric V-cycle.
  bool smoothed = false, mg_pcg = false;
};
const std::vector<HexmgVariant>& hexmg_variants();  // the first is the default

// How the linear system of a step is solved: the variant and the [hexmg] options.
struct SolverChoice {
  bool tolerance_mode = false;  // "tolerance": V-cycles until |r| <= tolerance |r0| (max_iterations)
  bool jacobi_pcg = false;      // "jacobi-pcg": Jacobi-preconditioned CG instead of multigrid (CPU, Fig. 11)
  bool smoothed = false;        // smoothed-*: the smoothed hierarchy (smoothed_hierarchy.h)
  bool mg_pcg = false;          // smoothed-pcg: CG preconditioned by the symmetric smoothed V-cycle
  bool linear = false;          // hexmg.corotated = false: no co-rotation (R = I), plain linear elasticity
  bool gs_thread_per_vertex = false;  // hexmg.gs_thread_per_vertex: CUDA Gauss-Seidel with one thread
                                      // per vertex (alternative to the paper's 13 threads per vertex)
  bool profile = false;         // hexmg.profile: CUDA launches kernels directly (no graph) and times
                                // each kernel group with events (Table 3's GPU time shares)
  bool programmatic_dependent_launch = true;  // hexmg.programmatic_dependent_launch (CUDA)
  bool lattice_order = true;                  // hexmg.lattice_order (CUDA)
  int coarse_shared_slots = -1;               // hexmg.coarse_shared_slots (CUDA coarsest CG)
  int galerkin_every = 16;                    // hexmg.galerkin_every (smoothed-*)
  int cycles = 2;
  int pre_smooth = 2, post_smooth = 1;
  double tolerance = 1e-6;
  int max_iterations = 100;
  // Coarsest level: Jacobi-preconditioned CG to a relative residual of 1e-10 (fp64) or 1e-6
  // (fp32; set by build_model). Truncated CG is a strongly nonlinear function of its right-hand
  // side: with 32 iterations a 1e-13 perturbation of the state grew to 1e-6 after one bunny step,
  // so CPU and GPU rounding would not agree; converged, the same perturbation stays at 1e-13.
  // The multigrid factors do not depend on it (the same with 32 or 3000 iterations).
  double coarse_tolerance = 1e-10;
  int coarse_max_iterations = 200;
  std::string describe() const;
};
SolverChoice parse_solver(const Scenario& sc);  // InputError for an unknown variant or a bad option

struct Model {
  std::string name;
  double h = 0;                 // element edge (m)
  mesh::Vec3 origin{0, 0, 0};   // position of lattice point (0,0,0)
  double poisson = 0.3;
  std::vector<Level> levels;    // [0] = simulation level

  // Elements (finest level), ordered lexicographically by cell (z, then y, then x fastest).
  std::vector<std::array<int32_t, 3>> cell;
  std::vector<std::array<int32_t, 8>> ev;  // level-0 slots of the 8 corners (lattice order)
  std::vector<std::array<int32_t, 8>> ve;  // per level-0 slot: incident element per corner slot
  std::vector<double> youngs, density;
  std::vector<int32_t> material_id;
  std::vector<double> mass;                // per level-0 slot

  // Boundary per level-0 slot: constrained mask, forces (constant part first, then one set per
  // load curve) and prescribed displacements (one set per load curve).
  std::vector<uint8_t> cmask;
  int ncurves = 0;
  std::vector<LoadCurve> curves;
  std::vector<double> force;  // 3 (ncurves + 1) per slot
  std::vector<double> presc;  // 3 ncurves per slot (at least 1 entry per slot to keep strides valid)
  mesh::Vec3 gravity{0, 0, 0};

  // Output view: real vertices in level-0 slot order (padding removed).
  std::vector<mesh::Vec3> nodes;
  std::vector<int32_t> slot_of_node;
  std::vector<int32_t> node_of_slot;       // -1 for padding
  std::vector<int32_t> connectivity;       // VTK hexahedron order, node indices
  std::vector<uint8_t> fixed_any;

  double dt = 0, alpha = 0;
  SolverChoice solver;
  // The smoothed hierarchy (solver.smoothed; built by build_model from the rest state).
  std::shared_ptr<const SmoothedPlan> smoothed;

  int64_t n_elems() const { return int64_t(ev.size()); }
  int n_levels() const { return int(levels.size()); }
  // Load factors of every curve at time t.
  std::vector<double> factors(double t) const;
};

// Builds the model of a scenario. Throws InputError for meshes that are not a regular lattice of
// equal axis-aligned cubes, for per-element Poisson ratios (the method has one stiffness matrix
// for all elements) and for unknown solver variants.
Model build_model(const Scenario& sc, const RunOptions& opts);

// The lattice of a hexahedral mesh: every element must be an axis-aligned cube of one edge h.
struct Lattice {
  double h = 0;
  mesh::Vec3 origin{0, 0, 0};
  std::vector<std::array<int32_t, 3>> cells;  // per mesh element
};
Lattice lattice_of(const mesh::HexMesh& m, const std::string& source);

// Hierarchy from finest-level cells (exposed for tests).
std::vector<Level> build_hierarchy(const std::vector<std::array<int32_t, 3>>& cells, int max_coarsest_vertices);

// Dead components of the coarse levels from levels[0].dead: a coarse component is dead when
// every child component is (the masked prolongation cannot reach it).
void propagate_dead(std::vector<Level>& levels);

nlohmann::json model_details(const Model& m);

}  // namespace eb::hexmg
