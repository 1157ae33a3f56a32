#pragma once
// Per-format readers and writers behind mesh_io.h (internal to meshes/). Readers return raw
// file contents; mesh_io.cpp applies the common checks.
#include <filesystem>
#include <ostream>
#include <string>

#include "meshes/mesh_io.h"
#include "meshes/text_reader.h"

namespace eb::mesh::formats {

// Adds a cell of VTK type `vtk_type` read from the file; 0-D/1-D cells and quads are skipped
// (they are boundary/annotation entities), unsupported volume cells fail with `where`.
// Returns false when skipped.
bool add_vtk_cell(MeshFile& m, int vtk_type, const int64_t* ids, size_t n, int32_t material,
                  const TextReader& where);

// Cell arrays read as the element material (region), in order of preference: ours, then the
// names meshio writes for Gmsh physical groups and Medit references, then VTK/FEniCS's.
inline constexpr const char* kRegionArrayNames[] = {"material_id", "gmsh:physical", "medit:ref", "CellEntityIds"};
// Ends the message of a file our reader refuses for a feature it lacks (not for bad input), so
// that read_mesh_file can leave such a file to VTK's readers where they are compiled in.
inline constexpr const char* kNotInBuiltinReader = "not supported by the built-in reader";

// Rank of `name` in kRegionArrayNames; -1 when it is not a region array.
int region_array_rank(const std::string& name);

MeshFile read_obj(TextReader& in);
MeshFile read_off(TextReader& in);
MeshFile read_stl(TextReader& in);
MeshFile read_ply(TextReader& in);
void write_obj(std::ostream& out, const MeshFile& m);
void write_off(std::ostream& out, const MeshFile& m);
void write_stl(std::ostream& out, const MeshFile& m);  // binary STL
void write_ply(std::ostream& out, const MeshFile& m);  // binary little-endian PLY

MeshFile read_msh(TextReader& in);
void write_msh(std::ostream& out, const MeshFile& m, MshVersion version);
MeshFile read_medit(TextReader& in);
void write_medit(std::ostream& out, const MeshFile& m);
MeshFile read_tetgen(const std::filesystem::path& node_file, const std::filesystem::path& ele_file);
void write_tetgen_node(std::ostream& out, const MeshFile& m);
void write_tetgen_ele(std::ostream& out, const MeshFile& m);

MeshFile read_vtk_legacy(TextReader& in);
void write_vtk_legacy(std::ostream& out, const MeshFile& m);
MeshFile read_vtk_xml(TextReader& in);  // .vtu and .vtp
void write_vtu_mesh(const std::filesystem::path& path, const MeshFile& m, bool compress);
void write_vtp_mesh(const std::filesystem::path& path, const MeshFile& m, bool compress);

#ifdef ELASTOBENCH_HAVE_VTK
// .vtu, .vtp and legacy .vtk through VTK's readers; errors reported by VTK become InputError.
MeshFile read_with_vtk(const std::filesystem::path& path);
#endif

}  // namespace eb::mesh::formats
