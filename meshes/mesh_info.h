#pragma once
// Summary statistics for `elastobench mesh info`: counts, bounding box, volume, element
// quality (scaled Jacobian for both element types, dihedral angles for tetrahedra),
// inverted/degenerate counts and the node valence histogram (valence = number of nodes joined
// to a node by an element edge).
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "meshes/mesh_io.h"

namespace eb::mesh {

struct MeshInfo {
  size_t nodes = 0, tets = 0, hexes = 0, triangles = 0;
  Vec3 bbox_min{0, 0, 0}, bbox_max{0, 0, 0};
  double volume = 0;  // sum of element volumes (signed); surfaces: enclosed volume
  double min_scaled_jacobian = 0, max_scaled_jacobian = 0;
  double min_dihedral_deg = 0, max_dihedral_deg = 0;  // tetrahedra only
  size_t inverted = 0, degenerate = 0;
  std::map<int, size_t> valence;  // valence -> number of nodes
  // Surfaces (no volume cells): closedness.
  size_t boundary_edges = 0, nonmanifold_edges = 0;
};

MeshInfo compute_mesh_info(const MeshFile& mesh);
nlohmann::json to_json(const MeshInfo& info);
std::string to_text(const MeshInfo& info);

}  // namespace eb::mesh
