#include "meshes/tet_quality.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "meshes/geometry.h"
#include "meshes/mesh_io.h"

namespace eb::mesh {
namespace {

constexpr double kDeg = 180.0 / M_PI;

double triangle_area(const Vec3& a, const Vec3& b, const Vec3& c) { return 0.5 * norm(cross(sub(b, a), sub(c, a))); }

// Circumradius from the circumcentre relative to corner a:
// (|u|^2 (v x w) + |v|^2 (w x u) + |w|^2 (u x v)) / (2 u . (v x w)), u v w the edges from a.
double circumradius(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  const Vec3 u = sub(b, a), v = sub(c, a), w = sub(d, a);
  const double det2 = 2.0 * dot(u, cross(v, w));
  if (det2 == 0.0) return std::numeric_limits<double>::infinity();
  const Vec3 vw = cross(v, w), wu = cross(w, u), uv = cross(u, v);
  const double uu = dot(u, u), vv = dot(v, v), ww = dot(w, w);
  Vec3 o;
  for (size_t k = 0; k < 3; ++k) o[k] = (uu * vw[k] + vv * wu[k] + ww * uv[k]) / det2;
  return norm(o);
}

std::string format_number(double v, int precision) {
  std::ostringstream o;
  o << std::setprecision(precision) << v;
  return o.str();
}

// "[a, b)" labels for the bins of a histogram; the outer bins are "< a" and ">= b".
std::vector<std::string> bin_labels(const Histogram& h) {
  std::vector<std::string> out;
  out.push_back("< " + format_number(h.edges.front(), 3));
  for (size_t i = 1; i < h.edges.size(); ++i)
    out.push_back("[" + format_number(h.edges[i - 1], 3) + ", " + format_number(h.edges[i], 3) + ")");
  out.push_back(">= " + format_number(h.edges.back(), 3));
  return out;
}

nlohmann::json histogram_json(const Histogram& h) {
  nlohmann::json bins = nlohmann::json::array();
  const auto labels = bin_labels(h);
  for (size_t i = 0; i < h.counts.size(); ++i) {
    nlohmann::json b{{"bin", labels[i]}, {"count", h.counts[i]}};
    b["lower"] = i == 0 ? nlohmann::json(nullptr) : nlohmann::json(h.edges[i - 1]);
    b["upper"] = i == h.edges.size() ? nlohmann::json(nullptr) : nlohmann::json(h.edges[i]);
    bins.push_back(b);
  }
  return bins;
}

// Empty outer bins are left out of the text form; inner bins are always shown so that the
// shape of the distribution is visible.
void histogram_text(std::ostream& o, const char* title, const Histogram& h) {
  const auto labels = bin_labels(h);
  o << "  " << title << ":";
  for (size_t i = 0; i < h.counts.size(); ++i) {
    if ((i == 0 || i == h.edges.size()) && h.counts[i] == 0) continue;
    o << " " << labels[i] << ": " << h.counts[i] << (i + 1 < h.counts.size() ? "," : "");
  }
  o << "\n";
}

}  // namespace

TetQuality tet_quality(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  TetQuality q;
  const auto angles = tet_dihedral_angles(a, b, c, d);
  q.min_dihedral_deg = *std::min_element(angles.begin(), angles.end()) * kDeg;
  q.max_dihedral_deg = *std::max_element(angles.begin(), angles.end()) * kDeg;
  q.scaled_jacobian = tet_scaled_jacobian(a, b, c, d);
  const double volume = tet_signed_volume(a, b, c, d);
  const double area = triangle_area(b, c, d) + triangle_area(a, c, d) + triangle_area(a, b, d) + triangle_area(a, b, c);
  const double r_in = area > 0 ? 3.0 * volume / area : 0.0;  // signed: negative when inverted
  const double r_circ = circumradius(a, b, c, d);
  q.radius_ratio = std::isfinite(r_circ) && r_circ > 0 ? 3.0 * r_in / r_circ : 0.0;
  double longest = 0;
  for (const auto& [p, r] : {std::pair{a, b}, {a, c}, {a, d}, {b, c}, {b, d}, {c, d}}) longest = std::max(longest, norm(sub(p, r)));
  q.aspect_ratio = r_in > 0 ? longest / (2.0 * std::sqrt(6.0) * r_in) : std::numeric_limits<double>::infinity();
  return q;
}

Histogram::Histogram(std::vector<double> bin_edges) : edges(std::move(bin_edges)), counts(edges.size() + 1, 0) {}

void Histogram::add(double value) {
  counts[size_t(std::upper_bound(edges.begin(), edges.end(), value) - edges.begin())]++;
}

TetQualitySummary summarize_tet_quality(const std::vector<Vec3>& nodes, const std::vector<std::array<int32_t, 4>>& tets,
                                        double poor_threshold_deg) {
  TetQualitySummary s;
  s.tets = tets.size();
  s.poor_threshold_deg = poor_threshold_deg;
  // Dihedral bins are finest at the bottom, where the trouble is; 70.53 deg is the regular tet.
  s.min_dihedral_hist = Histogram({1, 5, 10, 15, 20, 30, 40, 50, 60});
  s.scaled_jacobian_hist = Histogram({0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9});
  s.radius_ratio_hist = Histogram({0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9});
  if (tets.empty()) return s;
  s.min_dihedral_deg = s.min_scaled_jacobian = s.min_radius_ratio = std::numeric_limits<double>::infinity();
  s.max_dihedral_deg = s.max_scaled_jacobian = s.max_aspect_ratio = -std::numeric_limits<double>::infinity();
  for (size_t e = 0; e < tets.size(); ++e) {
    const auto x = gather(nodes, tets[e]);
    const TetQuality q = tet_quality(x[0], x[1], x[2], x[3]);
    if (q.min_dihedral_deg < s.min_dihedral_deg) {
      s.min_dihedral_deg = q.min_dihedral_deg;
      s.worst_element = e;
    }
    s.max_dihedral_deg = std::max(s.max_dihedral_deg, q.max_dihedral_deg);
    s.min_scaled_jacobian = std::min(s.min_scaled_jacobian, q.scaled_jacobian);
    s.max_scaled_jacobian = std::max(s.max_scaled_jacobian, q.scaled_jacobian);
    s.min_radius_ratio = std::min(s.min_radius_ratio, q.radius_ratio);
    s.max_aspect_ratio = std::max(s.max_aspect_ratio, q.aspect_ratio);
    s.poor += q.min_dihedral_deg < poor_threshold_deg;
    s.min_dihedral_hist.add(q.min_dihedral_deg);
    s.scaled_jacobian_hist.add(q.scaled_jacobian);
    s.radius_ratio_hist.add(q.radius_ratio);
  }
  return s;
}

namespace {

using Face = std::array<int32_t, 3>;  // sorted corner indices

Face sorted_face(int32_t a, int32_t b, int32_t c) {
  Face f{a, b, c};
  std::sort(f.begin(), f.end());
  return f;
}

uint64_t edge_key(int32_t a, int32_t b) {
  return (uint64_t(uint32_t(std::min(a, b))) << 32) | uint32_t(std::max(a, b));
}

struct FaceHash {
  size_t operator()(const Face& f) const {
    return std::hash<uint64_t>()(edge_key(f[0], f[1]) * 1000003u ^ uint64_t(uint32_t(f[2])));
  }
};

// Face k of a tetrahedron is the one opposite corner k.
Face tet_face(const std::array<int32_t, 4>& t, int k) {
  return sorted_face(t[size_t((k + 1) % 4)], t[size_t((k + 2) % 4)], t[size_t((k + 3) % 4)]);
}

// One sweep; returns what it removed. A tetrahedron is only removed when none of its corners was
// touched by another removal in the same sweep, so every decision sees the current boundary.
PeelResult peel_sweep(TetMesh& m, double min_dihedral_deg) {
  std::unordered_map<Face, int, FaceHash> face_count;
  face_count.reserve(m.elems.size() * 3);
  for (const auto& t : m.elems)
    for (int k = 0; k < 4; ++k) ++face_count[tet_face(t, k)];
  std::unordered_set<uint64_t> boundary_edges;
  for (const auto& [f, c] : face_count)
    if (c == 1) {
      boundary_edges.insert(edge_key(f[0], f[1]));
      boundary_edges.insert(edge_key(f[1], f[2]));
      boundary_edges.insert(edge_key(f[0], f[2]));
    }
  std::vector<char> touched(m.nodes.size(), 0), remove(m.elems.size(), 0);
  std::vector<int> uses(m.nodes.size(), 0);
  for (const auto& t : m.elems)
    for (auto v : t) ++uses[size_t(v)];
  PeelResult r;
  for (size_t e = 0; e < m.elems.size(); ++e) {
    const auto& t = m.elems[e];
    int on_boundary[4], n = 0;  // corners opposite the boundary faces
    for (int k = 0; k < 4; ++k)
      if (face_count[tet_face(t, k)] == 1) on_boundary[n++] = k;
    if (n == 2) {
      // The two boundary faces share the edge p-q; r and s are the corners opposite them.
      const int32_t r_node = t[size_t(on_boundary[0])], s_node = t[size_t(on_boundary[1])];
      if (boundary_edges.count(edge_key(r_node, s_node))) continue;
    } else if (n == 3) {
      // The apex (the corner opposite the one interior face) must belong to no other tetrahedron.
      const int interior = 6 - on_boundary[0] - on_boundary[1] - on_boundary[2];
      if (uses[size_t(t[size_t(interior)])] != 1) continue;
    } else {
      continue;
    }
    if (touched[size_t(t[0])] || touched[size_t(t[1])] || touched[size_t(t[2])] || touched[size_t(t[3])]) continue;
    const auto x = gather(m.nodes, t);
    if (tet_quality(x[0], x[1], x[2], x[3]).min_dihedral_deg >= min_dihedral_deg) continue;
    remove[e] = 1;
    for (auto v : t) touched[size_t(v)] = 1;
    ++r.removed;
    r.volume_removed += tet_signed_volume(x[0], x[1], x[2], x[3]);
  }
  if (r.removed) {
    size_t out = 0;
    for (size_t e = 0; e < m.elems.size(); ++e)
      if (!remove[e]) {
        m.elems[out] = m.elems[e];
        if (!m.material.empty()) m.material[out] = m.material[e];
        ++out;
      }
    m.elems.resize(out);
    if (!m.material.empty()) m.material.resize(out);
  }
  return r;
}

}  // namespace

PeelResult peel_boundary_slivers(TetMesh& m, double min_dihedral_deg) {
  PeelResult total;
  for (;;) {
    const PeelResult r = peel_sweep(m, min_dihedral_deg);
    if (r.removed == 0) break;
    total.removed += r.removed;
    total.volume_removed += r.volume_removed;
  }
  if (total.removed) m = to_tet_mesh(to_mesh_file(m), "peeled mesh");  // drops nodes left unused
  return total;
}

nlohmann::json to_json(const TetQualitySummary& s) {
  // Infinity is not JSON: an infinite aspect ratio (a zero-volume element) is written as null.
  const auto finite_or_null = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"tetrahedra", s.tets},
          {"min_dihedral_deg", s.min_dihedral_deg},
          {"max_dihedral_deg", s.max_dihedral_deg},
          {"min_scaled_jacobian", s.min_scaled_jacobian},
          {"max_scaled_jacobian", s.max_scaled_jacobian},
          {"min_radius_ratio", s.min_radius_ratio},
          {"max_aspect_ratio", finite_or_null(s.max_aspect_ratio)},
          {"worst_element", s.worst_element},
          {"poor_threshold_deg", s.poor_threshold_deg},
          {"poor", s.poor},
          {"min_dihedral_histogram_deg", histogram_json(s.min_dihedral_hist)},
          {"scaled_jacobian_histogram", histogram_json(s.scaled_jacobian_hist)},
          {"radius_ratio_histogram", histogram_json(s.radius_ratio_hist)}};
}

std::string quality_line(const TetQualitySummary& s) {
  std::ostringstream o;
  o << std::setprecision(4) << "min dihedral " << s.min_dihedral_deg << " deg, min scaled Jacobian "
    << s.min_scaled_jacobian << ", min radius ratio " << s.min_radius_ratio << ", " << s.poor << " of " << s.tets
    << " tetrahedra below " << s.poor_threshold_deg << " deg";
  return o.str();
}

std::string to_text(const TetQualitySummary& s) {
  std::ostringstream o;
  o << std::setprecision(4);
  o << "tet quality: " << quality_line(s) << "\n";
  o << "  max dihedral " << s.max_dihedral_deg << " deg (regular tet: all 70.53), max aspect ratio " << s.max_aspect_ratio
    << ", worst element " << s.worst_element + 1 << " [index " << s.worst_element << "]\n";
  histogram_text(o, "min dihedral angle (deg) per tet", s.min_dihedral_hist);
  histogram_text(o, "scaled Jacobian", s.scaled_jacobian_hist);
  histogram_text(o, "radius ratio", s.radius_ratio_hist);
  return o.str();
}

}  // namespace eb::mesh
