// Google Benchmark: hexmg time steps on the bunny (dick2011-bunny) per backend, precision and
// model size, with rate counters steps/s, GFLOP/s and effective GB/s (the method's per-kernel
// counts, Dick 2011 Table 3 convention). In CUDA builds bench_hexmg_cuda.cu adds the STREAM triad
// of the same device, so that one run gives both numbers. Not part of ctest.
#include <benchmark/benchmark.h>

#include <map>
#include <memory>

#include "experiments/dick2011/bunny_scenario.h"
#include "meshes/mesh_spec.h"
#include "meshes/vtk_io.h"
#include "solvers/common/cuda_info.h"
#include "solvers/hexmg/hexmg_simulation.h"

namespace eb::hexmg {
namespace {

// The voxelized bunny per size, built once per process.
const mesh::HexMesh& bunny_mesh(int target) {
  static std::map<int, mesh::HexMesh> cache;
  auto it = cache.find(target);
  if (it != cache.end()) return it->second;
  dick2011::register_bunny_scenario();
  const Scenario sc = load_scenario(dick2011::kBunnyScenario, {"mesh.target_elements=" + std::to_string(target)});
  return cache[target] = mesh::build_hex_mesh(sc.mesh, mesh::default_data_dir());
}

std::string mesh_file(int target) {
  const std::string path = "/tmp/eb_bench_hexmg_bunny_" + std::to_string(target) + ".vtu";
  static std::map<int, bool> written;
  if (!written[target]) {
    const auto& m = bunny_mesh(target);
    std::vector<int32_t> conn;
    for (const auto& e : m.elems) conn.insert(conn.end(), e.begin(), e.end());
    mesh::write_vtu(path, m.nodes, mesh::CellType::Hexahedron, conn, {}, {});
    written[target] = true;
  }
  return path;
}

void BM_Step(benchmark::State& state, Backend backend, Precision precision) {
  const int target = int(state.range(0));
  const int threads = int(state.range(1));
  if (backend == Backend::Cuda && cuda_device_count() == 0) {
    state.SkipWithError("no usable CUDA device");
    return;
  }
  dick2011::register_bunny_scenario();
  const Scenario sc = load_scenario(dick2011::kBunnyScenario, {"mesh.source=file", "mesh.file=" + mesh_file(target)});
  RunOptions o;
  o.backend = backend;
  o.precision = precision;
  o.threads = threads;
  auto sim = make_hexmg(sc, o);
  const int chunk = backend == Backend::Cuda ? 20 : 1;
  sim->advance(chunk);  // warm-up (graph capture)
  int64_t steps = 0;
  for (auto _ : state) {
    sim->advance(chunk);  // returns with the device work complete
    steps += chunk;
  }
  const WorkCounts w = sim->work_per_step();
  state.counters["steps_per_s"] = benchmark::Counter(double(steps), benchmark::Counter::kIsRate);
  state.counters["GFLOP_per_s"] = benchmark::Counter(double(steps) * w.flops / 1e9, benchmark::Counter::kIsRate);
  state.counters["GB_per_s"] = benchmark::Counter(double(steps) * w.bytes / 1e9, benchmark::Counter::kIsRate);
  // Each array once per kernel: the convention for a fraction of the STREAM triad (GB_per_s counts
  // every requested byte, cache hits included, as the paper's Table 3 does).
  double compulsory = 0;
  for (const auto& k : sim->kernel_work()) compulsory += k.compulsory_bytes;
  state.counters["compulsory_GB_per_s"] = benchmark::Counter(double(steps) * compulsory / 1e9, benchmark::Counter::kIsRate);
  state.counters["compulsory_bytes_per_step"] = compulsory;
  state.counters["elements"] = double(sim->model().n_elems());
  state.counters["bytes_per_step"] = w.bytes;
  state.counters["flops_per_step"] = w.flops;
}

void cpu_args(benchmark::internal::Benchmark* b) {
  b->Args({11900, 1})->Args({11900, 0})->Args({94300, 0})->Unit(benchmark::kMillisecond)->UseRealTime();
}
void gpu_args(benchmark::internal::Benchmark* b) {
  for (int s : dick2011::kPaperSizes) b->Args({s, 0});
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK_CAPTURE(BM_Step, cpu_fp32, Backend::Cpu, Precision::Fp32)->Apply(cpu_args);
BENCHMARK_CAPTURE(BM_Step, cpu_fp64, Backend::Cpu, Precision::Fp64)->Apply(cpu_args);
#if defined(ELASTOBENCH_HAVE_CUDA)
BENCHMARK_CAPTURE(BM_Step, cuda_fp32, Backend::Cuda, Precision::Fp32)->Apply(gpu_args);
BENCHMARK_CAPTURE(BM_Step, cuda_fp64, Backend::Cuda, Precision::Fp64)->Apply(gpu_args);
#endif

}  // namespace
}  // namespace eb::hexmg

BENCHMARK_MAIN();
