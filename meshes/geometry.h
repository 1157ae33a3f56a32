#pragma once
// Element geometry and the checks every reader and generator applies: finite coordinates,
// indices in range, no inverted or zero-volume elements, closed surfaces where required.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "meshes/mesh.h"

namespace eb::mesh {

inline Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
inline double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }

double tet_signed_volume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);
// Exact volume of a trilinear hexahedron (2x2x2 Gauss is exact for its Jacobian).
double hex_volume(const std::array<Vec3, 8>& x);
// Minimum over the 8 corners of det(J) / (|e1| |e2| |e3|), 1 for a cube, <= 0 when inverted.
double hex_scaled_jacobian(const std::array<Vec3, 8>& x);
// The six dihedral angles (radians) at the edges 01 02 03 12 13 23.
std::array<double, 6> tet_dihedral_angles(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);
// Scaled Jacobian of a tetrahedron: 6V*sqrt(2) / max over corners of product of edge lengths
// (1 for the regular tetrahedron, negative when inverted).
double tet_scaled_jacobian(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);

template <size_t N>
std::array<Vec3, N> gather(const std::vector<Vec3>& nodes, const std::array<int32_t, N>& e) {
  std::array<Vec3, N> x;
  for (size_t i = 0; i < N; ++i) x[i] = nodes[size_t(e[i])];
  return x;
}

// An element is degenerate when |volume| is below this fraction of (longest edge)^3.
inline constexpr double kDegenerateRelVolume = 1e-10;

enum class ElementState { Ok, Degenerate, Inverted };
ElementState tet_state(const std::vector<Vec3>& nodes, const std::array<int32_t, 4>& t);
ElementState hex_state(const std::vector<Vec3>& nodes, const std::array<int32_t, 8>& h);

// Throw InputError naming `source` and the offending node/element (numbered from 1, as most
// file formats do, with the 0-based index in brackets).
void check_finite_nodes(const std::vector<Vec3>& nodes, const std::string& source);
template <size_t N>
void check_indices(const std::vector<std::array<int32_t, N>>& elems, size_t num_nodes, const std::string& source,
                   const char* kind);
void check_tet_elements(const std::vector<Vec3>& nodes, const std::vector<std::array<int32_t, 4>>& tets,
                        const std::string& source);
void check_hex_elements(const std::vector<Vec3>& nodes, const std::vector<std::array<int32_t, 8>>& hexes,
                        const std::string& source);
void check_tet_mesh(const TetMesh& m, const std::string& source);
void check_hex_mesh(const HexMesh& m, const std::string& source);

struct EdgeReport {
  size_t boundary_edges = 0;     // edges with one incident triangle
  size_t nonmanifold_edges = 0;  // edges with more than two
  std::array<int32_t, 2> example{-1, -1};
};
EdgeReport surface_edges(const TriSurface& s);
// Fails unless every edge has at least two incident triangles (odd counts also fail: a
// winding-number inside test needs each edge covered from both sides).
void check_closed_surface(const TriSurface& s, const std::string& source);

Vec3 bbox_min(const std::vector<Vec3>& nodes);
Vec3 bbox_max(const std::vector<Vec3>& nodes);
// Signed volume enclosed by a closed, outward-oriented triangle surface.
double surface_volume(const TriSurface& s);

}  // namespace eb::mesh
