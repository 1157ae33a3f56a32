#include "meshes/mesh_io.h"

#include <algorithm>
#include <cmath>

#include "meshes/atomic_file.h"
#include "meshes/errors.h"
#include "meshes/formats.h"
#include "meshes/geometry.h"

namespace eb::mesh {
namespace {

namespace fs = std::filesystem;

const char* const kSurfaceExt[] = {".obj", ".off", ".stl", ".ply", ".vtp"};
const char* const kVolumeExt[] = {".vtu", ".vtk", ".msh", ".mesh", ".node", ".ele"};

bool in_list(const std::string& ext, const char* const* begin, const char* const* end) {
  return std::find_if(begin, end, [&](const char* e) { return ext == e; }) != end;
}

MeshFile read_text_format(TextReader& in, const std::string& ext);

MeshFile read_raw(const fs::path& path, const ReadOptions& options) {
  const std::string ext = lowercase_extension(path);
  if (!is_supported_extension(path))
    throw InputError(path.string() + ": unknown mesh format '" + ext + "' (supported: " + supported_extensions() + ")");
  if (ext == ".node" || ext == ".ele") {
    fs::path node = path, ele = path;
    node.replace_extension(".node");
    ele.replace_extension(".ele");
    for (const auto& p : {node, ele})
      if (!fs::exists(p)) throw InputError(p.string() + ": file not found (a TetGen mesh needs both .node and .ele)");
    return formats::read_tetgen(node, ele);
  }
  if (!fs::exists(path)) throw InputError(path.string() + ": file not found");
  std::error_code ec;
  if (fs::is_regular_file(path, ec) && fs::file_size(path, ec) == 0) throw InputError(path.string() + ": file is empty");
#ifdef ELASTOBENCH_HAVE_VTK
  if (options.prefer_vtk && (ext == ".vtu" || ext == ".vtp" || ext == ".vtk")) {
    // Our reader goes first as a gate: it names the line or array at fault, and it refuses
    // announced sizes the file cannot hold, where VTK's readers allocate them (std::bad_alloc
    // on a 1 KB file announcing 10^12 points) and accept NaN coordinates or fractional
    // indices. What only our reader lacks (a compressor other than zlib, base64 appended
    // data) is left to VTK.
    try {
      TextReader in(path);
      (void)read_text_format(in, ext);
    } catch (const InputError& ours) {
      if (std::string(ours.what()).find(formats::kNotInBuiltinReader) == std::string::npos) throw;
    }
    return formats::read_with_vtk(path);
  }
#else
  (void)options;
#endif
  TextReader in(path);
  return read_text_format(in, ext);
}

// Our own readers; `ext` (lowercase, with the dot) picks the format.
MeshFile read_text_format(TextReader& in, const std::string& ext) {
  if (ext == ".obj") return formats::read_obj(in);
  if (ext == ".off") return formats::read_off(in);
  if (ext == ".stl") return formats::read_stl(in);
  if (ext == ".ply") return formats::read_ply(in);
  if (ext == ".vtu" || ext == ".vtp") return formats::read_vtk_xml(in);
  if (ext == ".vtk") return formats::read_vtk_legacy(in);
  if (ext == ".msh") return formats::read_msh(in);
  return formats::read_medit(in);
}

// Renumbers nodes to those used by `elems` (in order of index) and rewrites the elements.
template <size_t N>
std::vector<Vec3> compact(const std::vector<Vec3>& nodes, std::vector<std::array<int32_t, N>>& elems) {
  std::vector<int32_t> map(nodes.size(), -1);
  for (const auto& e : elems)
    for (auto v : e) map[size_t(v)] = 0;
  std::vector<Vec3> out;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (map[i] == 0) {
      map[i] = int32_t(out.size());
      out.push_back(nodes[i]);
    }
  for (auto& e : elems)
    for (auto& v : e) v = map[size_t(v)];
  return out;
}

// Whole-mesh orientation convention: if every tetrahedron is negative the file orders corners
// the other way round (some generators do); such a mesh is reordered, not rejected. A mesh with
// only some negative tetrahedra is genuinely tangled and fails the element check.
void fix_global_orientation(MeshFile& m) {
  if (m.tets.empty()) return;
  for (const auto& t : m.tets)
    if (tet_state(m.nodes, t) != ElementState::Inverted) return;
  for (auto& t : m.tets) std::swap(t[2], t[3]);
}

}  // namespace

bool is_surface_extension(const fs::path& path) {
  return in_list(lowercase_extension(path), std::begin(kSurfaceExt), std::end(kSurfaceExt));
}

bool is_supported_extension(const fs::path& path) {
  const auto ext = lowercase_extension(path);
  return in_list(ext, std::begin(kSurfaceExt), std::end(kSurfaceExt)) ||
         in_list(ext, std::begin(kVolumeExt), std::end(kVolumeExt));
}

std::string supported_extensions() {
  std::string s;
  for (const char* e : kVolumeExt) s += std::string(s.empty() ? "" : " ") + e;
  for (const char* e : kSurfaceExt) s += std::string(" ") + e;
  return s;
}

namespace {

// The checks every reader's result goes through, whichever way the file was read.
MeshFile checked(MeshFile m, const std::string& name, const ReadOptions& options) {
  if (m.nodes.empty()) throw InputError(name + ": the mesh is empty (no nodes)");
  if (m.tets.empty() && m.hexes.empty() && m.tris.empty()) throw InputError(name + ": the mesh is empty (no cells)");
  check_finite_nodes(m.nodes, name);
  check_indices(m.tets, m.nodes.size(), name, "tetrahedron");
  check_indices(m.hexes, m.nodes.size(), name, "hexahedron");
  check_indices(m.tris, m.nodes.size(), name, "triangle");
  if (options.check_elements) {
    fix_global_orientation(m);
    check_tet_elements(m.nodes, m.tets, name);
    check_hex_elements(m.nodes, m.hexes, name);
  }
  return m;
}

}  // namespace

MeshFile read_mesh_file(const fs::path& path, const ReadOptions& options) {
  return checked(read_raw(path, options), path.string(), options);
}

MeshFile read_mesh_text(const std::string& name, std::string content, const ReadOptions& options) {
  const std::string ext = lowercase_extension(name);
  if (!is_supported_extension(name) || ext == ".node" || ext == ".ele")
    throw InputError(name + ": unknown single-file mesh format '" + ext + "'");
  if (content.empty()) throw InputError(name + ": file is empty");
  TextReader in(name, std::move(content));
  return checked(read_text_format(in, ext), name, options);
}

void write_mesh_file(const fs::path& path, const MeshFile& m, const WriteOptions& options) {
  const std::string ext = lowercase_extension(path);
  const std::string name = path.string();
  if (!is_supported_extension(path))
    throw InputError(name + ": unknown output format '" + ext + "' (supported: " + supported_extensions() + ")");
  if (m.nodes.empty() || (m.tets.empty() && m.hexes.empty() && m.tris.empty()))
    throw InputError(name + ": refusing to write an empty mesh");
  const bool surface_format = is_surface_extension(path);
  if (surface_format && m.tris.empty())
    throw InputError(name + ": " + ext + " holds triangle surfaces, but the mesh has no triangles");
  if ((ext == ".node" || ext == ".ele") && (m.tets.empty() || !m.hexes.empty()))
    throw InputError(name + ": TetGen files hold tetrahedra only");
  if (ext == ".vtu") return formats::write_vtu_mesh(path, m, options.compress);
  if (ext == ".vtp") return formats::write_vtp_mesh(path, m, options.compress);
  if (ext == ".node" || ext == ".ele") {
    fs::path node = path, ele = path;
    node.replace_extension(".node");
    ele.replace_extension(".ele");
    // Both temporaries are complete before either is renamed.
    AtomicFile fn(node, false), fe(ele, false);
    formats::write_tetgen_node(fn.stream(), m);
    formats::write_tetgen_ele(fe.stream(), m);
    fn.commit();
    fe.commit();
    return;
  }
  write_atomically(path, [&](std::ostream& out) {
    if (ext == ".obj") formats::write_obj(out, m);
    else if (ext == ".off") formats::write_off(out, m);
    else if (ext == ".stl") formats::write_stl(out, m);
    else if (ext == ".ply") formats::write_ply(out, m);
    else if (ext == ".vtk") formats::write_vtk_legacy(out, m);
    else if (ext == ".msh") formats::write_msh(out, m, options.msh_version);
    else formats::write_medit(out, m);
  });
}

namespace {
template <typename Mesh, size_t N>
Mesh extract_volume(const MeshFile& f, const std::vector<std::array<int32_t, N>>& elems,
                    const std::vector<int32_t>& material) {
  Mesh m;
  m.elems = elems;
  m.nodes = compact(f.nodes, m.elems);
  m.material = material.empty() ? std::vector<int32_t>(m.elems.size(), 0) : material;
  return m;
}
}  // namespace

TetMesh to_tet_mesh(const MeshFile& f, const std::string& source) {
  if (f.tets.empty()) {
    if (!f.hexes.empty()) throw InputError(source + ": holds hexahedra, but tetrahedra are needed");
    throw InputError(source + ": holds no tetrahedra (a surface? use it with voxelize/tetrahedralize)");
  }
  return extract_volume<TetMesh>(f, f.tets, f.tet_material);
}

HexMesh to_hex_mesh(const MeshFile& f, const std::string& source) {
  if (f.hexes.empty()) {
    if (!f.tets.empty()) throw InputError(source + ": holds tetrahedra, but hexahedra are needed");
    throw InputError(source + ": holds no hexahedra (a surface? voxelize it)");
  }
  return extract_volume<HexMesh>(f, f.hexes, f.hex_material);
}

TriSurface to_surface(const MeshFile& f, const std::string& source) {
  if (f.tris.empty()) throw InputError(source + ": holds no triangles");
  TriSurface s;
  s.tris = f.tris;
  s.nodes = compact(f.nodes, s.tris);
  return s;
}

MeshFile to_mesh_file(const TetMesh& m) {
  MeshFile f;
  f.nodes = m.nodes;
  f.tets = m.elems;
  f.tet_material = m.material;
  return f;
}

MeshFile to_mesh_file(const HexMesh& m) {
  MeshFile f;
  f.nodes = m.nodes;
  f.hexes = m.elems;
  f.hex_material = m.material;
  return f;
}

MeshFile to_mesh_file(const TriSurface& s) {
  MeshFile f;
  f.nodes = s.nodes;
  f.tris = s.tris;
  return f;
}

TetMesh read_tet_mesh(const fs::path& path) { return to_tet_mesh(read_mesh_file(path), path.string()); }
HexMesh read_hex_mesh(const fs::path& path) { return to_hex_mesh(read_mesh_file(path), path.string()); }
TriSurface read_surface(const fs::path& path) { return to_surface(read_mesh_file(path), path.string()); }

void write_tet_mesh(const fs::path& path, const TetMesh& m, const WriteOptions& options) {
  write_mesh_file(path, to_mesh_file(m), options);
}
void write_hex_mesh(const fs::path& path, const HexMesh& m, const WriteOptions& options) {
  write_mesh_file(path, to_mesh_file(m), options);
}
void write_surface(const fs::path& path, const TriSurface& s, const WriteOptions& options) {
  write_mesh_file(path, to_mesh_file(s), options);
}

void transform_nodes(std::vector<Vec3>& nodes, double scale, const Vec3& translate) {
  if (!(scale > 0.0) || !std::isfinite(scale)) throw InputError("mesh scale must be a positive number");
  for (auto& p : nodes)
    for (size_t d = 0; d < 3; ++d) p[d] = scale * p[d] + translate[d];
}

}  // namespace eb::mesh
