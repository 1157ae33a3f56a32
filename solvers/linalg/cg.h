#pragma once
// Conjugate gradients and Jacobi-preconditioned CG against LinearOperator, on the host or the
// device (wherever the operator lives). The iteration itself is described once, in
// cg_algorithm.h; the host engine (cg_cpu.cpp) and the CUDA engine (cg_cuda.cu) both run it.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "solvers/linalg/linear_operator.h"

namespace eb::linalg {

enum class Preconditioner { None, Jacobi };

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
  // as standard CG in exact arithmetic; two more vectors of workspace (s, w; u without Jacobi
  // aliases r) and one more operator product per solve (w = A u after the start).
  bool single_reduction = false;
  // Device only: ask the L2 cache to keep part of the operator's values (LinearOperator::hot_storage)
  // between products, where the values fit in the L2. While the solver lives, the process's
  // persisting-L2 set-aside (cudaLimitPersistingL2CacheSize) is raised to min(the values' bytes,
  // half the device's largest) and the solver's kernels mark that much of the values persisting
  // (an access policy window on its stream and graph); its destruction restores both and returns
  // persisting lines to normal (cudaCtxResetPersistingL2Cache, which acts on the whole process: with
  // two such solvers alive, the first destroyed ends the residency of both). Changes no bit of a
  // result. Measured on the H100 (PERF_NOTES.md): the fp64 single-reduction iteration at ~0.1M
  // unknowns ~25% faster, fp32 unchanged; but while the set-aside is raised every other kernel of
  // the process streams from DRAM ~4% slower (triad), so it is the caller's choice, off by default.
  // enqueue() under a caller's capture sets the window on the stream, and the capture copies it into
  // the captured kernel nodes (checked with CUDA 13 on the H100: linalg_l2_ab/capture_window_probe.txt).
  bool l2_resident_operator = false;
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

// A solver bound to one operator, with its workspace where the operator lives (on the device:
// vectors, reduction scratch, the captured graphs, reused by every solve).
template <class T>
class CgSolver {
 public:
  CgSolver(const LinearOperator<T>& A, const CgOptions& options);
  ~CgSolver();
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
std::unique_ptr<typename CgSolver<T>::Engine> make_host_cg_engine(const LinearOperator<T>& A, const CgOptions& o);
// cg_cuda.cu in CUDA builds, linalg_cuda_none.cpp otherwise (throws).
template <class T>
std::unique_ptr<typename CgSolver<T>::Engine> make_device_cg_engine(const LinearOperator<T>& A, const CgOptions& o);
template <class T>
CgResult device_cg_solve_from_host(const LinearOperator<T>& A, const std::vector<T>& b, std::vector<T>& x,
                                   const CgOptions& options);
}  // namespace detail

// The explicit instantiations of the device entry points, for both of their definitions.
#define EB_LINALG_DEVICE_CG_INSTANTIATIONS(T)                                                                      \
  template std::unique_ptr<CgSolver<T>::Engine> make_device_cg_engine(const LinearOperator<T>&, const CgOptions&); \
  template CgResult device_cg_solve_from_host(const LinearOperator<T>&, const std::vector<T>&, std::vector<T>&,    \
                                              const CgOptions&);

}  // namespace eb::linalg
