#pragma once
// Unstructured tetrahedralization of a closed triangle surface through Gmsh's C++ API
// (Debian libgmsh-dev). Only available when built with ELASTOBENCH_HAVE_GMSH; otherwise
// tetrahedralize_surface throws InputError saying so (use voxelization + voxel_to_tet there).
#include <string>
#include <vector>

#include "meshes/mesh.h"
#include "meshes/tet_quality.h"

namespace eb::mesh {

bool have_gmsh();

// The optimizer passes run unless told otherwise: {"gmsh"}. Measured (min dihedral angle after
// meshing -> after the pass): bunny.off at 0.005, remeshed, 0.22 -> 10.2 deg; armadillo.obj at
// 0.015, 0.08 -> 2.1 deg (then 5.8 after peeling). "relocate3d" after it changed neither minimum
// nor count below 5 deg on either; "netgen" is not compiled into Debian 12's Gmsh.
std::vector<std::string> default_tet_optimizers();

struct TetrahedralizeOptions {
  double size = 0.0;  // target edge length (> 0), in the surface's units
  // false: the surface is reparametrized and remeshed at `size` (classifySurfaces +
  // createGeometry), trying each feature angle in turn; if Gmsh cannot reparametrize it at any,
  // the input triangles are kept instead. true: the input triangles are always kept as the
  // boundary and only the interior is meshed at `size`. Remeshing matters for quality: with the
  // input triangles kept, the worst tetrahedra are flat ones spanning two nearly coplanar input
  // triangles, which no optimizer may touch (bunny.off at 0.005: 0.42 deg kept, 10.2 deg remeshed).
  bool keep_surface = false;
  // Edges whose triangles meet at a sharper angle are kept as curves. Gmsh 4.8 fails to
  // reparametrize the bunny at 40 deg and the armadillo at 40 and 60 deg; larger angles give
  // fewer, larger patches. The first angle that works is used.
  std::vector<double> feature_angles_deg = {40.0, 60.0, 90.0};
  // Each Gmsh run happens in a child process where possible (isolated_call.h); one whose surface
  // classification has not finished after this many seconds is stopped and counted as failed.
  double remesh_timeout_s = 120.0;
  // Gmsh's mesh optimizers, run in this order after the volume is meshed (each through
  // gmsh::model::mesh::optimize, applied to discrete entities too): "gmsh" (Gmsh's own tet
  // optimizer: edge/face swaps and node moves on tets below Mesh.OptimizeThreshold), "netgen"
  // (Netgen's optimizer; Debian 12's Gmsh is built without it and says so), "relocate3d"
  // (node relocation).
  std::vector<std::string> optimizers = default_tet_optimizers();
  int optimizer_iterations = 1;  // niter of each optimize call
  // After the optimizers: remove boundary slivers below this min dihedral angle (deg; 0: off),
  // see peel_boundary_slivers. They are what the optimizers leave on real surfaces.
  double peel_below_deg = kPoorMinDihedralDeg;
};

// What tetrahedralize_surface did: whether the surface was remeshed, the quality after meshing
// and after each optimizer pass, and the times (wall clock, seconds).
struct TetrahedralizeReport {
  bool surface_remeshed = false;
  double feature_angle_deg = 0;  // the angle that worked, when remeshed
  std::string remesh_error;      // why each remeshing attempt failed (empty when the first worked)
  double mesh_seconds = 0;
  TetQualitySummary generated;
  struct Pass {
    std::string optimizer;
    double seconds = 0;
    TetQualitySummary after;
  };
  std::vector<Pass> passes;
  PeelResult peeled;
  TetQualitySummary final_quality;  // of the returned mesh
};

// Optimizer names accepted in TetrahedralizeOptions::optimizers, for messages.
std::string tet_optimizer_names();

// The surface must be closed (checked). Every returned tetrahedron is positive (checked).
// Quality is measured and reported, not enforced (callers decide; see kPoorMinDihedralDeg).
TetMesh tetrahedralize_surface(const TriSurface& surface, const TetrahedralizeOptions& options,
                               const std::string& source, TetrahedralizeReport* report = nullptr);

}  // namespace eb::mesh
