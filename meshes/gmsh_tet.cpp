#include "meshes/gmsh_tet.h"

#include <cmath>

#include "meshes/errors.h"
#include "meshes/geometry.h"

#ifdef ELASTOBENCH_HAVE_GMSH
#include <gmsh.h>

#include <mutex>
#include <unordered_map>
#endif

namespace eb::mesh {

#ifdef ELASTOBENCH_HAVE_GMSH

bool have_gmsh() { return true; }

namespace {

// Gmsh keeps one global model and is not thread-safe: one session at a time, always finalized.
class GmshSession {
 public:
  GmshSession() {
    gmsh::initialize(0, nullptr, false);
    gmsh::option::setNumber("General.Terminal", 0);
    gmsh::option::setNumber("General.Verbosity", 1);
    gmsh::model::add("elastobench");
  }
  ~GmshSession() { gmsh::finalize(); }
};

std::mutex gmsh_mutex;

void load_surface(const TriSurface& s, int surface_tag) {
  std::vector<std::size_t> node_tags(s.nodes.size()), tri_nodes;
  std::vector<double> coords;
  coords.reserve(s.nodes.size() * 3);
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    node_tags[i] = i + 1;
    coords.insert(coords.end(), s.nodes[i].begin(), s.nodes[i].end());
  }
  tri_nodes.reserve(s.tris.size() * 3);
  for (const auto& t : s.tris)
    for (auto v : t) tri_nodes.push_back(std::size_t(v) + 1);
  gmsh::model::mesh::addNodes(2, surface_tag, node_tags, coords);
  gmsh::model::mesh::addElementsByType(surface_tag, 2, {}, tri_nodes);
}

TetMesh collect_tets() {
  std::vector<std::size_t> node_tags, elem_tags, elem_nodes;
  std::vector<double> coords, param;
  gmsh::model::mesh::getNodes(node_tags, coords, param, -1, -1, true, false);
  gmsh::model::mesh::getElementsByType(4, elem_tags, elem_nodes);
  std::unordered_map<std::size_t, size_t> position;  // node tag -> entry in coords
  for (size_t i = 0; i < node_tags.size(); ++i) position[node_tags[i]] = i;
  // Only nodes used by tetrahedra are kept, numbered in order of first use.
  std::unordered_map<std::size_t, int32_t> index;
  TetMesh m;
  m.elems.resize(elem_nodes.size() / 4);
  for (size_t e = 0; e < m.elems.size(); ++e)
    for (size_t k = 0; k < 4; ++k) {
      auto [it, inserted] = index.try_emplace(elem_nodes[4 * e + k], int32_t(m.nodes.size()));
      int32_t& id = it->second;
      if (inserted) {
        const size_t p = position.at(elem_nodes[4 * e + k]);
        m.nodes.push_back({coords[3 * p], coords[3 * p + 1], coords[3 * p + 2]});
      }
      m.elems[e][k] = id;
    }
  m.material.assign(m.elems.size(), 0);
  return m;
}

// Text of the exception in flight: Gmsh 4.8 throws std::string as well as std::exception.
std::string gmsh_error_text() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (const std::string& e) {
    return e;
  } catch (...) {
    return "unknown error";
  }
}

// One Gmsh session. remesh = false keeps the input triangles: one discrete surface, no
// reparametrization, only the volume is meshed.
TetMesh run_gmsh(const TriSurface& s, const TetrahedralizeOptions& options, bool keep_surface) {
  GmshSession session;
  gmsh::option::setNumber("Mesh.MeshSizeMax", options.size);
  gmsh::option::setNumber("Mesh.MeshSizeMin", 0.1 * options.size);
  gmsh::option::setNumber("Mesh.MeshSizeFromPoints", 0);
  gmsh::option::setNumber("Mesh.MeshSizeExtendFromBoundary", keep_surface ? 1 : 0);
  gmsh::option::setNumber("Mesh.Optimize", 1);
  const int surface = gmsh::model::addDiscreteEntity(2);
  load_surface(s, surface);
  std::vector<int> tags{surface};
  if (!keep_surface) {
    gmsh::model::mesh::classifySurfaces(options.feature_angle_deg * M_PI / 180.0, true, true, M_PI);
    gmsh::model::mesh::createGeometry();
    gmsh::vectorpair surfaces;
    gmsh::model::getEntities(surfaces, 2);
    tags.clear();
    for (const auto& [dim, tag] : surfaces) tags.push_back(tag);
  }
  const int loop = gmsh::model::geo::addSurfaceLoop(tags);
  gmsh::model::geo::addVolume({loop});
  gmsh::model::geo::synchronize();
  gmsh::model::mesh::generate(3);
  return collect_tets();
}

}  // namespace

TetMesh tetrahedralize_surface(const TriSurface& s, const TetrahedralizeOptions& options, const std::string& source) {
  if (!(options.size > 0) || !std::isfinite(options.size))
    throw InputError("tetrahedralization needs a target size > 0 (--size)");
  check_finite_nodes(s.nodes, source);
  check_indices(s.tris, s.nodes.size(), source, "triangle");
  check_closed_surface(s, source);
  const Vec3 lo = bbox_min(s.nodes), hi = bbox_max(s.nodes);
  const double extent = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
  if (extent / options.size > 2000)
    throw InputError("tetrahedralization size " + std::to_string(options.size) + " is too small for " + source +
                     " (extent " + std::to_string(extent) + "): it would need billions of elements");
  std::lock_guard<std::mutex> lock(gmsh_mutex);
  TetMesh m;
  std::string remesh_error;
  if (!options.keep_surface) {
    try {
      m = run_gmsh(s, options, false);
    } catch (...) {
      remesh_error = gmsh_error_text();
    }
  }
  if (options.keep_surface || !remesh_error.empty()) {
    try {
      m = run_gmsh(s, options, true);
    } catch (...) {
      throw InputError(source + ": Gmsh could not tetrahedralize the surface: " + gmsh_error_text() +
                       (remesh_error.empty() ? "" : " (remeshing the surface failed first: " + remesh_error + ")"));
    }
  }
  if (m.elems.empty()) throw InputError(source + ": Gmsh produced no tetrahedra (is the surface closed and non-self-intersecting?)");
  check_tet_mesh(m, source + " (Gmsh output)");
  return m;
}

#else

bool have_gmsh() { return false; }

TetMesh tetrahedralize_surface(const TriSurface&, const TetrahedralizeOptions&, const std::string& source) {
  throw InputError("cannot tetrahedralize " + source +
                   ": Gmsh support was not compiled in (build with libgmsh-dev, ELASTOBENCH_GMSH=ON); "
                   "voxelize it instead, or use its Verschoor tetrahedralization of voxels");
}

#endif

}  // namespace eb::mesh
