#pragma once
#include <array>
#include <string>

#include "meshes/mesh.h"

namespace eb::mesh {

// How a cube becomes 6 tetrahedra: Kuhn's split around the diagonal 0-6 (ours), or SOFA's
// Hexa2TetraTopologicalMapping (the same diagonal, its own tetrahedra and node order within each:
// the edge-frame co-rotation depends on that order, so SOFA's scenes are reproduced with it).
enum class CubeSplit { Kuhn, Sofa };
CubeSplit parse_cube_split(const std::string& name);  // "kuhn" | "sofa"; InputError otherwise

// Box [origin, origin+size] split into n[0] x n[1] x n[2] hexahedra.
HexMesh make_box_hex(const Vec3& origin, const Vec3& size, const std::array<int, 3>& n);

// Same lattice, each cube split into 5 or 6 tetrahedra. The 6-tet split shares the main
// diagonal in every cube; the 5-tet split alternates its orientation by cell parity so that
// the face diagonals of neighbouring cubes agree (a conforming mesh either way).
TetMesh make_box_tet(const Vec3& origin, const Vec3& size, const std::array<int, 3>& n,
                     int tets_per_cube, CubeSplit split = CubeSplit::Kuhn);

// Hexahedral mesh of a voxel model with shared nodes (nodes numbered in order of first use).
HexMesh voxel_to_hex(const VoxelMesh& voxels);

// Regular tetrahedralization of a voxel model (Verschoor & Jalba 2012): every voxel is split
// into 6 equal-volume tetrahedra around its main diagonal (or 5, not equal-size, alternating by
// lattice parity). Conforming across voxels. All tetrahedra have the voxel's size; Verschoor's
// step that merges the interior into larger tetrahedra is voxel_to_tet_merged (voxel_tets.h).
TetMesh voxel_to_tet(const VoxelMesh& voxels, int tets_per_cube = 6);

// Splits one cube (corners c in VTK hexahedron order) into 5 or 6 positive tetrahedra.
// `parity` (0/1) selects the mirrored 5-tet split so that neighbouring cubes conform.
// CubeSplit::Sofa needs tets_per_cube 6 (its tetrahedra are all positive: no reordering).
void append_cube_tets(const std::vector<Vec3>& nodes, const std::array<int32_t, 8>& c, int parity, int tets_per_cube,
                      std::vector<std::array<int32_t, 4>>& out, CubeSplit split = CubeSplit::Kuhn);

}  // namespace eb::mesh
