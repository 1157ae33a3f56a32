// Google Benchmark of the TLED time step on the paper's cube: per backend x precision x regime
// x mesh size, with element-steps per second and the effective bandwidth of the byte model
// (work_per_step, PERF_NOTES.md). Not run by ctest; scripts/device_session.sh tled runs it.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "solvers/common/cuda_info.h"
#include "solvers/common/registry.h"
#include "solvers/tled/paper_cube.h"

namespace {

using namespace eb;

struct Case {
  Backend backend;
  Precision precision;
  bool texture, damage;
  std::string variant;
  int per_edge;
};

void run_case(benchmark::State& state, Case c) {
  if (c.backend == Backend::Cuda && cuda_device_count() == 0) {
    state.SkipWithError("no usable CUDA device");
    return;
  }
  std::vector<std::string> o = tled::paper_cube_overrides(c.per_edge);
  o.push_back(std::string("tled.texture=") + (c.texture ? "true" : "false"));
  o.push_back("solver.variant=" + c.variant);
  if (c.damage)
    for (const char* s : {"material.damage.enabled=true", "material.damage.gamma=0.5", "material.damage.m=200",
                          "material.damage.psi0=156"})
      o.push_back(s);
  const Scenario sc = load_scenario("cube-compression", o);
  RunOptions opt;
  opt.backend = c.backend;
  opt.precision = c.precision;
  opt.threads = 0;
  auto sim = methods().find("tled", c.backend, c.precision).factory(sc, opt);
  const int steps = c.backend == Backend::Cuda ? 500 : 20;
  sim->advance(steps);  // warm-up (graph instantiation, caches)
  for (auto _ : state) sim->advance(steps);
  const double elements = double(sim->connectivity().size() / 8);
  const WorkCounts w = sim->work_per_step();
  const double total_steps = double(state.iterations()) * steps;
  state.counters["elements"] = elements;
  state.counters["elem_steps_per_s"] = benchmark::Counter(elements * total_steps, benchmark::Counter::kIsRate);
  state.counters["steps_per_s"] = benchmark::Counter(total_steps, benchmark::Counter::kIsRate);
  state.counters["GB/s"] = benchmark::Counter(w.bytes * total_steps / 1e9, benchmark::Counter::kIsRate);
  state.counters["GFLOP/s"] = benchmark::Counter(w.flops * total_steps / 1e9, benchmark::Counter::kIsRate);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Case> cases;
  for (int n : {10, 20, 45})
    for (Precision p : {Precision::Fp32, Precision::Fp64}) {
      cases.push_back({Backend::Cpu, p, false, false, "gather", n});
      cases.push_back({Backend::Cpu, p, false, false, "hourglass", n});
      for (bool tex : {false, true})
        for (bool dmg : {false, true}) cases.push_back({Backend::Cuda, p, tex, dmg, "gather", n});
      cases.push_back({Backend::Cuda, p, false, false, "atomic", n});
      cases.push_back({Backend::Cuda, p, false, false, "hourglass", n});
    }
  for (const Case& c : cases) {
    const std::string name = "tled/" + to_string(c.backend) + "/" + to_string(c.precision) + (c.texture ? "/texture" : "") +
                             (c.damage ? "/damage" : "") + "/" + c.variant + "/" + std::to_string(c.per_edge);
    benchmark::RegisterBenchmark(name.c_str(), run_case, c)->Unit(benchmark::kMillisecond)->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
