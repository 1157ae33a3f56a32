#include "solvers/nr_neohookean/nr_neohookean_setup.h"

#include <cmath>
#include <type_traits>
#include <variant>

#include "meshes/errors.h"
#include "meshes/reorder.h"
#include "solvers/common/timers.h"
#include "solvers/nr_neohookean/assembly_strategy.h"

namespace eb::nr_neohookean {

void validate_nr_options(const NrOptions& o) {
  if (o.format != "auto") {
    linalg::Format f;
    try {
      f = linalg::format_from_string(o.format);
    } catch (const InputError& e) {
      throw InputError(std::string("scenario key 'nr-neohookean.format': ") + e.what() + " or auto");
    }
    if (f == linalg::Format::Bcsr || f == linalg::Format::Ell)
      throw InputError("scenario key 'nr-neohookean.format': " + o.format +
                       " is not one of the paper's formats (coo, csr, hyb, dcoo, dcsr, dhyb, auto)");
  }
  if (o.integrator != "midpoint" && o.integrator != "backward-euler")
    throw InputError("scenario key 'nr-neohookean.integrator' must be midpoint or backward-euler, got '" + o.integrator + "'");
  if (o.supplemental != "full9" && o.supplemental != "qr6")
    throw InputError("scenario key 'nr-neohookean.supplemental' must be full9 or qr6, got '" + o.supplemental + "'");
  if (!(o.nr_tolerance >= 0) || !std::isfinite(o.nr_tolerance))
    throw InputError("scenario key 'nr-neohookean.nr_tolerance' must be >= 0 (0: the precision's default)");
  if (!(o.nr_relative_tolerance >= 0 && o.nr_relative_tolerance < 1))
    throw InputError("scenario key 'nr-neohookean.nr_relative_tolerance' must lie in [0, 1)");
  if (o.nr_max_iterations < 1) throw InputError("scenario key 'nr-neohookean.nr_max_iterations' must be >= 1");
  if (o.nr_min_iterations < 0 || o.nr_min_iterations > o.nr_max_iterations)
    throw InputError("scenario key 'nr-neohookean.nr_min_iterations' must lie in [0, nr_max_iterations]");
  if (!(o.cg_tolerance > 0 && o.cg_tolerance < 1))
    throw InputError("scenario key 'nr-neohookean.cg_tolerance' must lie in (0, 1)");
  if (o.cg_max_iterations < 1) throw InputError("scenario key 'nr-neohookean.cg_max_iterations' must be >= 1");
  if (o.max_step_halvings < 0 || o.max_step_halvings > 30)
    throw InputError("scenario key 'nr-neohookean.max_step_halvings' must lie in [0, 30]");
  try {
    mesh::parse_node_ordering(o.node_order);
  } catch (const InputError& e) {
    throw InputError(std::string("scenario key 'nr-neohookean.node_order': ") + e.what());
  }
  try {
    if (mesh::parse_node_partitioner(o.partitioner) == mesh::NodePartitioner::Metis && !mesh::have_metis())
      throw InputError("metis needs METIS, which this build lacks (configured without ELASTOBENCH_METIS or "
                       "libmetis-dev); use greedy");
  } catch (const InputError& e) {
    throw InputError(std::string("scenario key 'nr-neohookean.partitioner': ") + e.what());
  }
}

std::vector<VariantInfo> nr_variants(Backend backend) {
  std::vector<VariantInfo> v;
  for (const StrategyInfo& s : assembly_strategies()) {
    if (backend == Backend::Cpu && s.location == linalg::Location::Device) continue;
    v.push_back({s.name, s.summary, {}, s.deterministic});
  }
  return v;
}

linalg::Format auto_format(bool cg_on_device) { return cg_on_device ? linalg::Format::Dhyb : linalg::Format::Dcsr; }

nlohmann::json NrSetup::describe() const {
  nlohmann::json j = TetModel::describe();
  j["strategy"] = strategy;
  j["format"] = linalg::to_string(format);
  j["supplemental"] = options.supplemental;
  j["values"] = map.value_count;
  j["nonzeros"] = pattern.nnz();
  j["newton"] = {{"tolerance", nr_tolerance},
                 {"relative_tolerance", options.nr_relative_tolerance},
                 {"max_iterations", options.nr_max_iterations},
                 {"min_iterations", options.nr_min_iterations}};
  j["cg"] = {{"tolerance", options.cg_tolerance},
             {"max_iterations", options.cg_max_iterations},
             {"preconditioner", "jacobi"}};
  j["mass_damping"] = mass_damping;
  return j;
}

NrSetup build_nr_setup(const Scenario& sc, const RunOptions& ro) {
  const NrOptions options = read_method_options<NrOptions>(sc, "nr-neohookean", validate_nr_options);
  const std::string strategy = sc.solver.variant.empty() ? "cpu-opt" : sc.solver.variant;
  const StrategyInfo& info = find_strategy(strategy);
  if (ro.backend == Backend::Cpu && info.location == linalg::Location::Device)
    throw InputError("nr-neohookean: assembly strategy '" + strategy + "' runs on the GPU; use --backend cuda");
  tet::TetModelOptions mo;
  mo.method = "nr-neohookean";
  mo.node_order = mesh::parse_node_ordering(options.node_order);
  // The midpoint rule is unconditionally stable but not L-stable: modes with omega dt >> 1 ring
  // with almost no decay under mass-proportional damping, so a scenario brought to rest needs
  // steps that resolve most of the mesh's modes; 1 ms as bcsr-pcg.
  mo.default_dt = 1e-3;
  NrSetup s;
  SetupLaps laps;
  static_cast<tet::TetModel&>(s) = tet::build_tet_model(sc, ro, mo);
  s.strategy = strategy;
  s.options = options;
  s.format = options.format == "auto" ? auto_format(ro.backend == Backend::Cuda) : linalg::format_from_string(options.format);
  s.form = options.supplemental == "qr6" ? tet::SupplementalForm::Qr6 : tet::SupplementalForm::Full9;
  const int ns = tet::supplemental_size(s.form);
  s.supplemental.resize(size_t(s.num_elements) * size_t(ns));
  s.node_mass.assign(size_t(s.num_nodes), 0.0);
  for (int64_t e = 0; e < s.num_elements; ++e) {
    tet::supplemental_from_dm(&s.Dm[size_t(9 * e)], s.form, &s.supplemental[size_t(ns * e)]);
    const double m = tet::tet4_lumped_mass(s.density, s.volume[size_t(e)]);
    for (int a = 0; a < 4; ++a) s.node_mass[size_t(s.connectivity[size_t(4 * e + a)])] += m;
  }
  s.mass_damping = s.density > 0 ? s.damping / s.density : 0.0;
  s.nr_tolerance = options.nr_tolerance > 0 ? options.nr_tolerance : (ro.precision == Precision::Fp32 ? 1e-5 : 1e-10);
  laps.lap("model");
  s.pattern = linalg::element_pattern<double>(linalg::Index(s.num_nodes), 4, s.connectivity);
  laps.lap("pattern");
  {
    const linalg::AnyMatrix<double> formatted = linalg::make_format(s.pattern, s.format);
    s.format_bytes_fp64 = linalg::storage_bytes(formatted);
    std::visit(
        [&](const auto& f) {
          using M = std::decay_t<decltype(f)>;
          if constexpr (std::is_same_v<M, linalg::CooMatrix<double>>) s.format_coo_nnz = f.nnz();
          if constexpr (std::is_same_v<M, linalg::HybMatrix<double>>) s.format_coo_nnz = f.coo.nnz();
          if constexpr (std::is_same_v<M, linalg::DcooMatrix<double>>) s.format_coo_nnz = f.off.nnz();
          if constexpr (std::is_same_v<M, linalg::DhybMatrix<double>>) s.format_coo_nnz = f.off.coo.nnz();
        },
        formatted);
    laps.lap("format");
    s.map = linalg::make_element_value_map(formatted, 4, s.connectivity, s.constrained);
  }
  laps.lap("map");
  s.setup_s = laps.laps();
  return s;
}

}  // namespace eb::nr_neohookean
