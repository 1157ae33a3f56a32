#include "solvers/corot_cg/corot_cg_setup.h"

#include <algorithm>

#include "solvers/tet_model/static_newton.h"

#include <cmath>

#include "meshes/errors.h"
#include "meshes/mesh_io.h"
#include "meshes/mesh_spec.h"
#include "meshes/reorder.h"

namespace eb::corot_cg {

Rotation parse_rotation(const std::string& variant) {
  if (variant.empty() || variant == "edge") return Rotation::EdgeFrame;
  if (variant == "polar") return Rotation::Polar;
  throw InputError("corot-cg: unknown solver.variant '" + variant +
                   "' (edge: SOFA's edge frame of nodes 0, 1, 2, the thesis's; polar: polar decomposition of F)");
}

std::string to_string(Rotation r) { return r == Rotation::EdgeFrame ? "edge" : "polar"; }

std::vector<VariantInfo> corot_cg_variants() {
  return {{to_string(Rotation::EdgeFrame),
           "element rotation from the frame of edges 01 and 02 (SOFA's \"large\", Campo Sec. 4.1.3)",
           {}},
          {to_string(Rotation::Polar), "element rotation by polar decomposition of F (assembly/tet/corotation.h)", {}}};
}

void validate_corot_cg_options(const CorotCgOptions& o) {
  if (o.cg_iterations < 1) throw InputError("scenario key 'corot-cg.cg_iterations' must be >= 1");
  if (!(o.cg_tolerance >= 0 && o.cg_tolerance < 1))
    throw InputError("scenario key 'corot-cg.cg_tolerance' must lie in [0, 1) (0: a fixed iteration count)");
  if (o.preconditioner != "none" && o.preconditioner != "jacobi")
    throw InputError("scenario key 'corot-cg.preconditioner' is '" + o.preconditioner + "' (valid: none, jacobi)");
  if (o.vertex_mass < 0) throw InputError("scenario key 'corot-cg.vertex_mass' must be >= 0");
  if (o.total_mass < 0) throw InputError("scenario key 'corot-cg.total_mass' must be >= 0");
  if (o.vertex_mass > 0 && o.total_mass > 0)
    throw InputError("scenario keys 'corot-cg.vertex_mass' and 'corot-cg.total_mass' exclude each other");
  if (!(o.static_cg_tolerance > 0 && o.static_cg_tolerance < 1))
    throw InputError("scenario key 'corot-cg.static_cg_tolerance' must lie in (0, 1)");
  if (o.static_cg_max_iterations < 0)
    throw InputError("scenario key 'corot-cg.static_cg_max_iterations' must be >= 0 (0: the number of unknowns)");
  try {
    tet::parse_forcing(o.static_forcing);
  } catch (const InputError& e) {
    throw InputError(std::string("scenario key 'corot-cg.static_forcing': ") + e.what());
  }
  try {
    mesh::parse_node_ordering(o.node_order);
  } catch (const InputError& e) {
    throw InputError(std::string("scenario key 'corot-cg.node_order': ") + e.what());
  }
}

linalg::CgOptions cg_options(const CorotCgOptions& opt, bool static_solve, int64_t unknowns) {
  linalg::CgOptions o;
  o.preconditioner = opt.preconditioner == "jacobi" ? linalg::Preconditioner::Jacobi : linalg::Preconditioner::None;
  // The standard iteration: the thesis's Listing 1 (one product, then the dots).
  o.single_reduction = linalg::SingleReduction::Off;
  if (static_solve) {
    o.tolerance = opt.static_cg_tolerance;
    o.max_iterations = opt.static_cg_max_iterations > 0 ? opt.static_cg_max_iterations
                                                        : int(std::max<int64_t>(1, unknowns));
  } else {
    o.tolerance = opt.cg_tolerance;
    o.max_iterations = opt.cg_iterations;
    o.check_every = opt.cg_iterations;  // one host read per solve at most (a frame's graph reads none)
  }
  return o;
}

nlohmann::json CorotCgSetup::describe() const {
  nlohmann::json j = TetModel::describe();
  j["rotation"] = to_string(rotation);
  j["node_order"] = options.node_order;
  j["rayleigh"] = {{"mass", rayleigh_mass}, {"stiffness", rayleigh_stiffness}};
  double total = 0;
  for (double m : mass) total += m;
  j["total_mass"] = total;
  j["mass"] = options.vertex_mass > 0 ? "uniform (vertex_mass)" : options.total_mass > 0 ? "uniform (total_mass)" : "lumped";
  j["cg"] = {{"max_iterations", options.cg_iterations},
             {"tolerance", options.cg_tolerance},
             {"preconditioner", options.preconditioner},
             {"start", "dv = 0"}};
  if (ground)
    j["ground"] = {{"normal", {ground_normal[0], ground_normal[1], ground_normal[2]}},
                   {"height", ground_height},
                   {"stiffness", ground_stiffness}};
  if (impulses.enabled)
    j["random_impulses"] = {{"every", impulses.every},
                            {"min_force", impulses.min_force},
                            {"max_force", impulses.max_force},
                            {"seed", impulses.seed}};
  j["render_vertices"] = render_vertices;
  return j;
}

namespace {

void build_incidence(CorotCgSetup& s) {
  const size_t N = size_t(s.num_nodes), E = size_t(s.num_elements);
  s.node_ptr.assign(N + 1, 0);
  for (size_t k = 0; k < 4 * E; ++k) ++s.node_ptr[size_t(s.connectivity[k]) + 1];
  for (size_t n = 0; n < N; ++n) s.node_ptr[n + 1] += s.node_ptr[n];
  s.incidence.assign(4 * E, 0);
  std::vector<int32_t> next(s.node_ptr.begin(), s.node_ptr.end() - 1);
  for (size_t e = 0; e < E; ++e)
    for (int a = 0; a < 4; ++a) s.incidence[size_t(next[size_t(s.connectivity[4 * e + size_t(a)])]++)] = int32_t(4 * e + size_t(a));
}

void build_masses(CorotCgSetup& s) {
  const size_t N = size_t(s.num_nodes);
  if (s.options.vertex_mass > 0 || s.options.total_mass > 0) {
    s.mass.assign(N, s.options.vertex_mass > 0 ? s.options.vertex_mass : s.options.total_mass / double(N));
    return;
  }
  s.mass.assign(N, 0.0);
  for (size_t e = 0; e < size_t(s.num_elements); ++e)
    for (int a = 0; a < 4; ++a) s.mass[size_t(s.connectivity[4 * e + size_t(a)])] += s.density * s.volume[e] / 4.0;
  for (size_t n = 0; n < N; ++n)
    if (!(s.mass[n] > 0))
      throw InputError("corot-cg: node " + std::to_string(n) + " belongs to no element (zero mass); remove unused nodes or set corot-cg.vertex_mass");
}

void build_loads(CorotCgSetup& s) {
  const size_t N = size_t(s.num_nodes);
  s.load_ptr.assign(N + 1, 0);
  for (const auto& l : s.loads) ++s.load_ptr[size_t(l.node) + 1];
  for (size_t n = 0; n < N; ++n) s.load_ptr[n + 1] += s.load_ptr[n];
  // loads are sorted by node (merge_loads), so their order is the CSR's.
  for (const auto& l : s.loads) {
    s.load_curve.push_back(l.curve);
    for (int i = 0; i < 3; ++i) s.load_force.push_back(l.force[i]);
  }
}

void bind_render_surface(CorotCgSetup& s, const Scenario& sc, const RunOptions& ro) {
  if (sc.output.render_surface.empty()) return;
  const auto dir = ro.data_dir.empty() ? mesh::default_data_dir() : ro.data_dir;
  mesh::TriSurface surface = mesh::read_surface(mesh::resolve_data_file(sc.output.render_surface, dir));
  for (auto& x : surface.nodes)
    for (int d = 0; d < 3; ++d) x[size_t(d)] = x[size_t(d)] * sc.mesh.scale + sc.mesh.translate[size_t(d)];
  mesh::TetMesh m;
  m.nodes = s.nodes;
  for (size_t e = 0; e < size_t(s.num_elements); ++e)
    m.elems.push_back({s.connectivity[4 * e], s.connectivity[4 * e + 1], s.connectivity[4 * e + 2], s.connectivity[4 * e + 3]});
  s.binding = mesh::bind_surface(surface, m);
  s.render_vertices = int64_t(surface.nodes.size());
}

}  // namespace

CorotCgSetup build_corot_cg_setup(const Scenario& sc, const RunOptions& ro) {
  const Rotation rotation = parse_rotation(sc.solver.variant);
  const CorotCgOptions options = read_method_options<CorotCgOptions>(sc, "corot-cg", validate_corot_cg_options);
  if (!sc.boundary.prescribed.empty())
    throw InputError("corot-cg: boundary.prescribed is not supported (the method solves for velocity changes with "
                     "fixed supports, forces, gravity and the ground, as SOFA's scenes; use boundary.fixed)");
  if (sc.boundary.ground.enabled && !(sc.boundary.ground.stiffness > 0))
    throw InputError("corot-cg: boundary.ground.stiffness must be > 0 (the ground is a penalty force)");
  tet::TetModelOptions mo;
  mo.method = "corot-cg";
  mo.node_order = mesh::parse_node_ordering(options.node_order);
  // time.dt = 0: 1 ms. Implicit Euler is stable at any step, but the CG's system
  // (1 + h alpha) M + h (h + beta) K has a condition number growing with h^2: at Table 5.1's
  // 0.04 s (which the thesis's scenes set explicitly) a stiff default scene would need thousands
  // of iterations per step.
  mo.default_dt = 1e-3;
  CorotCgSetup s;
  static_cast<tet::TetModel&>(s) = tet::build_tet_model(sc, ro, mo);
  s.rotation = rotation;
  s.options = options;
  s.rayleigh_mass = sc.time.damping;
  s.rayleigh_stiffness = sc.time.rayleigh_stiffness;
  build_incidence(s);
  build_masses(s);
  build_loads(s);
  s.fixed_rows.assign(3 * size_t(s.num_nodes), 0);
  for (size_t n = 0; n < size_t(s.num_nodes); ++n)
    for (int d = 0; d < 3; ++d) s.fixed_rows[3 * n + size_t(d)] = (s.constrained[n] >> d) & 1;
  const auto& g = sc.boundary.ground;
  s.ground = g.enabled;
  if (g.enabled) {
    const double len = std::sqrt(g.normal[0] * g.normal[0] + g.normal[1] * g.normal[1] + g.normal[2] * g.normal[2]);
    for (int d = 0; d < 3; ++d) s.ground_normal[d] = g.normal[size_t(d)] / len;
    s.ground_height = g.height;
    s.ground_stiffness = g.stiffness;
  }
  s.impulses = sc.boundary.random_impulses;
  bind_render_surface(s, sc, ro);
  return s;
}

std::vector<StageWork> corot_cg_stage_work(const CorotCgSetup& s, Backend b, Precision p, int cg_iterations) {
  const double w = p == Precision::Fp32 ? 4.0 : 8.0;
  const double E = double(s.num_elements), N = double(s.num_nodes), n = 3 * N, V = double(s.render_vertices);
  const bool stored = b == Backend::Cpu;
  // FLOPs per element from corot_cg_element.h: rotation, F (27) + det (12) + edge frame (~60) or
  // polar (~850) + R = E E0^T (45). CUDA: a node's row per incident element (4 per element): 4
  // blocks (~40 each with the product) + R^T on 4 vectors (60) + R z (15) ~ 235; force adds R^T X
  // (60) and the diagonal block (~90). CPU: per element the 10 rotated blocks (R G: 60, ~50
  // each) and the 4 force rows (~1,000) once, written (102 values) and gathered; a product row per
  // incident element is 4 stored blocks times p (72).
  const double rot = (s.rotation == Rotation::Polar ? 940 : 150) * E;
  std::vector<StageWork> out;
  out.push_back({"rotation", rot, E * (16 + 9 * w + 9 * w) + n * w});
  const double forces_bytes = E * (16 + 28 * w) + 4 * E * 4 + N * 4 + 3 * n * w + N * (w + 1);
  if (stored)
    out.push_back({"forces", E * (560 + 1000) + 4 * E * 6 + N * 40, forces_bytes + E * 102 * w});
  else
    out.push_back({"forces", E * 4 * 385 + N * 40, forces_bytes});
  const double it = double(cg_iterations);
  out.push_back({"cg", (it + 1) * (E * 4 * (stored ? 72 : 235) + 8 * n) + it * 10 * n,
                 (it + 1) * cg_iteration_compulsory_bytes(s, b, p) + 5 * n * w});
  out.push_back({"integrate", 3 * n, 4 * n * w});
  if (V > 0) out.push_back({"mapping", V * 24, V * (16 + 4 * w + 3 * w) + n * w * 2});
  return out;
}

double cg_iteration_compulsory_bytes(const CorotCgSetup& s, Backend b, Precision p) {
  const double w = p == Precision::Fp32 ? 4.0 : 8.0;
  const double E = double(s.num_elements), N = double(s.num_nodes), n = 3 * N;
  // The product reads per element R, Dm^-1 (9 + 9) and the volume (CUDA, which rebuilds K_ab) or
  // the 10 stored blocks R K_ab R^T (CPU: 90 values), the connectivity (16 B); per node the
  // incidence (4 B per entry, 4 per element) and its pointer, mass, fixed flag, contact flag; the
  // vector p, and writes q: (19 w or 90 w, + 16 + 16) E + (8 + w + 2) N + 2 n w. The standard
  // CG's vector passes read/write x, r, p, q: 7 n w more (solvers/linalg/PERF_NOTES.md).
  const double element_values = b == Backend::Cpu ? double(kRotatedBlockValues) : 19.0;
  return E * (element_values * w + 32) + N * (8 + w + 2) + 2 * n * w + 7 * n * w;
}

}  // namespace eb::corot_cg
