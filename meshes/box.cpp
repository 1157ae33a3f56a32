#include "meshes/box.h"

#include <string>
#include <unordered_map>

#include "meshes/errors.h"
#include "meshes/geometry.h"

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

}  // namespace

CubeSplit parse_cube_split(const std::string& name) {
  if (name == "kuhn") return CubeSplit::Kuhn;
  if (name == "sofa") return CubeSplit::Sofa;
  throw InputError("cube split '" + name + "' is unknown (valid: kuhn, sofa)");
}

void append_cube_tets(const std::vector<Vec3>& nodes, const std::array<int32_t, 8>& c, int parity, int tets_per_cube,
                      std::vector<std::array<int32_t, 4>>& out, CubeSplit split) {
  // SOFA's Hexa2TetraTopologicalMapping (without its "swapping" option), corners in the same VTK
  // order as SOFA's grid hexahedra: six positive tetrahedra around the diagonal 0-6.
  static constexpr int kSofaSix[6][4] = {{0, 5, 1, 6}, {0, 1, 3, 6}, {1, 3, 6, 2},
                                         {6, 3, 0, 7}, {6, 7, 0, 5}, {7, 5, 4, 0}};
  if (split == CubeSplit::Sofa) {
    if (tets_per_cube != 6) throw InputError("the sofa cube split has 6 tetrahedra per cube");
    for (const auto& t : kSofaSix)
      out.push_back({c[size_t(t[0])], c[size_t(t[1])], c[size_t(t[2])], c[size_t(t[3])]});
    return;
  }
  // Six tets around the diagonal 0-6 (Kuhn triangulation): consistent across all cubes.
  static constexpr int kSix[6][4] = {{0, 1, 2, 6}, {0, 2, 3, 6}, {0, 3, 7, 6},
                                     {0, 7, 4, 6}, {0, 4, 5, 6}, {0, 5, 1, 6}};
  // Five tets: a central tet plus four corners. The mirrored variant is used on odd cells.
  static constexpr int kFiveEven[5][4] = {{0, 1, 3, 4}, {1, 2, 3, 6}, {1, 4, 5, 6},
                                          {3, 4, 6, 7}, {1, 3, 4, 6}};
  static constexpr int kFiveOdd[5][4] = {{0, 1, 2, 5}, {0, 2, 3, 7}, {0, 4, 5, 7},
                                         {2, 5, 6, 7}, {0, 2, 5, 7}};
  const auto emit = [&](const int (*table)[4], int count) {
    for (int t = 0; t < count; ++t) {
      std::array<int32_t, 4> tet{c[size_t(table[t][0])], c[size_t(table[t][1])], c[size_t(table[t][2])],
                                 c[size_t(table[t][3])]};
      const auto& x = nodes;
      if (tet_signed_volume(x[size_t(tet[0])], x[size_t(tet[1])], x[size_t(tet[2])], x[size_t(tet[3])]) < 0)
        std::swap(tet[2], tet[3]);
      out.push_back(tet);
    }
  };
  if (tets_per_cube == 6)
    emit(kSix, 6);
  else
    emit(parity == 0 ? kFiveEven : kFiveOdd, 5);
}

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
                     int tets_per_cube, CubeSplit split) {
  check_box(size, n);
  if (tets_per_cube != 5 && tets_per_cube != 6)
    throw InputError("tets_per_cube must be 5 or 6, got " + std::to_string(tets_per_cube));
  TetMesh m;
  m.nodes = lattice_nodes(origin, size, n);
  const auto id = [&](int i, int j, int k) {
    return int32_t((size_t(k) * (n[1] + 1) + j) * (n[0] + 1) + i);
  };
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        std::array<int32_t, 8> c{};
        for (int q = 0; q < 8; ++q) c[size_t(q)] = id(i + kCorner[q][0], j + kCorner[q][1], k + kCorner[q][2]);
        append_cube_tets(m.nodes, c, (i + j + k) & 1, tets_per_cube, m.elems, split);
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

TetMesh voxel_to_tet(const VoxelMesh& voxels, int tets_per_cube) {
  if (tets_per_cube != 5 && tets_per_cube != 6)
    throw InputError("tets_per_cube must be 5 or 6, got " + std::to_string(tets_per_cube));
  const HexMesh hex = voxel_to_hex(voxels);
  TetMesh m;
  m.nodes = hex.nodes;
  m.elems.reserve(hex.elems.size() * size_t(tets_per_cube));
  for (size_t e = 0; e < hex.elems.size(); ++e) {
    const auto& cell = voxels.cells[e];
    // Parity of the absolute lattice position keeps the 5-tet face diagonals conforming.
    const int parity = int(((int64_t(cell[0]) + cell[1] + cell[2]) % 2 + 2) % 2);
    const size_t before = m.elems.size();
    append_cube_tets(m.nodes, hex.elems[e], parity, tets_per_cube, m.elems);
    m.material.insert(m.material.end(), m.elems.size() - before, hex.material[e]);
  }
  return m;
}

}  // namespace eb::mesh
