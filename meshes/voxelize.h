#pragma once
// Voxelization of a closed triangle surface into a VoxelMesh (Dick 2011's hexahedral models).
// A voxel belongs to the model when its centre is inside the surface. Inside is decided per
// row of voxel centres along x: the row's ray is intersected with the triangles binned under
// it, and the crossings' signed winding numbers are accumulated (non-zero rule, so inward or
// outward orientation and nested/duplicated shells both work). A ray that hits an edge or a
// vertex exactly is re-cast with a different sub-voxel jitter, so the test is robust for
// watertight input. Cost: O(triangles * rows they cover + voxels), no per-voxel triangle scan.
#include <cstddef>
#include <string>

#include "meshes/mesh.h"

namespace eb::mesh {

struct VoxelGrid {
  Vec3 origin{0, 0, 0};  // corner of voxel (0,0,0)
  double spacing = 1.0;
  std::array<int, 3> n{0, 0, 0};
};

// Grid of voxels of edge `spacing` covering the surface's bounding box, centred on it.
VoxelGrid grid_for(const TriSurface& surface, double spacing);

// Voxels of edge `spacing`. The surface must be closed (checked; `source` names it).
VoxelMesh voxelize(const TriSurface& surface, double spacing, const std::string& source);
// `resolution` voxels along the longest bounding-box axis.
VoxelMesh voxelize_resolution(const TriSurface& surface, int resolution, const std::string& source);
// Searches the spacing whose voxel count is closest to `target` (within `tolerance` relative,
// or the best found in a bounded number of steps).
VoxelMesh voxelize_target(const TriSurface& surface, size_t target, const std::string& source,
                          double tolerance = 0.005);

// Each voxel split into n^3 voxels of edge spacing / n: the same region of space, n^3 times the
// cells (n >= 1; `source` names the mesh in a memory error).
VoxelMesh subdivide_voxels(const VoxelMesh& v, int n, const std::string& source);

// Number of voxel centres inside, without building the mesh (used by the target search).
size_t count_inside(const TriSurface& surface, const VoxelGrid& grid);

}  // namespace eb::mesh
