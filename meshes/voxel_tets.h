#pragma once
// Verschoor & Jalba 2012 Sec. 5.5: a voxel model tetrahedralized with equal-size tetrahedra near
// its surface and the interior merged into fewer, larger tetrahedra, as one conforming mesh.
//
// Construction (adaptive Maubach bisection of a Kuhn triangulation, conforming by design):
//  1. The voxel lattice is covered by coarse cubes of 2^L voxels per edge (L = max_merge_levels),
//     starting at the smallest voxel index along each axis. Each coarse cube is split into the 6
//     Kuhn tetrahedra around its main diagonal (the direction voxel_to_tet uses), vertices
//     ordered along the path from the cube's low corner, tag 3.
//  2. A tetrahedron is bisected (Maubach's tagged bisection: edge x0-xk, children
//     (x0..x_{k-1}, z, x_{k+1}..x3) and (x1..xk, z, x_{k+1}..x3), tag k-1, or 3 after 1; three
//     bisections give the Kuhn tetrahedra of the half-size cubes) while it overlaps a voxel that
//     is outside the model or is a boundary voxel (a model voxel with one of its 26 neighbours
//     outside the model or of another material), until it is voxel-sized. Tetrahedra that
//     overlap no model voxel are dropped; voxel-sized ones are kept where their voxel is a model
//     voxel.
//  3. Closure: a tetrahedron with a mesh vertex at the midpoint of one of its edges is bisected,
//     repeated until none is left (terminates for Kuhn meshes with Maubach's rule). Tetrahedra
//     that stayed larger than a voxel cover interior voxels of one material only.
// All tetrahedra are similar to the Kuhn tetrahedron or to one of its two bisection halves
// (minimum dihedral angle 45 degrees in each of the 3 classes), and every boundary voxel is split
// into 6 equal tetrahedra around one main diagonal.
//
// Difference from voxel_to_tet: no bisection of a Kuhn tetrahedron is a union of the half-size
// Kuhn tetrahedra with the same diagonal direction, so the voxel-sized tetrahedra of the bisection
// hierarchy are those of the *reflected* Kuhn triangulation: the diagonal of voxel (i,j,k),
// counted from the coarse lattice's origin, runs along ((-1)^i, (-1)^j, (-1)^k). The boundary
// surface is the same set of voxel faces as voxel_to_tet's, each split into 2 triangles, but
// the face diagonals differ on some faces. max_merge_levels = 0 is exactly voxel_to_tet(v, 6).
#include <cstddef>
#include <string>
#include <vector>

#include "meshes/mesh.h"

namespace eb::mesh {

inline constexpr int kMaxMergeLevels = 8;  // coarse cubes of up to 256 voxels per edge

struct VoxelMergeStats {
  int merge_levels = 0;
  size_t voxels = 0;           // model voxels
  size_t boundary_voxels = 0;  // model voxels that keep voxel-sized tetrahedra
  size_t unmerged_tets = 0;    // voxel_to_tet's count: 6 per voxel
  size_t tets = 0;             // elements of the merged mesh
  size_t nodes = 0;
  size_t merged_tets = 0;           // elements larger than a voxel tetrahedron
  size_t voxel_tets_replaced = 0;   // voxel tetrahedra (1/6 voxel) those elements cover
  // by_size[g]: elements of volume 2^g voxel tetrahedra, g = 0..3*merge_levels.
  std::vector<size_t> by_size;
  double seconds = 0.0;
};

// Nodes are numbered in lattice order (z, then y, then x); elements are sorted by their lowest
// node; all positively oriented (VTK_TETRA). Material ids come from the voxels. Throws
// InputError for a non-positive spacing, a voxel listed twice, a material array of another
// length, or max_merge_levels outside 0..kMaxMergeLevels.
TetMesh voxel_to_tet_merged(const VoxelMesh& voxels, int max_merge_levels = 3, VoxelMergeStats* stats = nullptr);

// Two lines for `elastobench mesh` commands: counts and the elements per size class.
std::string to_text(const VoxelMergeStats& s);

}  // namespace eb::mesh
