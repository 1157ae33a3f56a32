#pragma once
// Reading and writing mesh files, format chosen by extension:
//   volume:  .vtu (VTK XML), .vtk (legacy VTK), .msh (Gmsh v1, v2, v4 ASCII; v2/v4 binary),
//            .mesh (Medit/INRIA), .node/.ele (TetGen; either name, the other is found beside it)
//   surface: .obj, .off, .stl (ASCII and binary), .ply (ASCII and binary), .vtp, and the
//            triangles of any of the volume formats above
// Where VTK is compiled in (ELASTOBENCH_HAVE_VTK) .vtu/.vtk/.vtp are read through VTK's own
// readers; our own readers are always built (the GPU machines have no VTK) and tests check that
// both agree. All writers are our own and write atomically (temporary file + rename).
//
// Every reader reports bad input as InputError "<file>:<line>: ..." (text formats) or
// "<file>: element N ..." (after parsing): truncation, malformed numbers, NaN/Inf coordinates,
// indices out of range, inverted or zero-volume elements, empty meshes.
//
// Orientation: a file whose tetrahedra are ALL negative uses the other corner order and is
// reoriented on reading (corners 2 and 3 swapped); a file with only SOME negative (or zero-volume)
// tetrahedra is tangled and is rejected, naming the first one and the count. Flipping single
// elements would hide a real defect, since a consistently built mesh has one orientation.
// `mesh info` reads without the check and counts inverted/degenerate elements instead.
// Every third-party tet mesh in ../shared/data/meshes is positive as stored.
//
// Regions: Gmsh physical groups (MSH v1 region, v2 first tag, v4 volume entity's physical tag),
// Medit references, TetGen region attributes and VTK cell arrays (material_id, meshio's
// gmsh:physical / medit:ref, CellEntityIds) become the element material.
//
// Unused nodes (no element uses them; the raptor .vtu files have 1-3) are kept by
// read_mesh_file and `mesh convert`, counted by `mesh info`, and dropped by to_tet_mesh /
// to_hex_mesh, which is how simulations load meshes.
#include <filesystem>
#include <string>
#include <vector>

#include "meshes/mesh.h"

namespace eb::mesh {

// Everything a file may hold. Node ids are 0-based indices into `nodes`.
struct MeshFile {
  std::vector<Vec3> nodes;
  std::vector<std::array<int32_t, 4>> tets;
  std::vector<int32_t> tet_material;  // empty or one per tet
  std::vector<std::array<int32_t, 8>> hexes;
  std::vector<int32_t> hex_material;
  std::vector<std::array<int32_t, 3>> tris;  // surface or boundary triangles
};

struct ReadOptions {
  // Reject inverted/zero-volume elements. `mesh info` turns this off to count them instead.
  bool check_elements = true;
  // Use VTK's readers for .vtu/.vtk/.vtp when compiled in; false forces our own readers.
  bool prefer_vtk = true;
};

enum class MshVersion { V2, V4 };
struct WriteOptions {
  bool compress = true;               // .vtu/.vtp: zlib-compressed appended data
  MshVersion msh_version = MshVersion::V4;
};

// Reads any supported file; checks finiteness and index ranges always, element orientation
// when options.check_elements. An empty file (no nodes or no cells) is an error.
MeshFile read_mesh_file(const std::filesystem::path& path, const ReadOptions& options = {});
// The same from a file's content held in memory, with our own readers; `name` gives the
// format by its extension and names the file in messages. TetGen's two-file format is not
// accepted. The fuzz targets (tests/fuzz) enter here.
MeshFile read_mesh_text(const std::string& name, std::string content, const ReadOptions& options = {});
void write_mesh_file(const std::filesystem::path& path, const MeshFile& mesh, const WriteOptions& options = {});

bool is_surface_extension(const std::filesystem::path& path);  // .obj .off .stl .ply .vtp
bool is_supported_extension(const std::filesystem::path& path);
std::string supported_extensions();

// Typed views. Volume extraction drops nodes no cell uses (renumbering the rest in order), so
// that a FEM system built on the result is not singular. `source` names the file in messages.
TetMesh to_tet_mesh(const MeshFile& f, const std::string& source);
HexMesh to_hex_mesh(const MeshFile& f, const std::string& source);
TriSurface to_surface(const MeshFile& f, const std::string& source);
MeshFile to_mesh_file(const TetMesh& m);
MeshFile to_mesh_file(const HexMesh& m);
MeshFile to_mesh_file(const TriSurface& s);

TetMesh read_tet_mesh(const std::filesystem::path& path);
HexMesh read_hex_mesh(const std::filesystem::path& path);
// A surface file, or the triangles of a volume file. Not checked for closedness here.
TriSurface read_surface(const std::filesystem::path& path);

void write_tet_mesh(const std::filesystem::path& path, const TetMesh& m, const WriteOptions& options = {});
void write_hex_mesh(const std::filesystem::path& path, const HexMesh& m, const WriteOptions& options = {});
void write_surface(const std::filesystem::path& path, const TriSurface& s, const WriteOptions& options = {});

// Coordinates transform x -> scale * x + translate, in place.
void transform_nodes(std::vector<Vec3>& nodes, double scale, const Vec3& translate);

}  // namespace eb::mesh
