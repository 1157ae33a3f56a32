#pragma once
// The tetrahedral model of a scenario, shared by the tet methods (bcsr-pcg and those after it):
// the mesh with its nodes renumbered for locality and its elements sorted by their lowest node,
// the fp64 reference geometry of every element, the material, the time step, the boundary and
// the loads merged per node. Every backend of every tet method starts from the same arrays, so
// their results can be compared element by element and node by node.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "meshes/mesh.h"
#include "meshes/reorder.h"
#include "solvers/common/boundary.h"
#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"

namespace eb::tet {

// Point and surface loads merged per node (one entry per node and curve), so that a device
// thread per entry adds to a node without atomics.
struct NodeLoad {
  int32_t node;
  int curve;
  double force[3];
};

// What the method decides about the model.
struct TetModelOptions {
  std::string method;  // names the method in error messages ("bcsr-pcg: element 3 ... is inverted")
  mesh::NodeOrdering node_order = mesh::NodeOrdering::Rcm;  // node numbering (meshes/reorder.h)
  double default_dt = 1e-3;  // the time step when the scenario leaves time.dt at 0
};

struct TetModel {
  std::string scenario_name;
  std::vector<mesh::Vec3> nodes;      // renumbered (options.node_order)
  std::vector<int32_t> connectivity;  // 4 per element, elements sorted by their lowest node
  int64_t num_nodes = 0, num_elements = 0;
  // Per element: Dm^{-1} (9, row-major), Dm (9: the reference edges X_a - X_0 as columns), volume.
  std::vector<double> Dm_inv, Dm, volume;
  double min_volume = 0, max_volume = 0;
  double youngs = 0, poisson = 0, lambda = 0, mu = 0, density = 0;
  double damping = 0;  // c of C_e = c N1 V: time.damping (1/s) x density
  double dt = 0;
  StaticSpec static_spec;  // [static]: tolerance and iteration limit of the static iterations
  double gravity[3] = {0, 0, 0};
  std::vector<uint8_t> constrained;  // per node, bit d: component d fixed (or prescribed)
  std::vector<uint8_t> fixed_any;    // per node, 1 where any component is constrained
  std::vector<NodeLoad> loads;       // sorted by node; per node in the order the boundary lists them
  std::vector<PrescribedNode> prescribed;  // boundary.prescribed, for the methods that accept it
  std::vector<LoadCurve> curves;

  // The model's facts for summary.json (sizes, material, dt, volume range).
  nlohmann::json describe() const;
};

// Builds the model. Throws InputError for a mesh without tetrahedra, a reference element that is
// inverted, degenerate or not finite (naming the element in the model's order and its nodes), a
// density that is not positive or a negative damping, each message starting with options.method.
TetModel build_tet_model(const Scenario& scenario, const RunOptions& run, const TetModelOptions& options);

// The steps of build_tet_model that a mesh source cannot reach alone (mesh files and generated
// meshes are checked before), public for the tests:
// Dm_inv, Dm, volume, min_volume and max_volume of `m` from its nodes and connectivity; throws
// the InputError above for an element tet4_reference refuses.
void set_reference_geometry(TetModel& m, const std::string& method);
// The residual a static iteration can reach in a precision of machine epsilon `eps` (unit
// roundoff eps / 2): the element force R K_e (R^T x - X) is formed from edge vectors rounded to
// ~eps/2 |edge| (and rotated by an R rounded likewise), a strain error of ~eps/2 |edge_b| |g_b| per
// edge, i.e. a force error of ~eps/2 (2 mu + lambda) V |edge_b| |g_b| |g_a| at each node a,
// whatever the load. Returns the 2-norm over the free nodes of these errors, independent ones
// added in quadrature: below it a residual is rounding, not imbalance (the cantilever in fp32:
// 0.58 against a measured stagnation at 0.38-0.39, 16% of |r_0|). In fp32 it is far above
// static.tolerance x |r_0| for any load that keeps the strain small, so the static iteration
// stops there (solvers/tet_model/static_newton.h), and the run's summary states it.
double static_residual_floor(const TetModel& m, double eps);

// Forces summed per node and curve, sorted by node (stable: a node's curves in order of first use).
std::vector<NodeLoad> merge_loads(const std::vector<NodalForce>& forces);

}  // namespace eb::tet
