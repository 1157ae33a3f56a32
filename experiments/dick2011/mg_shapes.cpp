#include "experiments/dick2011/mg_shapes.h"

#include <functional>

namespace eb::dick2011 {
namespace {

mesh::VoxelMesh cells_where(double h, int nx, int ny, int nz, const std::function<bool(int, int, int)>& inside) {
  mesh::VoxelMesh v;
  v.spacing = h;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
        if (inside(x, y, z)) v.cells.push_back({x, y, z});
  return v;
}

}  // namespace

std::vector<MgShape> mg_shapes(double h) {
  std::vector<MgShape> s;
  s.push_back({"cube", "solid cube, 16 voxels per edge", cells_where(h, 16, 16, 16, [](int, int, int) { return true; })});
  s.push_back({"sphere", "solid ball, radius 12 voxels", cells_where(h, 24, 24, 24, [](int x, int y, int z) {
                 const double dx = x + 0.5 - 12, dy = y + 0.5 - 12, dz = z + 0.5 - 12;
                 return dx * dx + dy * dy + dz * dz <= 144.0;
               })});
  s.push_back({"l_shape", "L-shaped prism, legs 16 x 8 voxels, 8 thick (16 tall)",
               cells_where(h, 16, 16, 16, [](int x, int y, int) { return x < 8 || y < 8; })});
  for (int t : {1, 2, 4, 8})
    s.push_back({"plate_" + std::to_string(t), "upright plate " + std::to_string(t) + " voxel(s) thick, 32 wide, 32 tall",
                 cells_where(h, t, 32, 32, [](int, int, int) { return true; })});
  s.push_back({"blocks_bar", "two 8^3 blocks, the upper one held only by a 1 x 1 x 4-voxel bar",
               cells_where(h, 8, 8, 20, [](int x, int y, int z) { return z < 8 || z >= 12 || (x == 3 && y == 3); })});
  return s;
}

std::vector<std::string> mg_shape_overrides(const std::string& mesh_file) {
  return {"mesh.source=file", "mesh.file=" + mesh_file, "boundary.gravity=[-0.0981,0,0]",
          R"(boundary.fixed.0.where={"kind":"plane","point":[0,0,0],"normal":[0,0,1]})", "output.probes=[]"};
}

}  // namespace eb::dick2011
