#include "solvers/hexmg/hexmg_model.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <unordered_map>

#include "assembly/hexmg/hex_element.h"
#include "meshes/errors.h"
#include "meshes/mesh_spec.h"
#include "solvers/common/boundary.h"
#include "solvers/common/method_options.h"
#include "solvers/hexmg/smoothed_hierarchy.h"

namespace eb::hexmg {
namespace {

uint64_t key_of(int32_t x, int32_t y, int32_t z) {
  return (uint64_t(uint32_t(x)) & 0x1FFFFF) | ((uint64_t(uint32_t(y)) & 0x1FFFFF) << 21) |
         ((uint64_t(uint32_t(z)) & 0x1FFFFF) << 42);
}

using CoordMap = std::unordered_map<uint64_t, int32_t>;

int32_t find(const CoordMap& m, int32_t x, int32_t y, int32_t z) {
  if (x < 0 || y < 0 || z < 0) return -1;
  auto it = m.find(key_of(x, y, z));
  return it == m.end() ? -1 : it->second;
}

// Vertex slots of one level from its cells: corners, grouped by colour (coordinate parity),
// lexicographic (x fastest) within a colour, each colour padded to kColourAlign.
Level number_vertices(const std::vector<std::array<int32_t, 3>>& cells, CoordMap& index) {
  std::vector<std::array<int32_t, 3>> verts;
  verts.reserve(cells.size() * 2);
  {
    CoordMap seen;
    seen.reserve(cells.size() * 2);
    for (const auto& c : cells)
      for (int k = 0; k < 8; ++k) {
        const std::array<int32_t, 3> v = {c[0] + corner_bit(k, 0), c[1] + corner_bit(k, 1), c[2] + corner_bit(k, 2)};
        if (seen.emplace(key_of(v[0], v[1], v[2]), 0).second) verts.push_back(v);
      }
  }
  auto colour = [](const std::array<int32_t, 3>& v) { return (v[0] & 1) + 2 * (v[1] & 1) + 4 * (v[2] & 1); };
  std::sort(verts.begin(), verts.end(), [&](const auto& a, const auto& b) {
    const int ca = colour(a), cb = colour(b);
    if (ca != cb) return ca < cb;
    if (a[2] != b[2]) return a[2] < b[2];
    if (a[1] != b[1]) return a[1] < b[1];
    return a[0] < b[0];
  });
  Level L;
  L.n_real = int32_t(verts.size());
  L.cells = int64_t(cells.size());
  size_t i = 0;
  for (int c = 0; c < 8; ++c) {
    L.colour_begin[c] = int32_t(L.coord.size());
    while (i < verts.size() && colour(verts[i]) == c) L.coord.push_back(verts[i++]);
    while (L.coord.size() % kColourAlign) L.coord.push_back({-1, -1, -1});
  }
  L.colour_begin[8] = int32_t(L.coord.size());
  L.n_padded = int32_t(L.coord.size());
  index.clear();
  index.reserve(verts.size() * 2);
  for (int32_t s = 0; s < L.n_padded; ++s)
    if (L.coord[s][0] >= 0) index[key_of(L.coord[s][0], L.coord[s][1], L.coord[s][2])] = s;
  L.nbr.assign(L.n_padded, {});
  for (int32_t s = 0; s < L.n_padded; ++s) {
    const auto& p = L.coord[s];
    for (int l = 0; l < 27; ++l)
      L.nbr[s][l] = p[0] < 0 ? -1
                             : find(index, p[0] + stencil_offset(l, 0), p[1] + stencil_offset(l, 1), p[2] + stencil_offset(l, 2));
  }
  return L;
}

double read_positive(const std::optional<double>& v, double fallback) { return v ? *v : fallback; }

}  // namespace

std::string SolverChoice::describe() const {
  std::ostringstream s;
  if (jacobi_pcg) {
    s << "Jacobi-preconditioned CG to relative residual " << tolerance << " (max " << max_iterations << ")";
  } else if (mg_pcg) {
    s << "CG preconditioned by the symmetric smoothed-hierarchy V-cycle to relative residual " << tolerance << " (max "
      << max_iterations << "), " << pre_smooth << " forward / " << post_smooth
      << " backward Gauss-Seidel sweeps, coarsest CG to " << coarse_tolerance;
  } else {
    if (smoothed) s << "smoothed hierarchy: ";
    if (tolerance_mode)
      s << "V-cycles to relative residual " << tolerance << " (max " << max_iterations << ")";
    else
      s << cycles << " V-cycles per step";
    s << ", " << pre_smooth << " pre / " << post_smooth << " post 8-colour Gauss-Seidel, coarsest CG to " << coarse_tolerance;
  }
  if (smoothed)
    s << (galerkin_every == 1 ? ", Galerkin coarse operators every step"
                              : ", Galerkin coarse operators every " + std::to_string(galerkin_every) + " steps");
  s << (linear ? ", linear elasticity (no co-rotation)" : ", co-rotated");
  return s.str();
}

void validate_hexmg_options(const HexmgOptions& o) {
  if (o.cycles < 1) throw InputError("scenario key 'hexmg.cycles' must be >= 1");
  if (o.pre_smooth < 0 || o.post_smooth < 0 || o.pre_smooth + o.post_smooth < 1)
    throw InputError("scenario keys 'hexmg.pre_smooth' and 'hexmg.post_smooth' must be >= 0 with at least one smoothing step");
  if (!(o.tolerance > 0 && o.tolerance < 1)) throw InputError("scenario key 'hexmg.tolerance' must lie in (0, 1)");
  if (o.max_iterations < 1) throw InputError("scenario key 'hexmg.max_iterations' must be >= 1");
  if (o.coarse_shared_slots < -1)
    throw InputError("scenario key 'hexmg.coarse_shared_slots' must be >= 0, or -1 for as many as fit");
  if (o.galerkin_every < 1) throw InputError("scenario key 'hexmg.galerkin_every' must be >= 1");
}

const std::vector<HexmgVariant>& hexmg_variants() {
  // profile, gs_thread_per_vertex and the launch keys steer the CUDA multigrid kernels, so
  // jacobi-pcg (CPU only, no multigrid) takes none of them, nor the cycle and smoothing counts.
  static const std::vector<HexmgVariant> variants = {
      {"vcycle", "the paper's: hexmg.cycles V-cycles per step", false, false, true,
       {"cycles", "pre_smooth", "post_smooth", "corotated", "profile", "gs_thread_per_vertex",
        "programmatic_dependent_launch", "lattice_order", "coarse_shared_slots"}},
      {"tolerance", "V-cycles until the residual fell by hexmg.tolerance (at most hexmg.max_iterations)", true, false, true,
       {"pre_smooth", "post_smooth", "tolerance", "max_iterations", "corotated", "profile", "gs_thread_per_vertex",
        "programmatic_dependent_launch", "lattice_order", "coarse_shared_slots"}},
      {"jacobi-pcg", "Jacobi-preconditioned CG to hexmg.tolerance instead of multigrid (Fig. 11's comparison; CPU only)",
       false, true, false, {"tolerance", "max_iterations", "corotated"}},
      // The smoothed hierarchy (smoothed_hierarchy.h): the paper's level-0 smoother, smoothed
      // prolongations and exact Galerkin coarse operators recomputed every hexmg.galerkin_every steps.
      {"smoothed-vcycle", "hexmg.cycles V-cycles per step on the smoothed-prolongation hierarchy (Galerkin P^T A P)",
       false, false, true, {"cycles", "pre_smooth", "post_smooth", "corotated", "galerkin_every"}, true, false},
      {"smoothed-tolerance",
       "smoothed-hierarchy V-cycles until the residual fell by hexmg.tolerance (at most hexmg.max_iterations)", true,
       false, true, {"pre_smooth", "post_smooth", "tolerance", "max_iterations", "corotated", "galerkin_every"}, true, false},
      {"smoothed-pcg",
       "CG preconditioned by the symmetric smoothed-hierarchy V-cycle (hexmg.pre_smooth sweeps before and after) "
       "to hexmg.tolerance",
       true, false, true, {"pre_smooth", "tolerance", "max_iterations", "corotated", "galerkin_every"}, true, true},
  };
  return variants;
}

SolverChoice parse_solver(const Scenario& sc) {
  const HexmgOptions o = read_method_options<HexmgOptions>(sc, "hexmg", validate_hexmg_options);
  SolverChoice c;
  c.cycles = o.cycles;
  c.pre_smooth = o.pre_smooth;
  c.post_smooth = o.post_smooth;
  c.tolerance = o.tolerance;
  c.max_iterations = o.max_iterations;
  c.linear = !o.corotated;
  c.profile = o.profile;
  c.gs_thread_per_vertex = o.gs_thread_per_vertex;
  c.programmatic_dependent_launch = o.programmatic_dependent_launch;
  c.lattice_order = o.lattice_order;
  c.coarse_shared_slots = o.coarse_shared_slots;
  c.galerkin_every = o.galerkin_every;
  const std::string& name = sc.solver.variant.empty() ? hexmg_variants().front().name : sc.solver.variant;
  std::string names;
  for (const auto& v : hexmg_variants()) {
    if (v.name == name) {
      c.tolerance_mode = v.tolerance_mode;
      c.jacobi_pcg = v.jacobi_pcg;
      c.smoothed = v.smoothed;
      c.mg_pcg = v.mg_pcg;
      if (c.mg_pcg) c.post_smooth = c.pre_smooth;  // the symmetric cycle
      return c;
    }
    names += (names.empty() ? "" : ", ") + v.name;
  }
  throw InputError("hexmg: unknown solver.variant '" + name + "' (variants: " + names + ")");
}

std::vector<double> Model::factors(double t) const {
  std::vector<double> f(ncurves);
  for (int c = 0; c < ncurves; ++c) f[c] = load_factor(curves[c], t);
  return f;
}

Lattice lattice_of(const mesh::HexMesh& m, const std::string& source) {
  if (m.elems.empty()) throw InputError(source + ": the mesh has no hexahedra");
  Lattice L;
  const auto& n = m.nodes;
  const auto& e0 = m.elems[0];
  L.h = std::sqrt((n[e0[1]][0] - n[e0[0]][0]) * (n[e0[1]][0] - n[e0[0]][0]) +
                  (n[e0[1]][1] - n[e0[0]][1]) * (n[e0[1]][1] - n[e0[0]][1]) +
                  (n[e0[1]][2] - n[e0[0]][2]) * (n[e0[1]][2] - n[e0[0]][2]));
  if (!(L.h > 0)) throw InputError(source + ": element 0 has a zero-length edge");
  L.origin = {INFINITY, INFINITY, INFINITY};
  for (const auto& e : m.elems)
    for (int d = 0; d < 3; ++d) L.origin[d] = std::min(L.origin[d], n[e[0]][d]);
  const double tol = 1e-6 * L.h;
  L.cells.resize(m.elems.size());
  for (size_t i = 0; i < m.elems.size(); ++i) {
    const auto& e = m.elems[i];
    std::array<int32_t, 3> c;
    for (int d = 0; d < 3; ++d) {
      const double q = (n[e[0]][d] - L.origin[d]) / L.h;
      c[d] = int32_t(std::lround(q));
      if (std::abs(q - c[d]) * L.h > tol)
        throw InputError(source + ": element " + std::to_string(i) + " is not on the voxel lattice of element 0 (hexmg needs a regular voxel model)");
    }
    for (int v = 0; v < 8; ++v) {
      const int corner = kVtkFromLattice[v];
      for (int d = 0; d < 3; ++d) {
        const double want = L.origin[d] + (c[d] + corner_bit(corner, d)) * L.h;
        if (std::abs(n[e[v]][d] - want) > tol)
          throw InputError(source + ": element " + std::to_string(i) +
                           " is not an axis-aligned cube of edge " + std::to_string(L.h) +
                           " in VTK hexahedron order (hexmg uses one stiffness matrix for all elements)");
      }
    }
    L.cells[i] = c;
  }
  return L;
}

std::vector<Level> build_hierarchy(const std::vector<std::array<int32_t, 3>>& cells0, int max_coarsest_vertices) {
  std::vector<Level> levels;
  std::vector<CoordMap> index(1);
  std::vector<std::array<int32_t, 3>> cells = cells0;
  levels.push_back(number_vertices(cells, index[0]));
  while (levels.back().n_real >= max_coarsest_vertices) {
    std::vector<std::array<int32_t, 3>> coarse;
    {
      CoordMap seen;
      for (const auto& c : cells) {
        const std::array<int32_t, 3> p = {c[0] >> 1, c[1] >> 1, c[2] >> 1};
        if (seen.emplace(key_of(p[0], p[1], p[2]), 0).second) coarse.push_back(p);
      }
    }
    if (coarse.size() == cells.size()) break;  // cannot coarsen further
    cells = std::move(coarse);
    index.emplace_back();
    Level C = number_vertices(cells, index.back());
    Level& F = levels.back();
    const CoordMap& fidx = index[index.size() - 2];
    // children 2x + k
    C.child.assign(C.n_padded, {});
    for (int32_t s = 0; s < C.n_padded; ++s) {
      const auto& p = C.coord[s];
      for (int k = 0; k < 27; ++k)
        C.child[s][k] = p[0] < 0 ? -1
                                 : find(fidx, 2 * p[0] + stencil_offset(k, 0), 2 * p[1] + stencil_offset(k, 1),
                                        2 * p[2] + stencil_offset(k, 2));
    }
    // parents: coarse c with |z - 2c| <= 1 per axis; slot bit d picks the upper one on odd axes.
    F.parent.assign(F.n_padded, {});
    for (int32_t s = 0; s < F.n_padded; ++s) {
      const auto& z = F.coord[s];
      for (int p = 0; p < 8; ++p) {
        F.parent[s][p] = -1;
        if (z[0] < 0) continue;
        std::array<int32_t, 3> c;
        bool ok = true;
        for (int d = 0; d < 3; ++d) {
          const int bit = corner_bit(p, d);
          if (z[d] % 2 == 0) {
            if (bit) ok = false;
            c[d] = z[d] / 2;
          } else {
            c[d] = (z[d] - 1) / 2 + bit;
          }
        }
        if (!ok) continue;
        F.parent[s][p] = find(index.back(), c[0], c[1], c[2]);
        if (F.parent[s][p] < 0)
          throw std::logic_error("hexmg hierarchy: a coarse vertex needed for trilinear interpolation is missing");
      }
    }
    levels.push_back(std::move(C));
  }
  return levels;
}

void propagate_dead(std::vector<Level>& levels) {
  for (size_t l = 1; l < levels.size(); ++l) {
    Level& C = levels[l];
    const Level& F = levels[l - 1];
    C.dead.assign(C.n_padded, 0);
    for (int32_t s = 0; s < C.n_padded; ++s) {
      if (C.coord[s][0] < 0) continue;
      uint8_t all = 7;
      for (int k = 0; k < 27; ++k)
        if (C.child[s][k] >= 0) all &= F.dead[C.child[s][k]];
      C.dead[s] = all;
    }
  }
}

Model build_model(const Scenario& sc, const RunOptions& opts) {
  Model m;
  m.name = sc.name;
  if (sc.boundary.ground.enabled) throw InputError("hexmg: boundary.ground (contact) is not part of this method");
  m.solver = parse_solver(sc);
  m.solver.coarse_tolerance = opts.precision == Precision::Fp32 ? 1e-6 : 1e-10;
  const std::filesystem::path data_dir = opts.data_dir.empty() ? mesh::default_data_dir() : opts.data_dir;
  const mesh::HexMesh hex = mesh::build_hex_mesh(sc.mesh, data_dir);
  const Lattice lat = lattice_of(hex, "hexmg mesh of scenario '" + sc.name + "'");
  m.h = lat.h;
  m.origin = lat.origin;

  // Elements in lexicographic cell order.
  std::vector<int32_t> order(hex.elems.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int32_t(i);
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const auto &ca = lat.cells[a], &cb = lat.cells[b];
    if (ca[2] != cb[2]) return ca[2] < cb[2];
    if (ca[1] != cb[1]) return ca[1] < cb[1];
    return ca[0] < cb[0];
  });
  m.cell.resize(order.size());
  m.material_id.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    m.cell[i] = lat.cells[order[i]];
    m.material_id[i] = hex.material.empty() ? 0 : hex.material[order[i]];
    if (i && m.cell[i] == m.cell[i - 1])
      throw InputError("hexmg: two elements occupy lattice cell (" + std::to_string(m.cell[i][0]) + ", " +
                       std::to_string(m.cell[i][1]) + ", " + std::to_string(m.cell[i][2]) + ")");
  }
  m.levels = build_hierarchy(m.cell, kCoarsestMaxVertices);
  Level& L0 = m.levels[0];

  // Element <-> vertex incidence.
  m.ev.resize(m.cell.size());
  m.ve.assign(L0.n_padded, {-1, -1, -1, -1, -1, -1, -1, -1});
  CoordMap slot0;
  slot0.reserve(size_t(L0.n_real) * 2);
  for (int32_t s = 0; s < L0.n_padded; ++s)
    if (L0.coord[s][0] >= 0) slot0[key_of(L0.coord[s][0], L0.coord[s][1], L0.coord[s][2])] = s;
  for (size_t e = 0; e < m.cell.size(); ++e) {
    // the vertex at corner 0 is the one whose centre-offset neighbours give the other corners
    const auto& c = m.cell[e];
    const int32_t v0 = find(slot0, c[0], c[1], c[2]);
    for (int k = 0; k < 8; ++k) {
      const int32_t v = L0.nbr[v0][stencil_index(corner_bit(k, 0), corner_bit(k, 1), corner_bit(k, 2))];
      m.ev[e][k] = v;
      m.ve[v][k] = int32_t(e);
    }
  }

  // Output view.
  m.node_of_slot.assign(L0.n_padded, -1);
  for (int32_t s = 0; s < L0.n_padded; ++s) {
    if (L0.coord[s][0] < 0) continue;
    m.node_of_slot[s] = int32_t(m.nodes.size());
    m.slot_of_node.push_back(s);
    m.nodes.push_back({m.origin[0] + m.h * L0.coord[s][0], m.origin[1] + m.h * L0.coord[s][1],
                       m.origin[2] + m.h * L0.coord[s][2]});
  }
  mesh::HexMesh out;
  out.nodes = m.nodes;
  out.elems.resize(m.ev.size());
  m.connectivity.resize(8 * m.ev.size());
  for (size_t e = 0; e < m.ev.size(); ++e)
    for (int v = 0; v < 8; ++v) {
      out.elems[e][v] = m.node_of_slot[m.ev[e][kVtkFromLattice[v]]];
      m.connectivity[8 * e + v] = out.elems[e][v];
    }

  // Materials: one Poisson ratio (one stiffness matrix), per-element E and density.
  const ElasticConstants base = elastic_constants(sc.material);
  m.poisson = base.poisson_ratio;
  m.youngs.assign(m.cell.size(), base.youngs_modulus);
  m.density.assign(m.cell.size(), sc.material.density);
  if (!(sc.material.density > 0)) throw InputError("hexmg: material.density must be positive");
  if (sc.material.damage.enabled) throw InputError("hexmg: material.damage is not part of this method (linear co-rotated elasticity)");
  for (size_t oi = 0; oi < sc.material.overrides.size(); ++oi) {
    const auto& o = sc.material.overrides[oi];
    if (o.poisson_ratio && std::abs(*o.poisson_ratio - m.poisson) > 1e-12)
      throw InputError("hexmg: material.overrides." + std::to_string(oi) +
                       ".poisson_ratio differs from the base one; the method scales ONE stiffness matrix by each element's E (Sec. 3.2)");
    for (size_t e = 0; e < m.cell.size(); ++e) {
      bool hit;
      if (o.material_id >= 0) {
        hit = m.material_id[e] == o.material_id;
      } else {
        hit = true;
        for (int d = 0; d < 3; ++d) {
          const double c = m.origin[d] + m.h * (m.cell[e][d] + 0.5);
          hit = hit && c >= o.min[d] && c <= o.max[d];
        }
      }
      if (!hit) continue;
      m.youngs[e] = read_positive(o.youngs_modulus, m.youngs[e]);
      m.density[e] = read_positive(o.density, m.density[e]);
      if (!(m.youngs[e] > 0) || !(m.density[e] > 0))
        throw InputError("hexmg: material.overrides." + std::to_string(oi) + " gives a non-positive E or density");
    }
  }
  m.mass.assign(L0.n_padded, 0.0);
  const double vol = m.h * m.h * m.h;
  for (size_t e = 0; e < m.ev.size(); ++e)
    for (int k = 0; k < 8; ++k) m.mass[m.ev[e][k]] += m.density[e] * vol / 8.0;

  // Boundary, resolved on the real vertices like every method.
  const ResolvedBoundary rb = resolve_boundary(sc.boundary, m.nodes, out);
  m.gravity = rb.gravity;
  m.curves = rb.curves;
  m.ncurves = int(rb.curves.size());
  const int fstride = 3 * (m.ncurves + 1), pstride = 3 * std::max(1, m.ncurves);
  m.cmask.assign(L0.n_padded, 0);
  m.force.assign(size_t(L0.n_padded) * fstride, 0.0);
  m.presc.assign(size_t(L0.n_padded) * pstride, 0.0);
  m.fixed_any.assign(m.nodes.size(), 0);
  for (size_t n = 0; n < m.nodes.size(); ++n) {
    const int32_t s = m.slot_of_node[n];
    m.cmask[s] = rb.constrained[n];
    m.fixed_any[n] = rb.constrained[n] ? 1 : 0;
    for (int d = 0; d < 3; ++d) m.force[size_t(s) * fstride + d] = m.mass[s] * rb.gravity[d];
  }
  for (const auto& f : rb.forces) {
    const int32_t s = m.slot_of_node[f.node];
    for (int d = 0; d < 3; ++d) m.force[size_t(s) * fstride + 3 * (f.curve + 1) + d] += f.force[d];
  }
  for (const auto& p : rb.prescribed) {
    const int32_t s = m.slot_of_node[p.node];
    for (int d = 0; d < 3; ++d)
      if (p.mask & (1u << d)) m.presc[size_t(s) * pstride + 3 * p.curve + d] = p.displacement[d];
  }

  // Components without an equation: constrained on level 0; on coarser levels those whose every
  // child component is dead (the masked prolongation cannot reach them).
  L0.dead = m.cmask;
  propagate_dead(m.levels);

  m.dt = sc.time.dt > 0 ? sc.time.dt : 0.01;
  m.alpha = sc.time.damping;
  if (m.alpha < 0) throw InputError("hexmg: time.damping must be >= 0");
  // The smoothed hierarchy's prolongations and patterns, once per model: both backends and the
  // CUDA memory estimate read them.
  if (m.solver.smoothed)
    m.smoothed = std::make_shared<const SmoothedPlan>(
        build_smoothed_plan(m, rest_level0_system(m, opts.threads > 0 ? opts.threads : 1)));
  return m;
}

nlohmann::json model_details(const Model& m) {
  nlohmann::json levels = nlohmann::json::array();
  for (const auto& L : m.levels)
    levels.push_back({{"vertices", L.n_real}, {"padded_vertices", L.n_padded}, {"cells", L.cells}});
  // The smoothed hierarchy's Galerkin products per level (block products of A P and R (A P)).
  nlohmann::json galerkin = nlohmann::json::array();
  for (int l = 1; m.smoothed && l < m.smoothed->n_levels(); ++l) {
    const SmoothedPlan::GalerkinWork g = m.smoothed->galerkin_work(l);
    galerkin.push_back({{"level", l}, {"ap_block_products", g.ap}, {"rap_block_products", g.rap}});
  }
  double emin = INFINITY, emax = 0;
  for (double e : m.youngs) {
    emin = std::min(emin, e);
    emax = std::max(emax, e);
  }
  return {{"element_size", m.h},
          {"levels", levels},
          {"n_levels", m.n_levels()},
          {"solver", m.solver.describe()},
          {"cycles", m.solver.cycles},
          {"pre_smooth", m.solver.pre_smooth},
          {"post_smooth", m.solver.post_smooth},
          {"coarse_cg_tolerance", m.solver.coarse_tolerance},
          {"coarse_cg_max_iterations", m.solver.coarse_max_iterations},
          {"tolerance_mode", m.solver.tolerance_mode},
          {"jacobi_pcg", m.solver.jacobi_pcg},
          {"smoothed_hierarchy", m.solver.smoothed},
          {"mg_pcg", m.solver.mg_pcg},
          {"corotated", !m.solver.linear},
          {"profile", m.solver.profile},
          {"gs_thread_per_vertex", m.solver.gs_thread_per_vertex},
          {"programmatic_dependent_launch", m.solver.programmatic_dependent_launch},
          {"lattice_order", m.solver.lattice_order},
          {"coarse_shared_slots", m.solver.coarse_shared_slots},
          {"galerkin_every", m.solver.galerkin_every},
          {"galerkin_work", galerkin},
          {"poisson_ratio", m.poisson},
          {"youngs_min", emin},
          {"youngs_max", emax},
          {"damping_alpha", m.alpha},
          {"integrator", "Newmark (trapezoidal), lumped mass, C = alpha M"},
          {"inverted_element_policy",
           "det F <= 0.05: keep the previous step's rotation (polar factor undefined or a reflection); non-finite F: error"}};
}

}  // namespace eb::hexmg
