#pragma once
// The assembly strategies of nr-neohookean (Cecka, Lew & Darve 2011, Sec. 16.3): every strategy
// fills the SAME sparse pattern in place, the tangent values (Eq. 6 without the mass) and the
// internal force, from the current positions. Host strategies (AssemblyCPU, AssemblyCPU_Opt) and
// device strategies (GlobalNZ, SharedNZ, the colouring/atomic comparison) implement one interface;
// the Newton loop, the tests, the benchmarks and the experiment only see this interface.
//
// HOW TO ADD A STRATEGY
//   1. One new file in solvers/nr_neohookean/ (a .cpp for the host, a .cu for the device; the
//      folder's CMakeLists.txt compiles every *.cpp, and every *.cu in CUDA builds), defining
//        template <class T> std::unique_ptr<AssemblyStrategy<T>> make_<name>(const AssemblyProblem<T>&);
//      and
//        template <class T> std::size_t estimate_<name>(const AssemblyProblem<T>&);
//      (the device bytes make_<name> will allocate, computed on the host before any allocation:
//      the registry checks it against --gpu-memory-limit, and tests/contract holds it to within
//      25% of what is allocated; 0 for a host strategy), both explicitly instantiated for float
//      and double. It calls tet::neo_hookean_element_force_tangent
//      (assembly/tet/neo_hookean.h, EB_HD: the same element routine on both backends) on
//      tet::reference_from_supplemental(S of the element, problem.form), and writes through
//      problem.map (solvers/linalg/element_value_map.h) into AssemblyTargets::values.
//   2. One line in assembly_strategy_list.h: EB_NR_STRATEGY(name, "cli-name", location,
//      deterministic, "one-line summary") (device ones inside its ELASTOBENCH_HAVE_CUDA block).
//   That is all: the strategy becomes a variant of the method (elastobench list), a case of the
//   strategy tests (CPU reference vs every strategy x format), the benchmarks and Fig. 16.12.
//
// The contract (tests/nr_neohookean/test_strategies.cpp checks it for every registered strategy):
//   - assemble() overwrites every value position that the map addresses (entries the map drops
//     hold 0 afterwards: a strategy leaves them or writes 0, so ELL padding stays 0) with tangent_scale * sum of the element tangents
//     K_e = df_e/dx, and every force entry with force_scale * sum of the element forces f_e
//     (dropped, i.e. constrained, rows: 0). Nothing else is written: the lumped mass is added to the
//     diagonal by the caller (nr_neohookean_system.h), the same for every strategy.
//   - x, the targets and the check slot live where location() says. Device strategies only enqueue
//     on `stream` (no synchronization, no allocation after construction).
//   - every element's det F goes through record_element() into the check slot (the caller resets
//     and reads it), so that an inverted element makes the Newton step, hence the run, invalid.
//   - deterministic(): two calls on the same input give the same bits (fixed summation order).
//     A strategy whose sums depend on thread timing (atomics) says false: the registry then marks
//     its variants non-deterministic and the contract tests compare it within tolerance.
//   - the problem (and the arrays it points to) outlives the strategy.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "assembly/hd.h"
#include "assembly/tet/neo_hookean.h"
#include "assembly/tet/tet4_supplemental.h"
#include "meshes/node_partition.h"
#include "solvers/linalg/element_value_map.h"
#include "solvers/linalg/linear_operator.h"

namespace eb::nr_neohookean {

// What a strategy is built from (host arrays, built once by the method's setup).
template <class T>
struct AssemblyProblem {
  int64_t nodes = 0, elements = 0;
  const std::vector<int32_t>* connectivity = nullptr;  // 4 per element (tet_model order)
  tet::SupplementalForm form = tet::SupplementalForm::Full9;
  const std::vector<T>* supplemental = nullptr;  // element-major: S(e) at [e * supplemental_size(form)]
  tet::Lame<T> lame{};
  const linalg::ElementValueMap* map = nullptr;  // the pattern's per-format positions
  int threads = 0;                               // host strategies: OpenMP threads (0: all)
  int device = 0;                                // device strategies: CUDA ordinal
  mesh::NodePartitioner partitioner = mesh::NodePartitioner::Greedy;  // SharedNZ's node partitions
  // Device strategies build a host plan whose size is known only once it is built (rebuilding it
  // for an estimate doubled the set-up at 10^7 elements). They check their bytes plus
  // device_reserve_bytes (what the engine allocates beside them, after them) against the free
  // memory and gpu_memory_limit (0: none) once the plan exists, before uploading anything.
  std::size_t device_reserve_bytes = 0;
  std::size_t gpu_memory_limit = 0;
};

// Element checks accumulated by record_element (host: GCC atomics from OpenMP threads; device:
// CUDA atomics). min_det_key holds the smallest det F as an order-preserving integer key
// (det_key/det_from_key), so that the minimum is one atomicMin whatever the thread order.
struct ElementCheckSlot {
  unsigned long long inverted = 0;               // elements with det F <= 0
  long long first_inverted = 0x7fffffffffffffffLL;  // lowest such element
  long long first_nonfinite = 0x7fffffffffffffffLL;
  unsigned long long min_det_key = ~0ULL;
};

EB_HD unsigned long long det_key(double d) {
  union {
    double d;
    unsigned long long u;
  } v{d};
  return (v.u >> 63) ? ~v.u : (v.u | 0x8000000000000000ULL);
}
inline double det_from_key(unsigned long long k) {
  union {
    unsigned long long u;
    double d;
  } v{(k >> 63) ? (k & 0x7fffffffffffffffULL) : ~k};
  return v.d;
}

// One element's outcome (call it from every element routine invocation).
EB_HD void record_element(ElementCheckSlot* slot, long long e, tet::TetStatus st, double det_f) {
#if defined(__CUDA_ARCH__)
  if (st == tet::TetStatus::kOk) {
    atomicMin(&slot->min_det_key, det_key(det_f));
  } else if (st == tet::TetStatus::kInverted) {
    atomicAdd(&slot->inverted, 1ULL);
    atomicMin(&slot->first_inverted, e);
    atomicMin(&slot->min_det_key, det_key(det_f));
  } else {
    atomicMin(&slot->first_nonfinite, e);
  }
#else
  auto amin = [](auto* p, auto v) {
    auto cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
  };
  if (st == tet::TetStatus::kOk) {
    amin(&slot->min_det_key, det_key(det_f));
  } else if (st == tet::TetStatus::kInverted) {
    __atomic_fetch_add(&slot->inverted, 1ULL, __ATOMIC_RELAXED);
    amin(&slot->first_inverted, e);
    amin(&slot->min_det_key, det_key(det_f));
  } else {
    amin(&slot->first_nonfinite, e);
  }
#endif
}

// elem(e) of Algorithm 1 from the raw arrays (x: 3 per node, conn: 4 per element, S: element-major
// supplemental data), the one element routine of every strategy, host or device. Records det F.
template <class T>
EB_HD tet::TetStatus element_routine(const T* x, const int32_t* conn, const T* S, tet::SupplementalForm form,
                                     tet::Lame<T> lame, int64_t e, T f[12], T K[144], ElementCheckSlot* checks) {
  T xe[4][3];
  for (int a = 0; a < 4; ++a) {
    const int64_t n = conn[4 * e + a];
    for (int i = 0; i < 3; ++i) xe[a][i] = x[3 * n + i];
  }
  const tet::Tet4Reference<T> ref = tet::reference_from_supplemental(S + e * tet::supplemental_size(form), form);
  T det_f;
  const tet::TetStatus st = tet::neo_hookean_element_force_tangent(ref, xe, lame, f, K, &det_f);
  if (checks) record_element(checks, e, st, double(det_f));
  return st;
}

// Where one assembly writes (all where the strategy's location() says).
template <class T>
struct AssemblyTargets {
  linalg::ValueSegments<T> values;  // the matrix's value arrays (linalg::LinearOperator::values())
  T* force = nullptr;               // 3 * nodes
  T tangent_scale = T(1);
  T force_scale = T(1);
  ElementCheckSlot* checks = nullptr;
};

// Work of one assemble(), for the performance bounds (Fig. 16.12, PERF_NOTES): compulsory bytes
// (each array the strategy must read or write once: positions, S, the map or its inverse, the
// values, the force; element data a strategy stages through DRAM counted by that strategy) and
// floating-point operations.
struct AssemblyWork {
  double bytes = 0;
  double flops = 0;
};

// What a device strategy's memory check names: the run as the engine's own check names it
// ("nr-neohookean cuda fp32"), then the strategy.
template <class T>
std::string strategy_memory_label(const std::string& strategy) {
  return std::string("nr-neohookean cuda ") + (sizeof(T) == sizeof(float) ? "fp32" : "fp64") + " (" + strategy + ")";
}

template <class T>
class AssemblyStrategy {
 public:
  virtual ~AssemblyStrategy() = default;
  virtual std::string name() const = 0;
  virtual linalg::Location location() const = 0;
  virtual bool deterministic() const = 0;
  // x: current positions, 3 per node. Host: done on return. Device: enqueued on `stream`.
  virtual void assemble(const T* x, const AssemblyTargets<T>& out, linalg::StreamHandle stream = nullptr) = 0;
  // Device memory the strategy holds (0 on the host).
  virtual std::size_t device_bytes() const { return 0; }
  virtual AssemblyWork work() const = 0;
  // Seconds of the strategy's own set-up stages (partition, plan, upload), where it has any.
  virtual std::vector<std::pair<std::string, double>> setup_seconds() const { return {}; }
};

template <class T>
using StrategyFactory = std::unique_ptr<AssemblyStrategy<T>> (*)(const AssemblyProblem<T>&);
template <class T>
using StrategyEstimate = std::size_t (*)(const AssemblyProblem<T>&);

// One row of the strategy table (assembly_strategy_list.h).
struct StrategyInfo {
  std::string name;  // the CLI name, e.g. "cpu-opt", "globalnz"
  linalg::Location location;
  bool deterministic;
  std::string summary;
  StrategyFactory<float> make_f32;
  StrategyFactory<double> make_f64;
  StrategyEstimate<float> estimate_f32;
  StrategyEstimate<double> estimate_f64;
};

// The table: every strategy this build has (device ones only in CUDA builds).
const std::vector<StrategyInfo>& assembly_strategies();
// InputError naming the choices for an unknown name.
const StrategyInfo& find_strategy(const std::string& name);
template <class T>
std::unique_ptr<AssemblyStrategy<T>> make_strategy(const std::string& name, const AssemblyProblem<T>& problem);
template <class T>
std::size_t estimate_strategy_bytes(const std::string& name, const AssemblyProblem<T>& problem);

// Bytes every strategy must move at least once per assembly, whatever its algorithm: positions,
// S(e), the connectivity or an equivalent index, the written values and force.
template <class T>
double compulsory_assembly_bytes(const AssemblyProblem<T>& p);
// The element routine's flops (force and tangent of one element), counted from neo_hookean.h.
double element_routine_flops();

}  // namespace eb::nr_neohookean
