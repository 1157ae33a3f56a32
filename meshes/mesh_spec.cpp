#include "meshes/mesh_spec.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "meshes/box.h"
#include "meshes/errors.h"
#include "meshes/geometry.h"
#include "meshes/gmsh_tet.h"
#include "meshes/host_memory.h"
#include "meshes/mesh_io.h"
#include "meshes/sphere.h"
#include "meshes/voxel_tets.h"
#include "meshes/voxelize.h"

#ifndef ELASTOBENCH_SOURCE_DIR
#define ELASTOBENCH_SOURCE_DIR "."
#endif

namespace eb::mesh {

std::filesystem::path default_data_dir() {
  if (const char* env = std::getenv("ELASTOBENCH_DATA"); env && *env) return env;
  return (std::filesystem::path(ELASTOBENCH_SOURCE_DIR) / ".." / "shared" / "data" / "meshes").lexically_normal();
}

std::filesystem::path resolve_data_file(const std::string& file, const std::filesystem::path& data_dir) {
  if (file.empty()) throw InputError("mesh.file is empty");
  std::filesystem::path p(file);
  if (p.is_absolute() || std::filesystem::exists(p)) {
    if (!std::filesystem::exists(p)) throw InputError("mesh file not found: " + p.string());
    return p;
  }
  const auto candidate = data_dir / p;
  if (!std::filesystem::exists(candidate))
    throw InputError("mesh file '" + file + "' not found: looked in the current directory and in the data directory " +
                     data_dir.lexically_normal().string() + " (set --data-dir or ELASTOBENCH_DATA)");
  return candidate;
}

std::array<int, 3> box_divisions(const MeshSpec& spec) {
  // Counted in double first: a tiny element_size gives counts beyond int, and the memory they
  // need is refused before anything is allocated.
  double count[3];
  if (!spec.divisions.empty() && spec.divisions.size() != 3)
    throw InputError("mesh.divisions must have 3 entries [nx, ny, nz]");
  for (int d = 0; d < 3; ++d) {
    if (!(spec.size[d] > 0.0)) throw InputError("mesh.size must be positive in every axis");
    if (!spec.divisions.empty()) {
      if (spec.divisions[size_t(d)] < 1) throw InputError("mesh.divisions must be >= 1 in every axis");
      count[d] = spec.divisions[size_t(d)];
    } else if (spec.element_size > 0.0)
      count[d] = std::max(1.0, std::round(spec.size[d] / spec.element_size));
    else if (spec.elements_per_edge > 0)
      count[d] = spec.elements_per_edge;
    else
      throw InputError("a box mesh needs mesh.element_size > 0 or mesh.elements_per_edge > 0");
  }
  const double elements = count[0] * count[1] * count[2];
  const double nodes = (count[0] + 1) * (count[1] + 1) * (count[2] + 1);
  // The mesh alone, as hexahedra (8 indices); tetrahedra and every method's state add to it.
  std::ostringstream what;
  what << "a box mesh of " << count[0] << " x " << count[1] << " x " << count[2] << " = " << elements << " elements";
  if (spec.element_size > 0.0) what << " (mesh.element_size " << spec.element_size << ")";
  require_host_memory(nodes * sizeof(Vec3) + elements * 8 * sizeof(int32_t), what.str());
  // Node indices are int32_t.
  if (nodes > double(INT32_MAX)) throw RuntimeFailure(what.str() + " has more nodes than 32-bit indices can number");
  return {int(count[0]), int(count[1]), int(count[2])};
}

namespace {

// Icosphere fine enough that voxelizing it matches the exact sphere to well below a voxel.
constexpr int kSphereSubdivisions = 5;

VoxelMesh voxelize_spec(const TriSurface& surface, const MeshSpec& spec, const std::string& source) {
  VoxelMesh v;
  if (spec.target_elements > 0)
    v = voxelize_target(surface, size_t(spec.target_elements), source);
  else if (spec.element_size > 0.0)
    v = voxelize(surface, spec.element_size, source);
  else
    throw InputError(source + ": voxelizing a surface needs mesh.target_elements > 0 or mesh.element_size > 0");
  return subdivide_voxels(v, spec.voxel_subdivision, source);
}

// mesh.voxel_subdivision refines a voxelization; any other mesh would silently ignore it.
void refuse_subdivision(const MeshSpec& spec, const std::string& what) {
  if (spec.voxel_subdivision != 1)
    throw InputError("mesh.voxel_subdivision = " + std::to_string(spec.voxel_subdivision) +
                     " applies to voxelized surfaces only, not to " + what);
}

void check_source(const MeshSpec& spec) {
  if (spec.source != "box" && spec.source != "file" && spec.source != "sphere")
    throw InputError("mesh.source '" + spec.source + "' is unknown (valid: box, file, sphere)");
  const std::string& t = spec.tetrahedralizer;
  if (t != "voxel" && t != "voxel-merged" && t != "gmsh")
    throw InputError("mesh.tetrahedralizer '" + t + "' is unknown (valid: voxel, voxel-merged, gmsh)");
  if (spec.merge_levels < 0 || spec.merge_levels > kMaxMergeLevels)
    throw InputError("mesh.merge_levels must be 0.." + std::to_string(kMaxMergeLevels) + ", got " +
                     std::to_string(spec.merge_levels));
  if (spec.voxel_subdivision < 1 || spec.voxel_subdivision > kMaxVoxelSubdivision)
    throw InputError("mesh.voxel_subdivision must be 1.." + std::to_string(kMaxVoxelSubdivision) + ", got " +
                     std::to_string(spec.voxel_subdivision));
  if (spec.source == "box") refuse_subdivision(spec, "a box (set mesh.divisions or mesh.element_size instead)");
  if (t == "voxel-merged" && spec.tets_per_cube != 6)
    throw InputError("mesh.tetrahedralizer \"voxel-merged\" splits voxels into 6 tetrahedra: mesh.tets_per_cube must "
                     "be 6, got " + std::to_string(spec.tets_per_cube));
}

// The file's contents, scaled and translated; surfaces come back in `surface`.
MeshFile load_spec_file(const MeshSpec& spec, const std::filesystem::path& data_dir, std::string& name) {
  const auto path = resolve_data_file(spec.file, data_dir);
  name = path.string();
  MeshFile f = read_mesh_file(path);
  transform_nodes(f.nodes, spec.scale, spec.translate);
  return f;
}

bool is_surface_only(const MeshFile& f) { return f.tets.empty() && f.hexes.empty(); }

}  // namespace

HexMesh build_hex_mesh(const MeshSpec& spec, const std::filesystem::path& data_dir) {
  check_source(spec);
  HexMesh m;
  std::string name = "mesh." + spec.source;
  if (spec.source == "box") {
    m = make_box_hex(spec.origin, spec.size, box_divisions(spec));
    transform_nodes(m.nodes, spec.scale, spec.translate);
  } else if (spec.source == "sphere") {
    TriSurface s = make_icosphere(kSphereSubdivisions);
    transform_nodes(s.nodes, spec.scale, spec.translate);
    m = voxel_to_hex(voxelize_spec(s, spec, "unit sphere"));
  } else {
    const MeshFile f = load_spec_file(spec, data_dir, name);
    if (is_surface_only(f))
      m = voxel_to_hex(voxelize_spec(to_surface(f, name), spec, name));
    else {
      refuse_subdivision(spec, "a volume mesh file (" + name + ")");
      m = to_hex_mesh(f, name);
    }
  }
  check_hex_mesh(m, name);
  return m;
}

TetMesh build_tet_mesh(const MeshSpec& spec, const std::filesystem::path& data_dir) {
  check_source(spec);
  TetMesh m;
  std::string name = "mesh." + spec.source;
  if (spec.source == "box") {
    m = make_box_tet(spec.origin, spec.size, box_divisions(spec), spec.tets_per_cube, parse_cube_split(spec.cube_split));
    transform_nodes(m.nodes, spec.scale, spec.translate);
  } else if (spec.source == "sphere") {
    refuse_subdivision(spec, "the tetrahedral sphere (mesh.refinement sets its resolution)");
    m = spec.tetrahedralizer == "gmsh" ? make_sphere_tet_gmsh(spec.refinement) : make_sphere_tet(spec.refinement);
    transform_nodes(m.nodes, spec.scale, spec.translate);
  } else {
    const MeshFile f = load_spec_file(spec, data_dir, name);
    if (!is_surface_only(f)) {
      refuse_subdivision(spec, "a volume mesh file (" + name + ")");
      m = to_tet_mesh(f, name);
    } else if (spec.tetrahedralizer == "gmsh") {
      refuse_subdivision(spec, "a Gmsh tetrahedralization (mesh.element_size sets its resolution)");
      TetrahedralizeOptions o;
      o.size = spec.element_size;
      m = tetrahedralize_surface(to_surface(f, name), o, name);
    } else if (spec.tetrahedralizer == "voxel-merged") {
      m = voxel_to_tet_merged(voxelize_spec(to_surface(f, name), spec, name), spec.merge_levels);
    } else {
      m = voxel_to_tet(voxelize_spec(to_surface(f, name), spec, name), spec.tets_per_cube);
    }
  }
  check_tet_mesh(m, name);
  return m;
}

}  // namespace eb::mesh
