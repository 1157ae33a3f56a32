#include "meshes/voxelize.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <sstream>

#include "meshes/errors.h"
#include "meshes/geometry.h"
#include "meshes/host_memory.h"

namespace eb::mesh {
namespace {

struct Crossing {
  double x;
  int winding;
};

// Triangles binned by the voxel rows (j,k) whose centre line passes through their y-z box.
struct RowBins {
  std::vector<uint32_t> start, tris;
};

RowBins bin_triangles(const TriSurface& s, const VoxelGrid& g) {
  const size_t rows = size_t(g.n[1]) * size_t(g.n[2]);
  RowBins b;
  b.start.assign(rows + 1, 0);
  // Rows j whose centre y_j = o + (j + 0.5) h lies in [lo, hi] (widened by the jitter margin).
  auto range = [&](double lo, double hi, int axis, int& first, int& last) {
    const double h = g.spacing, o = g.origin[size_t(axis)], margin = 1e-3 * h;
    first = std::max(0, int(std::ceil((lo - margin - o) / h - 0.5)));
    last = std::min(g.n[size_t(axis)] - 1, int(std::floor((hi + margin - o) / h - 0.5)));
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t t = 0; t < s.tris.size(); ++t) {
      const auto& tri = s.tris[t];
      double lo[3], hi[3];
      for (int d = 1; d < 3; ++d) {
        lo[d] = std::min({s.nodes[size_t(tri[0])][size_t(d)], s.nodes[size_t(tri[1])][size_t(d)], s.nodes[size_t(tri[2])][size_t(d)]});
        hi[d] = std::max({s.nodes[size_t(tri[0])][size_t(d)], s.nodes[size_t(tri[1])][size_t(d)], s.nodes[size_t(tri[2])][size_t(d)]});
      }
      int j0, j1, k0, k1;
      range(lo[1], hi[1], 1, j0, j1);
      range(lo[2], hi[2], 2, k0, k1);
      for (int k = k0; k <= k1; ++k)
        for (int j = j0; j <= j1; ++j) {
          const size_t row = size_t(k) * size_t(g.n[1]) + size_t(j);
          if (pass == 0) ++b.start[row + 1];
          else b.tris[b.start[row]++] = uint32_t(t);
        }
    }
    if (pass == 0) {
      // The bins index triangles with 32 bits: a fine grid under a large surface could wrap.
      uint64_t total = 0;
      for (size_t r = 0; r < rows; ++r) total += b.start[r + 1];
      if (total > UINT32_MAX)
        throw RuntimeFailure("voxelization: " + std::to_string(total) +
                             " triangle-row pairs exceed 32-bit bins (spacing " + std::to_string(g.spacing) +
                             "); use a coarser spacing");
      require_host_memory(double(total) * sizeof(uint32_t),
                          "voxelizing at spacing " + std::to_string(g.spacing) + " (triangle bins)");
      for (size_t r = 0; r < rows; ++r) b.start[r + 1] += b.start[r];
      b.tris.resize(b.start[rows]);
    } else {
      // The fill pass advanced each start to the next row's start; shift back.
      for (size_t r = rows; r > 0; --r) b.start[r] = b.start[r - 1];
      b.start[0] = 0;
    }
  }
  return b;
}

// Crossings of the line {y = py, z = pz} with the row's triangles. Returns false when the line
// passes exactly through an edge or vertex (the caller re-jitters).
bool row_crossings(const TriSurface& s, const RowBins& b, size_t row, double py, double pz, std::vector<Crossing>& out) {
  out.clear();
  for (uint32_t i = b.start[row]; i < b.start[row + 1]; ++i) {
    const auto& t = s.tris[b.tris[i]];
    const Vec3 &a = s.nodes[size_t(t[0])], &bb = s.nodes[size_t(t[1])], &c = s.nodes[size_t(t[2])];
    // orient(u, v) = 2-D cross product of (u - p) and (v - p); orient(v, u) is exactly its
    // negation in floating point, so a shared edge is classified consistently by both triangles.
    auto orient = [&](const Vec3& u, const Vec3& v) {
      return (u[1] - py) * (v[2] - pz) - (u[2] - pz) * (v[1] - py);
    };
    const double w0 = orient(bb, c), w1 = orient(c, a), w2 = orient(a, bb);
    const bool pos = w0 > 0 && w1 > 0 && w2 > 0, neg = w0 < 0 && w1 < 0 && w2 < 0;
    if (!pos && !neg) {
      const bool touches = (w0 == 0 || w1 == 0 || w2 == 0) && ((w0 >= 0 && w1 >= 0 && w2 >= 0) || (w0 <= 0 && w1 <= 0 && w2 <= 0));
      if (touches && !(w0 == 0 && w1 == 0 && w2 == 0)) return false;
      continue;  // missed, or a triangle seen edge-on (contributes nothing)
    }
    const double sum = w0 + w1 + w2;
    out.push_back({(w0 * a[0] + w1 * bb[0] + w2 * c[0]) / sum, pos ? -1 : 1});
  }
  std::sort(out.begin(), out.end(), [](const Crossing& l, const Crossing& r) { return l.x < r.x; });
  return true;
}

// Visits the inside voxel centres row by row: f(i, j, k).
template <typename F>
void for_each_inside(const TriSurface& s, const VoxelGrid& g, F&& f) {
  const RowBins bins = bin_triangles(s, g);
  std::vector<Crossing> cross;
  const double h = g.spacing;
  for (int k = 0; k < g.n[2]; ++k)
    for (int j = 0; j < g.n[1]; ++j) {
      const size_t row = size_t(k) * size_t(g.n[1]) + size_t(j);
      if (bins.start[row] == bins.start[row + 1]) continue;
      const double y = g.origin[1] + (j + 0.5) * h, z = g.origin[2] + (k + 0.5) * h;
      // Irrational-looking offsets far below the voxel size; tried until no edge is hit.
      bool ok = false;
      for (int attempt = 0; attempt < 16 && !ok; ++attempt) {
        const double jy = attempt == 0 ? 0.0 : h * 1e-4 * std::sin(1.618 * attempt + 0.3);
        const double jz = attempt == 0 ? 0.0 : h * 1e-4 * std::cos(2.414 * attempt + 0.7);
        ok = row_crossings(s, bins, row, y + jy, z + jz, cross);
      }
      if (!ok) throw RuntimeFailure("voxelization: ray at row (" + std::to_string(j) + "," + std::to_string(k) + ") keeps hitting edges");
      int winding = 0;
      size_t c = 0;
      for (int i = 0; i < g.n[0]; ++i) {
        const double x = g.origin[0] + (i + 0.5) * h;
        while (c < cross.size() && cross[c].x < x) winding += cross[c++].winding;
        if (winding != 0) f(i, j, k);
      }
    }
}

double bbox_longest(const TriSurface& s) {
  const Vec3 lo = bbox_min(s.nodes), hi = bbox_max(s.nodes);
  return std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
}

void check_input(const TriSurface& s, const std::string& source) {
  check_finite_nodes(s.nodes, source);
  check_indices(s.tris, s.nodes.size(), source, "triangle");
  check_closed_surface(s, source);
  if (!(bbox_longest(s) > 0)) throw InputError(source + ": the surface has zero extent");
}

}  // namespace

VoxelGrid grid_for(const TriSurface& s, double spacing) {
  if (!(spacing > 0) || !std::isfinite(spacing)) throw InputError("voxel spacing must be positive");
  const Vec3 lo = bbox_min(s.nodes), hi = bbox_max(s.nodes);
  VoxelGrid g;
  g.spacing = spacing;
  for (size_t d = 0; d < 3; ++d) {
    const double n = std::ceil((hi[d] - lo[d]) / spacing) + 1;
    if (n > 1e5) throw InputError("voxel spacing " + std::to_string(spacing) + " is too fine for the surface's size");
    g.n[d] = int(n);
    g.origin[d] = 0.5 * (lo[d] + hi[d]) - 0.5 * n * spacing;
  }
  return g;
}

namespace {

// Refuses a grid whose arrays would not fit in host memory, before they are allocated: the row
// bins (one offset per row of voxels) always; with `building` the voxels inside (about the
// enclosed volume / spacing^3) and the hexahedral mesh made from them (a node and 8 indices each).
void require_grid_memory(const TriSurface& s, const VoxelGrid& g, bool building) {
  const double rows = double(g.n[1]) * double(g.n[2]);
  double bytes = (rows + 1) * sizeof(uint32_t);
  std::ostringstream what;
  what << "a voxel grid of " << g.n[0] << " x " << g.n[1] << " x " << g.n[2] << " at spacing " << g.spacing;
  if (building) {
    const double voxels = std::abs(surface_volume(s)) / (g.spacing * g.spacing * g.spacing);
    bytes += voxels * (sizeof(std::array<int32_t, 3>) + sizeof(int32_t) + sizeof(Vec3) + 8 * sizeof(int32_t));
    what << " (about " << voxels << " voxels inside)";
  }
  require_host_memory(bytes, what.str());
}

}  // namespace

size_t count_inside(const TriSurface& s, const VoxelGrid& g) {
  require_grid_memory(s, g, false);
  size_t n = 0;
  for_each_inside(s, g, [&](int, int, int) { ++n; });
  return n;
}

VoxelMesh voxelize(const TriSurface& s, double spacing, const std::string& source) {
  check_input(s, source);
  const VoxelGrid g = grid_for(s, spacing);
  require_grid_memory(s, g, true);
  VoxelMesh v;
  v.spacing = spacing;
  v.origin = g.origin;
  for_each_inside(s, g, [&](int i, int j, int k) { v.cells.push_back({i, j, k}); });
  if (v.cells.empty())
    throw InputError(source + ": voxelization at spacing " + std::to_string(spacing) + " produced no voxels (too coarse)");
  v.material.assign(v.cells.size(), 0);
  return v;
}

VoxelMesh voxelize_resolution(const TriSurface& s, int resolution, const std::string& source) {
  if (resolution < 1) throw InputError("voxel resolution must be at least 1, got " + std::to_string(resolution));
  check_input(s, source);
  return voxelize(s, bbox_longest(s) / resolution, source);
}

VoxelMesh voxelize_target(const TriSurface& s, size_t target, const std::string& source, double tolerance) {
  if (target < 1) throw InputError("target element count must be at least 1");
  check_input(s, source);
  // The voxels and their hexahedral mesh (require_grid_memory's bytes per voxel), before a search
  // that would visit that many voxel centres.
  require_host_memory(double(target) * (sizeof(std::array<int32_t, 3>) + sizeof(int32_t) + sizeof(Vec3) +
                                        8 * sizeof(int32_t)),
                      source + ": voxelizing to " + std::to_string(target) + " elements");
  const double volume = std::abs(surface_volume(s));
  if (!(volume > 0)) throw InputError(source + ": the surface encloses no volume");
  double h = std::cbrt(volume / double(target));
  double best_h = h, best_err = 1e300;
  // Secant-like update on N ~ V/h^3; the count is a step function, so keep the best seen.
  for (int it = 0; it < 12; ++it) {
    const size_t n = count_inside(s, grid_for(s, h));
    const double err = std::abs(double(n) - double(target)) / double(target);
    if (err < best_err) {
      best_err = err;
      best_h = h;
    }
    if (err <= tolerance || n == 0) {
      if (n == 0) h *= 0.5;
      else break;
    } else {
      h *= std::cbrt(double(n) / double(target));
    }
  }
  return voxelize(s, best_h, source);
}

VoxelMesh subdivide_voxels(const VoxelMesh& v, int n, const std::string& source) {
  if (n < 1) throw InputError(source + ": voxel subdivision must be >= 1, got " + std::to_string(n));
  if (n == 1) return v;
  const double cells = double(v.cells.size()) * n * n * n;
  require_host_memory(cells * (sizeof(std::array<int32_t, 3>) + sizeof(int32_t) + sizeof(Vec3) +
                               sizeof(std::array<int32_t, 8>)),
                      source + ": " + std::to_string(v.cells.size()) + " voxels subdivided " + std::to_string(n) +
                          "^3 times");
  for (const auto& c : v.cells)
    for (int d = 0; d < 3; ++d)
      if (double(c[size_t(d)] + 1) * n > double(INT32_MAX))
        throw RuntimeFailure(source + ": voxel subdivision " + std::to_string(n) + " overflows 32-bit lattice indices");
  VoxelMesh out;
  out.origin = v.origin;
  out.spacing = v.spacing / n;
  out.cells.reserve(size_t(cells));
  out.material.reserve(v.material.empty() ? 0 : size_t(cells));
  for (size_t e = 0; e < v.cells.size(); ++e) {
    const auto& c = v.cells[e];
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        for (int k = 0; k < n; ++k) {
          out.cells.push_back({c[0] * n + a, c[1] * n + b, c[2] * n + k});
          if (!v.material.empty()) out.material.push_back(v.material[e]);
        }
  }
  return out;
}

}  // namespace eb::mesh
