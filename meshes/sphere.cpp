#include "meshes/sphere.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "meshes/box.h"
#include "meshes/errors.h"
#include "meshes/geometry.h"
#include "meshes/gmsh_tet.h"

namespace eb::mesh {

int sphere_divisions(int level) {
  static constexpr int kDivisions[4] = {3, 6, 11, 15};
  if (level < 0 || level > 3) throw InputError("sphere refinement level must be 0..3, got " + std::to_string(level));
  return kDivisions[level];
}

TetMesh make_sphere_tet(int level, double radius, const Vec3& center) {
  return make_sphere_tet_divisions(sphere_divisions(level), radius, center);
}

double gmsh_sphere_size(int level) {
  static const double kSize[4] = {0.58, 0.285, 0.142, 0.106};
  if (level < 0 || level > 3) throw InputError("sphere refinement level must be 0..3, got " + std::to_string(level));
  return kSize[level];
}

TetMesh make_sphere_tet_gmsh(int level, double radius, const Vec3& center) {
  if (!have_gmsh())
    throw InputError("mesh.tetrahedralizer = \"gmsh\" with mesh.source = \"sphere\" needs Gmsh, which this build "
                     "lacks (configured without ELASTOBENCH_GMSH or libgmsh-dev); leave mesh.tetrahedralizer at "
                     "\"voxel\" for the lattice sphere");
  TetrahedralizeOptions o;
  o.size = gmsh_sphere_size(level) * radius;
  return tetrahedralize_surface(make_icosphere(5, radius, center), o, "unit sphere (Gmsh)");
}

TetMesh make_sphere_tet_divisions(int n, double radius, const Vec3& center) {
  if (n < 1) throw InputError("sphere needs at least 1 division");
  if (!(radius > 0)) throw InputError("sphere radius must be positive");
  TetMesh m = make_box_tet({-1, -1, -1}, {2, 2, 2}, {n, n, n}, 5);
  for (auto& p : m.nodes) {
    const double inf = std::max({std::abs(p[0]), std::abs(p[1]), std::abs(p[2])});
    const double two = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    const double f = two > 0 ? radius * inf / two : 0.0;
    for (size_t d = 0; d < 3; ++d) p[d] = center[d] + f * p[d];
  }
  // The map keeps every tetrahedron positive (checked here: a regression would be a bug).
  for (auto& t : m.elems)
    if (tet_state(m.nodes, t) != ElementState::Ok)
      throw RuntimeFailure("sphere mesh with " + std::to_string(n) + " divisions has a degenerate tetrahedron");
  return m;
}

TriSurface make_icosphere(int subdivisions, double radius, const Vec3& center) {
  if (subdivisions < 0 || subdivisions > 9) throw InputError("icosphere subdivisions must be 0..9");
  const double t = (1.0 + std::sqrt(5.0)) / 2.0;
  std::vector<Vec3> v = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0}, {0, -1, t}, {0, 1, t},
                         {0, -1, -t}, {0, 1, -t}, {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
  std::vector<std::array<int32_t, 3>> f = {{0, 11, 5}, {0, 5, 1}, {0, 1, 7}, {0, 7, 10}, {0, 10, 11},
                                           {1, 5, 9}, {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                           {3, 9, 4}, {3, 4, 2}, {3, 2, 6}, {3, 6, 8}, {3, 8, 9},
                                           {4, 9, 5}, {2, 4, 11}, {6, 2, 10}, {8, 6, 7}, {9, 8, 1}};
  auto normalize = [](Vec3 p) {
    const double l = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    return Vec3{p[0] / l, p[1] / l, p[2] / l};
  };
  for (auto& p : v) p = normalize(p);
  for (int s = 0; s < subdivisions; ++s) {
    std::map<std::pair<int32_t, int32_t>, int32_t> mid;
    auto midpoint = [&](int32_t a, int32_t b) {
      const auto key = std::minmax(a, b);
      auto [it, inserted] = mid.try_emplace(key, int32_t(v.size()));
      if (inserted) {
        const Vec3 &p = v[size_t(a)], &q = v[size_t(b)];
        v.push_back(normalize({p[0] + q[0], p[1] + q[1], p[2] + q[2]}));
      }
      return it->second;
    };
    std::vector<std::array<int32_t, 3>> next;
    next.reserve(f.size() * 4);
    for (const auto& tri : f) {
      const int32_t a = midpoint(tri[0], tri[1]), b = midpoint(tri[1], tri[2]), c = midpoint(tri[2], tri[0]);
      next.push_back({tri[0], a, c});
      next.push_back({tri[1], b, a});
      next.push_back({tri[2], c, b});
      next.push_back({a, b, c});
    }
    f.swap(next);
  }
  TriSurface s;
  s.tris = std::move(f);
  s.nodes.reserve(v.size());
  for (const auto& p : v) s.nodes.push_back({center[0] + radius * p[0], center[1] + radius * p[1], center[2] + radius * p[2]});
  return s;
}

}  // namespace eb::mesh
