#pragma once
// The files of one run (solvers/common/runner.h): the output folder, VTK frames with the render
// surface, probes, and the final state's statistics for summary.json.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "meshes/render_binding.h"
#include "meshes/vtk_io.h"
#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"

namespace eb {

// The run's output folders, created when files are written. An earlier run's files in them
// (summary.json, timeseries.csv, the VTK series and frames, temporaries of killed writes) are
// removed first. A run that fails before its summary (bad input, a device error) calls
// discard(): the folders it created go again.
class OutputFolder {
 public:
  OutputFolder(const std::filesystem::path& out_dir, bool write_files, bool with_vtk);
  void discard();
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path vtk_dir() const { return dir_ / "vtk"; }

 private:
  std::filesystem::path dir_;
  bool created_out_ = false, created_vtk_ = false;
};

// VTK frames (vtk/step_*.vtu listed in vtk/series.pvd) and, when the scenario has one, the
// render surface moved with the state (vtk/render_surface.pvd). Disabled: writes nothing.
class FrameWriter {
 public:
  FrameWriter(const std::filesystem::path& vtk_dir, bool enabled);
  // Binds the scenario's output.render_surface to the simulation mesh (no-op when disabled or
  // when the scenario has none).
  void bind_render_surface(const Scenario& sc, const Simulation& sim, const std::filesystem::path& data_dir);
  // One frame of the state (u, v: x, y, z per node) at `time` (a load factor in static runs).
  void write(Simulation& sim, long step, double time, const std::vector<double>& u, const std::vector<double>& v);
  bool enabled() const { return enabled_; }
  bool has_surface() const { return bool(surface_); }

 private:
  std::filesystem::path vtk_dir_;
  bool enabled_;
  mesh::PvdWriter pvd_;
  std::unique_ptr<mesh::DeformedSurfaceWriter> surface_;
};

// A probe: the node nearest a requested position.
struct Probe {
  std::string name;
  mesh::Vec3 position;
  int32_t node;
  double distance;
};
std::vector<Probe> place_probes(const std::vector<ProbeSpec>& specs, const std::vector<mesh::Vec3>& nodes);
std::vector<std::string> probe_columns(const std::vector<Probe>& probes);  // NAME_ux, NAME_uy, NAME_uz
std::vector<std::string> probe_cells(const std::vector<Probe>& probes, const std::vector<double>& u);

// summary.json's "displacement" (max and mean norm, per-component min and max), "probes" and
// "probe_nodes" of the final state.
nlohmann::json displacement_json(const std::vector<double>& u);
nlohmann::json probes_json(const std::vector<Probe>& probes, const std::vector<double>& u);
nlohmann::json probe_nodes_json(const std::vector<Probe>& probes, const std::vector<mesh::Vec3>& nodes);

double norm3(const double* v);
const char* cell_name(mesh::CellType t);  // tet4, hex8, tri3
int nodes_per_cell(mesh::CellType t);

}  // namespace eb
