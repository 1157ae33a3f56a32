#include "meshes/voxel_tets.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "meshes/errors.h"

namespace eb::mesh {
namespace {

using I3 = std::array<int64_t, 3>;

// A tetrahedron of the bisection hierarchy: lattice node ids in Maubach's vertex order, its tag
// (the refinement edge is x0-x_tag) and the level of the Kuhn cube it descends from (cube edge
// 2^level voxels). tag 3 at level 0 is a voxel-sized Kuhn tetrahedron.
struct Tet {
  std::array<int32_t, 4> v;
  int8_t tag;
  int8_t level;
};

bool voxel_sized(const Tet& t) { return t.tag == 3 && t.level == 0; }
// log2 of the volume in voxel tetrahedra (1/6 voxel).
int size_class(const Tet& t) { return 3 * t.level - (3 - t.tag); }

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

I3 cross3(const I3& a, const I3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
int64_t dot3(const I3& a, const I3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
I3 sub3(const I3& a, const I3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }

constexpr int32_t kOutside = std::numeric_limits<int32_t>::min();  // material of a cell outside the model

struct Overlap {
  bool model = false;  // overlaps a model voxel
  bool fine = false;   // overlaps a voxel outside the model or a boundary voxel
};

// The voxel model on a dense lattice padded to whole coarse cubes, and the refinement.
class Merger {
 public:
  Merger(const VoxelMesh& voxels, int levels) : levels_(levels) {
    const int64_t coarse = int64_t(1) << levels;
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
    I3 lo{kMax, kMax, kMax}, hi{kMin, kMin, kMin};
    for (const auto& c : voxels.cells)
      for (size_t d = 0; d < 3; ++d) {
        lo[d] = std::min(lo[d], int64_t(c[d]));
        hi[d] = std::max(hi[d], int64_t(c[d]));
      }
    base_ = lo;
    int64_t node_count = 1;
    for (size_t d = 0; d < 3; ++d) {
      n_[d] = (hi[d] - lo[d] + coarse) / coarse * coarse;
      node_count *= n_[d] + 1;
    }
    if (node_count > std::numeric_limits<int32_t>::max())
      throw InputError("voxel model too large for the merged tetrahedralization: " + std::to_string(n_[0]) + " x " +
                       std::to_string(n_[1]) + " x " + std::to_string(n_[2]) + " voxels");
    material_.assign(size_t(n_[0] * n_[1] * n_[2]), kOutside);
    for (size_t e = 0; e < voxels.cells.size(); ++e) {
      const auto& c = voxels.cells[e];
      int32_t& m = material_[cell_index(c[0] - base_[0], c[1] - base_[1], c[2] - base_[2])];
      if (m != kOutside)
        throw InputError("voxel (" + std::to_string(c[0]) + ", " + std::to_string(c[1]) + ", " + std::to_string(c[2]) +
                         ") is listed twice");
      m = voxels.material.empty() ? 0 : voxels.material[e];
    }
    used_.assign(size_t(node_count), 0);
    build_fine_flags();
  }

  // Steps 2 and 3 of the header: refinement towards the fine voxels, then the closure.
  void refine() {
    const int32_t coarse = int32_t(1) << levels_;
    static constexpr int kPerm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    std::vector<Tet> stack;
    for (int64_t k = 0; k < n_[2]; k += coarse)
      for (int64_t j = 0; j < n_[1]; j += coarse)
        for (int64_t i = 0; i < n_[0]; i += coarse)
          for (const auto& p : kPerm) {
            I3 x{i, j, k};
            Tet t{{node_id(x), 0, 0, 0}, 3, int8_t(levels_)};
            for (int s = 0; s < 3; ++s) {
              x[size_t(p[s])] += coarse;
              t.v[size_t(s + 1)] = node_id(x);
            }
            stack.push_back(t);
          }
    while (!stack.empty()) {
      const Tet t = stack.back();
      stack.pop_back();
      const Overlap o = overlap(t);
      if (!o.model) continue;
      if (o.fine && !voxel_sized(t)) {
        const auto [a, b] = bisect(t);
        stack.push_back(b);
        stack.push_back(a);
        continue;
      }
      for (int32_t v : t.v) used_[size_t(v)] = 1;
      (voxel_sized(t) ? leaves_ : coarse_).push_back(t);
    }
    // Closure. A voxel-sized tetrahedron has no edge midpoint on the lattice, so only coarse
    // ones are refined; tetrahedra larger than a voxel cover interior voxels only, and so do
    // their children.
    for (bool changed = true; changed;) {
      changed = false;
      std::vector<Tet> kept;
      stack.swap(coarse_);
      while (!stack.empty()) {
        const Tet t = stack.back();
        stack.pop_back();
        if (!has_hanging_node(t)) {
          (voxel_sized(t) ? leaves_ : kept).push_back(t);
          continue;
        }
        const auto [a, b] = bisect(t);
        used_[size_t(a.v[size_t(t.tag)])] = 1;  // the new vertex
        stack.push_back(b);
        stack.push_back(a);
        changed = true;
      }
      coarse_.swap(kept);
    }
    leaves_.insert(leaves_.end(), coarse_.begin(), coarse_.end());
    coarse_.clear();
  }

  TetMesh output(const VoxelMesh& voxels, VoxelMergeStats* stats) const {
    TetMesh m;
    std::vector<int32_t> index(used_.size(), -1);
    for (size_t v = 0; v < used_.size(); ++v) {
      if (!used_[v]) continue;
      index[v] = int32_t(m.nodes.size());
      const I3 x = node_ijk(int32_t(v));
      m.nodes.push_back({voxels.origin[0] + voxels.spacing * double(base_[0] + x[0]),
                         voxels.origin[1] + voxels.spacing * double(base_[1] + x[1]),
                         voxels.origin[2] + voxels.spacing * double(base_[2] + x[2])});
    }
    struct Out {
      std::array<int32_t, 4> e;
      int32_t material, lowest;
    };
    std::vector<Out> out;
    out.reserve(leaves_.size());
    std::vector<size_t> by_size(size_t(3 * levels_ + 1), 0);
    for (const Tet& t : leaves_) {
      std::array<I3, 4> x;
      I3 sum{0, 0, 0};
      for (size_t q = 0; q < 4; ++q) {
        x[q] = node_ijk(t.v[q]);
        for (size_t d = 0; d < 3; ++d) sum[d] += x[q][d];
      }
      Out o{{index[size_t(t.v[0])], index[size_t(t.v[1])], index[size_t(t.v[2])], index[size_t(t.v[3])]}, 0, 0};
      o.lowest = *std::min_element(o.e.begin(), o.e.end());
      const int64_t det = dot3(sub3(x[1], x[0]), cross3(sub3(x[2], x[0]), sub3(x[3], x[0])));
      if (det == 0) throw std::logic_error("voxel_to_tet_merged: degenerate tetrahedron");
      if (det < 0) std::swap(o.e[2], o.e[3]);
      // The centroid is inside the tetrahedron, so the voxel holding it is one it covers.
      o.material = material_[cell_index(sum[0] / 4, sum[1] / 4, sum[2] / 4)];
      ++by_size[size_t(size_class(t))];
      out.push_back(o);
    }
    std::stable_sort(out.begin(), out.end(), [](const Out& a, const Out& b) { return a.lowest < b.lowest; });
    m.elems.reserve(out.size());
    m.material.reserve(out.size());
    for (const Out& o : out) {
      m.elems.push_back(o.e);
      m.material.push_back(o.material);
    }
    if (stats) {
      stats->merge_levels = levels_;
      stats->voxels = voxels.cells.size();
      stats->boundary_voxels = boundary_voxels_;
      stats->unmerged_tets = 6 * voxels.cells.size();
      stats->tets = m.elems.size();
      stats->nodes = m.nodes.size();
      stats->merged_tets = m.elems.size() - by_size[0];
      stats->voxel_tets_replaced = 0;
      for (size_t g = 1; g < by_size.size(); ++g) stats->voxel_tets_replaced += by_size[g] << g;
      stats->by_size = by_size;
    }
    return m;
  }

 private:
  size_t cell_index(int64_t i, int64_t j, int64_t k) const { return size_t((k * n_[1] + j) * n_[0] + i); }
  int32_t node_id(const I3& x) const { return int32_t((x[2] * (n_[1] + 1) + x[1]) * (n_[0] + 1) + x[0]); }
  I3 node_ijk(int32_t id) const {
    const int64_t nx = n_[0] + 1, ny = n_[1] + 1;
    return {id % nx, (id / nx) % ny, id / (nx * ny)};
  }
  bool is_model(int64_t i, int64_t j, int64_t k, int32_t material) const {
    if (i < 0 || j < 0 || k < 0 || i >= n_[0] || j >= n_[1] || k >= n_[2]) return false;
    return material_[cell_index(i, j, k)] == material;
  }

  // fine_ per voxel (outside, or a boundary voxel) and per-row prefix counts of fine and model
  // voxels along x, so that a tetrahedron's overlap is counted row by row.
  void build_fine_flags() {
    fine_.assign(material_.size(), 1);
    const int64_t row = n_[0] + 1;
    prefix_fine_.assign(size_t(row * n_[1] * n_[2]), 0);
    prefix_model_.assign(prefix_fine_.size(), 0);
    for (int64_t k = 0; k < n_[2]; ++k)
      for (int64_t j = 0; j < n_[1]; ++j) {
        const size_t p = size_t((k * n_[1] + j) * row);
        for (int64_t i = 0; i < n_[0]; ++i) {
          const size_t c = cell_index(i, j, k);
          const int32_t mat = material_[c];
          bool interior = mat != kOutside;
          for (int dk = -1; dk <= 1 && interior; ++dk)
            for (int dj = -1; dj <= 1 && interior; ++dj)
              for (int di = -1; di <= 1 && interior; ++di) interior = is_model(i + di, j + dj, k + dk, mat);
          fine_[c] = !interior;
          boundary_voxels_ += mat != kOutside && !interior;
          prefix_fine_[p + size_t(i) + 1] = prefix_fine_[p + size_t(i)] + (interior ? 0 : 1);
          prefix_model_[p + size_t(i) + 1] = prefix_model_[p + size_t(i)] + (mat != kOutside ? 1 : 0);
        }
      }
  }

  // Which voxels the tetrahedron overlaps. Every voxel of the bisection hierarchy's finest
  // level is split into 6 tetrahedra around one of its main diagonals, and every tetrahedron of
  // the hierarchy is a union of those: it overlaps a voxel exactly when the voxel's centre
  // lies in the closed tetrahedron. Centres are tested with exact integer arithmetic (doubled
  // coordinates), one interval of x per row of voxels.
  Overlap overlap(const Tet& t) const {
    std::array<I3, 4> p;
    for (size_t q = 0; q < 4; ++q) p[q] = node_ijk(t.v[q]);
    if (voxel_sized(t)) {  // the voxel holding its centroid
      I3 s{0, 0, 0};
      for (const I3& x : p)
        for (size_t d = 0; d < 3; ++d) s[d] += x[d];
      const size_t c = cell_index(s[0] / 4, s[1] / 4, s[2] / 4);
      return {material_[c] != kOutside, fine_[c] != 0};
    }
    I3 lo = p[0], hi = p[0];
    for (size_t q = 1; q < 4; ++q)
      for (size_t d = 0; d < 3; ++d) {
        lo[d] = std::min(lo[d], p[q][d]);
        hi[d] = std::max(hi[d], p[q][d]);
      }
    // Inward face normals n and offsets c in doubled coordinates: inside is n.X >= c.
    std::array<I3, 4> normal;
    std::array<int64_t, 4> offset;
    for (size_t q = 0; q < 4; ++q) {
      const I3 a{2 * p[(q + 1) % 4][0], 2 * p[(q + 1) % 4][1], 2 * p[(q + 1) % 4][2]};
      const I3 b{2 * p[(q + 2) % 4][0], 2 * p[(q + 2) % 4][1], 2 * p[(q + 2) % 4][2]};
      const I3 c{2 * p[(q + 3) % 4][0], 2 * p[(q + 3) % 4][1], 2 * p[(q + 3) % 4][2]};
      I3 n = cross3(sub3(b, a), sub3(c, a));
      const I3 opposite{2 * p[q][0], 2 * p[q][1], 2 * p[q][2]};
      if (dot3(n, sub3(opposite, a)) < 0) n = {-n[0], -n[1], -n[2]};
      normal[q] = n;
      offset[q] = dot3(n, a);
    }
    Overlap o;
    const int64_t row = n_[0] + 1;
    for (int64_t k = lo[2]; k < hi[2]; ++k)
      for (int64_t j = lo[1]; j < hi[1]; ++j) {
        int64_t i0 = lo[0], i1 = hi[0] - 1;
        for (size_t q = 0; q < 4 && i0 <= i1; ++q) {
          const I3& n = normal[q];
          // n.x (2i+1) + n.y (2j+1) + n.z (2k+1) >= c  <=>  2 n.x i >= r
          const int64_t r = offset[q] - n[1] * (2 * j + 1) - n[2] * (2 * k + 1) - n[0];
          if (n[0] > 0)
            i0 = std::max(i0, ceil_div(r, 2 * n[0]));
          else if (n[0] < 0)
            i1 = std::min(i1, floor_div(r, 2 * n[0]));
          else if (r > 0)
            i1 = i0 - 1;
        }
        if (i0 > i1) continue;
        const size_t base = size_t((k * n_[1] + j) * row);
        o.fine = o.fine || prefix_fine_[base + size_t(i1) + 1] > prefix_fine_[base + size_t(i0)];
        o.model = o.model || prefix_model_[base + size_t(i1) + 1] > prefix_model_[base + size_t(i0)];
        if (o.fine && o.model) return o;
      }
    return o;
  }

  // Lattice node at the midpoint of a-b, or -1 when the midpoint is not a lattice node.
  int32_t midpoint(int32_t a, int32_t b) const {
    const I3 x = node_ijk(a), y = node_ijk(b);
    I3 m;
    for (size_t d = 0; d < 3; ++d) {
      if ((x[d] + y[d]) % 2 != 0) return -1;
      m[d] = (x[d] + y[d]) / 2;
    }
    return node_id(m);
  }

  bool has_hanging_node(const Tet& t) const {
    for (size_t a = 0; a < 4; ++a)
      for (size_t b = a + 1; b < 4; ++b) {
        const int32_t m = midpoint(t.v[a], t.v[b]);
        if (m >= 0 && used_[size_t(m)]) return true;
      }
    return false;
  }

  // Maubach's bisection of edge x0-x_k (k = tag).
  std::pair<Tet, Tet> bisect(const Tet& t) const {
    const int k = t.tag;
    const int32_t z = voxel_sized(t) ? -1 : midpoint(t.v[0], t.v[size_t(k)]);
    if (z < 0) throw std::logic_error("voxel_to_tet_merged: bisection below the voxel size");
    Tet a = t, b = t;
    for (int i = 0; i < k; ++i) b.v[size_t(i)] = t.v[size_t(i + 1)];
    a.v[size_t(k)] = b.v[size_t(k)] = z;
    a.tag = b.tag = int8_t(k > 1 ? k - 1 : 3);
    a.level = b.level = int8_t(k > 1 ? t.level : t.level - 1);
    return {a, b};
  }

  int levels_;
  I3 base_{};  // voxel index of the lattice's cell (0,0,0)
  I3 n_{};     // cells per axis, whole coarse cubes
  std::vector<int32_t> material_;  // per cell, kOutside outside the model
  std::vector<uint8_t> fine_;
  std::vector<int32_t> prefix_fine_, prefix_model_;
  size_t boundary_voxels_ = 0;
  std::vector<uint8_t> used_;  // lattice nodes that are vertices of kept tetrahedra
  std::vector<Tet> leaves_, coarse_;
};

}  // namespace

TetMesh voxel_to_tet_merged(const VoxelMesh& voxels, int max_merge_levels, VoxelMergeStats* stats) {
  const auto start = std::chrono::steady_clock::now();
  if (!(voxels.spacing > 0.0)) throw InputError("voxel spacing must be positive");
  if (max_merge_levels < 0 || max_merge_levels > kMaxMergeLevels)
    throw InputError("max_merge_levels must be 0.." + std::to_string(kMaxMergeLevels) + ", got " +
                     std::to_string(max_merge_levels));
  if (!voxels.material.empty() && voxels.material.size() != voxels.cells.size())
    throw InputError("voxel model has " + std::to_string(voxels.material.size()) + " material ids for " +
                     std::to_string(voxels.cells.size()) + " voxels");
  if (voxels.cells.empty()) {
    if (stats) {
      *stats = VoxelMergeStats{};
      stats->merge_levels = max_merge_levels;
      stats->by_size.assign(size_t(3 * max_merge_levels + 1), 0);
    }
    return {};
  }
  Merger merger(voxels, max_merge_levels);
  merger.refine();
  TetMesh m = merger.output(voxels, stats);
  if (stats) stats->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return m;
}

std::string to_text(const VoxelMergeStats& s) {
  std::ostringstream o;
  o << "voxel tetrahedra merged over " << s.merge_levels << " levels: " << s.voxels << " voxels (" << s.boundary_voxels
    << " on the boundary) -> " << s.tets << " tetrahedra instead of " << s.unmerged_tets;
  if (s.unmerged_tets > 0)
    o << " (" << std::fixed << std::setprecision(3) << double(s.tets) / double(s.unmerged_tets) << std::defaultfloat
      << "x)";
  o << ", " << s.nodes << " nodes; " << s.merged_tets << " merged tetrahedra replace " << s.voxel_tets_replaced
    << " voxel tetrahedra; " << std::setprecision(3) << s.seconds << " s\n";
  o << "tetrahedra by volume (in voxel tetrahedra):";
  for (size_t g = 0; g < s.by_size.size(); ++g)
    if (s.by_size[g] > 0) o << " " << (size_t(1) << g) << ":" << s.by_size[g];
  o << "\n";
  return o.str();
}

}  // namespace eb::mesh
