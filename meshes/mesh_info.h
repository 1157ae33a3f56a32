#pragma once
// Summary statistics for `elastobench mesh info`: counts, bounding box, volume, element
// quality (scaled Jacobian for both element types; for tetrahedra the measures and histograms of
// tet_quality.h), inverted/degenerate counts, nodes no volume element uses (they are dropped when
// the mesh is loaded for a simulation), the node bandwidth as stored and after renumbering
// (reorder.h), and the node valence histogram (valence = number of nodes joined to a node by an
// element edge).
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "meshes/mesh_io.h"
#include "meshes/reorder.h"
#include "meshes/tet_quality.h"

namespace eb::mesh {

struct MeshInfo {
  size_t nodes = 0, tets = 0, hexes = 0, triangles = 0;
  Vec3 bbox_min{0, 0, 0}, bbox_max{0, 0, 0};
  double volume = 0;  // sum of element volumes (signed); surfaces: enclosed volume
  double min_scaled_jacobian = 0, max_scaled_jacobian = 0;
  double min_dihedral_deg = 0, max_dihedral_deg = 0;  // tetrahedra only
  size_t inverted = 0, degenerate = 0;
  size_t unused_nodes = 0;        // volume meshes: nodes no tetrahedron/hexahedron uses
  TetQualitySummary tet_quality;  // tetrahedra only (tet_quality.tets == 0 otherwise)
  // Volume meshes: node adjacency bandwidth and mean neighbour distance per ordering
  // ("stored", "rcm", and "metis" where compiled in).
  std::map<std::string, OrderingStats> orderings;
  std::map<int, size_t> valence;  // valence -> number of nodes
  // Surfaces (no volume cells): closedness.
  size_t boundary_edges = 0, nonmanifold_edges = 0;
};

MeshInfo compute_mesh_info(const MeshFile& mesh);
nlohmann::json to_json(const MeshInfo& info);
std::string to_text(const MeshInfo& info);

}  // namespace eb::mesh
