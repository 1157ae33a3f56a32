#include "meshes/mesh_spec.h"

#include <cmath>
#include <cstdlib>

#include "meshes/box.h"
#include "meshes/errors.h"

#ifndef ELASTOBENCH_SOURCE_DIR
#define ELASTOBENCH_SOURCE_DIR "."
#endif

namespace eb::mesh {

std::filesystem::path default_data_dir() {
  if (const char* env = std::getenv("ELASTOBENCH_DATA"); env && *env) return env;
  return std::filesystem::path(ELASTOBENCH_SOURCE_DIR) / ".." / "shared" / "data" / "meshes";
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
  std::array<int, 3> n{};
  for (int d = 0; d < 3; ++d) {
    if (!(spec.size[d] > 0.0)) throw InputError("mesh.size must be positive in every axis");
    if (spec.element_size > 0.0)
      n[d] = std::max(1, int(std::lround(spec.size[d] / spec.element_size)));
    else if (spec.elements_per_edge > 0)
      n[d] = spec.elements_per_edge;
    else
      throw InputError("a box mesh needs mesh.element_size > 0 or mesh.elements_per_edge > 0");
  }
  return n;
}

HexMesh build_hex_mesh(const MeshSpec& spec, const std::filesystem::path& data_dir) {
  (void)data_dir;
  if (spec.source == "box") return make_box_hex(spec.origin, spec.size, box_divisions(spec));
  throw InputError("mesh.source '" + spec.source + "' cannot produce hexahedra (valid: box)");
}

TetMesh build_tet_mesh(const MeshSpec& spec, const std::filesystem::path& data_dir) {
  (void)data_dir;
  if (spec.source == "box")
    return make_box_tet(spec.origin, spec.size, box_divisions(spec), spec.tets_per_cube);
  throw InputError("mesh.source '" + spec.source + "' cannot produce tetrahedra (valid: box)");
}

}  // namespace eb::mesh
