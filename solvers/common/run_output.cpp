#include "solvers/common/run_output.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "meshes/errors.h"
#include "meshes/mesh_io.h"
#include "solvers/common/boundary.h"
#include "solvers/common/results.h"

namespace eb {

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

double norm3(const double* v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

namespace {

// Files of ours in an output folder: what a run writes there, and the hidden temporaries of
// atomic writes (meshes/atomic_file.cpp: ".<name>.tmp<pid>_<n>") that a killed run leaves.
bool is_run_file(const std::filesystem::path& p, bool in_vtk) {
  const std::string n = p.filename().string();
  if (n.size() > 1 && n[0] == '.' && n.find(".tmp") != std::string::npos) return true;
  if (!in_vtk) return n == "summary.json" || n == "timeseries.csv";
  auto framed = [&](const char* prefix, const char* ext) {
    return n.rfind(prefix, 0) == 0 && p.extension() == ext;
  };
  return n == "series.pvd" || n == "render_surface.pvd" || framed("step_", ".vtu") ||
         framed("render_surface_", ".vtp");
}

// A run into a folder that holds an earlier run replaces it: the earlier run's files go before
// anything new is written, summary.json first, so that a run killed at any moment never leaves
// a summary beside another run's (or no run's) data, nor a series naming frames of two runs.
void clear_earlier_run(const std::filesystem::path& dir, const std::filesystem::path& vtk) {
  std::error_code ec;
  std::filesystem::remove(dir / "summary.json", ec);
  if (ec) throw RuntimeFailure("cannot remove the earlier run's " + (dir / "summary.json").string() + ": " + ec.message());
  // The series files (.pvd) go before the frames they name: a run killed in between leaves no
  // series naming frames already gone (the fault harness's kill-and-recheck caught one).
  for (const bool series_pass : {true, false})
    for (const auto& [folder, in_vtk] : {std::pair{vtk, true}, std::pair{dir, false}}) {
      if (!std::filesystem::is_directory(folder, ec)) continue;
      for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
        if (entry.is_regular_file(ec) && (entry.path().extension() == ".pvd") == series_pass &&
            is_run_file(entry.path(), in_vtk))
          std::filesystem::remove(entry.path(), ec);
    }
}

}  // namespace

OutputFolder::OutputFolder(const std::filesystem::path& out_dir, bool write_files, bool with_vtk) : dir_(out_dir) {
  if (!write_files) return;
  std::error_code ec;
  created_out_ = !std::filesystem::exists(dir_);
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw InputError("cannot create output directory " + dir_.string() + ": " + ec.message());
  if (!created_out_) clear_earlier_run(dir_, vtk_dir());
  created_vtk_ = with_vtk && !std::filesystem::exists(vtk_dir());
  if (with_vtk) std::filesystem::create_directories(vtk_dir());
}

void OutputFolder::discard() {
  std::error_code ec;
  if (created_vtk_) std::filesystem::remove_all(vtk_dir(), ec);
  if (created_out_ && std::filesystem::is_empty(dir_, ec)) std::filesystem::remove(dir_, ec);
}

FrameWriter::FrameWriter(const std::filesystem::path& vtk_dir, bool enabled)
    : vtk_dir_(vtk_dir), enabled_(enabled), pvd_(vtk_dir / "series.pvd") {}

// The surface is read from the data dir and moved with mesh.scale and mesh.translate, so a
// surface that was voxelized into the mesh lands on it; it is bound with trilinear weights to
// hexahedra, barycentric ones to tetrahedra.
void FrameWriter::bind_render_surface(const Scenario& sc, const Simulation& sim, const std::filesystem::path& data_dir) {
  if (!enabled_ || sc.output.render_surface.empty()) return;
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
  surface_ = std::make_unique<mesh::DeformedSurfaceWriter>(vtk_dir_, "render_surface", std::move(surface), std::move(binding));
}

void FrameWriter::write(Simulation& sim, long step, double time, const std::vector<double>& u,
                        const std::vector<double>& v) {
  if (!enabled_) return;
  if (surface_) {
    std::vector<mesh::Vec3> un(u.size() / 3);
    for (size_t i = 0; i < un.size(); ++i) un[i] = {u[3 * i], u[3 * i + 1], u[3 * i + 2]};
    surface_->write_frame(time, un);
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
  mesh::write_vtu(vtk_dir_ / name.str(), sim.nodes(), sim.cell_type(), sim.connectivity(), point_data, cell_data);
  pvd_.add(time, name.str());
  pvd_.write();
}

std::vector<Probe> place_probes(const std::vector<ProbeSpec>& specs, const std::vector<mesh::Vec3>& nodes) {
  std::vector<Probe> probes;
  for (const auto& p : specs) {
    const int32_t n = nearest_node(nodes, p.position);
    const auto& x = nodes[n];
    const double d[3] = {x[0] - p.position[0], x[1] - p.position[1], x[2] - p.position[2]};
    probes.push_back({p.name, p.position, n, norm3(d)});
  }
  return probes;
}

std::vector<std::string> probe_columns(const std::vector<Probe>& probes) {
  std::vector<std::string> columns;
  for (const auto& p : probes)
    for (const char* c : {"_ux", "_uy", "_uz"}) columns.push_back(p.name + c);
  return columns;
}

std::vector<std::string> probe_cells(const std::vector<Probe>& probes, const std::vector<double>& u) {
  std::vector<std::string> cells;
  for (const auto& p : probes)
    for (int d = 0; d < 3; ++d) cells.push_back(CsvTable::num(u[3 * p.node + d]));
  return cells;
}

nlohmann::json displacement_json(const std::vector<double>& u) {
  double max_n = 0.0, sum_n = 0.0;
  mesh::Vec3 lo{INFINITY, INFINITY, INFINITY}, hi{-INFINITY, -INFINITY, -INFINITY};
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
  return {{"max_norm", max_n}, {"mean_norm", n ? sum_n / double(n) : 0.0}, {"min", lo}, {"max", hi}};
}

nlohmann::json probes_json(const std::vector<Probe>& probes, const std::vector<double>& u) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& p : probes) out[p.name] = {u[3 * p.node], u[3 * p.node + 1], u[3 * p.node + 2]};
  return out;
}

nlohmann::json probe_nodes_json(const std::vector<Probe>& probes, const std::vector<mesh::Vec3>& nodes) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& p : probes)
    out[p.name] = {{"node", p.node}, {"requested", p.position}, {"position", nodes[p.node]}, {"distance", p.distance}};
  return out;
}

}  // namespace eb
