#include "solvers/bcsr_pcg/bcsr_pcg_setup.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "assembly/tet/tet4.h"
#include "meshes/errors.h"
#include "meshes/mesh_spec.h"
#include "meshes/reorder.h"
#include "solvers/common/boundary.h"

namespace eb::bcsr_pcg {

Update parse_update(const std::string& variant) {
  if (variant.empty() || variant == "gather") return Update::Gather;
  if (variant == "scatter") return Update::Scatter;
  throw InputError("bcsr-pcg: unknown solver.variant '" + variant +
                   "' (gather: each matrix entry gathers its listed local values, the paper's; scatter: elements add "
                   "their entries with atomic adds)");
}

std::string to_string(Update u) { return u == Update::Gather ? "gather" : "scatter"; }

std::vector<VariantInfo> bcsr_pcg_variants() {
  return {{to_string(Update::Gather),
           "global BCSR values gathered per entry from the local matrices through index blocks (Sec. 5.4, the paper's)",
           {}},
          {to_string(Update::Scatter), "local matrices added into the global BCSR matrix with atomic adds (the comparison)",
           {}}};
}

void validate_bcsr_pcg_options(const BcsrPcgOptions& o) {
  if (o.cg_iterations < 1) throw InputError("scenario key 'bcsr-pcg.cg_iterations' must be >= 1");
  if (!(o.cg_tolerance >= 0 && o.cg_tolerance < 1))
    throw InputError("scenario key 'bcsr-pcg.cg_tolerance' must lie in [0, 1) (0: a fixed iteration count)");
  if (o.cg_max_iterations < 1) throw InputError("scenario key 'bcsr-pcg.cg_max_iterations' must be >= 1");
  if (!(o.static_cg_tolerance > 0 && o.static_cg_tolerance < 1))
    throw InputError("scenario key 'bcsr-pcg.static_cg_tolerance' must lie in (0, 1)");
  try {
    mesh::parse_node_ordering(o.node_order);
  } catch (const InputError& e) {
    throw InputError(std::string("scenario key 'bcsr-pcg.node_order': ") + e.what());
  }
}

linalg::CgOptions cg_options(const BcsrPcgOptions& opt, bool static_solve) {
  linalg::CgOptions o;
  o.preconditioner = linalg::Preconditioner::Jacobi;
  if (static_solve) {
    o.tolerance = opt.static_cg_tolerance;
    o.max_iterations = opt.cg_max_iterations;
  } else if (opt.cg_tolerance > 0) {
    o.tolerance = opt.cg_tolerance;
    o.max_iterations = opt.cg_max_iterations;
  } else {
    o.tolerance = 0;  // a fixed count: one host read per solve is enough
    o.max_iterations = opt.cg_iterations;
    o.check_every = opt.cg_iterations;
  }
  return o;
}

nlohmann::json BcsrPcgSetup::describe() const {
  return {{"update", to_string(update)},
          {"nodes", num_nodes},
          {"elements", num_elements},
          {"blocks", plan.blocks()},
          {"node_order", options.node_order},
          {"dt", dt},
          {"youngs_modulus", youngs},
          {"poisson_ratio", poisson},
          {"density", density},
          {"damping_c", damping},
          {"cg", {{"iterations", options.cg_iterations},
                  {"tolerance", options.cg_tolerance},
                  {"max_iterations", options.cg_max_iterations},
                  {"preconditioner", "jacobi"},
                  {"warm_start", options.warm_start}}},
          {"element_volume", {{"min", min_volume}, {"max", max_volume}}}};
}

BcsrPcgSetup build_bcsr_pcg_setup(const Scenario& sc, const RunOptions& ro) {
  BcsrPcgSetup s;
  s.scenario_name = sc.name;
  s.update = parse_update(sc.solver.variant);
  s.options = read_method_options<BcsrPcgOptions>(sc, "bcsr-pcg", validate_bcsr_pcg_options);
  if (!sc.boundary.prescribed.empty())
    throw InputError("bcsr-pcg: boundary.prescribed is not supported (the method solves for velocities with fixed "
                     "supports and loads, as the paper; use boundary.fixed with forces or gravity)");

  mesh::TetMesh tm = mesh::build_tet_mesh(sc.mesh, ro.data_dir);
  if (tm.elems.empty()) throw InputError("bcsr-pcg: the mesh has no tetrahedra");
  mesh::reorder_nodes(tm, mesh::parse_node_ordering(s.options.node_order));
  // Elements by their smallest node, so that neighbouring threads read neighbouring nodes.
  {
    std::vector<size_t> order(tm.elems.size());
    std::iota(order.begin(), order.end(), size_t(0));
    auto key = [&](size_t e) { return *std::min_element(tm.elems[e].begin(), tm.elems[e].end()); };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
    std::vector<std::array<int32_t, 4>> sorted(tm.elems.size());
    for (size_t k = 0; k < order.size(); ++k) sorted[k] = tm.elems[order[k]];
    tm.elems.swap(sorted);
  }
  s.nodes = tm.nodes;
  s.num_nodes = int64_t(tm.nodes.size());
  s.num_elements = int64_t(tm.elems.size());
  s.connectivity.resize(4 * tm.elems.size());
  for (size_t e = 0; e < tm.elems.size(); ++e)
    for (int a = 0; a < 4; ++a) s.connectivity[4 * e + size_t(a)] = tm.elems[e][size_t(a)];

  const ElasticConstants ec = elastic_constants(sc.material);
  s.youngs = ec.youngs_modulus;
  s.poisson = ec.poisson_ratio;
  s.lambda = ec.lambda;
  s.mu = ec.mu;
  s.density = sc.material.density;
  if (!(s.density > 0)) throw InputError("bcsr-pcg: material.density must be positive");
  if (sc.time.damping < 0) throw InputError("bcsr-pcg: time.damping must be >= 0");
  s.damping = sc.time.damping * s.density;
  s.dt = sc.time.dt > 0 ? sc.time.dt : 1e-3;  // the paper's 1 ms
  s.static_spec = sc.static_solve;

  // Reference geometry (fp64), refusing inverted and degenerate elements by index.
  const int64_t E = s.num_elements;
  s.Dm_inv.resize(9 * size_t(E));
  s.Dm.resize(9 * size_t(E));
  s.volume.resize(size_t(E));
  s.min_volume = 1e300;
  s.max_volume = 0;
  for (int64_t e = 0; e < E; ++e) {
    double X[4][3];
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) X[a][i] = s.nodes[size_t(s.connectivity[size_t(4 * e + a)])][size_t(i)];
    tet::Tet4Reference<double> ref;
    const tet::TetStatus st = tet::tet4_reference(X, ref);
    if (st != tet::TetStatus::kOk) {
      std::ostringstream msg;
      msg << "bcsr-pcg: element " << e << " (nodes " << s.connectivity[size_t(4 * e)] << " "
          << s.connectivity[size_t(4 * e + 1)] << " " << s.connectivity[size_t(4 * e + 2)] << " "
          << s.connectivity[size_t(4 * e + 3)] << ") is "
          << (st == tet::TetStatus::kInverted ? "inverted (negative volume)"
              : st == tet::TetStatus::kDegenerate ? "degenerate (zero volume)"
                                                  : "not finite")
          << " in the reference configuration";
      throw InputError(msg.str());
    }
    std::copy(ref.Dm_inv, ref.Dm_inv + 9, s.Dm_inv.begin() + 9 * e);
    for (int i = 0; i < 3; ++i)
      for (int a = 0; a < 3; ++a) s.Dm[size_t(9 * e + 3 * i + a)] = X[a + 1][i] - X[0][i];
    s.volume[size_t(e)] = ref.volume;
    s.min_volume = std::min(s.min_volume, ref.volume);
    s.max_volume = std::max(s.max_volume, ref.volume);
  }

  const ResolvedBoundary rb = resolve_boundary(sc.boundary, s.nodes, boundary_faces(tm));
  s.constrained = rb.constrained;
  s.fixed_any.resize(s.constrained.size());
  for (size_t n = 0; n < s.constrained.size(); ++n) s.fixed_any[n] = s.constrained[n] ? 1 : 0;
  for (int d = 0; d < 3; ++d) s.gravity[d] = rb.gravity[size_t(d)];
  s.curves = rb.curves;
  for (const NodalForce& f : rb.forces) {
    auto it = std::find_if(s.loads.begin(), s.loads.end(),
                           [&](const NodeLoad& l) { return l.node == f.node && l.curve == f.curve; });
    if (it == s.loads.end()) {
      s.loads.push_back({f.node, f.curve, {0, 0, 0}});
      it = s.loads.end() - 1;
    }
    for (int d = 0; d < 3; ++d) it->force[d] += f.force[size_t(d)];
  }
  std::stable_sort(s.loads.begin(), s.loads.end(), [](const NodeLoad& a, const NodeLoad& b) { return a.node < b.node; });

  s.plan = linalg::make_block_gather_plan(linalg::Index(s.num_nodes), 4, s.connectivity, s.constrained);
  return s;
}

std::vector<PhaseWork> bcsr_pcg_phase_work(const BcsrPcgSetup& s, Precision p, double layout_entries,
                                           double index_bytes, double spmv_bytes, int cg_iterations) {
  const double w = p == Precision::Fp32 ? 4.0 : 8.0;
  const double E = double(s.num_elements), N = double(s.num_nodes), n = 3 * N;
  const double contributions = E * 144;  // local entries the update reads
  // FLOPs per element, counted from bcsr_pcg_element.h and corotation.h (PERF_NOTES.md):
  // rotation: F (27) + det (12) + one-sided Jacobi, ~4 sweeps x 3 pairs x ~60, + U, R (~80) ~ 850;
  // matrix: 16 blocks x (stiffness 45 + R blk R^T 90 + force 18 + mass 12) + w (~40) ~ 2,700.
  const double rotation_flops = 850 * E, matrix_flops = 2700 * E;
  std::vector<PhaseWork> out;
  // Rotation: reads connectivity, Dm^{-1} and the nodes' u (once per element: compulsory counts
  // each node once), writes R.
  out.push_back({"rotation", rotation_flops, E * (16 + 9 * w + 9 * w) + n * w});
  // Matrix: reads connectivity, R, Dm, Dm^{-1}, volume, u and v; writes 144 + 12 local values.
  out.push_back({"matrix", matrix_flops, E * (16 + (9 + 9 + 9 + 1) * w + (144 + 12) * w) + 2 * n * w});
  // Update: reads each local value once and the indices that find them (gather: index_bytes;
  // scatter: an 8-byte position per element block), writes the layout; the vector gather reads 12
  // local values per element and 8-byte slots, writes b.
  const double update_flops = contributions + E * 12;
  const double found_by = s.update == Update::Gather ? index_bytes : E * 16 * 8;
  out.push_back({"update", update_flops,
                 contributions * w + found_by + layout_entries * w * (s.update == Update::Gather ? 1 : 2) +
                     E * 12 * (w + 8) + n * w});
  // CG: per iteration the SpMV and 13 vector passes (solvers/linalg/PERF_NOTES.md), plus the
  // start (SpMV + 5 passes) and the preconditioner refresh (diagonal read, 1/d written).
  const double stored = double(s.plan.blocks()) * 9;
  const double it = double(cg_iterations);
  out.push_back({"cg", (it + 1) * 2 * stored + it * 13 * n + 5 * n,
                 (it + 1) * spmv_bytes + (it * 13 + 5 + 2) * n * w});
  out.push_back({"integrate", 2 * n, 3 * n * w});
  return out;
}

}  // namespace eb::bcsr_pcg
