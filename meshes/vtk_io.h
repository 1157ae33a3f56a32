#pragma once
// VTK output shared by every method: .vtu volume meshes, .vtp surfaces and .pvd time series.
// Every method writes the same field names (below) so ParaView state files work across methods.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "meshes/mesh.h"

namespace eb::mesh {

namespace field {
// point data
inline constexpr const char* kDisplacement = "displacement";  // 3 components, m
inline constexpr const char* kVelocity = "velocity";          // 3 components, m/s
inline constexpr const char* kFixed = "fixed";                // 1 where any component is constrained
// cell data
inline constexpr const char* kVonMises = "von_mises_stress";          // Pa (Cauchy)
inline constexpr const char* kEnergyDensity = "strain_energy_density";  // J/m^3
inline constexpr const char* kDamage = "damage";                      // 0..1
inline constexpr const char* kRotationAngle = "rotation_angle";       // rad, co-rotation
inline constexpr const char* kMaterialId = "material_id";
}  // namespace field

struct Field {
  std::string name;
  int components = 1;
  std::vector<double> values;  // components * count, interleaved
};

struct VtuOptions {
  bool compress = true;  // zlib-compressed appended binary; false: raw appended binary
};

// Unstructured grid of a single cell type; connectivity holds nodes_per_cell * num_cells ids.
// Writes to a temporary file beside `path` and renames it, so a reader never sees half a file.
void write_vtu(const std::filesystem::path& path, const std::vector<Vec3>& points, CellType type,
               const std::vector<int32_t>& connectivity, const std::vector<Field>& point_data,
               const std::vector<Field>& cell_data, const VtuOptions& options = {});

// Triangle surface as VTK PolyData (.vtp).
void write_vtp(const std::filesystem::path& path, const std::vector<Vec3>& points,
               const std::vector<std::array<int32_t, 3>>& triangles, const std::vector<Field>& point_data,
               const VtuOptions& options = {});

// ParaView collection of time steps; files are stored relative to the .pvd's folder, which is
// how ParaView resolves them. `file` is absolute or relative to the .pvd's folder (a bare name
// for a frame beside it), never relative to the working directory; it must already be written.
class PvdWriter {
 public:
  explicit PvdWriter(std::filesystem::path pvd_path);
  void add(double time, const std::filesystem::path& file);  // InputError if the frame does not exist
  void write() const;  // atomic (temp + rename); call after each add to keep it readable
 private:
  std::filesystem::path path_;
  std::vector<std::pair<double, std::string>> entries_;
};

}  // namespace eb::mesh
