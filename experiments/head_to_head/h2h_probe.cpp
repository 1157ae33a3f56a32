#include "experiments/head_to_head/h2h_probe.h"

#include <cmath>
#include <stdexcept>

#include "meshes/errors.h"

namespace eb::head_to_head {

ProbeBinding bind_probes(const std::vector<ProbeSpec>& probes, const std::vector<Vec3>& nodes, mesh::CellType cell,
                         const std::vector<int32_t>& connectivity) {
  ProbeBinding b;
  mesh::TriSurface points;
  for (const ProbeSpec& p : probes) {
    b.names.push_back(p.name);
    points.nodes.push_back(p.position);
  }
  if (cell == mesh::CellType::Tetra) {
    mesh::TetMesh m{nodes, {}, {}};
    m.elems.resize(connectivity.size() / 4);
    for (size_t e = 0; e < m.elems.size(); ++e)
      for (size_t k = 0; k < 4; ++k) m.elems[e][k] = connectivity[4 * e + k];
    b.binding = mesh::bind_surface(points, m);
  } else if (cell == mesh::CellType::Hexahedron) {
    mesh::HexMesh m{nodes, {}, {}};
    m.elems.resize(connectivity.size() / 8);
    for (size_t e = 0; e < m.elems.size(); ++e)
      for (size_t k = 0; k < 8; ++k) m.elems[e][k] = connectivity[8 * e + k];
    b.binding = mesh::bind_surface(points, m);
  } else {
    throw std::logic_error("bind_probes: a volume mesh of tetrahedra or hexahedra is required");
  }
  return b;
}

ProbeBinding bind_probes(const std::vector<ProbeSpec>& probes, Simulation& sim) {
  return bind_probes(probes, sim.nodes(), sim.cell_type(), sim.connectivity());
}

std::vector<Vec3> probe_displacements(const ProbeBinding& b, const std::vector<double>& u) {
  std::vector<Vec3> nodal(u.size() / 3);
  for (size_t i = 0; i < nodal.size(); ++i) nodal[i] = {u[3 * i], u[3 * i + 1], u[3 * i + 2]};
  return mesh::surface_displacement(b.binding, nodal);
}

double probe_error(const std::vector<Vec3>& u, const std::vector<Vec3>& ref) {
  if (u.size() != ref.size()) throw std::logic_error("probe_error: probe counts differ");
  double worst = 0.0;
  for (size_t p = 0; p < u.size(); ++p) {
    const double r = std::hypot(ref[p][0], ref[p][1], ref[p][2]);
    if (!(r > 0)) throw InputError("head-to-head: probe " + std::to_string(p) + " does not move in the reference");
    worst = std::max(worst, std::hypot(u[p][0] - ref[p][0], u[p][1] - ref[p][1], u[p][2] - ref[p][2]) / r);
  }
  return worst;
}

}  // namespace eb::head_to_head
