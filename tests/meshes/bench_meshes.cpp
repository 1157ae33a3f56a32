// Performance targets of issue #3: voxelizing the bunny to ~269K hexahedra (< 5 s, one core)
// and writing a 1M-element .vtu (< 3 s).
#include <benchmark/benchmark.h>

#include <filesystem>

#include "meshes/box.h"
#include "meshes/mesh_io.h"
#include "meshes/vtk_io.h"
#include "meshes/voxelize.h"

using namespace eb::mesh;

// The bunny from the data folder; false (and the benchmark marked as failed) when absent.
static bool load_bunny(benchmark::State& state, TriSurface& bunny) {
  const std::filesystem::path file = std::filesystem::path(EB_MESH_DATA_DIR) / "bunny.off";
  if (!std::filesystem::exists(file)) {
    state.SkipWithError("bunny.off not found in the data folder");
    return false;
  }
  bunny = read_surface(file);
  return true;
}

static void BM_VoxelizeBunny269K(benchmark::State& state) {
  TriSurface bunny;
  if (!load_bunny(state, bunny)) return;
  size_t cells = 0;
  for (auto _ : state) {
    const VoxelMesh v = voxelize_target(bunny, 269000, "bunny.off");
    cells = v.cells.size();
    benchmark::DoNotOptimize(v.cells.data());
  }
  state.counters["voxels"] = double(cells);
}
BENCHMARK(BM_VoxelizeBunny269K)->Unit(benchmark::kMillisecond)->Iterations(3);

static void BM_VoxelizeBunnyFixedSpacing(benchmark::State& state) {
  TriSurface bunny;
  if (!load_bunny(state, bunny)) return;
  for (auto _ : state) benchmark::DoNotOptimize(voxelize(bunny, 1.41e-3, "bunny.off").cells.size());
}
BENCHMARK(BM_VoxelizeBunnyFixedSpacing)->Unit(benchmark::kMillisecond);

static void BM_WriteVtu1M(benchmark::State& state) {
  const HexMesh m = make_box_hex({0, 0, 0}, {1, 1, 1}, {100, 100, 100});
  std::vector<int32_t> conn;
  conn.reserve(m.elems.size() * 8);
  for (const auto& e : m.elems) conn.insert(conn.end(), e.begin(), e.end());
  std::vector<Field> pd = {{field::kDisplacement, 3, std::vector<double>(3 * m.nodes.size())}};
  for (size_t i = 0; i < m.nodes.size(); ++i) pd[0].values[3 * i] = 1e-3 * m.nodes[i][0] * m.nodes[i][1];
  std::vector<Field> cd = {{field::kVonMises, 1, std::vector<double>(m.elems.size())}};
  for (size_t i = 0; i < m.elems.size(); ++i) cd[0].values[i] = double(i % 977) * 1.5;
  const auto path = std::filesystem::temp_directory_path() / "eb_bench_1m.vtu";
  VtuOptions o;
  o.compress = state.range(0) != 0;
  for (auto _ : state) write_vtu(path, m.nodes, CellType::Hexahedron, conn, pd, cd, o);
  state.counters["MB"] = double(std::filesystem::file_size(path)) / 1e6;
  std::filesystem::remove(path);
}
BENCHMARK(BM_WriteVtu1M)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->Iterations(2);

BENCHMARK_MAIN();
