#pragma once
// Unstructured tetrahedralization of a closed triangle surface through Gmsh's C++ API
// (Debian libgmsh-dev). Only available when built with ELASTOBENCH_HAVE_GMSH; otherwise
// tetrahedralize_surface throws InputError saying so (use voxelization + voxel_to_tet there).
#include <string>

#include "meshes/mesh.h"

namespace eb::mesh {

bool have_gmsh();

struct TetrahedralizeOptions {
  double size = 0.0;  // target edge length (> 0), in the surface's units
  // false: the surface is reparametrized and remeshed at `size` (classifySurfaces +
  // createGeometry); if Gmsh cannot reparametrize it (e.g. the bunny), the input triangles are
  // kept instead. true: the input triangles are always kept as the boundary and only the
  // interior is meshed at `size`.
  bool keep_surface = false;
  double feature_angle_deg = 40.0;  // remeshing: sharper edges are kept as curves
};

// The surface must be closed (checked). Every returned tetrahedron is positive (checked).
TetMesh tetrahedralize_surface(const TriSurface& surface, const TetrahedralizeOptions& options,
                               const std::string& source);

}  // namespace eb::mesh
