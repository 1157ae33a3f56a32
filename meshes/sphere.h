#pragma once
// Sphere meshes: the tetrahedral unit spheres of Cecka et al. 2011 (Table 16.1) and triangle
// spheres (icospheres) for voxelization and Gmsh tests.
#include "meshes/mesh.h"

namespace eb::mesh {

// Cecka 2011 used unit-sphere meshes of about 63/120, 305/960, 1.7K/7.1K and 3.6K/16.5K
// nodes/tetrahedra. Their meshes are not published, so these are generated deterministically
// (no Gmsh: the GPU machines must produce the same mesh): an n^3 lattice on [-1,1]^3 split into
// 5 tetrahedra per cube and mapped onto the ball by x -> x |x|_inf / |x|_2, which sends each
// cube shell onto a sphere. n = 3, 6, 11, 15 for levels 0..3 gives 64/135, 343/1080,
// 1728/6655 and 4096/16875 nodes/tetrahedra.
int sphere_divisions(int level);
TetMesh make_sphere_tet(int level, double radius = 1.0, const Vec3& center = {0, 0, 0});
// Same construction with any number of lattice divisions (n >= 1).
TetMesh make_sphere_tet_divisions(int n, double radius = 1.0, const Vec3& center = {0, 0, 0});

// The Gmsh path (mesh.source = "sphere", mesh.tetrahedralizer = "gmsh"; needs ELASTOBENCH_HAVE_GMSH,
// else InputError naming the key): the icosphere(5) surface remeshed and tetrahedralized at the
// target edge length gmsh_sphere_size(level) = 0.58, 0.285, 0.142, 0.106, chosen so the counts
// come near Table 16.1's: Debian 12's Gmsh gives 63/137, 273/957, 1541/7006 and 3358/16427
// nodes/tetrahedra for levels 0..3 (tests/meshes: within 25% of the paper's).
double gmsh_sphere_size(int level);
TetMesh make_sphere_tet_gmsh(int level, double radius = 1.0, const Vec3& center = {0, 0, 0});

// Icosahedron subdivided `subdivisions` times, vertices on the sphere, outward orientation:
// 20 * 4^s triangles.
TriSurface make_icosphere(int subdivisions, double radius = 1.0, const Vec3& center = {0, 0, 0});

}  // namespace eb::mesh
