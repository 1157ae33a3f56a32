#pragma once
// Shape quality of tetrahedra, per element and over a mesh (histograms). Slivers (four nearly
// coplanar corners) have a tiny volume but no short edge, so edge-length checks miss them; they
// make the stiffness matrix ill-conditioned (CG needs many more iterations) and shrink the
// explicit stable time step. Every measure here is 1 for the regular tetrahedron and tends to 0
// (aspect ratio: to infinity) as a tetrahedron degenerates:
//   min dihedral angle  smallest of the six angles between face planes (regular: acos(1/3) =
//                       70.53 deg); slivers, caps, needles and wedges all have one near 0.
//   scaled Jacobian     min over the four corners of det[e1 e2 e3] / (|e1| |e2| |e3|), e_i the
//                       edges leaving the corner, times sqrt(2) so the regular tetrahedron
//                       gives 1 (the Verdict library's definition; geometry.h computes it);
//                       negative for an inverted tetrahedron.
//   radius ratio        3 r_in / r_circ (inscribed over circumscribed sphere radius).
//   aspect ratio        longest edge / (2 sqrt(6) r_in) (the Verdict library's tet aspect ratio).
#include <array>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "meshes/mesh.h"

namespace eb::mesh {

// Below this minimum dihedral angle a tetrahedral mesh counts as poor: `mesh tetrahedralize`
// refuses to write it (exit 1) unless --allow-poor-quality, and `mesh info` marks it.
inline constexpr double kPoorMinDihedralDeg = 5.0;

struct TetQuality {
  double min_dihedral_deg = 0, max_dihedral_deg = 0;
  double scaled_jacobian = 0;
  double radius_ratio = 0;
  double aspect_ratio = 0;  // +infinity for a zero-volume tetrahedron
};

TetQuality tet_quality(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);

// counts[0] holds values below edges[0], counts[i] values in [edges[i-1], edges[i]), and the last
// entry values >= edges.back(): edges.size() + 1 bins.
struct Histogram {
  std::vector<double> edges;
  std::vector<size_t> counts;
  explicit Histogram(std::vector<double> bin_edges = {});
  void add(double value);
};

struct TetQualitySummary {
  size_t tets = 0;
  double min_dihedral_deg = 0, max_dihedral_deg = 0;
  double min_scaled_jacobian = 0, max_scaled_jacobian = 0;
  double min_radius_ratio = 0, max_aspect_ratio = 0;
  size_t worst_element = 0;  // the tetrahedron with the smallest dihedral angle (0-based)
  double poor_threshold_deg = kPoorMinDihedralDeg;
  size_t poor = 0;  // tetrahedra whose min dihedral angle is below poor_threshold_deg
  Histogram min_dihedral_hist;      // of each tetrahedron's smallest dihedral angle (deg)
  Histogram scaled_jacobian_hist;   // of each tetrahedron's scaled Jacobian
  Histogram radius_ratio_hist;
};

// An empty tet list gives tets = 0 and zero-valued extremes.
TetQualitySummary summarize_tet_quality(const std::vector<Vec3>& nodes, const std::vector<std::array<int32_t, 4>>& tets,
                                        double poor_threshold_deg = kPoorMinDihedralDeg);

// Removes boundary slivers: tetrahedra below `min_dihedral_deg` with two or three faces on the
// boundary. With two, the tetrahedron is a flat wedge laid over a nearly flat stretch of surface
// between two boundary triangles (p q r) and (p q s); no node move or interior swap can fix it,
// because all four corners are on the surface. Removing it flips the surface edge p-q to r-s
// (skipped when r-s is already a boundary edge: the surface would stop being a 2-manifold). With
// three, it is a flat cap on a surface vertex that no other tetrahedron uses (skipped otherwise);
// removing it drops that vertex. Either way the volume changes by the sliver's own small volume.
// Repeats until nothing more is removed (newly exposed slivers included). Nodes left unused are
// dropped.
struct PeelResult {
  size_t removed = 0;
  double volume_removed = 0;
};
PeelResult peel_boundary_slivers(TetMesh& m, double min_dihedral_deg);

nlohmann::json to_json(const TetQualitySummary& s);
// Several lines: extremes, poor count and the three histograms (bins with their counts).
std::string to_text(const TetQualitySummary& s);
// One line: "min dihedral X deg, min scaled Jacobian Y, min radius ratio Z, N below T deg".
std::string quality_line(const TetQualitySummary& s);

}  // namespace eb::mesh
