#pragma once
// A shape of experiments/dick2011/mg_shapes.h as a scenario, loaded as run_shapes loads it (the
// thin plates on which the paper's coarse grids stall).
#include <filesystem>
#include <stdexcept>
#include <string>

#include "experiments/dick2011/bunny_scenario.h"
#include "experiments/dick2011/mg_shapes.h"
#include "meshes/box.h"
#include "meshes/vtk_io.h"
#include "solvers/common/scenario.h"

namespace eb::hexmg::test {

inline Scenario shape_scenario(const std::string& name, const std::vector<std::string>& extra = {}) {
  dick2011::register_bunny_scenario();
  for (const auto& s : dick2011::mg_shapes(0.002)) {
    if (s.name != name) continue;
    const auto p = std::filesystem::temp_directory_path() / ("eb_test_hexmg_shape_" + name + ".vtu");
    const mesh::HexMesh m = mesh::voxel_to_hex(s.voxels);
    std::vector<int32_t> conn;
    for (const auto& e : m.elems) conn.insert(conn.end(), e.begin(), e.end());
    mesh::write_vtu(p, m.nodes, mesh::CellType::Hexahedron, conn, {}, {});
    std::vector<std::string> o = dick2011::mg_shape_overrides(p.string());
    o.insert(o.end(), extra.begin(), extra.end());
    return load_scenario(dick2011::kBunnyScenario, o);
  }
  throw std::logic_error("no shape " + name);
}

}  // namespace eb::hexmg::test
