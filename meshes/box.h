#pragma once
#include <array>

#include "meshes/mesh.h"

namespace eb::mesh {

// Box [origin, origin+size] split into n[0] x n[1] x n[2] hexahedra.
HexMesh make_box_hex(const Vec3& origin, const Vec3& size, const std::array<int, 3>& n);

// Same lattice, each cube split into 5 or 6 tetrahedra. The 6-tet split shares the main
// diagonal in every cube; the 5-tet split alternates its orientation by cell parity so that
// the face diagonals of neighbouring cubes agree (a conforming mesh either way).
TetMesh make_box_tet(const Vec3& origin, const Vec3& size, const std::array<int, 3>& n,
                     int tets_per_cube);

// Hexahedral mesh of a voxel model with shared nodes (nodes numbered in order of first use).
HexMesh voxel_to_hex(const VoxelMesh& voxels);

}  // namespace eb::mesh
