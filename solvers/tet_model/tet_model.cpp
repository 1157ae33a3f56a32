#include "solvers/tet_model/tet_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <sstream>

#include "assembly/tet/tet4.h"
#include "meshes/errors.h"
#include "meshes/mesh_spec.h"

namespace eb::tet {

nlohmann::json TetModel::describe() const {
  return {{"nodes", num_nodes},
          {"elements", num_elements},
          {"dt", dt},
          {"youngs_modulus", youngs},
          {"poisson_ratio", poisson},
          {"density", density},
          {"damping_c", damping},
          {"element_volume", {{"min", min_volume}, {"max", max_volume}}}};
}

namespace {

// Elements by their smallest node, so that neighbouring threads read neighbouring nodes.
void sort_elements_by_lowest_node(mesh::TetMesh& tm) {
  std::vector<size_t> order(tm.elems.size());
  std::iota(order.begin(), order.end(), size_t(0));
  auto key = [&](size_t e) { return *std::min_element(tm.elems[e].begin(), tm.elems[e].end()); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  std::vector<std::array<int32_t, 4>> sorted(tm.elems.size());
  for (size_t k = 0; k < order.size(); ++k) sorted[k] = tm.elems[order[k]];
  tm.elems.swap(sorted);
}

}  // namespace

// Reference geometry (fp64), refusing inverted and degenerate elements by index.
void set_reference_geometry(TetModel& m, const std::string& method) {
  const int64_t E = m.num_elements;
  m.Dm_inv.resize(9 * size_t(E));
  m.Dm.resize(9 * size_t(E));
  m.volume.resize(size_t(E));
  m.min_volume = 1e300;
  m.max_volume = 0;
  for (int64_t e = 0; e < E; ++e) {
    double X[4][3];
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) X[a][i] = m.nodes[size_t(m.connectivity[size_t(4 * e + a)])][size_t(i)];
    Tet4Reference<double> ref;
    const TetStatus st = tet4_reference(X, ref);
    if (st != TetStatus::kOk) {
      std::ostringstream msg;
      msg << method << ": element " << e << " (nodes " << m.connectivity[size_t(4 * e)] << " "
          << m.connectivity[size_t(4 * e + 1)] << " " << m.connectivity[size_t(4 * e + 2)] << " "
          << m.connectivity[size_t(4 * e + 3)] << ") is "
          << (st == TetStatus::kInverted ? "inverted (negative volume)"
              : st == TetStatus::kDegenerate ? "degenerate (zero volume)"
                                             : "not finite")
          << " in the reference configuration";
      throw InputError(msg.str());
    }
    std::copy(ref.Dm_inv, ref.Dm_inv + 9, m.Dm_inv.begin() + 9 * e);
    for (int i = 0; i < 3; ++i)
      for (int a = 0; a < 3; ++a) m.Dm[size_t(9 * e + 3 * i + a)] = X[a + 1][i] - X[0][i];
    m.volume[size_t(e)] = ref.volume;
    m.min_volume = std::min(m.min_volume, ref.volume);
    m.max_volume = std::max(m.max_volume, ref.volume);
  }
}

double static_residual_floor(const TetModel& m, double eps) {
  std::vector<double> node(size_t(m.num_nodes), 0.0);
  const double modulus = 2 * m.mu + std::abs(m.lambda);
  for (int64_t e = 0; e < m.num_elements; ++e) {
    double G[4][3];
    tet4_shape_gradients(&m.Dm_inv[size_t(9 * e)], G);
    double g[4], spread = 0;
    for (int a = 0; a < 4; ++a) g[a] = std::sqrt(G[a][0] * G[a][0] + G[a][1] * G[a][1] + G[a][2] * G[a][2]);
    for (int b = 1; b < 4; ++b) {
      const double* D = &m.Dm[size_t(9 * e)];
      const double edge = std::sqrt(D[b - 1] * D[b - 1] + D[3 + b - 1] * D[3 + b - 1] + D[6 + b - 1] * D[6 + b - 1]);
      spread += (edge * g[b]) * (edge * g[b]);
    }
    const double s = modulus * m.volume[size_t(e)] * std::sqrt(spread);
    for (int a = 0; a < 4; ++a) node[size_t(m.connectivity[size_t(4 * e + a)])] += (s * g[a]) * (s * g[a]);
  }
  double sum = 0;
  for (size_t n = 0; n < node.size(); ++n)
    if (!m.fixed_any[n]) sum += 3 * node[n];
  return 0.5 * eps * std::sqrt(sum);
}

std::vector<NodeLoad> merge_loads(const std::vector<NodalForce>& forces) {
  std::vector<NodeLoad> loads;
  for (const NodalForce& f : forces) {
    auto it = std::find_if(loads.begin(), loads.end(),
                           [&](const NodeLoad& l) { return l.node == f.node && l.curve == f.curve; });
    if (it == loads.end()) {
      loads.push_back({f.node, f.curve, {0, 0, 0}});
      it = loads.end() - 1;
    }
    for (int d = 0; d < 3; ++d) it->force[d] += f.force[size_t(d)];
  }
  std::stable_sort(loads.begin(), loads.end(), [](const NodeLoad& a, const NodeLoad& b) { return a.node < b.node; });
  return loads;
}

TetModel build_tet_model(const Scenario& sc, const RunOptions& run, const TetModelOptions& o) {
  TetModel m;
  m.scenario_name = sc.name;
  mesh::TetMesh tm = mesh::build_tet_mesh(sc.mesh, run.data_dir);
  if (tm.elems.empty()) throw InputError(o.method + ": the mesh has no tetrahedra");
  mesh::reorder_nodes(tm, o.node_order);
  sort_elements_by_lowest_node(tm);
  m.nodes = tm.nodes;
  m.num_nodes = int64_t(tm.nodes.size());
  m.num_elements = int64_t(tm.elems.size());
  m.connectivity.resize(4 * tm.elems.size());
  for (size_t e = 0; e < tm.elems.size(); ++e)
    for (int a = 0; a < 4; ++a) m.connectivity[4 * e + size_t(a)] = tm.elems[e][size_t(a)];

  const ElasticConstants ec = elastic_constants(sc.material);
  m.youngs = ec.youngs_modulus;
  m.poisson = ec.poisson_ratio;
  m.lambda = ec.lambda;
  m.mu = ec.mu;
  m.density = sc.material.density;
  if (!(m.density > 0)) throw InputError(o.method + ": material.density must be positive");
  if (sc.time.damping < 0) throw InputError(o.method + ": time.damping must be >= 0");
  m.damping = sc.time.damping * m.density;
  m.dt = sc.time.dt > 0 ? sc.time.dt : o.default_dt;
  m.static_spec = sc.static_solve;

  set_reference_geometry(m, o.method);

  const ResolvedBoundary rb = resolve_boundary(sc.boundary, m.nodes, tm);
  m.constrained = rb.constrained;
  m.fixed_any.resize(m.constrained.size());
  for (size_t n = 0; n < m.constrained.size(); ++n) m.fixed_any[n] = m.constrained[n] ? 1 : 0;
  for (int d = 0; d < 3; ++d) m.gravity[d] = rb.gravity[size_t(d)];
  m.curves = rb.curves;
  m.prescribed = rb.prescribed;
  m.loads = merge_loads(rb.forces);
  return m;
}

}  // namespace eb::tet
