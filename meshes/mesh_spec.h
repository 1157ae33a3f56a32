#pragma once
// How a scenario describes its mesh, independent of the element type a method wants: the same
// box or surface can become hexahedra (hexmg, tled) or tetrahedra (bcsr-pcg, corot-cg, ...).
#include <array>
#include <filesystem>
#include <string>
#include <vector>

#include "meshes/mesh.h"

namespace eb::mesh {

// How each source becomes elements (build_hex_mesh / build_tet_mesh):
//   box     hex: make_box_hex; tet: make_box_tet (tets_per_cube 5 or 6).
//   file    a volume file (.vtu .vtk .msh .mesh .node/.ele) is used as it is: tetrahedra for
//           build_tet_mesh, hexahedra for build_hex_mesh (a file with the other element type is
//           an error). A surface file (.obj .off .stl .ply .vtp) must be closed and is
//           hex: voxelized, to about target_elements voxels if > 0, else with voxel edge
//                element_size;
//           tet: tetrahedralizer = "voxel" (default, works in every build): voxelized as for
//                hex, then each voxel split into tets_per_cube tetrahedra (Verschoor 2012; 6 gives
//                equal-size tetrahedra; target_elements counts voxels); tetrahedralizer =
//                "voxel-merged": voxelized the same way, 6 tetrahedra per voxel near the surface
//                and the interior merged into larger ones over up to merge_levels bisection
//                levels (0..8, voxel_tets.h; tets_per_cube must be 6); tetrahedralizer = "gmsh":
//                Gmsh with target edge length element_size (needs ELASTOBENCH_HAVE_GMSH).
//           The file's coordinates are scaled and translated first, so element_size is in the
//           final units.
//   sphere  tet: Cecka 2011 unit sphere at `refinement` 0..3 (see sphere.h): the lattice sphere,
//           or with tetrahedralizer = "gmsh" the Gmsh sphere (needs ELASTOBENCH_HAVE_GMSH); hex: a voxelized
//           unit sphere (target_elements or element_size required). Then scaled/translated.
// scale/translate apply to every source (identity by default).
struct MeshSpec {
  // "box": an axis-aligned box; "file": a volume or surface mesh file (surfaces are voxelized
  // for hexahedra or tetrahedralized for tetrahedra); "sphere": the unit-sphere tetrahedral
  // meshes of Cecka 2011 (refinement level below).
  std::string source = "box";
  std::string file;                  // for source = "file"; relative paths use the data dir
  Vec3 origin{0.0, 0.0, 0.0};        // box corner
  Vec3 size{1.0, 1.0, 1.0};          // box extent (m)
  double element_size = 0.0;         // target edge length (m); wins over elements_per_edge
  int elements_per_edge = 0;         // box: elements along every axis
  int target_elements = 0;           // voxelization of a surface: aim for this many hexahedra
  int tets_per_cube = 6;             // box/voxel tetrahedralization: 5 or 6
  int refinement = 0;                // sphere: 0..3
  double scale = 1.0;                // applied to file coordinates (e.g. mm -> m: 0.001)
  Vec3 translate{0.0, 0.0, 0.0};     // applied after scale
  std::string tetrahedralizer = "voxel";  // surface -> tetrahedra: "voxel", "voxel-merged" or "gmsh"
  int merge_levels = 3;                   // "voxel-merged": coarse cubes of 2^merge_levels voxels
  // A voxelized surface (file or sphere): each voxel split into n^3 equal voxels after
  // voxelizing, so that meshes of several resolutions share one voxel geometry (a surface
  // voxelized afresh at each resolution changes shape with it, and a convergence study then
  // mixes discretization error with geometry change). 1: none; at most kMaxVoxelSubdivision.
  int voxel_subdivision = 1;
  // box: elements per axis [nx, ny, nz] (a grid that is not cubic, e.g. SOFA's 75 x 15 x 15 beam);
  // empty: element_size / elements_per_edge. Wins over both when given.
  std::vector<int> divisions;
  // box tetrahedra: "kuhn" (ours) or "sofa" (SOFA's Hexa2TetraTopologicalMapping, its node order;
  // box.h CubeSplit), tets_per_cube 6.
  std::string cube_split = "kuhn";
};

constexpr int kMaxVoxelSubdivision = 8;

// Where third-party mesh files are looked for: --data-dir, else $ELASTOBENCH_DATA, else
// ../shared/data/meshes beside the source tree.
std::filesystem::path default_data_dir();
std::filesystem::path resolve_data_file(const std::string& file, const std::filesystem::path& data_dir);

// Number of box elements per axis from element_size / elements_per_edge.
std::array<int, 3> box_divisions(const MeshSpec& spec);

HexMesh build_hex_mesh(const MeshSpec& spec, const std::filesystem::path& data_dir);
TetMesh build_tet_mesh(const MeshSpec& spec, const std::filesystem::path& data_dir);

}  // namespace eb::mesh
