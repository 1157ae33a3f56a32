#include "meshes/gmsh_tet.h"

#include <cmath>

#include "meshes/errors.h"
#include "meshes/geometry.h"

#ifdef ELASTOBENCH_HAVE_GMSH
#include <gmsh.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "meshes/binary_util.h"
#include "meshes/isolated_call.h"
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

// Passes by their names here -> Gmsh's method names.
const std::pair<const char*, const char*> kOptimizers[] = {{"gmsh", ""}, {"netgen", "Netgen"}, {"relocate3d", "Relocate3D"}};

const char* gmsh_method(const std::string& name) {
  for (const auto& [ours, theirs] : kOptimizers)
    if (name == ours) return theirs;
  throw InputError("unknown tetrahedral mesh optimizer '" + name + "' (valid: " + tet_optimizer_names() + ")");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One Gmsh session. feature_angle_deg < 0: keep the input triangles (one discrete surface, no
// reparametrization, only the volume is meshed); otherwise the surface is classified at that
// angle, reparametrized and remeshed at options.size. `checkpoint` is called once the geometry
// exists (the stage that may never return, see isolated_call.h).
TetMesh run_gmsh(const TriSurface& s, const TetrahedralizeOptions& options, double feature_angle_deg,
                 const std::function<void()>& checkpoint, TetrahedralizeReport& report) {
  const bool keep_surface = feature_angle_deg < 0;
  GmshSession session;
  gmsh::option::setNumber("Mesh.MeshSizeMax", options.size);
  gmsh::option::setNumber("Mesh.MeshSizeMin", 0.1 * options.size);
  gmsh::option::setNumber("Mesh.MeshSizeFromPoints", 0);
  gmsh::option::setNumber("Mesh.MeshSizeExtendFromBoundary", keep_surface ? 1 : 0);
  // generate() would run Gmsh's optimizer by itself; the passes run below instead, one at a
  // time, so that each one's effect and time are measured.
  gmsh::option::setNumber("Mesh.Optimize", 0);
  gmsh::option::setNumber("Mesh.OptimizeNetgen", 0);
  auto t0 = std::chrono::steady_clock::now();
  const int surface = gmsh::model::addDiscreteEntity(2);
  load_surface(s, surface);
  std::vector<int> tags{surface};
  if (!keep_surface) {
    gmsh::model::mesh::classifySurfaces(feature_angle_deg * M_PI / 180.0, true, true, M_PI);
    gmsh::model::mesh::createGeometry();
    gmsh::vectorpair surfaces;
    gmsh::model::getEntities(surfaces, 2);
    tags.clear();
    for (const auto& [dim, tag] : surfaces) tags.push_back(tag);
  }
  checkpoint();
  const int loop = gmsh::model::geo::addSurfaceLoop(tags);
  gmsh::model::geo::addVolume({loop});
  gmsh::model::geo::synchronize();
  gmsh::model::mesh::generate(3);
  report.mesh_seconds = seconds_since(t0);
  TetMesh m = collect_tets();
  report.generated = summarize_tet_quality(m.nodes, m.elems);
  for (const auto& name : options.optimizers) {
    t0 = std::chrono::steady_clock::now();
    // force: our volume is bounded by discrete surfaces; without it Gmsh skips them.
    gmsh::model::mesh::optimize(gmsh_method(name), true, options.optimizer_iterations);
    TetrahedralizeReport::Pass pass;
    pass.optimizer = name;
    pass.seconds = seconds_since(t0);
    m = collect_tets();
    pass.after = summarize_tet_quality(m.nodes, m.elems);
    report.passes.push_back(pass);
  }
  return m;
}

// The child process hands its mesh and report back as bytes (host byte order: same machine).
class ByteWriter {
 public:
  template <typename T>
  void put(T v) {
    store<T>(out_, v, host_is_little_endian());
  }
  template <typename T>
  void put_vector(const std::vector<T>& v) {
    put<uint64_t>(v.size());
    out_.write(reinterpret_cast<const char*>(v.data()), std::streamsize(v.size() * sizeof(T)));
  }
  void put_string(const std::string& s) { put_vector(std::vector<char>(s.begin(), s.end())); }
  void put_summary(const TetQualitySummary& q) {
    for (double v : {q.min_dihedral_deg, q.max_dihedral_deg, q.min_scaled_jacobian, q.max_scaled_jacobian,
                     q.min_radius_ratio, q.max_aspect_ratio, q.poor_threshold_deg})
      put(v);
    for (size_t v : {q.tets, q.worst_element, q.poor}) put<uint64_t>(v);
    for (const Histogram* h : {&q.min_dihedral_hist, &q.scaled_jacobian_hist, &q.radius_ratio_hist}) {
      put_vector(h->edges);
      put_vector(h->counts);
    }
  }
  std::string str() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::string& data) : data_(data) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    const T v = load<T>(data_.data() + pos_, host_is_little_endian());
    pos_ += sizeof(T);
    return v;
  }
  template <typename T>
  std::vector<T> get_vector() {
    const auto n = size_t(get<uint64_t>());
    need(n * sizeof(T));
    std::vector<T> v(n);
    std::memcpy(v.data(), data_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return v;
  }
  std::string get_string() {
    const auto v = get_vector<char>();
    return std::string(v.begin(), v.end());
  }
  TetQualitySummary get_summary() {
    TetQualitySummary q;
    for (double* v : {&q.min_dihedral_deg, &q.max_dihedral_deg, &q.min_scaled_jacobian, &q.max_scaled_jacobian,
                      &q.min_radius_ratio, &q.max_aspect_ratio, &q.poor_threshold_deg})
      *v = get<double>();
    for (size_t* v : {&q.tets, &q.worst_element, &q.poor}) *v = size_t(get<uint64_t>());
    for (Histogram* h : {&q.min_dihedral_hist, &q.scaled_jacobian_hist, &q.radius_ratio_hist}) {
      h->edges = get_vector<double>();
      h->counts = get_vector<size_t>();
    }
    return q;
  }

 private:
  void need(size_t n) const {
    if (pos_ + n > data_.size()) throw RuntimeFailure("Gmsh worker returned a truncated result");
  }
  const std::string& data_;
  size_t pos_ = 0;
};

std::string encode(const TetMesh& m, const TetrahedralizeReport& r) {
  ByteWriter w;
  w.put_vector(m.nodes);
  w.put_vector(m.elems);
  w.put(r.mesh_seconds);
  w.put_summary(r.generated);
  w.put<uint64_t>(r.passes.size());
  for (const auto& p : r.passes) {
    w.put_string(p.optimizer);
    w.put(p.seconds);
    w.put_summary(p.after);
  }
  return w.str();
}

TetMesh decode(const std::string& bytes, TetrahedralizeReport& r) {
  ByteReader in(bytes);
  TetMesh m;
  m.nodes = in.get_vector<Vec3>();
  m.elems = in.get_vector<std::array<int32_t, 4>>();
  m.material.assign(m.elems.size(), 0);
  r.mesh_seconds = in.get<double>();
  r.generated = in.get_summary();
  r.passes.resize(size_t(in.get<uint64_t>()));
  for (auto& p : r.passes) {
    p.optimizer = in.get_string();
    p.seconds = in.get<double>();
    p.after = in.get_summary();
  }
  return m;
}

// One attempt in a child process (see isolated_call.h); IsolatedCallFailure carries Gmsh's message.
TetMesh attempt(const TriSurface& s, const TetrahedralizeOptions& options, double feature_angle_deg,
                TetrahedralizeReport& report) {
  const std::string bytes = run_isolated(
      [&](const std::function<void()>& checkpoint) {
        TetrahedralizeReport r;
        const TetMesh m = run_gmsh(s, options, feature_angle_deg, checkpoint, r);
        return encode(m, r);
      },
      options.remesh_timeout_s, "Gmsh", "classifying the surface");
  return decode(bytes, report);
}

std::string angle_text(double deg) {
  std::ostringstream o;
  o << deg;
  return o.str();
}

}  // namespace

std::vector<std::string> default_tet_optimizers() { return {"gmsh"}; }

std::string tet_optimizer_names() {
  std::string out;
  for (const auto& [ours, theirs] : kOptimizers) out += std::string(out.empty() ? "" : ", ") + ours;
  return out;
}

TetMesh tetrahedralize_surface(const TriSurface& s, const TetrahedralizeOptions& options, const std::string& source,
                               TetrahedralizeReport* report) {
  if (!(options.size > 0) || !std::isfinite(options.size))
    throw InputError("tetrahedralization needs a target size > 0 (--size)");
  if (options.optimizer_iterations < 1) throw InputError("tetrahedralization: optimizer iterations must be >= 1");
  if (!(options.peel_below_deg >= 0)) throw InputError("tetrahedralization: the sliver peeling angle must be >= 0");
  if (!(options.remesh_timeout_s > 0)) throw InputError("tetrahedralization: the remeshing time limit must be > 0 s");
  for (double a : options.feature_angles_deg)
    if (!(a > 0 && a <= 180)) throw InputError("tetrahedralization: feature angles must lie in (0, 180] deg");
  for (const auto& name : options.optimizers) gmsh_method(name);  // unknown names fail before any work
  check_finite_nodes(s.nodes, source);
  check_indices(s.tris, s.nodes.size(), source, "triangle");
  check_closed_surface(s, source);
  const Vec3 lo = bbox_min(s.nodes), hi = bbox_max(s.nodes);
  const double extent = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
  if (extent / options.size > 2000)
    throw InputError("tetrahedralization size " + std::to_string(options.size) + " is too small for " + source +
                     " (extent " + std::to_string(extent) + "): it would need billions of elements");
  std::lock_guard<std::mutex> lock(gmsh_mutex);
  TetrahedralizeReport local;
  TetrahedralizeReport& r = report ? *report : local;
  r = TetrahedralizeReport();
  TetMesh m;
  std::string failures;  // one clause per failed remeshing attempt
  if (!options.keep_surface) {
    for (double angle : options.feature_angles_deg) {
      try {
        m = attempt(s, options, angle, r);
        r.surface_remeshed = true;
        r.feature_angle_deg = angle;
        break;
      } catch (const IsolatedCallFailure& e) {
        failures += (failures.empty() ? "" : "; ") + std::string("feature angle ") + angle_text(angle) + " deg: " + e.what();
        // Where classification hung once (Dragon_50k.obj) it hung at every angle tried.
        if (e.timed_out()) break;
      }
    }
    r.remesh_error = failures;
  }
  if (!r.surface_remeshed) {
    try {
      m = attempt(s, options, -1.0, r);
    } catch (const IsolatedCallFailure& e) {
      throw InputError(source + ": Gmsh could not tetrahedralize the surface: " + e.what() +
                       (failures.empty() ? "" : " (remeshing the surface failed first: " + failures + ")"));
    }
  }
  if (m.elems.empty()) throw InputError(source + ": Gmsh produced no tetrahedra (is the surface closed and non-self-intersecting?)");
  if (options.peel_below_deg > 0) r.peeled = peel_boundary_slivers(m, options.peel_below_deg);
  check_tet_mesh(m, source + " (Gmsh output)");
  r.final_quality = summarize_tet_quality(m.nodes, m.elems);
  return m;
}

#else

bool have_gmsh() { return false; }

std::vector<std::string> default_tet_optimizers() { return {}; }
std::string tet_optimizer_names() { return "none (Gmsh not compiled in)"; }

TetMesh tetrahedralize_surface(const TriSurface&, const TetrahedralizeOptions&, const std::string& source,
                               TetrahedralizeReport*) {
  throw InputError("cannot tetrahedralize " + source +
                   ": Gmsh support was not compiled in (build with libgmsh-dev, ELASTOBENCH_GMSH=ON); "
                   "voxelize it instead, or use its Verschoor tetrahedralization of voxels");
}

#endif

}  // namespace eb::mesh
