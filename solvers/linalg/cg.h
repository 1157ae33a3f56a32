#pragma once
// Conjugate gradients and Jacobi-preconditioned CG against LinearOperator, on the host or the
// device (wherever the operator lives). The iteration itself is described once, in
// cg_algorithm.h; the host engine (cg_cpu.cpp) and the CUDA engine (cg_cuda.cu, its kernels in
// cg_kernels.cuh) both run it, as planned by choose_cg_plan (cg_plan.cpp).
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "solvers/linalg/linear_operator.h"

namespace eb::linalg {

enum class Preconditioner { None, Jacobi };

// Choices of the CG engine that Auto leaves to the engine (choose_cg_plan: by size, precision and
// where the operator lives); On and Off force them. Scenario text: "auto", "on", "off".
enum class SingleReduction { Auto, On, Off };
enum class L2Residency { Auto, On, Off };
// How the device's single-reduction iteration finishes a reduction: in the last thread block of
// the kernel that produced the partial sums (an atomic ticket), or in every block of the next
// kernel, which adds them before it uses the totals (no serial tail, but each block reads all
// partial sums, which grows with the square of the block count). Text: "auto", "last-block",
// "next-kernel".
enum class SrReduction { Auto, LastBlock, NextKernel };
std::string to_string(SingleReduction v);
std::string to_string(L2Residency v);
std::string to_string(SrReduction v);
// The inverse of to_string; InputError naming the accepted values otherwise.
SingleReduction parse_single_reduction(const std::string& text);
L2Residency parse_l2_residency(const std::string& text);
SrReduction parse_sr_reduction(const std::string& text);

struct CgOptions {
  Preconditioner preconditioner = Preconditioner::Jacobi;
  int max_iterations = 1000;
  // Stop when ||r_k||_2 <= tolerance * ||b||_2 (r_k the recurrence residual). 0 runs exactly
  // max_iterations (a fixed count) unless the residual becomes exactly 0 or the iteration breaks down.
  double tolerance = 1e-8;
  // Device only: iterations enqueued between two reads of the stop flag by the host (one CUDA graph
  // launch when use_graph). Iterations enqueued after the stop are no-ops except for the operator
  // product, so the waste is at most check_every - 1 products per solve (cg_algorithm.h says why).
  int check_every = 8;
  bool use_graph = true;
  // The single-reduction iteration (Chronopoulos & Gear; cg_algorithm.h): both dot products after
  // the one operator product, so the device runs two kernels per iteration instead of four (the
  // dot fused into the product where the operator offers it: fused_dot_blocks()). Same iterates
  // as standard CG in exact arithmetic, not the same bits; two more vectors of workspace (s, w; u
  // without Jacobi aliases r) and one more operator product per solve (w = A u after the start).
  // Auto: the device takes it while its reductions can be summed by the next kernel (small
  // problems, where kernel boundaries and reduction tails dominate), the standard iteration above;
  // the host engine always takes the standard one. choose_cg_plan states the rule.
  SingleReduction single_reduction = SingleReduction::Auto;
  // Device, single reduction only: how its reductions are finished (SrReduction). Auto chooses by
  // size; LastBlock or NextKernel force one (tests of both paths, A/B timing), and need
  // single_reduction = On (InputError otherwise). Both give the same iterates to rounding, not the
  // same bits (their blocks differ).
  SrReduction sr_reduction = SrReduction::Auto;
  // Device only: ask the L2 cache to keep part of the operator's values (LinearOperator::hot_storage)
  // between products, where the values fit in the L2. While the solver lives, the process's
  // persisting-L2 set-aside (cudaLimitPersistingL2CacheSize) is raised to min(the values' bytes,
  // half the device's largest) and the solver's kernels mark that much of the values persisting
  // (an access policy window on its stream and graph); its destruction restores both and returns
  // persisting lines to normal (cudaCtxResetPersistingL2Cache, which acts on the whole process: with
  // two such solvers alive, the first destroyed ends the residency of both). Changes no bit of a
  // result. Why it is not always on: the raised set-aside slows every other kernel of the process
  // that streams from DRAM, and only fp64 iterations, whose values about fill the L2 with the
  // vectors, gain (PERF_NOTES.md). Auto: on in fp64 where the values fit the L2, off in fp32 and on
  // the host. enqueue() under a caller's capture sets the window on the stream, and the capture
  // copies it into the captured kernel nodes (checked with CUDA 13: linalg_l2_ab/capture_window_probe.txt).
  L2Residency l2_resident_operator = L2Residency::Auto;
  // Device only: the stream the solver enqueues on (a cudaStream_t); null: a stream of its own.
  // A method whose other kernels run on one stream passes it, so that a solve is ordered with them
  // without events and can be captured with them in one CUDA graph (enqueue()).
  StreamHandle stream = nullptr;
  // Host only: called with (k, ||r_k||) for every entry of CgResult::residuals as it is recorded,
  // k = 0 after the start and k = 1, 2, ... after each iteration, whatever the status (so the
  // calls match the residual history one to one: per-iteration timestamps). Returning false stops
  // a solve that is still running, with status Stopped; x then holds iterate k (a wall-clock cutoff).
  // Its return is ignored once the solve has stopped for another reason. Empty: no calls. The
  // device engine runs check_every iterations between two host reads, so it has no per-iteration
  // host moment: a CgSolver (or cg_solve_from_host) on a device operator refuses a non-empty one
  // (InputError).
  std::function<bool(int iteration, double residual)> on_iteration;
};

// Stopped: CgOptions::on_iteration returned false (host engine only).
enum class CgStatus { Running = 0, Converged = 1, IterationLimit = 2, Breakdown = 3, NonFinite = 4, Stopped = 5 };
std::string to_string(CgStatus s);

struct CgResult {
  CgStatus status = CgStatus::Running;
  int iterations = 0;
  double rhs_norm = 0;                // ||b||
  std::vector<double> residuals;      // ||r_k||, k = 0 .. iterations (recurrence residuals)
  bool converged() const { return status == CgStatus::Converged; }
  double initial_residual() const { return residuals.empty() ? 0.0 : residuals.front(); }
  double final_residual() const { return residuals.empty() ? 0.0 : residuals.back(); }
};

// What the engine's plan depends on besides the options: the operator and the device it runs on.
struct CgDeviceProperties {
  int multiprocessors = 1;
  std::size_t l2_bytes = 0;
  std::size_t max_persisting_l2_bytes = 0;  // 0: the device keeps no persisting L2 lines
  std::size_t max_access_policy_window_bytes = 0;
};
// The current CUDA device's (RuntimeFailure in a build without CUDA).
CgDeviceProperties cg_device_properties();

struct CgProblem {
  Location location = Location::Host;
  Index rows = 0;
  std::size_t value_bytes = sizeof(double);  // sizeof(T)
  std::size_t fused_dot_blocks = 0;          // LinearOperator::fused_dot_blocks()
  std::size_t hot_bytes = 0;                 // LinearOperator::hot_storage().bytes; 0: none offered
  CgDeviceProperties device;                 // Location::Device only
};
// The problem of operator A (its device's properties where it lives on one).
template <class T>
CgProblem cg_problem(const LinearOperator<T>& A);

// How a CgSolver runs: the Auto options resolved, with the reason for each choice, and the
// device engine's launch shape. CgSolver::plan() gives the solver's; describe() turns it into JSON
// for a method's summary.
struct CgPlan {
  Location location = Location::Host;
  bool single_reduction = false;
  std::string iteration_reason;
  // Device single reduction: LastBlock or NextKernel. Otherwise LastBlock on the device (the
  // standard iteration's reductions finish in their kernel's last block) and Auto on the host.
  SrReduction reduction = SrReduction::Auto;
  std::string reduction_reason;
  // Next-kernel reductions in fp32: the update and the fused product are launched as programmatic
  // dependents (each may start while the kernel before it drains; no bit changes).
  bool programmatic_launch = false;
  bool l2_resident = false;
  std::string l2_reason;
  std::size_t l2_window_bytes = 0;     // the values covered by the access policy window
  std::size_t l2_set_aside_bytes = 0;  // the persisting-L2 set-aside the solver asks for
  // Device: blocks of the vector kernels (fixed per solver: the reduction order is too), the partial
  // sums of the single reduction's u . A u, the bytes of partial sums a next-kernel update would read
  // per iteration, and the device memory the engine allocates.
  unsigned vector_blocks = 0;
  unsigned product_dot_partials = 0;
  double next_kernel_partial_bytes = 0;
  std::size_t device_bytes = 0;
  int max_iterations = 0;
};
// The plan for problem p under options o: a pure function (no device is touched), so a method can
// state it, or estimate its memory, before it builds a solver. Rules:
//  - host: the standard iteration unless single_reduction = On; no L2 residency.
//  - device iteration, Auto: the single reduction while its reductions can be summed by the next
//    kernel (the partial sums each update block reads, vector blocks x (2 x vector blocks + product
//    partials) doubles at one entry per thread, stay within 8 MB: up to ~0.13M unknowns), the
//    standard iteration above (where the single reduction's last-block tails cost more than its
//    saved passes).
//  - device reduction, Auto: next kernel under that same 8 MB rule, last block above it.
//  - device L2 residency, Auto: on in fp64 where the operator offers its values and they fit in
//    the L2 of a device with persisting lines; off in fp32. On obeys the same fit rules.
CgPlan choose_cg_plan(const CgProblem& p, const CgOptions& o);
// {"iteration": "standard" | "single-reduction", "reduction": ..., "l2_resident": bool, the reasons,
// the launch shape}.
nlohmann::json describe(const CgPlan& plan);

// A solver bound to one operator, with its workspace where the operator lives (on the device:
// vectors, reduction scratch, the captured graphs, reused by every solve).
template <class T>
class CgSolver {
 public:
  CgSolver(const LinearOperator<T>& A, const CgOptions& options);
  ~CgSolver();
  // The choices this solver runs with (choose_cg_plan for its operator and options).
  const CgPlan& plan() const { return plan_; }
  CgSolver(const CgSolver&) = delete;
  CgSolver& operator=(const CgSolver&) = delete;
  // b and x where the operator lives; x holds the initial guess and receives the solution. Returns
  // when the solution is in x (device: synchronized).
  CgResult solve(const T* b, T* x);
  // Re-reads the operator's diagonal into the Jacobi preconditioner, for an operator whose values
  // changed since the solver was made (a matrix refreshed every time step). Device: enqueued on the
  // solver's stream, capturable. A diagonal entry that is not positive and finite makes the
  // preconditioner NaN there, so that the next solve ends with status NonFinite (construction
  // instead throws InputError naming the row: there the matrix is the caller's input).
  void refresh_preconditioner();
  // Enqueues one whole solve, the start and max_iterations iterations, without any host
  // synchronization (device: asynchronous and capturable into the caller's CUDA graph; host: runs
  // it). Steps after a stop (tolerance met, breakdown) are no-ops except the operator product, so
  // the result equals solve()'s; only the waste differs. last_result() reads the outcome.
  void enqueue(const T* b, T* x);
  // The outcome of the last solve() or enqueue() (device: waits for it).
  CgResult last_result();

  class Engine {
   public:
    virtual ~Engine() = default;
    virtual CgResult solve(const T* b, T* x) = 0;
    virtual void refresh_preconditioner() = 0;
    virtual void enqueue(const T* b, T* x) = 0;
    virtual CgResult last_result() = 0;
  };

 private:
  CgPlan plan_;
  std::unique_ptr<Engine> engine_;
};

// One solve with host vectors whatever the operator's location (device: copies in and out).
template <class T>
CgResult cg_solve_from_host(const LinearOperator<T>& A, const std::vector<T>& b, std::vector<T>& x,
                            const CgOptions& options);

namespace detail {
// 1 / diag(A) for the Jacobi preconditioner; InputError naming the row where a diagonal entry is
// not positive and finite (the matrix is then not SPD, or the pattern lacks the entry).
template <class T>
std::vector<T> jacobi_inverse(const std::vector<T>& diag, const std::string& operator_name);
template <class T>
std::unique_ptr<typename CgSolver<T>::Engine> make_host_cg_engine(const LinearOperator<T>& A, const CgOptions& o,
                                                                  const CgPlan& plan);
// cg_cuda.cu in CUDA builds, linalg_cuda_none.cpp otherwise (throws).
template <class T>
std::unique_ptr<typename CgSolver<T>::Engine> make_device_cg_engine(const LinearOperator<T>& A, const CgOptions& o,
                                                                    const CgPlan& plan);
template <class T>
CgResult device_cg_solve_from_host(const LinearOperator<T>& A, const std::vector<T>& b, std::vector<T>& x,
                                   const CgOptions& options);
}  // namespace detail

// The explicit instantiations of the device entry points, for both of their definitions.
#define EB_LINALG_DEVICE_CG_INSTANTIATIONS(T)                                                                      \
  template std::unique_ptr<CgSolver<T>::Engine> make_device_cg_engine(const LinearOperator<T>&, const CgOptions&, \
                                                                      const CgPlan&);                             \
  template CgResult device_cg_solve_from_host(const LinearOperator<T>&, const std::vector<T>&, std::vector<T>&,    \
                                              const CgOptions&);

}  // namespace eb::linalg
