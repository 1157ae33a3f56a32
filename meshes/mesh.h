#pragma once
// Mesh containers shared by all methods. Plain structs of arrays-of-structs on the host; each
// method converts to its own device layout. Element node orderings follow VTK so that output
// needs no permutation: VTK_TETRA (positive signed volume) and VTK_HEXAHEDRON (bottom face
// counter-clockwise seen from +z, then the top face).
#include <array>
#include <cstdint>
#include <vector>

namespace eb::mesh {

using Vec3 = std::array<double, 3>;

struct TetMesh {
  std::vector<Vec3> nodes;
  std::vector<std::array<int32_t, 4>> elems;
  std::vector<int32_t> material;  // per element; empty means all 0
};

struct HexMesh {
  std::vector<Vec3> nodes;
  std::vector<std::array<int32_t, 8>> elems;
  std::vector<int32_t> material;
};

// Regular voxel model: cells on an integer lattice (holes allowed). Node (i,j,k) sits at
// origin + spacing * (i,j,k); cell (i,j,k) spans nodes (i..i+1, j..j+1, k..k+1).
struct VoxelMesh {
  Vec3 origin{0.0, 0.0, 0.0};
  double spacing = 1.0;
  std::vector<std::array<int32_t, 3>> cells;
  std::vector<int32_t> material;
};

struct TriSurface {
  std::vector<Vec3> nodes;
  std::vector<std::array<int32_t, 3>> tris;
};

// VTK cell type ids, used by the writers.
enum class CellType : uint8_t { Triangle = 5, Tetra = 10, Hexahedron = 12 };

}  // namespace eb::mesh
