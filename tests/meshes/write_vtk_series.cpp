// Writes a small time series (.pvd of .vtu, plus a .vtp surface series) with every field name
// of vtk_io.h, for check_vtk_series.py to open with VTK itself.
#include <cmath>
#include <iostream>

#include "meshes/box.h"
#include "meshes/render_binding.h"
#include "meshes/sphere.h"
#include "meshes/vtk_io.h"

using namespace eb::mesh;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: write_vtk_series OUT_DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const HexMesh m = make_box_hex({0, 0, 0}, {1, 1, 1}, {4, 3, 2});
  std::vector<int32_t> conn;
  for (const auto& e : m.elems) conn.insert(conn.end(), e.begin(), e.end());
  const size_t np = m.nodes.size(), nc = m.elems.size();
  PvdWriter pvd(dir / "volume.pvd");
  for (int f = 0; f < 3; ++f) {
    std::vector<Field> pd = {{field::kDisplacement, 3, std::vector<double>(3 * np)},
                             {field::kVelocity, 3, std::vector<double>(3 * np, 0.5 * f)},
                             {field::kFixed, 1, std::vector<double>(np)}};
    for (size_t i = 0; i < np; ++i) {
      pd[0].values[3 * i] = 0.01 * f * m.nodes[i][0];
      pd[2].values[i] = m.nodes[i][2] == 0.0 ? 1.0 : 0.0;
    }
    std::vector<Field> cd = {{field::kVonMises, 1, std::vector<double>(nc, 1e3 * f)},
                             {field::kEnergyDensity, 1, std::vector<double>(nc, 2.0)},
                             {field::kDamage, 1, std::vector<double>(nc, 0.1)},
                             {field::kRotationAngle, 1, std::vector<double>(nc, 0.01)},
                             {field::kMaterialId, 1, std::vector<double>(nc, 3)}};
    const auto file = dir / ("volume_" + std::to_string(f) + ".vtu");
    VtuOptions o;
    o.compress = f != 1;  // both encodings
    write_vtu(file, m.nodes, CellType::Hexahedron, conn, pd, cd, o);
    pvd.add(0.1 * f, file.filename());
    pvd.write();
    std::vector<Vec3> u(np);
    for (size_t i = 0; i < np; ++i) u[i] = {pd[0].values[3 * i], 0, 0};
    (void)u;
  }
  const TriSurface s = make_icosphere(2, 0.3, {0.5, 0.5, 0.5});
  DeformedSurfaceWriter skin(dir, "skin", s, bind_surface(s, m));
  for (int f = 0; f < 2; ++f) {
    std::vector<Vec3> u(np);
    for (size_t i = 0; i < np; ++i) u[i] = {0.01 * f * m.nodes[i][0], 0, 0};
    skin.write_frame(0.1 * f, u);
  }
  std::cout << np << " " << nc << " " << s.nodes.size() << " " << s.tris.size() << "\n";
  return 0;
}
