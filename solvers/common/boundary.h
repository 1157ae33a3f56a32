#pragma once
// Resolves a scenario's boundary description against a concrete mesh: which node components
// are fixed or prescribed, and which external nodal forces act. Shared by every method so that
// all of them constrain exactly the same nodes.
#include <cstdint>
#include <vector>

#include "meshes/mesh.h"
#include "solvers/common/scenario.h"

namespace eb {

struct PrescribedNode {
  int32_t node;
  uint8_t mask;       // bit d set: component d prescribed
  Vec3 displacement;  // at full load
  int curve;          // index into ResolvedBoundary::curves
};

struct NodalForce {
  int32_t node;
  Vec3 force;  // N at full load
  int curve;
};

struct ResolvedBoundary {
  std::vector<uint8_t> constrained;  // per node: bit d set where component d is fixed or prescribed
  std::vector<PrescribedNode> prescribed;
  std::vector<NodalForce> forces;     // point and surface forces (gravity is left to the method)
  std::vector<LoadCurve> curves;
  Vec3 gravity{0.0, 0.0, 0.0};

  // Prescribed displacement of every prescribed node at time t.
  double factor(int curve, double t) const { return load_factor(curves[curve], t); }
  // The time after which every load curve is at full load.
  double loads_complete_time() const;
};

// Nodes of `nodes` selected by `sel` (tolerance resolved against the mesh's bounding box).
std::vector<int32_t> select_nodes(const NodeSelector& sel, const std::vector<mesh::Vec3>& nodes);

// `faces` are the boundary faces of the volume mesh (triangles or quads as node lists); they
// carry surface tractions. Throws InputError when a selector picks no node, naming it.
ResolvedBoundary resolve_boundary(const BoundarySpec& spec, const std::vector<mesh::Vec3>& nodes,
                                  const std::vector<std::vector<int32_t>>& boundary_faces);

// The same with the volume mesh, whose boundary faces are found only where surface forces need
// them (on multi-million-element meshes finding them is a noticeable part of the set-up).
ResolvedBoundary resolve_boundary(const BoundarySpec& spec, const std::vector<mesh::Vec3>& nodes, const mesh::TetMesh& m);
ResolvedBoundary resolve_boundary(const BoundarySpec& spec, const std::vector<mesh::Vec3>& nodes, const mesh::HexMesh& m);

// Boundary faces (each listed once, outward orientation) of tetrahedral and hexahedral meshes.
std::vector<std::vector<int32_t>> boundary_faces(const mesh::TetMesh& m);
std::vector<std::vector<int32_t>> boundary_faces(const mesh::HexMesh& m);

// Length of the diagonal of the nodes' axis-aligned bounding box (m).
double bounding_box_diagonal(const std::vector<mesh::Vec3>& nodes);

// Nearest node to a point (linear scan: called once per probe).
int32_t nearest_node(const std::vector<mesh::Vec3>& nodes, const mesh::Vec3& p);

}  // namespace eb
