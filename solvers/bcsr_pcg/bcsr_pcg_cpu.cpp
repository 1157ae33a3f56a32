// bcsr-pcg on the CPU (OpenMP): the readable reference of the CUDA kernels. One loop per phase
// over elements, blocks or nodes; the global matrix is a plain BCSR in the plan's pattern.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "meshes/errors.h"
#include "solvers/bcsr_pcg/bcsr_pcg_simulation.h"
#include "solvers/linalg/spmv_cpu.h"

namespace eb::bcsr_pcg {
namespace {

using linalg::Offset;

// The global matrix as the CG's operator, by reference: its values change every step.
template <class T>
class BcsrRef final : public linalg::LinearOperator<T> {
 public:
  BcsrRef(const linalg::BcsrMatrix<T>& m, const linalg::BlockGatherPlan& p) : matrix_(m), plan_(p) {}
  linalg::Index rows() const override { return 3 * matrix_.block_rows; }
  linalg::Location location() const override { return linalg::Location::Host; }
  void apply(const T* x, T* y, linalg::StreamHandle) const override { linalg::spmv(matrix_, x, y); }
  void diagonal(T* d, linalg::StreamHandle) const override { linalg::block_diagonal(plan_, matrix_, d); }
  std::string name() const override { return "bcsr-pcg global matrix"; }

 private:
  const linalg::BcsrMatrix<T>& matrix_;
  const linalg::BlockGatherPlan& plan_;
};

template <class T>
std::vector<T> to_t(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

template <class T>
class BcsrPcgCpu final : public BcsrPcgSimulation {
 public:
  BcsrPcgCpu(BcsrPcgSetup setup, Precision p, int threads)
      : BcsrPcgSimulation(std::move(setup), Backend::Cpu, p), threads_(threads) {
    omp_set_num_threads(threads_);
    const size_t E = size_t(setup_.num_elements), n = 3 * size_t(setup_.num_nodes);
    Dm_inv_ = to_t<T>(setup_.Dm_inv);
    Dm_ = to_t<T>(setup_.Dm);
    volume_ = to_t<T>(setup_.volume);
    u_.assign(n, T(0));
    v_.assign(n, T(0));
    sol_.assign(n, T(0));
    rhs_.assign(n, T(0));
    R_.assign(9 * E, T(0));
    local_.assign(144 * E, T(0));
    local_rhs_.assign(12 * E, T(0));
    K_ = linalg::pattern_matrix<T>(setup_.plan);
    lame_ = {T(setup_.lambda), T(setup_.mu)};
    matrix_operator_ = std::make_unique<BcsrRef<T>>(K_, setup_.plan);
    layout_entries_ = double(K_.val.size());
    index_entries_ = double(setup_.plan.contrib.size());
    index_bytes_ = double(setup_.plan.contrib.size()) * sizeof(setup_.plan.contrib[0]) +
                   double(setup_.plan.contrib_ptr.size()) * sizeof(setup_.plan.contrib_ptr[0]);
    spmv_bytes_ = double(linalg::storage_bytes(K_)) + 2.0 * double(n) * sizeof(T);
    // The solvers read the diagonal when they are made (every Solve refreshes it): the identity's
    // diagonal until a step has filled the matrix.
    for (Offset b : setup_.plan.diag_block)
      for (int i = 0; i < 3; ++i) K_.val[size_t(9 * b + 4 * i)] = T(1);
    cg_dynamic_ = std::make_unique<linalg::CgSolver<T>>(*matrix_operator_, cg_options(setup_.options, false, int64_t(n)));
    static_cg_ = cg_options(setup_.options, true, int64_t(n));
    cg_static_ = std::make_unique<linalg::CgSolver<T>>(*matrix_operator_, static_cg_);
    spmv_out_.assign(n, T(0));
  }

  double time_spmv_ms(int repeats) override {
    omp_set_num_threads(threads_);  // see run_phase
    std::vector<double> ms;
    for (int k = 0; k < repeats; ++k) {
      Stopwatch w;
      matrix_operator_->apply(sol_.data(), spmv_out_.data());
      ms.push_back(w.elapsed_ms());
    }
    std::sort(ms.begin(), ms.end());
    return ms.empty() ? 0.0 : ms[ms.size() / 2];
  }

  void set_coefficients(const ElementCoefficients<double>& k) override { coefficients_ = cast_coefficients<T>(k); }

  void use_static_solver(bool on) override { static_ = on; }

  void set_static_cg(double tolerance, int max_iterations) override {
    if (tolerance == static_cg_.tolerance && max_iterations == static_cg_.max_iterations) return;
    // The options are kept only once the solver is built: a refused rebuild (a non-positive
    // diagonal) must not leave them describing a solver that does not exist.
    linalg::CgOptions next = static_cg_;
    next.tolerance = tolerance;
    next.max_iterations = max_iterations;
    cg_static_ = std::make_unique<linalg::CgSolver<T>>(*matrix_operator_, next);
    static_cg_ = next;
  }

  double rhs_norm() override {
    omp_set_num_threads(threads_);  // see run_phase
    double s = 0;
#pragma omp parallel for schedule(static) reduction(+ : s)
    for (size_t i = 0; i < rhs_.size(); ++i) s += double(rhs_[i]) * double(rhs_[i]);
    return std::sqrt(s);
  }

  std::vector<double> get_array(PhaseArray a) override {
    const auto& src = array(a);
    return std::vector<double>(src.begin(), src.end());
  }
  void set_array(PhaseArray a, const std::vector<double>& values) override {
    auto& dst = array(a);
    if (values.size() != dst.size())
      throw std::invalid_argument("bcsr-pcg: array " + to_string(a) + " has " + std::to_string(dst.size()) +
                                  " values, got " + std::to_string(values.size()));
    std::copy(values.begin(), values.end(), dst.begin());
    if (a == PhaseArray::v) std::copy(values.begin(), values.end(), sol_.begin());
  }

  linalg::CgResult run_phase(Phase p) override {
    // Fix (tests/bcsr_pcg): the thread count is process-wide in OpenMP, so setting it only in the
    // constructor let a simulation made later (another thread count) decide this one's threads.
    // Set it where the parallel loops run, as hexmg_cpu.cpp does.
    omp_set_num_threads(threads_);
    CpuPhase timer(timings_, phase_name(p));
    switch (p) {
      case Phase::Rotation: rotation(); break;
      case Phase::Matrix: matrix(); break;
      case Phase::Update: update(); break;
      case Phase::Solve: return solve();
      case Phase::Integrate: integrate(true); break;
      case Phase::Increment: integrate(false); break;
    }
    return {};
  }

  void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) override {
    if (!state_checked()) {  // the state copied out is checked too (see validity())
      omp_set_num_threads(threads_);
      record_state_checks(rotate());
    }
    u.assign(u_.begin(), u_.end());
    v.assign(v_.begin(), v_.end());
  }

 private:
  std::vector<T>& array(PhaseArray a) {
    switch (a) {
      case PhaseArray::u: return u_;
      case PhaseArray::v: return v_;
      case PhaseArray::sol: return sol_;
      case PhaseArray::R: return R_;
      case PhaseArray::local: return local_;
      case PhaseArray::local_rhs: return local_rhs_;
      case PhaseArray::matrix: return K_.val;
      case PhaseArray::rhs: return rhs_;
    }
    throw std::invalid_argument("bcsr-pcg: unknown array");
  }

  void element_nodes(int64_t e, const std::vector<T>& f, T out[4][3]) const {
    for (int a = 0; a < 4; ++a) {
      const size_t n = size_t(setup_.connectivity[size_t(4 * e + a)]);
      for (int i = 0; i < 3; ++i) out[a][i] = f[3 * n + size_t(i)];
    }
  }

  // R of every element from u, and the element checks of that state.
  ElementChecks rotate() {
    const int64_t E = setup_.num_elements;
    int64_t inverted = 0, first_inverted = std::numeric_limits<int64_t>::max();
    int64_t first_nonfinite = std::numeric_limits<int64_t>::max();
    double min_det = std::numeric_limits<double>::infinity();
#pragma omp parallel for schedule(static) reduction(+ : inverted) \
    reduction(min : first_inverted, first_nonfinite, min_det)
    for (int64_t e = 0; e < E; ++e) {
      T u[4][3], det_f;
      element_nodes(e, u_, u);
      const tet::TetStatus st = element_rotation(&Dm_inv_[size_t(9 * e)], u, &R_[size_t(9 * e)], det_f);
      if (st == tet::TetStatus::kNonFinite || !std::isfinite(double(det_f))) {
        first_nonfinite = std::min(first_nonfinite, e);
        continue;
      }
      min_det = std::min(min_det, double(det_f));
      if (det_f <= T(0)) {
        ++inverted;
        first_inverted = std::min(first_inverted, e);
      }
    }
    ElementChecks c;
    c.inverted = inverted;
    c.first_inverted = inverted ? first_inverted : -1;
    c.first_nonfinite = first_nonfinite == std::numeric_limits<int64_t>::max() ? -1 : first_nonfinite;
    c.min_det_f = min_det;
    return c;
  }
  void rotation() { record_checks(rotate()); }

  void matrix() {
    const int64_t E = setup_.num_elements;
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < E; ++e) {
      T u[4][3], v[4][3];
      element_nodes(e, u_, u);
      element_nodes(e, v_, v);
      T* A = &local_[size_t(144 * e)];  // element-major, the layout of gather_matrix
      auto put_block = [A](int a, int bn, const T* vals) {
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) A[(3 * a + i) * 12 + 3 * bn + j] = vals[3 * i + j];
      };
      element_system(&R_[size_t(9 * e)], &Dm_[size_t(9 * e)], &Dm_inv_[size_t(9 * e)], volume_[size_t(e)], lame_, coefficients_, u,
                     v, put_block, &local_rhs_[size_t(12 * e)], 1);
    }
  }

  void update() {
    if (setup_.update == Update::Gather)
      linalg::gather_matrix(setup_.plan, local_.data(), K_);
    else
      linalg::scatter_matrix(setup_.plan, local_.data(), K_);
    linalg::gather_vector(setup_.plan, local_rhs_.data(), rhs_.data());
    // Point and surface loads: rhs += c_f x factor x F on the free components.
    for (const NodeLoad& l : setup_.loads) {
      const double f = load_scale_ * load_factors_[size_t(l.curve)];
      for (int d = 0; d < 3; ++d)
        if (!(setup_.constrained[size_t(l.node)] >> d & 1)) rhs_[3 * size_t(l.node) + size_t(d)] += T(f * l.force[d]);
    }
  }

  linalg::CgResult solve() {
    linalg::CgSolver<T>& cg = solver();
    cg.refresh_preconditioner();
    if (!static_ && !setup_.options.warm_start) std::fill(sol_.begin(), sol_.end(), T(0));
    return cg.solve(rhs_.data(), sol_.data());
  }

  linalg::CgSolver<T>& solver() { return static_ ? *cg_static_ : *cg_dynamic_; }

  void integrate(bool dynamic) {
    const T dt = T(setup_.dt);
    const size_t n = u_.size();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) {
      if (dynamic) {
        v_[i] = sol_[i];
        u_[i] += dt * sol_[i];
      } else {
        u_[i] += sol_[i];
      }
    }
  }

  void add_details(nlohmann::json& j) const override {
    j["threads"] = threads_;
    if (cg_dynamic_) j["cg_dynamic"] = linalg::describe(cg_dynamic_->plan());
    if (cg_static_) j["cg_static"] = linalg::describe(cg_static_->plan());
  }

  int threads_;
  bool static_ = false;
  std::vector<T> Dm_inv_, Dm_, volume_, u_, v_, sol_, rhs_, R_, local_, local_rhs_, spmv_out_;
  linalg::BcsrMatrix<T> K_;
  tet::Lame<T> lame_{};
  ElementCoefficients<T> coefficients_{};
  std::unique_ptr<linalg::LinearOperator<T>> matrix_operator_;
  std::unique_ptr<linalg::CgSolver<T>> cg_dynamic_, cg_static_;
  linalg::CgOptions static_cg_;  // cg_static_'s options (set_static_cg)
};

}  // namespace

std::unique_ptr<BcsrPcgSimulation> make_bcsr_pcg_cpu_impl(const Scenario& sc, const RunOptions& o) {
  BcsrPcgSetup s = build_bcsr_pcg_setup(sc, o);
  const int threads = o.threads > 0 ? o.threads : omp_get_num_procs();
  if (o.precision == Precision::Fp32) return std::make_unique<BcsrPcgCpu<float>>(std::move(s), o.precision, threads);
  return std::make_unique<BcsrPcgCpu<double>>(std::move(s), o.precision, threads);
}

std::unique_ptr<Simulation> make_bcsr_pcg_cpu(const Scenario& sc, const RunOptions& o) {
  return make_bcsr_pcg_cpu_impl(sc, o);
}

}  // namespace eb::bcsr_pcg
