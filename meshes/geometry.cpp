#include "meshes/geometry.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "meshes/errors.h"

namespace eb::mesh {
namespace {

// Derivatives of the trilinear map at reference point (u,v,w) in [0,1]^3, VTK corner order.
void hex_jacobian(const std::array<Vec3, 8>& x, double u, double v, double w, Vec3 d[3]) {
  static constexpr int kC[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                   {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
  for (int a = 0; a < 3; ++a) d[a] = {0, 0, 0};
  const double p[3] = {u, v, w};
  for (int c = 0; c < 8; ++c) {
    double f[3], g[3];
    for (int a = 0; a < 3; ++a) {
      f[a] = kC[c][a] ? p[a] : 1.0 - p[a];
      g[a] = kC[c][a] ? 1.0 : -1.0;
    }
    const double dn[3] = {g[0] * f[1] * f[2], f[0] * g[1] * f[2], f[0] * f[1] * g[2]};
    for (int a = 0; a < 3; ++a)
      for (int k = 0; k < 3; ++k) d[a][k] += dn[a] * x[c][k];
  }
}

double max_edge_cubed(const Vec3* x, int n, const int (*edges)[2], int ne) {
  double m = 0.0;
  for (int e = 0; e < ne; ++e) m = std::max(m, dot(sub(x[edges[e][0]], x[edges[e][1]]), sub(x[edges[e][0]], x[edges[e][1]])));
  (void)n;
  return m * std::sqrt(m);
}

constexpr int kTetEdges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
constexpr int kHexEdges[12][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {4, 5}, {5, 6},
                                  {6, 7}, {7, 4}, {0, 4}, {1, 5}, {2, 6}, {3, 7}};

std::string element_label(size_t e) {
  return "element " + std::to_string(e + 1) + " [index " + std::to_string(e) + "]";
}

}  // namespace

double tet_signed_volume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  return dot(sub(b, a), cross(sub(c, a), sub(d, a))) / 6.0;
}

double hex_volume(const std::array<Vec3, 8>& x) {
  const double g = 0.5 / std::sqrt(3.0);
  double vol = 0.0;
  for (int q = 0; q < 8; ++q) {
    Vec3 d[3];
    hex_jacobian(x, 0.5 + ((q & 1) ? g : -g), 0.5 + ((q & 2) ? g : -g), 0.5 + ((q & 4) ? g : -g), d);
    vol += dot(d[0], cross(d[1], d[2])) / 8.0;
  }
  return vol;
}

double hex_scaled_jacobian(const std::array<Vec3, 8>& x) {
  // At each corner the Jacobian columns are the three edges leaving it (in +u,+v,+w order).
  static constexpr int kCornerEdges[8][3] = {{1, 3, 4}, {2, 0, 5}, {3, 1, 6}, {0, 2, 7},
                                             {7, 5, 0}, {4, 6, 1}, {5, 7, 2}, {6, 4, 3}};
  double worst = std::numeric_limits<double>::max();
  for (int c = 0; c < 8; ++c) {
    const Vec3 e1 = sub(x[kCornerEdges[c][0]], x[c]);
    const Vec3 e2 = sub(x[kCornerEdges[c][1]], x[c]);
    const Vec3 e3 = sub(x[kCornerEdges[c][2]], x[c]);
    const double l = norm(e1) * norm(e2) * norm(e3);
    const double sj = l > 0.0 ? dot(e1, cross(e2, e3)) / l : 0.0;
    worst = std::min(worst, sj);
  }
  return worst;
}

std::array<double, 6> tet_dihedral_angles(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  const Vec3 p[4] = {a, b, c, d};
  // Outward-independent face normals: face k is opposite vertex k.
  Vec3 n[4];
  for (int k = 0; k < 4; ++k) {
    const int i = (k + 1) % 4, j = (k + 2) % 4, l = (k + 3) % 4;
    Vec3 nn = cross(sub(p[j], p[i]), sub(p[l], p[i]));
    if (dot(nn, sub(p[k], p[i])) > 0) nn = {-nn[0], -nn[1], -nn[2]};  // point away from vertex k
    const double len = norm(nn);
    n[k] = len > 0 ? Vec3{nn[0] / len, nn[1] / len, nn[2] / len} : Vec3{0, 0, 0};
  }
  std::array<double, 6> out{};
  for (int e = 0; e < 6; ++e) {
    // The edge (i,j) is shared by the faces opposite the two other vertices.
    int others[2], m = 0;
    for (int v = 0; v < 4; ++v)
      if (v != kTetEdges[e][0] && v != kTetEdges[e][1]) others[m++] = v;
    const double cosv = std::clamp(-dot(n[others[0]], n[others[1]]), -1.0, 1.0);
    out[size_t(e)] = std::acos(cosv);
  }
  return out;
}

double tet_scaled_jacobian(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  const Vec3 p[4] = {a, b, c, d};
  const double j = 6.0 * tet_signed_volume(a, b, c, d);
  double lmax = 0.0;
  for (int v = 0; v < 4; ++v) {
    double prod = 1.0;
    for (int w = 0; w < 4; ++w)
      if (w != v) prod *= norm(sub(p[w], p[v]));
    lmax = std::max(lmax, prod);
  }
  return lmax > 0 ? j * std::sqrt(2.0) / lmax : 0.0;
}

ElementState tet_state(const std::vector<Vec3>& nodes, const std::array<int32_t, 4>& t) {
  const auto x = gather(nodes, t);
  const double v = tet_signed_volume(x[0], x[1], x[2], x[3]);
  if (std::abs(v) <= kDegenerateRelVolume * max_edge_cubed(x.data(), 4, kTetEdges, 6)) return ElementState::Degenerate;
  return v < 0 ? ElementState::Inverted : ElementState::Ok;
}

ElementState hex_state(const std::vector<Vec3>& nodes, const std::array<int32_t, 8>& h) {
  const auto x = gather(nodes, h);
  const double v = hex_volume(x);
  if (std::abs(v) <= kDegenerateRelVolume * max_edge_cubed(x.data(), 8, kHexEdges, 12)) return ElementState::Degenerate;
  return (v < 0 || hex_scaled_jacobian(x) <= 0.0) ? ElementState::Inverted : ElementState::Ok;
}

void check_finite_nodes(const std::vector<Vec3>& nodes, const std::string& source) {
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int d = 0; d < 3; ++d)
      if (!std::isfinite(nodes[i][size_t(d)]))
        throw InputError(source + ": node " + std::to_string(i + 1) + " [index " + std::to_string(i) +
                         "] has a non-finite coordinate");
}

template <size_t N>
void check_indices(const std::vector<std::array<int32_t, N>>& elems, size_t num_nodes, const std::string& source,
                   const char* kind) {
  for (size_t e = 0; e < elems.size(); ++e)
    for (auto v : elems[e])
      if (v < 0 || size_t(v) >= num_nodes)
        throw InputError(source + ": " + kind + " " + std::to_string(e + 1) + " [index " + std::to_string(e) +
                         "] refers to node index " + std::to_string(v) + ", out of range 0.." +
                         std::to_string(num_nodes == 0 ? 0 : num_nodes - 1));
}
template void check_indices(const std::vector<std::array<int32_t, 3>>&, size_t, const std::string&, const char*);
template void check_indices(const std::vector<std::array<int32_t, 4>>&, size_t, const std::string&, const char*);
template void check_indices(const std::vector<std::array<int32_t, 8>>&, size_t, const std::string&, const char*);

namespace {
template <size_t N, typename StateFn>
void check_states(const std::vector<Vec3>& nodes, const std::vector<std::array<int32_t, N>>& elems,
                  const std::string& source, const char* kind, StateFn state) {
  size_t bad = 0, first = 0;
  ElementState first_state = ElementState::Ok;
  for (size_t e = 0; e < elems.size(); ++e) {
    const auto s = state(nodes, elems[e]);
    if (s != ElementState::Ok && bad++ == 0) {
      first = e;
      first_state = s;
    }
  }
  if (bad)
    throw InputError(source + ": " + element_label(first) + " (" + kind + ") is " +
                     (first_state == ElementState::Inverted ? "inverted (negative volume)" : "degenerate (zero volume)") +
                     "; " + std::to_string(bad) + " of " + std::to_string(elems.size()) +
                     " elements are inverted or degenerate");
}
}  // namespace

void check_tet_elements(const std::vector<Vec3>& nodes, const std::vector<std::array<int32_t, 4>>& tets,
                        const std::string& source) {
  check_states(nodes, tets, source, "tetrahedron", tet_state);
}

void check_hex_elements(const std::vector<Vec3>& nodes, const std::vector<std::array<int32_t, 8>>& hexes,
                        const std::string& source) {
  check_states(nodes, hexes, source, "hexahedron", hex_state);
}

void check_tet_mesh(const TetMesh& m, const std::string& source) {
  if (m.elems.empty()) throw InputError(source + ": the mesh has no tetrahedra");
  check_finite_nodes(m.nodes, source);
  check_indices(m.elems, m.nodes.size(), source, "tetrahedron");
  check_tet_elements(m.nodes, m.elems, source);
}

void check_hex_mesh(const HexMesh& m, const std::string& source) {
  if (m.elems.empty()) throw InputError(source + ": the mesh has no hexahedra");
  check_finite_nodes(m.nodes, source);
  check_indices(m.elems, m.nodes.size(), source, "hexahedron");
  check_hex_elements(m.nodes, m.elems, source);
}

EdgeReport surface_edges(const TriSurface& s) {
  std::unordered_map<uint64_t, int> count;
  count.reserve(s.tris.size() * 2);
  for (const auto& t : s.tris)
    for (int k = 0; k < 3; ++k) {
      const uint32_t a = uint32_t(t[size_t(k)]), b = uint32_t(t[size_t((k + 1) % 3)]);
      ++count[(uint64_t(std::min(a, b)) << 32) | std::max(a, b)];
    }
  EdgeReport r;
  for (const auto& [key, c] : count) {
    if (c == 1 || c % 2 == 1) {
      if (r.boundary_edges++ == 0) r.example = {int32_t(key >> 32), int32_t(key & 0xffffffffu)};
    } else if (c > 2) {
      ++r.nonmanifold_edges;
    }
  }
  return r;
}

void check_closed_surface(const TriSurface& s, const std::string& source) {
  if (s.tris.empty()) throw InputError(source + ": the surface has no triangles");
  const auto r = surface_edges(s);
  if (r.boundary_edges)
    throw InputError(source + ": the surface is not closed: " + std::to_string(r.boundary_edges) +
                     " edges have an odd number of triangles (holes), e.g. the edge between node " +
                     std::to_string(r.example[0] + 1) + " and node " + std::to_string(r.example[1] + 1) +
                     " (1-based); a closed (watertight) surface is needed here");
}

Vec3 bbox_min(const std::vector<Vec3>& nodes) {
  Vec3 m{std::numeric_limits<double>::max(), std::numeric_limits<double>::max(), std::numeric_limits<double>::max()};
  for (const auto& p : nodes)
    for (size_t d = 0; d < 3; ++d) m[d] = std::min(m[d], p[d]);
  return m;
}

Vec3 bbox_max(const std::vector<Vec3>& nodes) {
  Vec3 m{std::numeric_limits<double>::lowest(), std::numeric_limits<double>::lowest(),
         std::numeric_limits<double>::lowest()};
  for (const auto& p : nodes)
    for (size_t d = 0; d < 3; ++d) m[d] = std::max(m[d], p[d]);
  return m;
}

double surface_volume(const TriSurface& s) {
  double v = 0.0;
  for (const auto& t : s.tris) v += dot(s.nodes[size_t(t[0])], cross(s.nodes[size_t(t[1])], s.nodes[size_t(t[2])]));
  return v / 6.0;
}

}  // namespace eb::mesh
