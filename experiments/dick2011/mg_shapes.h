#pragma once
// Voxel shapes built to expose how the geometric multigrid of Dick et al. 2011 (Sec. 3.2: coarse
// cells are every 2^3 block that covers at least one finer cell) converges on features that are
// thin compared with its coarse cells: a solid cube, sphere and L-shape (no thin features), an
// upright plate 1, 2, 4 or 8 voxels thick, and two blocks joined by a bar one voxel thick.
// Each is clamped on z = 0 and loaded across its thin direction (-x).
#include <string>
#include <vector>

#include "meshes/mesh.h"

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

}  // namespace eb::dick2011
