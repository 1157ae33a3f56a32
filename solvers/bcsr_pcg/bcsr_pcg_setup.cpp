#include "solvers/bcsr_pcg/bcsr_pcg_setup.h"

#include "meshes/errors.h"
#include "meshes/reorder.h"
#include "solvers/tet_model/static_newton.h"

#include <algorithm>

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
  if (o.static_cg_max_iterations < 0)
    throw InputError("scenario key 'bcsr-pcg.static_cg_max_iterations' must be >= 0 (0: the number of unknowns)");
  parse_static_tangent(o.static_tangent);
  try {
    tet::parse_forcing(o.static_forcing);
  } catch (const InputError& e) {
    throw InputError(std::string("scenario key 'bcsr-pcg.static_forcing': ") + e.what());
  }
  try {
    mesh::parse_node_ordering(o.node_order);
  } catch (const InputError& e) {
    throw InputError(std::string("scenario key 'bcsr-pcg.node_order': ") + e.what());
  }
  try {
    linalg::parse_single_reduction(o.cg_single_reduction);
  } catch (const InputError& e) {
    throw InputError(std::string("scenario key 'bcsr-pcg.cg_single_reduction': ") + e.what());
  }
  try {
    linalg::parse_l2_residency(o.cg_l2_residency);
  } catch (const InputError& e) {
    throw InputError(std::string("scenario key 'bcsr-pcg.cg_l2_residency': ") + e.what());
  }
}

bool parse_static_tangent(const std::string& text) {
  if (text == "consistent") return true;
  if (text == "warped") return false;
  throw InputError("scenario key 'bcsr-pcg.static_tangent': unknown tangent '" + text +
                   "' (consistent: R K R^T plus the rotation's derivative; warped: R K R^T alone)");
}

linalg::CgOptions cg_options(const BcsrPcgOptions& opt, bool static_solve, int64_t unknowns) {
  linalg::CgOptions o;
  o.preconditioner = linalg::Preconditioner::Jacobi;
  o.single_reduction = linalg::parse_single_reduction(opt.cg_single_reduction);
  o.l2_resident_operator = linalg::parse_l2_residency(opt.cg_l2_residency);
  if (static_solve) {
    o.tolerance = opt.static_cg_tolerance;
    o.max_iterations = opt.static_cg_max_iterations > 0 ? opt.static_cg_max_iterations
                                                        : int(std::max<int64_t>(1, unknowns));
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
  nlohmann::json j = TetModel::describe();
  j["update"] = to_string(update);
  j["blocks"] = plan.blocks();
  j["node_order"] = options.node_order;
  j["cg"] = {{"iterations", options.cg_iterations},
             {"tolerance", options.cg_tolerance},
             {"max_iterations", options.cg_max_iterations},
             {"preconditioner", "jacobi"},
             {"warm_start", options.warm_start}};
  return j;
}

BcsrPcgSetup build_bcsr_pcg_setup(const Scenario& sc, const RunOptions& ro) {
  const Update update = parse_update(sc.solver.variant);
  const BcsrPcgOptions options = read_method_options<BcsrPcgOptions>(sc, "bcsr-pcg", validate_bcsr_pcg_options);
  if (!sc.boundary.prescribed.empty())
    throw InputError("bcsr-pcg: boundary.prescribed is not supported (the method solves for velocities with fixed "
                     "supports and loads, as the paper; use boundary.fixed with forces or gravity)");
  tet::TetModelOptions mo;
  mo.method = "bcsr-pcg";
  mo.node_order = mesh::parse_node_ordering(options.node_order);
  mo.default_dt = 1e-3;  // the paper's 1 ms
  BcsrPcgSetup s;
  static_cast<tet::TetModel&>(s) = tet::build_tet_model(sc, ro, mo);
  s.update = update;
  s.options = options;
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
