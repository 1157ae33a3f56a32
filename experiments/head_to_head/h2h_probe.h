#pragma once
// Probe points of the head-to-head corot part, interpolated in each method's own mesh: barycentric
// in tetrahedra, trilinear in hexahedra (meshes/render_binding.h's binding, reused: a probe is a
// surface vertex without triangles). A probe outside the mesh (a voxel staircase that misses the
// bunny's ear tip) takes the nearest element and extrapolates its interpolation linearly; its
// parametric distance outside is kept so that the tables can say so.
#include <string>
#include <vector>

#include "meshes/render_binding.h"
#include "solvers/common/simulation.h"

namespace eb::head_to_head {

struct ProbeBinding {
  std::vector<std::string> names;
  mesh::SurfaceBinding binding;
};

// Binds the scenario's probes to the simulation's reference mesh (in the method's numbering).
ProbeBinding bind_probes(const std::vector<ProbeSpec>& probes, const std::vector<Vec3>& nodes, mesh::CellType cell,
                         const std::vector<int32_t>& connectivity);
ProbeBinding bind_probes(const std::vector<ProbeSpec>& probes, Simulation& sim);

// Probe displacements from a flat (x, y, z per node) displacement array.
std::vector<Vec3> probe_displacements(const ProbeBinding& b, const std::vector<double>& u);

// max over probes |u - ref| / |ref| (a probe with |ref| = 0 is refused: the error is undefined).
double probe_error(const std::vector<Vec3>& u, const std::vector<Vec3>& ref);

}  // namespace eb::head_to_head
