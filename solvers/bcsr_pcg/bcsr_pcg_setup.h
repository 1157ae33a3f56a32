#pragma once
// bcsr-pcg (Verschoor & Jalba 2012): what every backend shares, computed once in fp64 on the
// host: the tet model (solvers/tet_model: mesh, reference geometry, material, boundary, time
// step) and the assembly plan of the global BCSR matrix (solvers/linalg/element_gather.h).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "meshes/mesh.h"
#include "solvers/common/method_options.h"
#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"
#include "solvers/linalg/cg.h"
#include "solvers/linalg/element_gather.h"
#include "solvers/tet_model/tet_model.h"

namespace eb::bcsr_pcg {

// How the local matrices reach the global one (solver.variant).
enum class Update {
  Gather,   // "gather" (default, the paper's Sec. 5.4): per matrix entry, its listed local values
  Scatter,  // "scatter": every element adds its entries (atomic adds), the approach the paper rejects
};
Update parse_update(const std::string& variant);  // InputError listing the choices ("": gather)
std::string to_string(Update u);
std::vector<VariantInfo> bcsr_pcg_variants();

// The [bcsr-pcg] section: --set bcsr-pcg.cg_iterations=18.
struct BcsrPcgOptions {
  int cg_iterations = 18;        // Jacobi-PCG iterations per step when cg_tolerance = 0 (the paper's 18)
  double cg_tolerance = 0.0;     // > 0: iterate until ||r|| <= tol ||b||, at most cg_max_iterations
  int cg_max_iterations = 1000;
  // The static Newton iteration (solvers/tet_model/static_newton.h): its tangent ("consistent":
  // R K_e R^T plus the rotation's derivative, tet_model/corotational_tangent.h; "warped": R K_e R^T
  // alone), how its CGs stop ("eisenstat-walker": an adaptive relative tolerance per Newton step,
  // floored at static_cg_tolerance; "fixed": every CG to static_cg_tolerance), their cap (0: the
  // number of unknowns) and the line search on the energy's slope (off by default: measured, it
  // cut good first steps and cost Newton steps, PERF_NOTES.md).
  double static_cg_tolerance = 1e-10;
  std::string static_tangent = "consistent";
  std::string static_forcing = "eisenstat-walker";
  int static_cg_max_iterations = 0;
  bool static_line_search = false;
  bool graph = true;             // CUDA: each step one CUDA graph; false: kernels timed per phase
  bool warm_start = true;        // CG starts from the previous step's velocity (false: from 0)
  std::string node_order = "rcm";  // node numbering for SpMV locality: rcm, metis, none (meshes/reorder.h)
  // The CG engine's choices (linalg::CgOptions; summary.json's cg_dynamic/cg_static say what ran):
  // "auto" leaves them to linalg::choose_cg_plan (by size and precision), "on"/"off" force them.
  std::string cg_single_reduction = "auto";  // the single-reduction iteration
  std::string cg_l2_residency = "auto";      // CUDA: the matrix's values kept in the L2 where they fit
};
template <class V> void visit(V& v, BcsrPcgOptions& o) {
  v("cg_iterations", o.cg_iterations);
  v("cg_tolerance", o.cg_tolerance);
  v("cg_max_iterations", o.cg_max_iterations);
  v("static_cg_tolerance", o.static_cg_tolerance);
  v("static_tangent", o.static_tangent);
  v("static_forcing", o.static_forcing);
  v("static_cg_max_iterations", o.static_cg_max_iterations);
  v("static_line_search", o.static_line_search);
  v("graph", o.graph);
  v("warm_start", o.warm_start);
  v("node_order", o.node_order);
  v("cg_single_reduction", o.cg_single_reduction);
  v("cg_l2_residency", o.cg_l2_residency);
}
void validate_bcsr_pcg_options(const BcsrPcgOptions& o);  // InputError naming bcsr-pcg.KEY

// The Jacobi-PCG of a time step (fixed cg_iterations, or cg_tolerance) or of a static iteration
// (static_cg_tolerance, static_cg_max_iterations with 0 read as `unknowns`), as the options say;
// the stream is the backend's to set. The static Newton iteration sets each solve's tolerance
// and cap (BcsrPcgSimulation::set_static_cg).
linalg::CgOptions cg_options(const BcsrPcgOptions& o, bool static_solve, int64_t unknowns);
// "consistent" (true) or "warped" (false); InputError naming bcsr-pcg.static_tangent otherwise.
bool parse_static_tangent(const std::string& text);

using tet::NodeLoad;

// The shared tet model (node order from node_order, the paper's 1 ms step when time.dt is unset)
// and what bcsr-pcg adds to it: its variant, options and the assembly plan of the global matrix.
struct BcsrPcgSetup : tet::TetModel {
  Update update = Update::Gather;
  BcsrPcgOptions options;
  linalg::BlockGatherPlan plan;

  nlohmann::json describe() const;  // the model's facts and bcsr-pcg's
};

BcsrPcgSetup build_bcsr_pcg_setup(const Scenario& scenario, const RunOptions& options);

// Work per step, counted from the kernels (PERF_NOTES.md states the conventions): FLOPs and
// compulsory bytes of each phase, and their sums. `layout_entries` is the number of values the
// matrix update writes (the sliced layout's, padding included; the BCSR's on the CPU), and
// `index_bytes` what the gather reads to find the local values (padding included).
struct PhaseWork {
  std::string phase;
  double flops = 0, bytes = 0;
};
std::vector<PhaseWork> bcsr_pcg_phase_work(const BcsrPcgSetup& s, Precision p, double layout_entries,
                                           double index_bytes, double spmv_bytes, int cg_iterations);

}  // namespace eb::bcsr_pcg
