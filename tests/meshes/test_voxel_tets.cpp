// voxel_to_tet_merged (Verschoor & Jalba 2012 Sec. 5.5, interior merged by Maubach bisection):
// conformity, volume, boundary surface, quality and counts, checked on lattice coordinates
// independently of the node numbering.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <random>
#include <regex>
#include <tuple>
#include <unordered_set>

#include "mesh_test_util.h"
#include "meshes/box.h"
#include "meshes/errors.h"
#include "meshes/geometry.h"
#include "meshes/mesh_io.h"
#include "meshes/mesh_spec.h"
#include "meshes/voxel_tets.h"
#include "meshes/voxelize.h"

namespace eb::mesh {
namespace {

// Lattice points as keys: (i, j, k) of origin + spacing * (i, j, k), 21 bits each.
using Key = uint64_t;
using TetKey = std::array<Key, 4>;
using TriKey = std::array<Key, 3>;
constexpr int64_t kBias = int64_t(1) << 20;

Key key(int64_t i, int64_t j, int64_t k) {
  return (uint64_t(i + kBias) << 42) | (uint64_t(j + kBias) << 21) | uint64_t(k + kBias);
}
std::array<int64_t, 3> unkey(Key q) {
  const uint64_t m = (uint64_t(1) << 21) - 1;
  return {int64_t(q >> 42) - kBias, int64_t((q >> 21) & m) - kBias, int64_t(q & m) - kBias};
}

std::vector<Key> node_keys(const TetMesh& m, const VoxelMesh& v) {
  std::vector<Key> keys;
  keys.reserve(m.nodes.size());
  for (const auto& p : m.nodes) {
    std::array<int64_t, 3> x{};
    for (size_t d = 0; d < 3; ++d) {
      const double f = (p[d] - v.origin[d]) / v.spacing;
      x[d] = std::llround(f);
      EXPECT_NEAR(f, double(x[d]), 1e-9) << "node off the voxel lattice";
    }
    keys.push_back(key(x[0], x[1], x[2]));
  }
  return keys;
}

// Tetrahedra as sorted lattice corners, sorted: two meshes are the same when these are equal.
std::vector<TetKey> tets_by_coords(const TetMesh& m, const VoxelMesh& v) {
  const std::vector<Key> keys = node_keys(m, v);
  std::vector<TetKey> tets;
  tets.reserve(m.elems.size());
  for (const auto& e : m.elems) {
    TetKey t{keys[size_t(e[0])], keys[size_t(e[1])], keys[size_t(e[2])], keys[size_t(e[3])]};
    std::sort(t.begin(), t.end());
    tets.push_back(t);
  }
  std::sort(tets.begin(), tets.end());
  return tets;
}

// Faces used once, sorted. Fails when a face is used more than twice.
std::vector<TriKey> boundary_faces(const std::vector<TetKey>& tets) {
  std::vector<TriKey> faces;
  faces.reserve(4 * tets.size());
  for (const auto& t : tets)
    for (size_t f = 0; f < 4; ++f) {
      TriKey tri{};
      for (size_t q = 0, n = 0; q < 4; ++q)
        if (q != f) tri[n++] = t[q];
      faces.push_back(tri);  // t is sorted, so tri is too
    }
  std::sort(faces.begin(), faces.end());
  std::vector<TriKey> once;
  for (size_t i = 0; i < faces.size();) {
    size_t j = i;
    while (j < faces.size() && faces[j] == faces[i]) ++j;
    EXPECT_LE(j - i, 2u) << "a face shared by " << j - i << " tetrahedra";
    if (j - i == 1) once.push_back(faces[i]);
    i = j;
  }
  return once;
}

// The axis-aligned unit square holding a boundary triangle: (axis, plane, low corner).
std::array<int64_t, 4> square_of(const TriKey& t) {
  const auto a = unkey(t[0]), b = unkey(t[1]), c = unkey(t[2]);
  for (size_t d = 0; d < 3; ++d)
    if (a[d] == b[d] && b[d] == c[d]) {
      const size_t u = (d + 1) % 3, w = (d + 2) % 3;
      EXPECT_EQ(std::max({a[u], b[u], c[u]}) - std::min({a[u], b[u], c[u]}), 1);
      EXPECT_EQ(std::max({a[w], b[w], c[w]}) - std::min({a[w], b[w], c[w]}), 1);
      return {int64_t(d), a[d], std::min({a[u], b[u], c[u]}), std::min({a[w], b[w], c[w]})};
    }
  ADD_FAILURE() << "boundary triangle not on a voxel face";
  return {-1, 0, 0, 0};
}

// Each boundary voxel face is covered by exactly 2 triangles; returns the faces.
std::vector<std::array<int64_t, 4>> boundary_squares(const std::vector<TriKey>& tris) {
  std::map<std::array<int64_t, 4>, int> count;
  for (const auto& t : tris) ++count[square_of(t)];
  std::vector<std::array<int64_t, 4>> squares;
  for (const auto& [s, n] : count) {
    EXPECT_EQ(n, 2) << "voxel face covered by " << n << " triangles";
    squares.push_back(s);
  }
  return squares;
}

// voxel_to_tet's split with the diagonal of voxel (i,j,k) along ((-1)^i, (-1)^j, (-1)^k),
// indices counted from the smallest voxel index: the finest level of the bisection hierarchy
// (voxel_tets.h), built here from its definition.
std::vector<TetKey> reflected_kuhn(const VoxelMesh& v) {
  std::array<int64_t, 3> base{INT32_MAX, INT32_MAX, INT32_MAX};
  for (const auto& c : v.cells)
    for (size_t d = 0; d < 3; ++d) base[d] = std::min(base[d], int64_t(c[d]));
  static constexpr int kPerm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  std::vector<TetKey> tets;
  for (const auto& c : v.cells) {
    std::array<int64_t, 3> start{}, step{};
    for (size_t d = 0; d < 3; ++d) {
      const bool odd = ((int64_t(c[d]) - base[d]) & 1) != 0;
      start[d] = c[d] + (odd ? 1 : 0);
      step[d] = odd ? -1 : 1;
    }
    for (const auto& p : kPerm) {
      auto x = start;
      TetKey t{key(x[0], x[1], x[2]), 0, 0, 0};
      for (size_t s = 0; s < 3; ++s) {
        x[size_t(p[s])] += step[size_t(p[s])];
        t[s + 1] = key(x[0], x[1], x[2]);
      }
      std::sort(t.begin(), t.end());
      tets.push_back(t);
    }
  }
  std::sort(tets.begin(), tets.end());
  return tets;
}

double tet_volume(const TetMesh& m, const std::array<int32_t, 4>& e) {
  const auto x = gather(m.nodes, e);
  return tet_signed_volume(x[0], x[1], x[2], x[3]);
}

// All tetrahedra positive; their volumes add up to the voxels' (summed in long double, so that
// the 1e-12 relative tolerance measures the mesh, not the summation).
void expect_positive_with_voxel_volume(const VoxelMesh& v, const TetMesh& m) {
  long double volume = 0.0;
  for (const auto& e : m.elems) {
    const double vol = tet_volume(m, e);
    ASSERT_GT(vol, 0.0);
    volume += vol;
  }
  const double expected = double(v.cells.size()) * std::pow(v.spacing, 3);
  EXPECT_NEAR(double(volume), expected, 1e-12 * expected);
}

double min_dihedral_deg(const TetMesh& m) {
  double lo = 180.0;
  for (const auto& e : m.elems) {
    const auto x = gather(m.nodes, e);
    const auto a = tet_dihedral_angles(x[0], x[1], x[2], x[3]);
    lo = std::min(lo, *std::min_element(a.begin(), a.end()) * 180.0 / M_PI);
  }
  return lo;
}

// The checks of a merged mesh, against voxel_to_tet of the same voxels: positive tetrahedra,
// nodes numbered in lattice order, exact volume, conformity (faces used at most twice, no node
// at an edge midpoint, free faces exactly the voxel model's surface), and the boundary split as
// the reflected Kuhn voxels.
void expect_valid_merge(const VoxelMesh& v, int levels, const TetMesh& m) {
  SCOPED_TRACE("merge levels " + std::to_string(levels));
  ASSERT_EQ(m.material.size(), m.elems.size());
  const std::vector<Key> keys = node_keys(m, v);
  // Lattice order (z, y, x) and no duplicate nodes.
  for (size_t i = 1; i < keys.size(); ++i) {
    const auto a = unkey(keys[i - 1]), b = unkey(keys[i]);
    ASSERT_TRUE(std::make_tuple(a[2], a[1], a[0]) < std::make_tuple(b[2], b[1], b[0])) << "node " << i;
  }
  std::vector<bool> used(m.nodes.size(), false);
  for (const auto& e : m.elems)
    for (int32_t n : e) used[size_t(n)] = true;
  EXPECT_EQ(std::count(used.begin(), used.end(), false), 0) << "unused nodes";
  expect_positive_with_voxel_volume(v, m);

  // No node at the midpoint of any tetrahedron edge (a hanging node on an edge, or the first
  // one created on a face).
  const std::unordered_set<Key> nodes(keys.begin(), keys.end());
  for (const auto& e : m.elems)
    for (size_t a = 0; a < 4; ++a)
      for (size_t b = a + 1; b < 4; ++b) {
        const auto x = unkey(keys[size_t(e[a])]), y = unkey(keys[size_t(e[b])]);
        if ((x[0] + y[0]) % 2 || (x[1] + y[1]) % 2 || (x[2] + y[2]) % 2) continue;
        ASSERT_EQ(nodes.count(key((x[0] + y[0]) / 2, (x[1] + y[1]) / 2, (x[2] + y[2]) / 2)), 0u)
            << "node at the midpoint of an edge of a tetrahedron";
      }

  // Every face is shared by two tetrahedra except the voxel model's surface: the free faces
  // cover exactly the voxel faces that voxel_to_tet leaves free (a hanging node would leave
  // more), two triangles each, split as the reflected Kuhn voxels.
  const std::vector<TetKey> tets = tets_by_coords(m, v);
  const std::vector<TriKey> free = boundary_faces(tets);
  const std::vector<TriKey> free_voxel = boundary_faces(tets_by_coords(voxel_to_tet(v, 6), v));
  EXPECT_EQ(boundary_squares(free), boundary_squares(free_voxel));
  if (levels == 0) {
    EXPECT_EQ(free, free_voxel);
    return;
  }
  const std::vector<TetKey> reflected = reflected_kuhn(v);
  EXPECT_EQ(free, boundary_faces(reflected));

  // Voxel-sized tetrahedra are those of the reflected Kuhn split.
  const double voxel_tet = std::pow(v.spacing, 3) / 6.0;
  for (const auto& e : m.elems) {
    if (tet_volume(m, e) > 1.5 * voxel_tet) continue;
    TetKey t{keys[size_t(e[0])], keys[size_t(e[1])], keys[size_t(e[2])], keys[size_t(e[3])]};
    std::sort(t.begin(), t.end());
    ASSERT_TRUE(std::binary_search(reflected.begin(), reflected.end(), t));
  }
}

// Voxels of a box of n[0] x n[1] x n[2] cells where `keep` says so.
template <typename Keep>
VoxelMesh voxel_model(const std::array<int, 3>& n, Keep keep, double spacing = 0.1, Vec3 origin = {0.5, -1.0, 2.0}) {
  VoxelMesh v;
  v.origin = origin;
  v.spacing = spacing;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i)
        if (keep(i, j, k)) v.cells.push_back({i, j, k});
  return v;
}

TEST(VoxelMerged, ZeroLevelsIsVoxelToTet) {
  const VoxelMesh v = voxel_model({7, 6, 5}, [](int i, int j, int k) { return (i * 7 + j * 3 + k) % 5 != 0; });
  VoxelMergeStats s;
  const TetMesh m = voxel_to_tet_merged(v, 0, &s);
  const TetMesh ref = voxel_to_tet(v, 6);
  EXPECT_EQ(m.nodes.size(), ref.nodes.size());
  EXPECT_EQ(tets_by_coords(m, v), tets_by_coords(ref, v));
  EXPECT_EQ(s.tets, ref.elems.size());
  EXPECT_EQ(s.merged_tets, 0u);
  expect_valid_merge(v, 0, m);
}

TEST(VoxelMerged, SolidBlockShrinksAndKeepsKuhnQuality) {
  const VoxelMesh v = voxel_model({16, 16, 16}, [](int, int, int) { return true; });
  const double kuhn = min_dihedral_deg(voxel_to_tet(v, 6));
  EXPECT_NEAR(kuhn, 45.0, 1e-9);
  size_t previous = 6 * v.cells.size() + 1;
  for (int levels = 0; levels <= 4; ++levels) {
    VoxelMergeStats s;
    const TetMesh m = voxel_to_tet_merged(v, levels, &s);
    expect_valid_merge(v, levels, m);
    EXPECT_GE(min_dihedral_deg(m), kuhn - 1e-9);
    EXPECT_EQ(s.tets, m.elems.size());
    EXPECT_EQ(s.voxel_tets_replaced + (s.tets - s.merged_tets), s.unmerged_tets);
    EXPECT_EQ(s.boundary_voxels, 16u * 16 * 16 - 14u * 14 * 14);
    EXPECT_LE(m.elems.size(), previous);
    previous = m.elems.size();
    std::cout << "16^3 block: " << to_text(s);
  }
  // The 14^3 interior is mostly merged.
  EXPECT_LT(double(previous), 0.55 * 6.0 * double(v.cells.size()));
}

TEST(VoxelMerged, ThinBarHoleAndLoneVoxel) {
  // A 16 x 16 x 12 block with a 4 x 4 hole through it along z, a one-voxel-thick bar sticking
  // out along x, a one-voxel-thick plate above, and a voxel touching the block at one edge only.
  const VoxelMesh v = voxel_model({26, 18, 16}, [](int i, int j, int k) {
    const bool block = i < 16 && j < 16 && k < 12 && !(i >= 6 && i < 10 && j >= 6 && j < 10);
    const bool bar = j == 8 && k == 5 && i >= 16 && i < 26;
    const bool plate = k == 12 && i >= 2 && i < 12 && j >= 3 && j < 13 && i != 7;
    const bool lone = i == 16 && j == 16 && k == 12;
    return block || bar || plate || lone;
  });
  for (int levels = 0; levels <= 4; ++levels) {
    VoxelMergeStats s;
    const TetMesh m = voxel_to_tet_merged(v, levels, &s);
    expect_valid_merge(v, levels, m);
    EXPECT_GE(min_dihedral_deg(m), 45.0 - 1e-9);
    if (levels >= 2) EXPECT_LT(s.tets, s.unmerged_tets) << to_text(s);
  }
}

TEST(VoxelMerged, RandomModelsAndMaterials) {
  std::mt19937 rng(20120605);
  for (int trial = 0; trial < 12; ++trial) {
    // Random balls, some voxels knocked out, two materials split by a plane.
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::array<std::array<double, 4>, 4> balls{};
    for (auto& b : balls) b = {3 + 14 * u(rng), 3 + 14 * u(rng), 3 + 14 * u(rng), 2 + 7 * u(rng)};
    const double holes = 0.03 * u(rng);
    const int split = 4 + int(12 * u(rng));
    VoxelMesh v;
    v.spacing = 0.25;
    v.origin = {-1.0, 0.5, 0.0};
    for (int k = -2; k < 20; ++k)
      for (int j = -1; j < 21; ++j)
        for (int i = -3; i < 19; ++i) {
          bool in = false;
          for (const auto& b : balls)
            in = in || std::hypot(i + 0.5 - b[0], j + 0.5 - b[1], k + 0.5 - b[2]) < b[3];
          if (in && u(rng) >= holes) v.cells.push_back({i, j, k});
        }
    if (v.cells.empty()) continue;
    std::shuffle(v.cells.begin(), v.cells.end(), rng);  // any cell order
    for (const auto& c : v.cells) v.material.push_back(trial % 2 && c[0] >= split ? 7 : 0);
    for (int levels : {1, 2, 3, 4}) {
      SCOPED_TRACE("trial " + std::to_string(trial));
      const TetMesh m = voxel_to_tet_merged(v, levels);
      expect_valid_merge(v, levels, m);
      // A tetrahedron carries its voxels' material and never straddles the material plane.
      if (trial % 2 == 0) continue;
      const double plane = v.origin[0] + v.spacing * split;
      for (size_t e = 0; e < m.elems.size(); ++e)
        for (int32_t n : m.elems[e]) {
          const double x = m.nodes[size_t(n)][0];
          if (m.material[e] == 7) ASSERT_GE(x, plane - 1e-12);
          else ASSERT_LE(x, plane + 1e-12) << "trial " << trial;
        }
    }
  }
}

TEST(VoxelMerged, BadInput) {
  VoxelMesh v = voxel_model({2, 2, 2}, [](int, int, int) { return true; });
  EXPECT_THROW(voxel_to_tet_merged(v, -1), InputError);
  EXPECT_THROW(voxel_to_tet_merged(v, kMaxMergeLevels + 1), InputError);
  v.material = {1, 2};
  EXPECT_THROW(voxel_to_tet_merged(v, 2), InputError);
  v.material.clear();
  v.cells.push_back(v.cells[3]);
  try {
    voxel_to_tet_merged(v, 2);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("listed twice"), std::string::npos) << e.what();
  }
  v.cells.clear();
  VoxelMergeStats s;
  EXPECT_TRUE(voxel_to_tet_merged(v, 3, &s).elems.empty());
  EXPECT_EQ(s.tets, 0u);
}

TEST(VoxelMerged, BunnyCountsAtVerschoorResolutions) {
  const auto dir = test::data_dir();
  if (dir.empty() || !std::filesystem::exists(dir / "bunny.off"))
    GTEST_SKIP() << "bunny.off not found in " << EB_MESH_DATA_DIR << " (third-party data, see SOURCES.md)";
  const TriSurface bunny = read_surface(dir / "bunny.off");
  for (int N : {32, 64, 128}) {
    const VoxelMesh v = voxelize_resolution(bunny, N, "bunny.off");
    VoxelMergeStats s;
    const TetMesh m = voxel_to_tet_merged(v, 3, &s);
    std::cout << "bunny N=" << N << ": " << to_text(s);
    EXPECT_EQ(s.unmerged_tets, 6 * v.cells.size());
    expect_valid_merge(v, 3, m);  // about 4 s at N = 128
    EXPECT_GE(min_dihedral_deg(m), 45.0 - 1e-9);
    EXPECT_LT(double(s.tets), (N == 32 ? 0.85 : 0.6) * double(s.unmerged_tets)) << to_text(s);
    if (N == 32) EXPECT_EQ(tets_by_coords(voxel_to_tet_merged(v, 0), v), tets_by_coords(voxel_to_tet(v, 6), v));
  }
}

TEST(VoxelMerged, MeshSpecAndCli) {
  const auto dir = test::temp_dir("merged");
  MeshSpec f = test::ball_file_spec(dir, 4000);
  const TetMesh plain = build_tet_mesh(f, dir);
  f.tetrahedralizer = "voxel-merged";
  const TetMesh merged = build_tet_mesh(f, dir);
  EXPECT_LT(merged.elems.size(), plain.elems.size());
  double va = 0, vb = 0;
  for (const auto& e : plain.elems) va += tet_volume(plain, e);
  for (const auto& e : merged.elems) vb += tet_volume(merged, e);
  EXPECT_NEAR(vb, va, 1e-12 * va);
  f.merge_levels = 0;
  EXPECT_EQ(build_tet_mesh(f, dir).elems.size(), plain.elems.size());
  const auto message = [&](MeshSpec spec) {
    try {
      build_tet_mesh(spec, dir);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  f.merge_levels = kMaxMergeLevels + 1;
  EXPECT_NE(message(f).find("mesh.merge_levels"), std::string::npos) << message(f);
  f.merge_levels = 3;
  f.tets_per_cube = 5;
  EXPECT_NE(message(f).find("mesh.tets_per_cube"), std::string::npos) << message(f);
  f.tets_per_cube = 6;
  f.tetrahedralizer = "voxels";
  EXPECT_NE(message(f).find("voxel-merged"), std::string::npos) << message(f);

  const std::string in = (dir / "ball.obj").string(), out = (dir / "ball.vtu").string();
  auto r = test::run_cli("mesh voxelize '" + in + "' --resolution 24 --tets --merge-levels 2 -o '" + out + "'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(r.output, match, std::regex("-> ([0-9]+) tetrahedra instead of ([0-9]+)"))) << r.output;
  EXPECT_EQ(read_mesh_file(out).tets.size(), std::stoul(match[1]));
  EXPECT_LT(std::stoul(match[1]), std::stoul(match[2]));
  const std::string voxelize = "mesh voxelize '" + in + "' --resolution 24 -o '" + out + "' ";
  EXPECT_EQ(test::run_cli(voxelize + "--merge-levels 2").exit_code, 2);  // needs --tets
  EXPECT_EQ(test::run_cli(voxelize + "--tets --merge-levels 9").exit_code, 2);
}

}  // namespace
}  // namespace eb::mesh
