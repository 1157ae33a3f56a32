#include "meshes/mesh_info.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "meshes/geometry.h"

namespace eb::mesh {
namespace {

constexpr int kTetEdges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
constexpr int kHexEdges[12][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6},
                                  {6, 7}, {7, 4}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};
constexpr int kTriEdges[3][2] = {{0, 1}, {1, 2}, {2, 0}};

template <size_t N, size_t E>
void add_edges(const std::vector<std::array<int32_t, N>>& elems, const int (&edges)[E][2],
               std::vector<std::pair<int32_t, int32_t>>& out) {
  for (const auto& e : elems)
    for (const auto& ed : edges) {
      const int32_t a = e[size_t(ed[0])], b = e[size_t(ed[1])];
      out.emplace_back(std::min(a, b), std::max(a, b));
    }
}

}  // namespace

MeshInfo compute_mesh_info(const MeshFile& m) {
  MeshInfo info;
  info.nodes = m.nodes.size();
  info.tets = m.tets.size();
  info.hexes = m.hexes.size();
  info.triangles = m.tris.size();
  if (!m.nodes.empty()) {
    info.bbox_min = bbox_min(m.nodes);
    info.bbox_max = bbox_max(m.nodes);
  }
  info.tet_quality = summarize_tet_quality(m.nodes, m.tets);
  double sj_min = std::numeric_limits<double>::max(), sj_max = std::numeric_limits<double>::lowest();
  if (!m.tets.empty()) {
    sj_min = info.tet_quality.min_scaled_jacobian;
    sj_max = info.tet_quality.max_scaled_jacobian;
    info.min_dihedral_deg = info.tet_quality.min_dihedral_deg;
    info.max_dihedral_deg = info.tet_quality.max_dihedral_deg;
  }
  for (const auto& t : m.tets) {
    const auto x = gather(m.nodes, t);
    info.volume += tet_signed_volume(x[0], x[1], x[2], x[3]);
    const auto s = tet_state(m.nodes, t);
    info.inverted += s == ElementState::Inverted;
    info.degenerate += s == ElementState::Degenerate;
  }
  for (const auto& h : m.hexes) {
    const auto x = gather(m.nodes, h);
    info.volume += hex_volume(x);
    const double sj = hex_scaled_jacobian(x);
    sj_min = std::min(sj_min, sj);
    sj_max = std::max(sj_max, sj);
    const auto s = hex_state(m.nodes, h);
    info.inverted += s == ElementState::Inverted;
    info.degenerate += s == ElementState::Degenerate;
  }
  if (!m.tets.empty() || !m.hexes.empty()) {
    info.min_scaled_jacobian = sj_min;
    info.max_scaled_jacobian = sj_max;
  }
  if (!m.tets.empty() || !m.hexes.empty()) {
    std::vector<char> used(m.nodes.size(), 0);
    for (const auto& t : m.tets)
      for (auto v : t) used[size_t(v)] = 1;
    for (const auto& h : m.hexes)
      for (auto v : h) used[size_t(v)] = 1;
    info.unused_nodes = size_t(std::count(used.begin(), used.end(), 0));
    const NodeGraph g = node_graph(m);
    info.orderings["stored"] = ordering_stats(g);
    info.orderings["rcm"] = ordering_stats(g, rcm_order(g));
    if (have_metis()) info.orderings["metis"] = ordering_stats(g, metis_order(g));
  }
  std::vector<std::pair<int32_t, int32_t>> edges;
  add_edges(m.tets, kTetEdges, edges);
  add_edges(m.hexes, kHexEdges, edges);
  const bool surface_only = m.tets.empty() && m.hexes.empty();
  if (surface_only) {
    add_edges(m.tris, kTriEdges, edges);
    TriSurface s{m.nodes, m.tris};
    info.volume = surface_volume(s);
    const auto r = surface_edges(s);
    info.boundary_edges = r.boundary_edges;
    info.nonmanifold_edges = r.nonmanifold_edges;
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  std::vector<int> valence(m.nodes.size(), 0);
  for (const auto& [a, b] : edges) {
    ++valence[size_t(a)];
    ++valence[size_t(b)];
  }
  for (int v : valence) ++info.valence[v];
  return info;
}

nlohmann::json to_json(const MeshInfo& i) {
  nlohmann::json j;
  j["nodes"] = i.nodes;
  j["tetrahedra"] = i.tets;
  j["hexahedra"] = i.hexes;
  j["triangles"] = i.triangles;
  j["bbox_min"] = i.bbox_min;
  j["bbox_max"] = i.bbox_max;
  j["volume"] = i.volume;
  if (i.tets || i.hexes) {
    j["scaled_jacobian"] = {{"min", i.min_scaled_jacobian}, {"max", i.max_scaled_jacobian}};
    j["inverted"] = i.inverted;
    j["degenerate"] = i.degenerate;
  }
  if (i.tets) {
    j["dihedral_angle_deg"] = {{"min", i.min_dihedral_deg}, {"max", i.max_dihedral_deg}};
    j["tet_quality"] = to_json(i.tet_quality);
  }
  if (i.tets || i.hexes) {
    j["unused_nodes"] = i.unused_nodes;
    nlohmann::json o = nlohmann::json::object();
    for (const auto& [name, s] : i.orderings) o[name] = {{"bandwidth", s.bandwidth}, {"mean_distance", s.mean_distance}};
    j["node_orderings"] = o;
  }
  if (!i.tets && !i.hexes) {
    j["boundary_edges"] = i.boundary_edges;
    j["nonmanifold_edges"] = i.nonmanifold_edges;
    j["closed"] = i.boundary_edges == 0;
  }
  nlohmann::json hist = nlohmann::json::object();
  for (const auto& [v, n] : i.valence) hist[std::to_string(v)] = n;
  j["valence_histogram"] = hist;
  return j;
}

std::string to_text(const MeshInfo& i) {
  std::ostringstream o;
  o.precision(6);
  o << "nodes:        " << i.nodes;
  if (i.unused_nodes)
    o << " (" << i.unused_nodes << " used by no element: dropped when loaded for a simulation, leaving "
      << i.nodes - i.unused_nodes << ")";
  o << "\n";
  if (i.tets) o << "tetrahedra:   " << i.tets << "\n";
  if (i.hexes) o << "hexahedra:    " << i.hexes << "\n";
  if (i.triangles) o << "triangles:    " << i.triangles << "\n";
  o << "bounding box: [" << i.bbox_min[0] << ", " << i.bbox_min[1] << ", " << i.bbox_min[2] << "] to [" << i.bbox_max[0]
    << ", " << i.bbox_max[1] << ", " << i.bbox_max[2] << "]\n";
  o << "volume:       " << i.volume << (i.tets || i.hexes ? "" : " (enclosed by the surface)") << "\n";
  if (i.tets || i.hexes) {
    o << "scaled Jacobian: min " << i.min_scaled_jacobian << ", max " << i.max_scaled_jacobian << "\n";
    if (i.tets) o << "dihedral angles: min " << i.min_dihedral_deg << " deg, max " << i.max_dihedral_deg << " deg\n";
    o << "inverted elements:   " << i.inverted << "\ndegenerate elements: " << i.degenerate << "\n";
    if (i.tets) o << to_text(i.tet_quality);
    o << "node bandwidth (max | mean index distance of adjacent nodes):";
    const char* separator = " ";
    for (const char* name : {"stored", "rcm", "metis"}) {
      const auto it = i.orderings.find(name);
      if (it == i.orderings.end()) continue;
      o << separator << (it->first == "stored" ? "as stored" : it->first) << " " << it->second.bandwidth << " | "
        << it->second.mean_distance;
      separator = "; ";
    }
    o << "\n";
  } else {
    o << "closed: " << (i.boundary_edges == 0 ? "yes" : "no") << " (" << i.boundary_edges << " boundary edges, "
      << i.nonmanifold_edges << " non-manifold edges)\n";
  }
  o << "node valence histogram (valence: nodes):";
  for (const auto& [v, n] : i.valence) o << " " << v << ":" << n;
  o << "\n";
  return o.str();
}

}  // namespace eb::mesh
