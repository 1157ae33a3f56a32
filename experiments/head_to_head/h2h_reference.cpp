#include "experiments/head_to_head/h2h_reference.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "meshes/errors.h"

#include "experiments/head_to_head/h2h_probe.h"
#include "solvers/common/results.h"
#include "solvers/common/timers.h"

namespace eb::head_to_head {

ReferenceSolution solve_reference(const Scene& s, double resolution, Backend backend, int threads,
                                  const std::filesystem::path& data_dir) {
  std::vector<std::string> ov = mesh_overrides(s, resolution);
  for (const char* o : {"time.mode=static", "static.tolerance=1e-8", "static.max_iterations=30",
                        "bcsr-pcg.static_cg_tolerance=1e-10", "bcsr-pcg.cg_max_iterations=100000"})
    ov.push_back(o);
  Scenario sc = scene_scenario(s, ov);
  const ResolvedMethod m = methods().resolve(sc, "bcsr-pcg", backend, Precision::Fp64);
  sc.solver.variant = m.entry->variant;
  RunOptions o;
  o.backend = backend;
  o.precision = Precision::Fp64;
  o.threads = threads;
  o.data_dir = data_dir;
  ReferenceSolution r;
  r.resolution = resolution;
  r.backend = to_string(backend);
  Stopwatch clock;
  auto sim = m.entry->factory(sc, o);
  sim->solve_static(1.0);
  r.seconds = clock.elapsed_ms() * 1e-3;
  const SolverStats st = sim->solver_stats();
  r.converged = st.step_converged().value_or(false) && !sim->validity().solver_failures;
  r.newton_iterations = st.outer_iterations;
  r.cg_iterations = st.iterations;
  r.elements = long(sim->connectivity().size() / 4);
  r.nodes = long(sim->nodes().size());
  std::vector<double> u, v;
  sim->copy_state_to_host(u, v);
  const ProbeBinding b = bind_probes(sc.output.probes, *sim);
  r.probe_names = b.names;
  r.probes = probe_displacements(b, u);
  r.outside = b.binding.outside;
  return r;
}

RichardsonReference richardson(const std::vector<Vec3>& h, const std::vector<Vec3>& h2, const std::vector<Vec3>& h4) {
  if (h.size() != h2.size() || h.size() != h4.size() || h.empty())
    throw std::invalid_argument("richardson: the three levels need the same, non-zero number of probes");
  double fine = 0, coarse = 0;
  for (size_t i = 0; i < h.size(); ++i) {
    fine += norm3(sub3(h[i], h2[i]));
    coarse += norm3(sub3(h2[i], h4[i]));
  }
  RichardsonReference r;
  r.level_magnitudes.resize(3);
  for (size_t i = 0; i < h.size(); ++i) {
    r.level_magnitudes[0].push_back(norm3(h[i]));
    r.level_magnitudes[1].push_back(norm3(h2[i]));
    r.level_magnitudes[2].push_back(norm3(h4[i]));
  }
  r.order = fine > 0 && coarse > fine ? std::clamp(std::log2(coarse / fine), 1.0, 3.0) : (fine > 0 ? 1.0 : 2.0);
  const double f = 1.0 / (std::pow(2.0, r.order) - 1.0);
  for (size_t i = 0; i < h.size(); ++i) {
    Vec3 a, b;
    for (int d = 0; d < 3; ++d) {
      a[d] = h[i][d] + (h[i][d] - h2[i][d]) * f;
      b[d] = h2[i][d] + (h2[i][d] - h4[i][d]) * f;
    }
    r.probes.push_back(a);
    const double m = norm3(a);
    if (m > 0) r.error_estimate = std::max(r.error_estimate, norm3(sub3(a, b)) / m);
  }
  return r;
}

namespace {
std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string cell; std::getline(ss, cell, ',');) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}
}  // namespace

RichardsonReference read_reference_csv(const std::filesystem::path& path, const std::string& scene, double resolution,
                                       const std::vector<std::string>& probe_names, std::string* text) {
  const std::string where = "head-to-head reference file " + path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(where + ": cannot be read (corot_reference_from names the folder of an earlier run)");
  std::stringstream all;
  all << in.rdbuf();
  if (text) *text = all.str();
  std::stringstream lines(all.str());
  std::string line;
  if (!std::getline(lines, line)) throw InputError(where + ": empty");
  const std::vector<std::string> head = split_csv_line(line);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < head.size(); ++i) col[head[i]] = i;
  for (const char* c : {"scene", "resolution", "converged", "probe", "extrapolated_ux", "extrapolated_uy",
                        "extrapolated_uz", "observed_order", "error_estimate", "magnitude", "coarser_magnitude",
                        "coarser2_magnitude"})
    if (!col.count(c)) throw InputError(where + ": no column '" + std::string(c) + "' (not a Richardson reference)");
  RichardsonReference r;
  r.level_magnitudes.resize(3);
  std::vector<std::string> names;
  int row = 1;
  auto number = [&](const std::vector<std::string>& cells, const char* c) {
    const std::string& v = cells[col.at(c)];
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(v, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != v.size() || !std::isfinite(x))
      throw InputError(where + ", row " + std::to_string(row) + ": column '" + c + "' is not a finite number: '" + v + "'");
    return x;
  };
  while (std::getline(lines, line)) {
    ++row;
    if (line.empty()) continue;
    const std::vector<std::string> cells = split_csv_line(line);
    if (cells.size() != head.size())
      throw InputError(where + ", row " + std::to_string(row) + ": " + std::to_string(cells.size()) + " cells, the header has " +
                       std::to_string(head.size()));
    if (cells[col["scene"]] != scene)
      throw InputError(where + ", row " + std::to_string(row) + ": scene '" + cells[col["scene"]] + "', not " + scene);
    const double res = number(cells, "resolution");
    if (std::abs(res - resolution) > 1e-9 * resolution)
      throw InputError(where + ": resolution " + cells[col["resolution"]] + ", this run's reference is at " +
                       CsvTable::num(resolution));
    if (cells[col["converged"]] != "yes") throw InputError(where + ": a reference level did not converge");
    names.push_back(cells[col["probe"]]);
    r.probes.push_back({number(cells, "extrapolated_ux"), number(cells, "extrapolated_uy"), number(cells, "extrapolated_uz")});
    r.level_magnitudes[0].push_back(number(cells, "magnitude"));
    r.level_magnitudes[1].push_back(number(cells, "coarser_magnitude"));
    r.level_magnitudes[2].push_back(number(cells, "coarser2_magnitude"));
    r.order = number(cells, "observed_order");
    r.error_estimate = number(cells, "error_estimate");
  }
  if (names != probe_names) {
    std::string want, got;
    for (const auto& n : probe_names) want += (want.empty() ? "" : ", ") + n;
    for (const auto& n : names) got += (got.empty() ? "" : ", ") + n;
    throw InputError(where + ": probes [" + got + "], the scene's are [" + want + "]");
  }
  return r;
}

}  // namespace eb::head_to_head
