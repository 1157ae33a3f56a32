#include "solvers/common/runner.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <sstream>

#include "meshes/errors.h"
#include "meshes/mesh_io.h"
#include "meshes/mesh_spec.h"
#include "meshes/render_binding.h"
#include "meshes/vtk_io.h"
#include "solvers/common/boundary.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/progress.h"
#include "solvers/common/registry.h"
#include "solvers/common/results.h"
#include "solvers/common/validity.h"

namespace eb {
namespace {

int nodes_per_cell(mesh::CellType t) {
  switch (t) {
    case mesh::CellType::Triangle: return 3;
    case mesh::CellType::Tetra: return 4;
    case mesh::CellType::Hexahedron: return 8;
  }
  return 0;
}

const char* cell_name(mesh::CellType t) {
  switch (t) {
    case mesh::CellType::Triangle: return "tri3";
    case mesh::CellType::Tetra: return "tet4";
    case mesh::CellType::Hexahedron: return "hex8";
  }
  return "unknown";
}

double loads_complete_time(const BoundarySpec& b) {
  double t = 0.0;
  auto take = [&](const LoadCurve& c) { t = std::max(t, c.start + (c.shape == "step" ? 0.0 : c.duration)); };
  for (const auto& p : b.prescribed) take(p.curve);
  for (const auto& p : b.point_forces) take(p.curve);
  for (const auto& p : b.surface_forces) take(p.curve);
  return t;
}

struct Probe {
  std::string name;
  Vec3 position;
  int32_t node;
  double distance;
};

double norm3(const double* v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

// The scenario's render surface bound to the simulation mesh (trilinear weights for hexahedra,
// barycentric for tetrahedra). It is read from the data dir and moved with mesh.scale and
// mesh.translate, so a surface that was voxelized into the mesh lands on it.
std::unique_ptr<mesh::DeformedSurfaceWriter> make_surface_writer(const Scenario& sc, const Simulation& sim,
                                                                 const std::filesystem::path& data_dir,
                                                                 const std::filesystem::path& vtk_dir) {
  mesh::TriSurface surface = mesh::read_surface(mesh::resolve_data_file(sc.output.render_surface, data_dir));
  for (auto& x : surface.nodes)
    for (int d = 0; d < 3; ++d) x[d] = x[d] * sc.mesh.scale + sc.mesh.translate[d];
  const auto& conn = sim.connectivity();
  mesh::SurfaceBinding binding;
  if (sim.cell_type() == mesh::CellType::Hexahedron) {
    mesh::HexMesh m;
    m.nodes = sim.nodes();
    for (size_t e = 0; e + 8 <= conn.size(); e += 8) {
      std::array<int32_t, 8> el{};
      std::copy(conn.begin() + e, conn.begin() + e + 8, el.begin());
      m.elems.push_back(el);
    }
    binding = mesh::bind_surface(surface, m);
  } else if (sim.cell_type() == mesh::CellType::Tetra) {
    mesh::TetMesh m;
    m.nodes = sim.nodes();
    for (size_t e = 0; e + 4 <= conn.size(); e += 4) m.elems.push_back({conn[e], conn[e + 1], conn[e + 2], conn[e + 3]});
    binding = mesh::bind_surface(surface, m);
  } else {
    throw InputError("output.render_surface needs a volume mesh");
  }
  return std::make_unique<mesh::DeformedSurfaceWriter>(vtk_dir, "render_surface", std::move(surface), std::move(binding));
}

// Writes one VTK frame of the current state and refreshes the .pvd collection.
void write_frame(Simulation& sim, const std::filesystem::path& vtk_dir, mesh::PvdWriter& pvd, long step,
                 double time, const std::vector<double>& u, const std::vector<double>& v,
                 mesh::DeformedSurfaceWriter* surface) {
  if (surface) {
    std::vector<mesh::Vec3> un(u.size() / 3);
    for (size_t i = 0; i < un.size(); ++i) un[i] = {u[3 * i], u[3 * i + 1], u[3 * i + 2]};
    surface->write_frame(time, un);
  }
  std::vector<mesh::Field> point_data;
  point_data.push_back({mesh::field::kDisplacement, 3, u});
  point_data.push_back({mesh::field::kVelocity, 3, v});
  const auto& fixed = sim.fixed_nodes();
  point_data.push_back({mesh::field::kFixed, 1, std::vector<double>(fixed.begin(), fixed.end())});
  std::vector<mesh::Field> cell_data;
  sim.cell_fields(cell_data);
  std::ostringstream name;
  name << "step_" << std::setw(7) << std::setfill('0') << step << ".vtu";
  mesh::write_vtu(vtk_dir / name.str(), sim.nodes(), sim.cell_type(), sim.connectivity(), point_data, cell_data);
  pvd.add(time, name.str());
  pvd.write();
}

}  // namespace

nlohmann::json run_simulation(const RunRequest& req) {
  const Scenario& sc = req.scenario;
  const MethodEntry& entry = methods().find(req.method, req.options.backend, req.options.precision);
  if (req.options.backend == Backend::Cuda) {
    const GpuInfo g = cuda_device_info(req.options.device);
    if (!g.usable) throw RuntimeFailure("--backend cuda: " + g.reason);
  }
  if (req.steps == 0 || req.steps < -1) throw InputError("the step count must be > 0 (got " + std::to_string(req.steps) + ")");
  if (req.vtk_every < -1) throw InputError("the VTK interval must be >= 0 (got " + std::to_string(req.vtk_every) + ")");
  RunOptions opts = req.options;
  if (opts.threads < 0) throw InputError("the thread count must be >= 0 (got " + std::to_string(opts.threads) + ")");
  if (opts.threads == 0) opts.threads = omp_get_num_procs();
  omp_set_num_threads(opts.threads);

  const std::string label = req.method + " " + to_string(opts.backend) + " " + to_string(opts.precision);
  // This run's own peak: whatever the process still holds from earlier runs is not its memory.
  const std::size_t device_baseline = cuda_tracked_bytes();
  cuda_reset_peak_tracked_bytes();
  Stopwatch setup_clock;
  std::unique_ptr<Simulation> sim = entry.factory(sc, opts);
  const double setup_ms = setup_clock.elapsed_ms();
  const double dt = sim->dt();
  if (!(dt > 0) || !std::isfinite(dt)) throw RuntimeFailure(label + ": the method chose an invalid time step");

  // Stopping rule.
  long total_steps;
  std::string stop_rule;
  if (req.steps > 0) {
    total_steps = req.steps;
    stop_rule = "steps (command line)";
  } else if (sc.time.steps > 0) {
    total_steps = sc.time.steps;
    stop_rule = "time.steps";
  } else if (sc.time.end_time > 0) {
    total_steps = long(std::ceil(sc.time.end_time / dt - 1e-9));
    stop_rule = "time.end_time";
  } else {
    total_steps = sc.time.max_steps;
    stop_rule = "time.max_steps";
  }
  if (total_steps > sc.time.max_steps) {
    total_steps = sc.time.max_steps;
    stop_rule = "time.max_steps";
  }
  const bool until_rest = sc.time.until_rest && req.steps <= 0;
  const double rest_after = loads_complete_time(sc.boundary);
  const long warmup = req.warmup_steps >= 0 ? std::min<long>(req.warmup_steps, total_steps - 1)
                                            : std::min<long>(10, total_steps / 10);
  const long sample_every = sc.output.probe_every > 0 ? sc.output.probe_every : std::max<long>(1, total_steps / 200);
  const long vtk_every = req.vtk_every >= 0 ? req.vtk_every : sc.output.vtk_every;

  std::vector<Probe> probes;
  for (const auto& p : sc.output.probes) {
    const int32_t n = nearest_node(sim->nodes(), p.position);
    const auto& x = sim->nodes()[n];
    const double d[3] = {x[0] - p.position[0], x[1] - p.position[1], x[2] - p.position[2]};
    probes.push_back({p.name, p.position, n, norm3(d)});
  }

  std::vector<std::string> columns = {"step", "time", "max_displacement", "max_velocity", "iterations", "residual"};
  for (const auto& p : probes)
    for (const char* c : {"_ux", "_uy", "_uz"}) columns.push_back(p.name + c);
  CsvTable series(columns);

  const auto vtk_dir = req.out_dir / "vtk";
  const bool write_vtk = req.write_files && vtk_every > 0;
  bool created_vtk_dir = false, created_out_dir = false;
  if (req.write_files) {
    std::error_code ec;
    created_out_dir = !std::filesystem::exists(req.out_dir);
    std::filesystem::create_directories(req.out_dir, ec);
    if (ec) throw InputError("cannot create output directory " + req.out_dir.string() + ": " + ec.message());
    created_vtk_dir = write_vtk && !std::filesystem::exists(vtk_dir);
    if (write_vtk) std::filesystem::create_directories(vtk_dir);
  }
  mesh::PvdWriter pvd(vtk_dir / "series.pvd");
  std::unique_ptr<mesh::DeformedSurfaceWriter> surface;

  std::vector<double> u, v;
  long step = 0;
  double measured_ms = 0.0, total_advance_ms = 0.0;
  long measured_steps = 0;
  std::string stopped_by = stop_rule;
  // Solver statistics of the sampled steps; the initial state (step 0) had no solve.
  long iterations_sum = 0, solver_samples = 0, tolerance_samples = 0, fixed_samples = 0;
  double worst_residual = 0.0, worst_reduction = 0.0;
  bool have_reduction = false, all_converged = true;
  ValidityTracker validity(bounding_box_diagonal(sim->nodes()), dt);

  // Returns false when the state is non-finite (the run has diverged).
  auto sample = [&](bool force_vtk, double* max_v_out) {
    sim->copy_state_to_host(u, v);
    const bool finite = validity.check_state(step, u, v);
    double max_u = 0.0, max_v = 0.0;
    for (size_t i = 0; i < u.size() / 3; ++i) {
      max_u = std::max(max_u, norm3(&u[3 * i]));
      max_v = std::max(max_v, norm3(&v[3 * i]));
    }
    if (!finite) max_u = max_v = std::numeric_limits<double>::quiet_NaN();
    const SolverStats st = sim->solver_stats();
    if (step > 0) {
      validity.check_solver(step, st);
      iterations_sum += st.iterations;
      ++solver_samples;
      if (st.converged.has_value()) {
        ++tolerance_samples;
        all_converged = all_converged && *st.converged;
      } else if (st.iterations > 0) {
        ++fixed_samples;
      }
      worst_residual = std::max(worst_residual, st.final_residual);
      const double red = st.reduction();
      if (std::isfinite(red)) {
        worst_reduction = have_reduction ? std::max(worst_reduction, red) : red;
        have_reduction = true;
      }
    }
    std::vector<std::string> row = {std::to_string(step), CsvTable::num(step * dt), CsvTable::num(max_u),
                                    CsvTable::num(max_v), std::to_string(st.iterations),
                                    CsvTable::num(st.final_residual)};
    for (const auto& p : probes)
      for (int d = 0; d < 3; ++d) row.push_back(CsvTable::num(u[3 * p.node + d]));
    series.add_row(std::move(row));
    if (write_vtk && (force_vtk || step % vtk_every == 0)) write_frame(*sim, vtk_dir, pvd, step, step * dt, u, v, surface.get());
    if (max_v_out) *max_v_out = max_v;
    return finite;
  };

  try {
    if (write_vtk && !sc.output.render_surface.empty())
      surface = make_surface_writer(sc, *sim, opts.data_dir.empty() ? mesh::default_data_dir() : opts.data_dir, vtk_dir);
    Progress progress(label, total_steps, req.quiet);
    validity.set_method_counts(sim->validity());
    if (!sample(false, nullptr) || validity.diverged()) stopped_by = "non-finite state";
    while (step < total_steps && !validity.diverged()) {
      long next = std::min(total_steps, (step / sample_every + 1) * sample_every);
      if (write_vtk) next = std::min(next, (step / vtk_every + 1) * vtk_every);
      if (step < warmup) next = std::min(next, warmup);
      const long chunk = next - step;
      Stopwatch clock;
      sim->advance(int(chunk));
      const double ms = clock.elapsed_ms();
      total_advance_ms += ms;
      if (step >= warmup) {
        measured_ms += ms;
        measured_steps += chunk;
      }
      step = next;
      progress.update(step);
      validity.set_method_counts(sim->validity());
      const bool last = step == total_steps;
      if (validity.diverged()) {
        // The method met non-finite values: this state is the last one worth recording.
        sample(true, nullptr);
        stopped_by = "non-finite state";
        break;
      }
      if (step % sample_every == 0 || last) {
        double max_v = 0.0;
        if (!sample(last, &max_v)) {
          if (write_vtk && !last && step % vtk_every != 0) write_frame(*sim, vtk_dir, pvd, step, step * dt, u, v, surface.get());
          stopped_by = "non-finite state";
          break;
        }
        if (until_rest && !last && step >= 10 && step * dt >= rest_after && max_v < sc.time.rest_velocity) {
          stopped_by = "rest (max |v| < time.rest_velocity)";
          if (write_vtk && step % vtk_every != 0) write_frame(*sim, vtk_dir, pvd, step, step * dt, u, v, surface.get());
          break;
        }
      } else if (write_vtk && step % vtk_every == 0) {
        if (!sample(false, nullptr)) {
          stopped_by = "non-finite state";
          break;
        }
      }
    }
    progress.finish();
  } catch (...) {
    std::error_code ec;
    if (created_vtk_dir) std::filesystem::remove_all(vtk_dir, ec);
    if (created_out_dir && std::filesystem::is_empty(req.out_dir, ec)) std::filesystem::remove(req.out_dir, ec);
    throw;
  }

  // Final state statistics.
  nlohmann::json disp;
  {
    double max_n = 0.0, sum_n = 0.0;
    Vec3 lo{INFINITY, INFINITY, INFINITY}, hi{-INFINITY, -INFINITY, -INFINITY};
    const size_t n = u.size() / 3;
    for (size_t i = 0; i < n; ++i) {
      const double a = norm3(&u[3 * i]);
      max_n = std::max(max_n, a);
      sum_n += a;
      for (int d = 0; d < 3; ++d) {
        lo[d] = std::min(lo[d], u[3 * i + d]);
        hi[d] = std::max(hi[d], u[3 * i + d]);
      }
    }
    disp = {{"max_norm", max_n}, {"mean_norm", n ? sum_n / n : 0.0}, {"min", lo}, {"max", hi}};
  }
  nlohmann::json probe_json = nlohmann::json::object(), probe_nodes = nlohmann::json::object();
  for (const auto& p : probes) {
    probe_json[p.name] = {u[3 * p.node], u[3 * p.node + 1], u[3 * p.node + 2]};
    probe_nodes[p.name] = {{"node", p.node}, {"requested", p.position}, {"position", sim->nodes()[p.node]},
                           {"distance", p.distance}};
  }

  const double sps = measured_ms > 0 ? measured_steps / (measured_ms / 1000.0) : 0.0;
  const WorkCounts work = sim->work_per_step();
  auto counted = [](double x) { return x > 0 ? nlohmann::json(x) : nlohmann::json(nullptr); };
  nlohmann::json perf = {{"flops_per_step", counted(work.flops)},
                         {"bytes_per_step", counted(work.bytes)},
                         {"bytes_convention", work.bytes > 0 ? nlohmann::json(to_string(work.bytes_convention))
                                                             : nlohmann::json(nullptr)},
                         {"gflops", counted(work.flops * sps / 1e9)},
                         {"effective_gbps", counted(work.bytes * sps / 1e9)}};
  const SolverStats last = sim->solver_stats();
  const int npc = nodes_per_cell(sim->cell_type());
  const size_t n_nodes = sim->nodes().size();
  const size_t n_elems = npc ? sim->connectivity().size() / npc : 0;
  auto finite_or_null = [](double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); };
  const char* solver_mode = tolerance_samples > 0 ? "tolerance" : (fixed_samples > 0 ? "fixed" : "none");
  const std::size_t device_peak =
      std::max(sim->device_bytes(), cuda_peak_tracked_bytes() - std::min(device_baseline, cuda_peak_tracked_bytes()));

  nlohmann::json summary = {
      {"schema", "elastobench.summary/1"},
      {"method", req.method},
      {"backend", to_string(opts.backend)},
      {"precision", to_string(opts.precision)},
      {"threads", opts.backend == Backend::Cpu ? nlohmann::json(opts.threads) : nlohmann::json(nullptr)},
      {"scenario", {{"name", sc.name}, {"origin", req.scenario_origin}, {"definition", scenario_to_json(sc)}}},
      {"mesh", {{"element_type", cell_name(sim->cell_type())}, {"nodes", n_nodes}, {"elements", n_elems}, {"dofs", 3 * n_nodes}}},
      {"machine", machine_info(opts.device)},
      {"build", build_json()},
      {"time", {{"dt", dt}, {"steps", step}, {"planned_steps", total_steps}, {"simulated_time", step * dt},
                {"stopped_by", stopped_by}}},
      {"timing", {{"setup_ms", setup_ms}, {"warmup_steps", warmup}, {"measured_steps", measured_steps},
                  {"measured_ms", measured_ms}, {"total_advance_ms", total_advance_ms}, {"steps_per_second", sps},
                  {"phases", sim->timings().to_json(warmup)}}},
      {"performance", perf},
      {"memory", {{"peak_host_bytes", peak_host_memory_bytes()},
                  {"peak_device_bytes", opts.backend == Backend::Cuda ? nlohmann::json(device_peak) : nlohmann::json(nullptr)}}},
      {"solver", {{"mode", solver_mode},
                  {"sampled_steps", solver_samples},
                  {"last_iterations", last.iterations}, {"last_initial_residual", last.initial_residual},
                  {"last_final_residual", last.final_residual},
                  {"last_reduction", finite_or_null(last.reduction())},
                  {"mean_iterations", solver_samples ? nlohmann::json(double(iterations_sum) / solver_samples)
                                                     : nlohmann::json(nullptr)},
                  {"worst_final_residual", worst_residual},
                  {"worst_reduction", have_reduction ? nlohmann::json(worst_reduction) : nlohmann::json(nullptr)},
                  {"all_converged", tolerance_samples ? nlohmann::json(all_converged) : nlohmann::json(nullptr)}}},
      {"validity", validity.to_json()},
      {"displacement", disp},
      {"probes", probe_json},
      {"probe_nodes", probe_nodes},
      {"method_details", sim->details()},
      {"files", {{"timeseries", "timeseries.csv"},
                 {"vtk", write_vtk ? nlohmann::json("vtk/series.pvd") : nlohmann::json(nullptr)},
                 {"render_surface", surface ? nlohmann::json("vtk/render_surface.pvd") : nlohmann::json(nullptr)}}},
  };
  if (!validity.valid()) {
    std::string line = "warning: " + label + ": invalid run: ";
    const auto reasons = validity.reasons();
    for (size_t i = 0; i < reasons.size(); ++i) line += (i ? "; " : "") + reasons[i];
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  if (req.after_run) req.after_run(*sim, summary);
  if (req.write_files) {
    series.write(req.out_dir / "timeseries.csv");
    write_json_atomic(req.out_dir / "summary.json", summary);
  }
  return summary;
}

}  // namespace eb
