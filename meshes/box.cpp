#include "meshes/box.h"

#include <string>
#include <unordered_map>

#include "meshes/errors.h"

namespace eb::mesh {
namespace {

void check_box(const Vec3& size, const std::array<int, 3>& n) {
  for (int d = 0; d < 3; ++d) {
    if (!(size[d] > 0.0))
      throw InputError("box size along axis " + std::to_string(d) + " must be positive, got " +
                       std::to_string(size[d]));
    if (n[d] < 1)
      throw InputError("box needs at least one element along axis " + std::to_string(d) +
                       ", got " + std::to_string(n[d]));
  }
}

// Local corner c of a unit cube, VTK hexahedron order.
constexpr int kCorner[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                               {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};

std::vector<Vec3> lattice_nodes(const Vec3& origin, const Vec3& size,
                                const std::array<int, 3>& n) {
  std::vector<Vec3> nodes;
  nodes.reserve(size_t(n[0] + 1) * (n[1] + 1) * (n[2] + 1));
  for (int k = 0; k <= n[2]; ++k)
    for (int j = 0; j <= n[1]; ++j)
      for (int i = 0; i <= n[0]; ++i)
        nodes.push_back({origin[0] + size[0] * i / n[0], origin[1] + size[1] * j / n[1],
                         origin[2] + size[2] * k / n[2]});
  return nodes;
}

double signed_volume(const std::vector<Vec3>& x, const std::array<int32_t, 4>& t) {
  const Vec3 &a = x[t[0]], &b = x[t[1]], &c = x[t[2]], &d = x[t[3]];
  const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  const double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  const double w[3] = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
  return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
          u[2] * (v[0] * w[1] - v[1] * w[0])) /
         6.0;
}

}  // namespace

HexMesh make_box_hex(const Vec3& origin, const Vec3& size, const std::array<int, 3>& n) {
  check_box(size, n);
  HexMesh m;
  m.nodes = lattice_nodes(origin, size, n);
  const auto id = [&](int i, int j, int k) {
    return int32_t((size_t(k) * (n[1] + 1) + j) * (n[0] + 1) + i);
  };
  m.elems.reserve(size_t(n[0]) * n[1] * n[2]);
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        std::array<int32_t, 8> e{};
        for (int c = 0; c < 8; ++c) e[c] = id(i + kCorner[c][0], j + kCorner[c][1], k + kCorner[c][2]);
        m.elems.push_back(e);
      }
  m.material.assign(m.elems.size(), 0);
  return m;
}

TetMesh make_box_tet(const Vec3& origin, const Vec3& size, const std::array<int, 3>& n,
                     int tets_per_cube) {
  check_box(size, n);
  if (tets_per_cube != 5 && tets_per_cube != 6)
    throw InputError("tets_per_cube must be 5 or 6, got " + std::to_string(tets_per_cube));
  TetMesh m;
  m.nodes = lattice_nodes(origin, size, n);
  const auto id = [&](int i, int j, int k) {
    return int32_t((size_t(k) * (n[1] + 1) + j) * (n[0] + 1) + i);
  };
  // Six tets around the diagonal 0-6 (Kuhn triangulation): consistent across all cubes.
  static constexpr int kSix[6][4] = {{0, 1, 2, 6}, {0, 2, 3, 6}, {0, 3, 7, 6},
                                     {0, 7, 4, 6}, {0, 4, 5, 6}, {0, 5, 1, 6}};
  // Five tets: a central tet plus four corners. The mirrored variant is used on odd cells.
  static constexpr int kFiveEven[5][4] = {{0, 1, 3, 4}, {1, 2, 3, 6}, {1, 4, 5, 6},
                                          {3, 4, 6, 7}, {1, 3, 4, 6}};
  static constexpr int kFiveOdd[5][4] = {{0, 1, 2, 5}, {0, 2, 3, 7}, {0, 4, 5, 7},
                                         {2, 5, 6, 7}, {0, 2, 5, 7}};
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        int32_t c[8];
        for (int q = 0; q < 8; ++q) c[q] = id(i + kCorner[q][0], j + kCorner[q][1], k + kCorner[q][2]);
        const auto emit = [&](const int (*table)[4], int count) {
          for (int t = 0; t < count; ++t) {
            std::array<int32_t, 4> tet{c[table[t][0]], c[table[t][1]], c[table[t][2]], c[table[t][3]]};
            if (signed_volume(m.nodes, tet) < 0) std::swap(tet[2], tet[3]);
            m.elems.push_back(tet);
          }
        };
        if (tets_per_cube == 6)
          emit(kSix, 6);
        else
          emit(((i + j + k) % 2 == 0) ? kFiveEven : kFiveOdd, 5);
      }
  m.material.assign(m.elems.size(), 0);
  return m;
}

HexMesh voxel_to_hex(const VoxelMesh& voxels) {
  if (!(voxels.spacing > 0.0)) throw InputError("voxel spacing must be positive");
  HexMesh m;
  std::unordered_map<uint64_t, int32_t> index;
  index.reserve(voxels.cells.size() * 2);
  const auto key = [](int64_t i, int64_t j, int64_t k) {
    return (uint64_t(i + (1 << 20)) << 42) | (uint64_t(j + (1 << 20)) << 21) | uint64_t(k + (1 << 20));
  };
  m.elems.reserve(voxels.cells.size());
  for (const auto& cell : voxels.cells) {
    std::array<int32_t, 8> e{};
    for (int c = 0; c < 8; ++c) {
      const int64_t i = cell[0] + kCorner[c][0], j = cell[1] + kCorner[c][1], k = cell[2] + kCorner[c][2];
      auto [it, inserted] = index.try_emplace(key(i, j, k), int32_t(m.nodes.size()));
      if (inserted)
        m.nodes.push_back({voxels.origin[0] + voxels.spacing * i, voxels.origin[1] + voxels.spacing * j,
                           voxels.origin[2] + voxels.spacing * k});
      e[c] = it->second;
    }
    m.elems.push_back(e);
  }
  m.material = voxels.material.empty() ? std::vector<int32_t>(m.elems.size(), 0) : voxels.material;
  return m;
}

}  // namespace eb::mesh
