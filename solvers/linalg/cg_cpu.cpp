// The host CG engine (OpenMP): the steps of cg_algorithm.h as loops over the entries. Also the
// backend-neutral parts of CgSolver.
#include <cmath>
#include <string>

#include "meshes/errors.h"
#include "solvers/linalg/cg.h"
#include "solvers/linalg/cg_algorithm.h"

namespace eb::linalg {

std::string to_string(CgStatus s) {
  switch (s) {
    case CgStatus::Running: return "running";
    case CgStatus::Converged: return "converged";
    case CgStatus::IterationLimit: return "iteration limit";
    case CgStatus::Breakdown: return "breakdown (operator or preconditioner not positive definite)";
    case CgStatus::NonFinite: return "non-finite values";
    case CgStatus::Stopped: return "stopped by the caller (on_iteration)";
  }
  return "unknown";
}

namespace detail {

template <class T>
std::vector<T> jacobi_inverse(const std::vector<T>& diag, const std::string& name) {
  std::vector<T> inv(diag.size());
  for (size_t i = 0; i < diag.size(); ++i) {
    if (!(diag[i] > T(0)) || !std::isfinite(double(diag[i])))
      throw InputError("Jacobi preconditioner of '" + name + "': diagonal entry of row " + std::to_string(i) + " is " +
                       std::to_string(double(diag[i])) + " (must be positive and finite: an SPD matrix)");
    inv[i] = T(1) / diag[i];
  }
  return inv;
}

namespace {

template <class T>
class HostCgEngine final : public CgSolver<T>::Engine {
 public:
  HostCgEngine(const LinearOperator<T>& A, const CgOptions& o, const CgPlan& plan)
      : A_(A), options_(o), single_reduction_(plan.single_reduction), n_(A.rows()) {
    r_.resize(size_t(n_));
    p_.resize(size_t(n_));
    q_.resize(size_t(n_));
    if (o.preconditioner == Preconditioner::Jacobi) {
      std::vector<T> d(static_cast<size_t>(n_));
      A.diagonal(d.data());
      dinv_ = jacobi_inverse(d, A.name());
    }
    if (single_reduction_) {
      s_vec_.resize(size_t(n_));
      w_.resize(size_t(n_));
      if (!dinv_.empty()) u_.resize(size_t(n_));
    }
  }

  CgResult solve(const T* b, T* x) override {
    b_ = b;
    x_ = x;
    history_.assign(size_t(std::max(options_.max_iterations, 0)) + 1, 0.0);
    if (single_reduction_) {
      cg_sr_start_steps(*this);
      while (scalars_.status == cg_detail::kRunning) cg_sr_iteration_steps(*this);
    } else {
      cg_start_steps(*this);
      while (scalars_.status == cg_detail::kRunning) cg_iteration_steps(*this);
    }
    return cg_result(scalars_, history_.data());
  }
  void refresh_preconditioner() override {
    if (dinv_.empty()) return;
    A_.diagonal(dinv_.data());
#pragma omp parallel for schedule(static) if (n_ >= kParallelMin)
    for (Offset i = 0; i < n_; ++i) dinv_[size_t(i)] = jacobi_inverse_entry(dinv_[size_t(i)]);
  }
  // The host runs a solve to its end at once; it stops early, which enqueue()'s contract allows
  // (the device's extra steps after the stop are no-ops).
  void enqueue(const T* b, T* x) override { solve(b, x); }
  CgResult last_result() override { return cg_result(scalars_, history_.data()); }

  // ---- the steps (cg_algorithm.h) ----
  void apply_to_x() { A_.apply(x_, q_.data()); }
  void apply_to_p() { A_.apply(p_.data(), q_.data()); }
  void start() {
    double rz = 0, rr = 0, bb = 0;
    const T* dinv = dinv_.empty() ? nullptr : dinv_.data();
    // The single-reduction start writes u = M r where the standard one writes p = M r.
    T* z = single_reduction_ ? u() : p_.data();
#pragma omp parallel for schedule(static) reduction(+ : rz, rr, bb) if (n_ >= kParallelMin)
    for (Offset i = 0; i < n_; ++i) cg_start_entry(i, b_, q_.data(), dinv, r_.data(), z, rz, rr, bb);
    cg_start(scalars_, rz, rr, bb, options_.tolerance, options_.max_iterations, history_.data());
    report();
  }
  void reduce_alpha() {
    if (scalars_.status != cg_detail::kRunning) return;
    double pq = 0;
#pragma omp parallel for schedule(static) reduction(+ : pq) if (n_ >= kParallelMin)
    for (Offset i = 0; i < n_; ++i) pq += double(p_[size_t(i)]) * double(q_[size_t(i)]);
    cg_set_alpha(scalars_, pq);
  }
  void update_solution() {
    if (scalars_.status != cg_detail::kRunning) return;
    double rz = 0, rr = 0;
    const T alpha = T(scalars_.alpha);
    const T* dinv = dinv_.empty() ? nullptr : dinv_.data();
#pragma omp parallel for schedule(static) reduction(+ : rz, rr) if (n_ >= kParallelMin)
    for (Offset i = 0; i < n_; ++i) cg_update_entry(i, alpha, p_.data(), q_.data(), dinv, x_, r_.data(), rz, rr);
    cg_finish_update(scalars_, rz, rr, history_.data());
    report();
  }
  void update_direction() {
    if (scalars_.status != cg_detail::kRunning) return;
    const T beta = T(scalars_.beta);
    const T* dinv = dinv_.empty() ? nullptr : dinv_.data();
#pragma omp parallel for schedule(static) if (n_ >= kParallelMin)
    for (Offset i = 0; i < n_; ++i) cg_direction_entry(i, beta, r_.data(), dinv, p_.data());
  }
  void apply_dot_u() {
    if (scalars_.status != cg_detail::kRunning) return;
    A_.apply(u(), w_.data());
    double delta = 0;
    const T* uu = u();
#pragma omp parallel for schedule(static) reduction(+ : delta) if (n_ >= kParallelMin)
    for (Offset i = 0; i < n_; ++i) delta += double(uu[size_t(i)]) * double(w_[size_t(i)]);
    scalars_.delta = delta;
  }
  void sr_update() {
    if (scalars_.status != cg_detail::kRunning) return;
    double alpha_d = 0, beta_d = 0;
    if (const int st = cg_sr_coefficients(scalars_, alpha_d, beta_d); st != cg_detail::kRunning) {
      scalars_.status = st;
      return;
    }
    const T alpha = T(alpha_d), beta = T(beta_d);
    const bool first = scalars_.iteration == 0;
    const T* dinv = dinv_.empty() ? nullptr : dinv_.data();
    T* uu = u();
    double rz = 0, rr = 0;
#pragma omp parallel for schedule(static) reduction(+ : rz, rr) if (n_ >= kParallelMin)
    for (Offset i = 0; i < n_; ++i)
      cg_sr_update_entry(i, first, alpha, beta, w_.data(), dinv, p_.data(), s_vec_.data(), x_, r_.data(), uu, rz, rr);
    cg_sr_finish_update(scalars_, alpha_d, rz, rr, history_.data());
    report();
  }

 private:
  // CgOptions::on_iteration for the residual just recorded; false stops a running solve.
  void report() {
    if (!options_.on_iteration) return;
    const bool go_on = options_.on_iteration(scalars_.iteration, history_[size_t(scalars_.iteration)]);
    if (!go_on && scalars_.status == cg_detail::kRunning) scalars_.status = cg_detail::kStopped;
  }

  const LinearOperator<T>& A_;
  CgOptions options_;
  bool single_reduction_;  // CgPlan::single_reduction
  Index n_;
  // u = M r of the single-reduction iteration; r itself without a preconditioner.
  T* u() { return dinv_.empty() ? r_.data() : u_.data(); }

  std::vector<T> r_, p_, q_, dinv_;
  std::vector<T> s_vec_, w_, u_;  // single reduction only
  std::vector<double> history_;
  CgScalars scalars_;
  const T* b_ = nullptr;
  T* x_ = nullptr;
};

}  // namespace

template <class T>
std::unique_ptr<typename CgSolver<T>::Engine> make_host_cg_engine(const LinearOperator<T>& A, const CgOptions& o,
                                                                  const CgPlan& plan) {
  return std::make_unique<HostCgEngine<T>>(A, o, plan);
}

}  // namespace detail

template <class T>
CgSolver<T>::CgSolver(const LinearOperator<T>& A, const CgOptions& o) {
  if (o.max_iterations < 0) throw InputError("CG: max_iterations must be >= 0, got " + std::to_string(o.max_iterations));
  if (!(o.tolerance >= 0) || !std::isfinite(o.tolerance))
    throw InputError("CG: tolerance must be finite and >= 0, got " + std::to_string(o.tolerance));
  if (o.check_every < 1) throw InputError("CG: check_every must be >= 1, got " + std::to_string(o.check_every));
  if (o.on_iteration && A.location() == Location::Device)
    throw InputError("CG on '" + A.name() + "': CgOptions::on_iteration is host-only (the device engine reads its " +
                     "scalars every check_every iterations, not after each)");
  plan_ = choose_cg_plan(cg_problem(A), o);
  engine_ = A.location() == Location::Device ? detail::make_device_cg_engine(A, o, plan_)
                                             : detail::make_host_cg_engine(A, o, plan_);
}

template <class T>
CgSolver<T>::~CgSolver() = default;

template <class T>
CgResult CgSolver<T>::solve(const T* b, T* x) {
  return engine_->solve(b, x);
}

template <class T>
void CgSolver<T>::refresh_preconditioner() {
  engine_->refresh_preconditioner();
}

template <class T>
void CgSolver<T>::enqueue(const T* b, T* x) {
  engine_->enqueue(b, x);
}

template <class T>
CgResult CgSolver<T>::last_result() {
  return engine_->last_result();
}

template <class T>
CgResult cg_solve_from_host(const LinearOperator<T>& A, const std::vector<T>& b, std::vector<T>& x,
                            const CgOptions& options) {
  if (b.size() != size_t(A.rows()) || x.size() != size_t(A.rows()))
    throw InputError("CG on '" + A.name() + "': b has " + std::to_string(b.size()) + " and x " +
                     std::to_string(x.size()) + " entries for " + std::to_string(A.rows()) + " rows");
  if (A.location() == Location::Device) return detail::device_cg_solve_from_host(A, b, x, options);
  CgSolver<T> solver(A, options);
  return solver.solve(b.data(), x.data());
}

template class CgSolver<float>;
template class CgSolver<double>;
template CgResult cg_solve_from_host(const LinearOperator<float>&, const std::vector<float>&, std::vector<float>&,
                                     const CgOptions&);
template CgResult cg_solve_from_host(const LinearOperator<double>&, const std::vector<double>&, std::vector<double>&,
                                     const CgOptions&);
template std::vector<float> detail::jacobi_inverse(const std::vector<float>&, const std::string&);
template std::vector<double> detail::jacobi_inverse(const std::vector<double>&, const std::string&);

}  // namespace eb::linalg
