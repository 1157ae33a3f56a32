#pragma once
// Where the Newton iteration's vectors live and how its stages run (Fig. 16.8): the host engine
// (NR_CPU with a host strategy, CG on the host or, in the mixed configuration, on the GPU) and the
// device engine (NR_GPU with a device strategy and DCG_GPU; nr_neohookean_cuda.cu). The Newton
// loop itself (nr_neohookean_simulation.cpp) is written once against this interface.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "solvers/common/simulation.h"
#include "solvers/common/timers.h"
#include "solvers/linalg/cg.h"
#include "solvers/nr_neohookean/assembly_strategy.h"
#include "solvers/nr_neohookean/nr_neohookean_setup.h"

namespace eb::nr_neohookean {

// The engine's vectors (3 per node). Phi: the Newton iterate phi^{k+1}_p; PhiK: phi^k; P: p^k;
// Mid: (Phi + PhiK) / 2; Force: the assembled internal force; Fext: external force (constrained
// rows 0); Res: the Newton residual; Dx: the CG solution; Prev: the last accepted update.
enum class Vec { Phi, PhiK, P, Mid, Force, Fext, Res, Dx, Prev };
inline constexpr int kVecs = 9;

// Stage times accumulated since the last take (ms): "nr", "assembly", "cg", "transfer".
using StageTimes = std::map<std::string, double>;

// Adds the host wall-clock time of its scope to times[name].
struct StageTimer {
  StageTimes& times;
  const char* name;
  Stopwatch clock;
  StageTimer(StageTimes& t, const char* n) : times(t), name(n) {}
  ~StageTimer() { times[name] += clock.elapsed_ms(); }
};

template <class T>
class NrEngine {
 public:
  virtual ~NrEngine() = default;
  virtual void upload(Vec v, const std::vector<double>& host) = 0;
  virtual std::vector<double> download(Vec v) = 0;
  // values[idx[k]] of v = val[k] (prescribed positions).
  virtual void set_entries(Vec v, const std::vector<int32_t>& idx, const std::vector<double>& val) = 0;
  virtual void copy(Vec to, Vec from) = 0;
  virtual void midpoint() = 0;  // Mid = (Phi + PhiK) / 2
  // Phi = PhiK + dt P / m on the free components (the explicit predictor of a time step).
  virtual void predict(double dt) = 0;
  // The strategy at `at`: tangent values = tangent_scale K + diag_mass m on the diagonal, Force.
  virtual ElementChecks assemble(Vec at, double tangent_scale, double diag_mass) = 0;
  // Res = P - mass_coef m (Phi - PhiK) - force_coef (Force - Fext) on free components (0
  // elsewhere); the midpoint rule's coefficients are 1/dt + c/2 and dt/2, backward Euler's 1/dt + c
  // and dt (nr_neohookean_simulation.cpp).
  virtual double residual_dynamic(double mass_coef, double force_coef) = 0;  // returns ||Res||_2
  virtual double residual_static() = 0;                      // Res = Fext - Force
  virtual linalg::CgResult solve() = 0;                      // tangent Dx = Res, Dx from 0
  virtual void step(double alpha) = 0;                       // Phi += alpha Dx
  // P = momentum_coef m (Phi - PhiK) - keep P; PhiK = Phi (midpoint: 2/dt and 1; backward Euler: 1/dt and 0).
  virtual void finish_dynamic(double momentum_coef, double keep) = 0;
  virtual StageTimes take_times() = 0;
  // The tangent's values in the format's flat value space (value_segments.h), for tests.
  virtual std::vector<double> tangent_values() = 0;
  virtual std::size_t device_bytes() const { return 0; }
  // One product of the current tangent, alone: the median of `repeats` timings (ms).
  virtual double time_spmv_ms(int repeats) = 0;
  virtual std::string describe_cg() const = 0;
  virtual AssemblyStrategy<T>& strategy() = 0;
};

// The arrays an engine is built from (host, in T), shared by both engines.
template <class T>
struct EngineInput {
  const NrSetup* setup = nullptr;
  std::vector<T> supplemental;
  std::vector<T> dof_mass;  // 3 per node
  std::vector<T> free;      // 3 per node: 1 free, 0 constrained
  AssemblyProblem<T> problem;
  linalg::CgOptions cg;
};

// The input of `setup` in T (problem pointing into it and into `setup`, which must outlive it).
template <class T>
std::unique_ptr<EngineInput<T>> make_engine_input(const NrSetup& setup, int threads, int device);

// One assembly by the strategy `name` at host positions x (3 per node), into a fresh matrix of the
// setup's format where the strategy runs: the values (flat value space) and force back on the host,
// the element checks, and the times of `repeats` further assemblies (host clock on the host, CUDA
// events on the device). For tests, Table 16.1, Fig. 16.12 and the benchmarks.
struct StrategyRun {
  std::vector<double> values, force;
  ElementChecks checks;
  std::vector<double> ms;
  AssemblyWork work;
  std::size_t device_bytes = 0;
};
template <class T>
StrategyRun run_strategy(const std::string& name, const NrSetup& setup, const std::vector<double>& x, int repeats,
                         int threads = 1, int device = 0);
#if defined(ELASTOBENCH_HAVE_CUDA)
template <class T>
StrategyRun run_device_strategy(const EngineInput<T>& in, const std::vector<double>& x, int repeats);
#endif
ElementChecks checks_from_slot(const ElementCheckSlot& slot);

template <class T>
std::unique_ptr<NrEngine<T>> make_host_engine(const EngineInput<T>& in, int threads);
#if defined(ELASTOBENCH_HAVE_CUDA)
// Device strategy: everything on the GPU. Host strategy: NR and assembly on the host, the tangent
// and right-hand side copied to the GPU for DCG_GPU (the "transfer" stage) and the solution back.
template <class T>
std::unique_ptr<NrEngine<T>> make_cuda_engine(const EngineInput<T>& in, int threads, int device);
// The device memory make_cuda_engine takes for `setup` (its estimate, from host sizes only).
// with_strategy false leaves out the assembly strategy's, which needs its host plan built
// (a device strategy checks its own bytes once it has built it).
std::size_t estimate_cuda_engine_bytes(const NrSetup& setup, Precision precision, bool with_strategy = true);
#endif

}  // namespace eb::nr_neohookean
