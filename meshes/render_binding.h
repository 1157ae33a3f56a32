#pragma once
// Render-surface binding (Dick 2011 Fig. 6, Verschoor 2012 5.5, Campo 4.1.7): a high-resolution
// surface follows a coarser simulation mesh. Each surface vertex is tied to one element with
// barycentric (tetrahedra) or trilinear (hexahedra) weights, found through a uniform-grid index
// of element bounding boxes. Vertices slightly outside the mesh (voxel staircase, coarse tets)
// take the nearest element and extrapolate its interpolation linearly.
#include <filesystem>
#include <string>
#include <vector>

#include "meshes/mesh.h"
#include "meshes/vtk_io.h"

namespace eb::mesh {

struct SurfaceBinding {
  int nodes_per_element = 0;                  // 4 or 8
  std::vector<std::array<int32_t, 8>> nodes;  // per surface vertex: element node ids (first 4 for tets)
  std::vector<std::array<double, 8>> weights; // matching weights, summing to 1
  std::vector<int32_t> element;               // per surface vertex: the bound element
  std::vector<double> outside;                // per vertex: parametric distance outside its element (0 inside)
};

SurfaceBinding bind_surface(const TriSurface& surface, const TetMesh& mesh);
SurfaceBinding bind_surface(const TriSurface& surface, const HexMesh& mesh);

// Displacement of every surface vertex from the simulation nodes' displacements.
std::vector<Vec3> surface_displacement(const SurfaceBinding& b, const std::vector<Vec3>& node_displacement);

// Writes frames <dir>/<name>_<NNNNN>.vtp (deformed surface, point data "displacement") and keeps
// <dir>/<name>.pvd up to date after every frame.
class DeformedSurfaceWriter {
 public:
  DeformedSurfaceWriter(const std::filesystem::path& dir, std::string name, TriSurface rest, SurfaceBinding binding);
  std::filesystem::path write_frame(double time, const std::vector<Vec3>& node_displacement);

 private:
  std::filesystem::path dir_;
  std::string name_;
  TriSurface rest_;
  SurfaceBinding binding_;
  PvdWriter pvd_;
  int frame_ = 0;
};

}  // namespace eb::mesh
