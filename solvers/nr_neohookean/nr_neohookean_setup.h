#pragma once
// nr-neohookean (Cecka, Lew & Darve 2011): compressible neo-Hookean tetrahedra, the midpoint
// variational integrator (Eqs. 4-5) solved by Newton-Raphson with Jacobi-PCG (DCG), or static
// equilibrium by load steps + Newton; the tangent assembled by one of the strategies of
// assembly_strategy.h (the variant) into one sparse pattern in the chosen format.
//
// What every backend shares, computed once in fp64 on the host: the tet model (solvers/tet_model),
// S(e) in the chosen form, the lumped mass, the node-block pattern and its per-format element map.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "assembly/tet/tet4_supplemental.h"
#include "solvers/common/method_options.h"
#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"
#include "solvers/linalg/cg.h"
#include "solvers/linalg/element_value_map.h"
#include "solvers/tet_model/tet_model.h"

namespace eb::nr_neohookean {

// The [nr-neohookean] section: --set nr-neohookean.format=dhyb.
struct NrOptions {
  // Sparse format of the tangent: coo, csr, hyb, dcoo, dcsr, dhyb, or auto (the paper's: DCSR
  // where CG runs on the CPU, DHYB where it runs on the GPU).
  std::string format = "auto";
  std::string supplemental = "full9";  // S(e): full9 (Dm^{-1}) or qr6 (16.4.2's compressed form)
  // Newton: stop when ||p^k - h(phi)||_2 <= nr_tolerance (absolute, in the scenario's units of
  // momentum; the paper's 1e-5 and 2e-5 are set by its scenarios), or, when
  // nr_relative_tolerance > 0, when it is that fraction of the step's first residual. 0: the
  // precision's default, 1e-5 in fp32 (the paper's "strict single-precision convergence") and
  // 1e-10 in fp64.
  double nr_tolerance = 0.0;
  double nr_relative_tolerance = 0.0;
  int nr_max_iterations = 30;
  // Newton iterations taken before the tolerance is tested. 0 (the paper's test before any
  // update): a body at rest whose first residual, dt/2 |f_ext|, is already below an absolute
  // tolerance keeps the predictor phi^k + dt v and never starts to move; 1 makes every step
  // respond to its loads (the cecka scenarios set it), at one solve per step at rest.
  int nr_min_iterations = 0;
  double cg_tolerance = 1e-6;  // relative (the paper's 1e-6)
  int cg_max_iterations = 10000;
  // A Newton step that inverts an element (det F <= 0, where the energy is undefined) is halved
  // up to this many times before the step is reported as failed.
  int max_step_halvings = 8;
  std::string node_order = "rcm";  // meshes/reorder.h
  // SharedNZ's node partitions (meshes/node_partition.h): "greedy" (the paper's 16.3.2) or
  // "metis" (needs ELASTOBENCH_HAVE_METIS). Other strategies ignore it.
  std::string partitioner = "greedy";
  // Time integrator of dynamic steps: "midpoint" (the paper's Eq. 4: second order, energy-
  // conserving, not L-stable, so modes with omega dt >> 1 ring with almost no decay under mass
  // damping) or "backward-euler" (first order, L-stable: those modes are damped in a step; the
  // integrator of the suite's other implicit methods, for runs brought to rest).
  std::string integrator = "midpoint";
};
template <class V> void visit(V& v, NrOptions& o) {
  v("format", o.format);
  v("supplemental", o.supplemental);
  v("nr_tolerance", o.nr_tolerance);
  v("nr_relative_tolerance", o.nr_relative_tolerance);
  v("nr_max_iterations", o.nr_max_iterations);
  v("nr_min_iterations", o.nr_min_iterations);
  v("cg_tolerance", o.cg_tolerance);
  v("cg_max_iterations", o.cg_max_iterations);
  v("max_step_halvings", o.max_step_halvings);
  v("node_order", o.node_order);
  v("partitioner", o.partitioner);
  v("integrator", o.integrator);
}
void validate_nr_options(const NrOptions& o);  // InputError naming nr-neohookean.KEY

std::vector<VariantInfo> nr_variants(Backend backend);  // the strategy table as variants

struct NrSetup : tet::TetModel {
  std::string strategy;  // the variant
  NrOptions options;
  linalg::Format format = linalg::Format::Dcsr;
  tet::SupplementalForm form = tet::SupplementalForm::Full9;
  std::vector<double> supplemental;  // S(e), element-major
  std::vector<double> node_mass;     // lumped, per node (rho V / 4 from each element)
  double mass_damping = 0;           // time.damping (1/s): force c m v
  double nr_tolerance = 0;           // options.nr_tolerance resolved for the run's precision
  linalg::AssembledMatrix<double> pattern;  // node-block pattern, zero values
  linalg::ElementValueMap map;               // of `pattern` in `format`
  std::size_t format_bytes_fp64 = 0;         // storage_bytes of `pattern` in `format`, fp64 values
  std::size_t format_coo_nnz = 0;            // entries of the format's COO part (COO, HYB, DCOO, DHYB)
  // Seconds of the set-up's stages (model, pattern, format, map); the simulation adds its own.
  std::vector<std::pair<std::string, double>> setup_s;

  nlohmann::json describe() const;
};

// Builds the setup of a run on `backend` (the format's auto choice depends on where CG runs).
NrSetup build_nr_setup(const Scenario& scenario, const RunOptions& options);

// The paper's formats where CG runs on the host / on the device.
linalg::Format auto_format(bool cg_on_device);

}  // namespace eb::nr_neohookean
