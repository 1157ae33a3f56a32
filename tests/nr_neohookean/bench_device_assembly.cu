// Google Benchmark of every device assembly strategy of nr-neohookean (the table's Device rows:
// globalnz, sharednz, sharednz-48k, coloured, ...) per mesh x format x precision: one assemble()
// timed by CUDA events over a batch of calls (manual time per call), with the counters the
// performance bound needs: non-zeros per second, the strategy's own bytes and flops (work()), the
// compulsory bytes of any assembly (compulsory_assembly_bytes) and their rate against the same
// run's STREAM triad. Meshes: the Table 16.1 sphere of 16.9K tetrahedra, camile_hand (92K; needs
// $ELASTOBENCH_DATA) and a 110K-tetrahedron sphere (the >= 0.1M elements of the bound). The state
// is the reference configuration stretched by 2% (no inverted element; the time does not depend
// on the values).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "meshes/errors.h"
#include "meshes/mesh_io.h"
#include "meshes/sphere.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
#include "solvers/linalg/element_value_map.h"
#include "solvers/nr_neohookean/assembly_strategy.h"

namespace eb::nr_neohookean::bench {
namespace {

constexpr int kBatch = 10;

std::map<std::string, mesh::TetMesh>& meshes() {
  static std::map<std::string, mesh::TetMesh> m;
  return m;
}

const mesh::TetMesh& bench_mesh(const std::string& name) {
  auto it = meshes().find(name);
  if (it != meshes().end()) return it->second;
  mesh::TetMesh m;
  if (name == "sphere3") {
    m = mesh::make_sphere_tet(3);
  } else if (name == "sphere28") {
    m = mesh::make_sphere_tet_divisions(28);
  } else {
    const char* env = std::getenv("ELASTOBENCH_DATA");
    const std::filesystem::path file = std::filesystem::path(env ? env : "") / (name + ".mesh");
    if (!env || !std::filesystem::exists(file)) throw InputError(name + ".mesh not found: set ELASTOBENCH_DATA");
    m = mesh::read_tet_mesh(file);
  }
  return meshes().emplace(name, std::move(m)).first->second;
}

// Mesh, S(e), pattern, map and device arrays of one (mesh, format, precision).
template <class T>
struct Case {
  int64_t nodes = 0;
  std::vector<int32_t> conn;
  std::vector<T> supp;
  linalg::AnyMatrix<T> pattern;
  linalg::ElementValueMap map;
  AssemblyProblem<T> problem;
  int64_t nnz = 0;  // value positions the map addresses
  cuda::DeviceBuffer<T> x, values, force;
  cuda::DeviceBuffer<ElementCheckSlot> checks;
};

template <class T>
Case<T>& bench_case(const std::string& mesh_name, linalg::Format f) {
  static std::map<std::pair<std::string, int>, std::unique_ptr<Case<T>>> cache;
  auto& slot = cache[{mesh_name, int(f)}];
  if (slot) return *slot;
  const mesh::TetMesh& m = bench_mesh(mesh_name);
  auto c = std::make_unique<Case<T>>();
  c->nodes = int64_t(m.nodes.size());
  for (const auto& e : m.elems) c->conn.insert(c->conn.end(), e.begin(), e.end());
  c->supp.resize(9 * m.elems.size());
  for (std::size_t e = 0; e < m.elems.size(); ++e) {
    double Dm[9], S[9];
    const auto& X0 = m.nodes[std::size_t(m.elems[e][0])];
    for (int k = 0; k < 3; ++k)
      for (int i = 0; i < 3; ++i)
        Dm[3 * i + k] = m.nodes[std::size_t(m.elems[e][std::size_t(k) + 1])][std::size_t(i)] - X0[std::size_t(i)];
    tet::supplemental_from_dm(Dm, tet::SupplementalForm::Full9, S);
    for (int q = 0; q < 9; ++q) c->supp[9 * e + std::size_t(q)] = T(S[q]);
  }
  c->pattern = linalg::make_format(linalg::element_pattern<T>(linalg::Index(c->nodes), 4, c->conn), f);
  c->map = linalg::make_element_value_map(c->pattern, 4, c->conn, {});
  std::vector<char> seen(std::size_t(c->map.value_count), 0);
  for (int32_t p : c->map.entry)
    if (p >= 0 && !seen[std::size_t(p)]) seen[std::size_t(p)] = 1, ++c->nnz;
  c->problem.nodes = c->nodes;
  c->problem.elements = int64_t(m.elems.size());
  c->problem.connectivity = &c->conn;
  c->problem.supplemental = &c->supp;
  c->problem.lame = {T(5), T(2)};
  c->problem.map = &c->map;
  std::vector<T> x(3 * m.nodes.size());
  for (std::size_t n = 0; n < m.nodes.size(); ++n)
    for (std::size_t i = 0; i < 3; ++i) x[3 * n + i] = T(1.02 * m.nodes[n][i]);
  c->x.upload(x);
  c->values.resize(std::size_t(c->map.value_count), "bench values");
  c->values.fill_zero();
  c->force.resize(x.size(), "bench force");
  c->checks.resize(1, "bench checks");
  const ElementCheckSlot fresh;
  c->checks.upload(&fresh, 1);
  slot = std::move(c);
  return *slot;
}

double triad_gbps(int element_bytes) {
  static std::map<int, double> measured;
  auto it = measured.find(element_bytes);
  if (it == measured.end()) it = measured.emplace(element_bytes, cuda_stream_triad_gbps(0, element_bytes)).first;
  return it->second;
}

template <class T>
void assembly(benchmark::State& state, const std::string& strategy, const std::string& mesh_name, linalg::Format f) {
  if (cuda_device_count() == 0) {
    state.SkipWithError(("no usable CUDA device: " + cuda_device_info(0).reason).c_str());
    return;
  }
  try {
    Case<T>& c = bench_case<T>(mesh_name, f);
    auto s = make_strategy<T>(strategy, c.problem);
    AssemblyTargets<T> out;
    int64_t start = 0;
    for (int64_t n : c.map.segment_sizes) {
      out.values.push(c.values.data() + start, n);
      start += n;
    }
    out.force = c.force.data();
    out.checks = c.checks.data();
    cudaStream_t st = nullptr;
    EB_CUDA_CHECK(cudaStreamCreate(&st));
    cudaEvent_t ev[2];
    for (auto& e : ev) EB_CUDA_CHECK(cudaEventCreate(&e));
    s->assemble(c.x.data(), out, st);  // warm-up
    EB_CUDA_CHECK(cudaStreamSynchronize(st));
    double total = 0;
    for (auto _ : state) {
      EB_CUDA_CHECK(cudaEventRecord(ev[0], st));
      for (int i = 0; i < kBatch; ++i) s->assemble(c.x.data(), out, st);
      EB_CUDA_CHECK(cudaEventRecord(ev[1], st));
      EB_CUDA_CHECK(cudaEventSynchronize(ev[1]));
      float ms = 0;
      EB_CUDA_CHECK(cudaEventElapsedTime(&ms, ev[0], ev[1]));
      const double sec = 1e-3 * double(ms) / kBatch;
      total += sec;
      state.SetIterationTime(sec);
    }
    for (auto e : ev) cudaEventDestroy(e);
    cudaStreamDestroy(st);
    ElementCheckSlot checks;
    c.checks.download(&checks, 1);
    if (checks.inverted != 0) throw RuntimeFailure("inverted elements in the benchmark state");
    const double per_call = total / double(state.iterations());
    const AssemblyWork w = s->work();
    const double compulsory = compulsory_assembly_bytes(c.problem);
    const double triad = triad_gbps(int(sizeof(T)));
    state.counters["elements"] = double(c.problem.elements);
    state.counters["nnz"] = double(c.nnz);
    state.counters["nnz_per_s"] = double(c.nnz) / per_call;
    state.counters["bytes"] = w.bytes;
    state.counters["GBps"] = w.bytes * 1e-9 / per_call;
    state.counters["GFLOPs"] = w.flops * 1e-9 / per_call;
    state.counters["compulsory_bytes"] = compulsory;
    state.counters["compulsory_GBps"] = compulsory * 1e-9 / per_call;
    state.counters["triad_GBps"] = triad;
    state.counters["compulsory_over_triad"] = compulsory * 1e-9 / per_call / triad;
    state.counters["device_MB"] = double(s->device_bytes()) * 1e-6;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace
}  // namespace eb::nr_neohookean::bench

int main(int argc, char** argv) {
  using namespace eb::nr_neohookean;
  std::vector<std::string> meshes{"sphere3", "sphere28"};
  if (const char* d = std::getenv("ELASTOBENCH_DATA"); d && std::filesystem::exists(std::filesystem::path(d) / "camile_hand.mesh"))
    meshes.insert(meshes.begin() + 1, "camile_hand");
  for (const StrategyInfo& s : assembly_strategies()) {
    if (s.location != eb::linalg::Location::Device) continue;
    for (const std::string& m : meshes)
      for (eb::linalg::Format f : {eb::linalg::Format::Dcsr, eb::linalg::Format::Dhyb})
        for (int bytes : {4, 8}) {
          const std::string name = "assembly/" + s.name + "/" + m + "/" + eb::linalg::to_string(f) + (bytes == 4 ? "/fp32" : "/fp64");
          auto* b = bytes == 4 ? benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) { bench::assembly<float>(st, s.name, m, f); })
                               : benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) { bench::assembly<double>(st, s.name, m, f); });
          b->UseManualTime()->Unit(benchmark::kMicrosecond)->MinTime(0.2);
        }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
