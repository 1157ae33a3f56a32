// OpenMP backend of hexmg: the readable oracle. Array-of-structures layout (the paper's CPU
// layout, Sec. 6): the 243 coefficients of a vertex equation are contiguous. Every formula is
// the EB_HD function of assembly/hexmg/hexmg_kernels.h that the CUDA kernels call too. The two
// CGs (coarsest level, level-0 Jacobi-PCG) are the shared solver of solvers/linalg/cg.h on a
// LinearOperator of the level (issue 10); the CUDA backend keeps its single-block coarsest-CG
// kernel, which the CUDA tests compare with this one.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>

#include "assembly/hexmg/hex_element.h"
#include "assembly/hexmg/hexmg_kernels.h"
#include "meshes/errors.h"
#include "solvers/common/timers.h"
#include "solvers/hexmg/hexmg_simulation.h"
#include "solvers/hexmg/smoothed_hierarchy.h"
#include "solvers/hexmg/smoothed_kernels.h"
#include "solvers/linalg/cg.h"

namespace eb::hexmg {
namespace {

template <class T>
Strided<T> aos(T* p, int comps) {
  return {p, comps, 1};
}

// One level's vertex equations as a linalg operator over 3 x n_padded unknowns in this backend's
// order (3 slot + d), so that the shared CG (solvers/linalg/cg.h) solves them: the product is
// stencil_apply_vertex per vertex, the diagonal is read from the level's current matrix (so that
// CgSolver::refresh_preconditioner() follows every re-assembly). A padding slot has no equation;
// it gets the identity (the product copies x, the diagonal is 1) because the shared Jacobi
// preconditioner needs a positive diagonal. The hand-written loops this replaced kept r = 0 on
// padding instead; the two coincide while x and b are 0 there (solve_level() sees to it).
template <class T>
class LevelOperator final : public linalg::LinearOperator<T> {
 public:
  // parallel: OpenMP over the vertices (level 0); the coarsest level (< 512 vertices) runs serially.
  LevelOperator(const LevelView<T>& L, bool parallel, std::string name)
      : L_(L), parallel_(parallel), name_(std::move(name)) {}
  linalg::Index rows() const override { return linalg::Index(L_.n) * 3; }
  linalg::Location location() const override { return linalg::Location::Host; }
  void apply(const T* x, T* y, linalg::StreamHandle) const override {
    const Strided<T> xs = aos(const_cast<T*>(x), 3), ys = aos(y, 3);
    const int64_t n = L_.n;
#pragma omp parallel for schedule(static) if (parallel_)
    for (int64_t v = 0; v < n; ++v) {
      stencil_apply_vertex(v, L_, xs, ys);
      if (L_.nbr(v, kCentre) < 0)
        for (int d = 0; d < 3; ++d) ys(v, d) = xs(v, d);
    }
  }
  void diagonal(T* out, linalg::StreamHandle) const override {
    for (int64_t v = 0; v < L_.n; ++v)
      for (int d = 0; d < 3; ++d) out[3 * v + d] = L_.nbr(v, kCentre) < 0 ? T(1) : L_.A(v, kCentre * kBlock + 4 * d);
  }
  std::string name() const override { return name_; }

 private:
  LevelView<T> L_;  // pointers into the simulation's arrays, which keep their storage
  bool parallel_;
  std::string name_;
};

// The coarsest level of the smoothed hierarchy as a linalg operator (3 n unknowns, identity rows
// for padding and dead components: block_apply_row), for the shared Jacobi-PCG.
template <class T>
class BlockOperator final : public linalg::LinearOperator<T> {
 public:
  BlockOperator(const BlockRows<const T>& A, const uint8_t* dead, std::string name)
      : A_(A), dead_(dead), name_(std::move(name)) {}
  linalg::Index rows() const override { return linalg::Index(A_.rows) * 3; }
  linalg::Location location() const override { return linalg::Location::Host; }
  void apply(const T* x, T* y, linalg::StreamHandle) const override {
    for (int32_t i = 0; i < A_.rows; ++i) block_apply_row(i, A_, dead_, aos(x, 3), aos(y, 3));
  }
  void diagonal(T* out, linalg::StreamHandle) const override {
    for (int32_t i = 0; i < A_.rows; ++i)
      for (int d = 0; d < 3; ++d) out[3 * i + d] = block_diagonal_entry(i, d, A_, dead_);
  }
  std::string name() const override { return name_; }

 private:
  BlockRows<const T> A_;
  const uint8_t* dead_;
  std::string name_;
};

template <class T>
class HexmgCpu final : public HexmgSimulation {
 public:
  HexmgCpu(Model model, Precision p, int threads) : HexmgSimulation(std::move(model), Backend::Cpu, p), threads_(threads) {
    const auto Kd = unit_hex_stiffness(m_.poisson, m_.h);
    K_.assign(Kd.begin(), Kd.end());
    const int nl = m_.n_levels();
    store_.resize(nl);
    views_.resize(nl);
    for (int l = 0; l < nl; ++l) {
      const Level& L = m_.levels[l];
      auto& s = store_[l];
      s.A.assign(size_t(L.n_padded) * kCoeffs, T(0));
      s.b.assign(size_t(L.n_padded) * 3, T(0));
      s.u.assign(size_t(L.n_padded) * 3, T(0));
      s.r.assign(size_t(L.n_padded) * 3, T(0));
      LevelView<T>& v = views_[l];
      v.n = L.n_padded;
      v.A = aos(s.A.data(), kCoeffs);
      v.b = aos(s.b.data(), 3);
      v.u = aos(s.u.data(), 3);
      v.r = aos(s.r.data(), 3);
      v.nbr = aos<const int32_t>(L.nbr[0].data(), 27);
      if (!L.child.empty()) v.child = aos<const int32_t>(L.child[0].data(), 27);
      if (!L.parent.empty()) v.parent = aos<const int32_t>(L.parent[0].data(), 8);
      v.dead = L.dead.data();
    }
    const Level& L0 = m_.levels[0];
    const size_t n0 = size_t(L0.n_padded), ne = size_t(m_.n_elems());
    youngs_.assign(m_.youngs.begin(), m_.youngs.end());
    R_.assign(ne * 9, T(0));
    for (size_t e = 0; e < ne; ++e) R_[9 * e] = R_[9 * e + 4] = R_[9 * e + 8] = T(1);
    mass_.assign(m_.mass.begin(), m_.mass.end());
    u0_.assign(n0 * 3, T(0));
    v0_.assign(n0 * 3, T(0));
    a0_.assign(n0 * 3, T(0));
    force_.assign(m_.force.begin(), m_.force.end());
    presc_.assign(m_.presc.begin(), m_.presc.end());
    factor_.assign(std::max(1, m_.ncurves), T(0));
    fine_.n_elems = int32_t(ne);
    fine_.h = T(m_.h);
    fine_.dt = T(m_.dt);
    fine_.alpha = T(m_.alpha);
    fine_.ev = aos<const int32_t>(m_.ev[0].data(), 8);
    fine_.ve = aos<const int32_t>(m_.ve[0].data(), 8);
    fine_.youngs = youngs_.data();
    fine_.R = aos(R_.data(), 9);
    fine_.mass = mass_.data();
    fine_.u0 = aos(u0_.data(), 3);
    fine_.v0 = aos(v0_.data(), 3);
    fine_.a0 = aos(a0_.data(), 3);
    fine_.force = aos<const T>(force_.data(), 3 * (m_.ncurves + 1));
    fine_.presc = aos<const T>(presc_.data(), 3 * std::max(1, m_.ncurves));
    fine_.cmask = m_.cmask.data();
    fine_.ncurves = m_.ncurves;
    fine_.factor = factor_.data();
    const int last = nl - 1;
    coarse_.op = std::make_unique<LevelOperator<T>>(views_[last], false, "hexmg coarsest level " + std::to_string(last));
    level0_.op = std::make_unique<LevelOperator<T>>(views_[0], true, "hexmg level 0");
    if (m_.solver.smoothed) init_smoothed();
  }

  void advance(int steps) override {
    omp_set_num_threads(threads_);
    for (int i = 0; i < steps && !diverged(); ++i) {
      begin_step();
      if (diverged()) {  // the state is non-finite: nothing to solve
        step_open_ = false;
        break;
      }
      {
        CpuPhase t(timings_, "solve");
        solve();
      }
      end_step();
    }
  }

  void begin_step() override {
    omp_set_num_threads(threads_);
    set_factors();
    {
      CpuPhase t(timings_, "rotations");
      compute_rotations();
    }
    {
      CpuPhase t(timings_, "assembly");
      assemble_fine();
    }
    {
      CpuPhase t(timings_, "coarse_assembly");
      if (!m_.solver.smoothed) {
        for (int l = 1; l < m_.n_levels(); ++l) galerkin(l);
      } else if (galerkin_due(step_)) {
        for (int l = 1; l < m_.n_levels(); ++l) sm_galerkin(l);
        have_galerkin_ = true;
      }
    }
    have_trace_residuals_ = false;
    step_open_ = true;
  }

  void vcycle() override { m_.solver.smoothed ? sm_cycle(0, m_.solver.mg_pcg) : vcycle_level(0); }
  void restart_solve() override { std::fill(store_[0].u.begin(), store_[0].u.end(), T(0)); }

  double system_residual() override { return std::sqrt(residual(0)); }

  void end_step() override {
    {
      CpuPhase t(timings_, "update");
      update();
    }
    ++step_;
    step_open_ = false;
  }

  std::vector<double> rotations() override { return std::vector<double>(R_.begin(), R_.end()); }
  std::vector<double> slot_displacement() override {
    std::vector<double> u(u0_.begin(), u0_.end());
    if (step_open_)
      for (size_t i = 0; i < u.size(); ++i) u[i] += double(store_[0].u[i]);
    return u;
  }
  double mean_coarse_iterations() const override {
    return coarse_solves_ ? double(coarse_iter_sum_) / coarse_solves_ : m_.solver.coarse_max_iterations / 4.0;
  }

  void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) override {
    slots_to_nodes(slot_displacement(), std::vector<double>(v0_.begin(), v0_.end()), u, v);
  }

  void set_state(const std::vector<double>& slot_u, const std::vector<double>& slot_v) override {
    step_open_ = false;
    for (size_t i = 0; i < store_[0].u.size(); ++i) {
      store_[0].u[i] = T(0);
      u0_[i] = T(slot_u[i]);
      v0_[i] = T(slot_v.empty() ? 0.0 : slot_v[i]);
      a0_[i] = T(0);
    }
  }

  ConvergenceTrace jacobi_pcg(int iterations, double rel_tolerance, double max_seconds) override {
    return pcg_level0(iterations, rel_tolerance, max_seconds);
  }

  void export_system(std::vector<Triplet>& A, std::vector<double>& b, std::vector<double>& u) override {
    const auto& s = store_[0];
    b.assign(s.b.begin(), s.b.end());
    u.assign(s.u.begin(), s.u.end());
    level0_triplets(s.A.data(), kCoeffs, 1, A);
  }

 protected:
  void last_step_residuals(double& initial, double& final_) override {
    // |b - A du| at du = 0 (the initial guess u_old) and at the solution du.
    auto& s = store_[0];
    std::vector<T> keep = s.u;
    std::fill(s.u.begin(), s.u.end(), T(0));
    initial = std::sqrt(residual(0));
    s.u = keep;
    final_ = std::sqrt(residual(0));
  }

  void add_details(nlohmann::json& j) const override {
    j["threads"] = threads_;
    j["layout"] = "array of structures (243 contiguous coefficients per vertex)";
  }

  // The neutral layout of get_array/set_array is this backend's own (array of structures).
  std::vector<double> read_array(PhaseArray a, int level) override {
    const std::vector<T>& v = array_of(a, level);
    return std::vector<double>(v.begin(), v.end());
  }
  void write_array(PhaseArray a, int level, const std::vector<double>& values) override {
    std::vector<T>& v = array_of(a, level);
    for (size_t i = 0; i < v.size(); ++i) v[i] = T(values[i]);
  }

  void run_phase_impl(const Phase& p) override {
    omp_set_num_threads(threads_);
    set_factors();
    switch (p.kind) {
      case PhaseKind::Rotations: compute_rotations(); break;
      case PhaseKind::FineAssembly: assemble_fine(); break;
      case PhaseKind::Galerkin: galerkin(p.level); break;
      case PhaseKind::SmoothColour: gs_colour(p.level, p.colour); break;
      case PhaseKind::SmoothSweep: gs_sweep(p.level); break;
      case PhaseKind::Residual: residual(p.level); break;
      case PhaseKind::Restrict: restrict_to(p.level + 1); break;
      case PhaseKind::Interpolate: interpolate_from(p.level + 1); break;
      case PhaseKind::CoarseSolve: coarse_cg(m_.n_levels() - 1); break;
      case PhaseKind::Update: update(); break;
    }
  }

  ElementChecks check_volumes() override { return element_pass(false); }

 public:
  const SmoothedPlan* smoothed_plan() const override { return m_.smoothed.get(); }
  std::vector<double> smoothed_array(SmoothedArray a, int l) override {
    const std::vector<T>& v = sm_array(a, l);
    return std::vector<double>(v.begin(), v.end());
  }
  void set_smoothed_array(SmoothedArray a, int l, const std::vector<double>& values) override {
    std::vector<T>& v = sm_array(a, l);
    if (values.size() != v.size())
      throw std::invalid_argument("hexmg: smoothed array of level " + std::to_string(l) + " needs " +
                                  std::to_string(v.size()) + " values, got " + std::to_string(values.size()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = T(values[i]);
  }
  void run_smoothed_phase(SmoothedPhaseKind k, int l) override {
    sm_array(SmoothedArray::b, l);  // checks the variant and the level
    const int last = m_.n_levels() - 1;
    if ((k == SmoothedPhaseKind::Galerkin || k == SmoothedPhaseKind::Restrict || k == SmoothedPhaseKind::Prolong) && l < 1)
      throw std::invalid_argument("hexmg: smoothed phase needs a level >= 1");
    if (k == SmoothedPhaseKind::CoarseSolve && (l != last || l < 1))
      throw std::invalid_argument("hexmg: the coarse solve runs on the coarsest level (>= 1)");
    omp_set_num_threads(threads_);
    switch (k) {
      case SmoothedPhaseKind::Galerkin: sm_galerkin(l); break;
      case SmoothedPhaseKind::Sweep: l == 0 ? gs_sweep(0) : sm_sweep(l, false); break;
      case SmoothedPhaseKind::SweepBackward: l == 0 ? gs_sweep(0, true) : sm_sweep(l, true); break;
      case SmoothedPhaseKind::Residual: sm_residual(l); break;
      case SmoothedPhaseKind::Restrict: sm_restrict(l); break;
      case SmoothedPhaseKind::Prolong: sm_prolong(l); break;
      case SmoothedPhaseKind::CoarseSolve: sm_coarse_solve(l); break;
      case SmoothedPhaseKind::Cycle: sm_cycle(0, m_.solver.mg_pcg); break;
    }
  }

 protected:

 private:
  struct Store {
    std::vector<T> A, b, u, r;
  };

  std::vector<T>& array_of(PhaseArray a, int level) {
    switch (a) {
      case PhaseArray::A: return store_[level].A;
      case PhaseArray::b: return store_[level].b;
      case PhaseArray::u: return store_[level].u;
      case PhaseArray::r: return store_[level].r;
      case PhaseArray::u0: return u0_;
      case PhaseArray::v0: return v0_;
      case PhaseArray::a0: return a0_;
      case PhaseArray::R: return R_;
    }
    throw std::logic_error("hexmg cpu: unknown array");
  }

  // Load factors of the next step (at its end time).
  void set_factors() {
    const auto f = m_.factors((step_ + 1) * m_.dt);
    for (int c = 0; c < m_.ncurves; ++c) factor_[c] = T(f[c]);
  }

  // det F of every element of the state u0, and with `rotate` each element's rotation from it.
  ElementChecks element_pass(bool rotate) {
    const int64_t ne = m_.n_elems();
    constexpr int64_t none = std::numeric_limits<int64_t>::max();
    int64_t kept = 0, first_kept = none, bad = none;
    double min_det = std::numeric_limits<double>::infinity();
#pragma omp parallel for schedule(static) reduction(+ : kept) reduction(min : first_kept, bad, min_det)
    for (int64_t e = 0; e < ne; ++e) {
      const T det = element_volume_ratio(e, fine_);
      const int st = rotate ? element_rotation(e, fine_) : volume_status(det);
      if (std::isfinite(double(det))) min_det = std::min(min_det, double(det));
      if (st == kRotationKeptPrevious) {
        ++kept;
        first_kept = std::min(first_kept, e);
      } else if (st == kRotationNonFinite) {
        bad = std::min(bad, e);
      }
    }
    ElementChecks c;
    c.inverted = kept;
    c.first_inverted = kept ? first_kept : -1;
    c.first_nonfinite = bad != none ? bad : -1;
    c.min_det_f = min_det;
    return c;
  }

  void compute_rotations() {
    if (m_.solver.linear) return;  // R stays identity
    record_checks(element_pass(true), step_);
  }

  void assemble_fine() {
    const LevelView<T>& L0 = views_[0];
    const HostStiffness<T> K{K_.data()};
    const int64_t n = L0.n;
#pragma omp parallel for schedule(static)
    for (int64_t x = 0; x < n; ++x) assemble_vertex(x, fine_, L0, K);
  }

  void galerkin(int l) {
    const LevelView<T>&F = views_[l - 1], &C = views_[l];
    const int64_t n = C.n;
#pragma omp parallel for schedule(static)
    for (int64_t x = 0; x < n; ++x) {
      if (C.nbr(x, kCentre) < 0) continue;
      galerkin_components<kBlock>(x, 0, F, C);
    }
  }

  void update() {
    const LevelView<T>& L0 = views_[0];
    const int64_t n = L0.n;
#pragma omp parallel for schedule(static)
    for (int64_t x = 0; x < n; ++x) newmark_update_vertex(x, fine_, L0);
  }

  void solve() {
    const SolverChoice& s = m_.solver;
    if (s.mg_pcg) {
      const ConvergenceTrace tr = sm_pcg(s.max_iterations, s.tolerance);
      record_trace(tr, int(tr.residual.size()) - 1);
      return;
    }
    if (s.jacobi_pcg) {
      const ConvergenceTrace tr = pcg_level0(s.max_iterations, s.tolerance);
      record_trace(tr, int(tr.residual.size()) - 1);
      return;
    }
    if (s.tolerance_mode) {
      ConvergenceTrace tr;
      const double r0 = system_residual();
      tr.residual.push_back(r0);
      double r = r0;
      int it = 0;
      while (it < s.max_iterations && r > s.tolerance * r0 && r0 > 0) {
        vcycle();
        r = system_residual();
        tr.residual.push_back(r);
        ++it;
      }
      record_trace(tr, it);
      return;
    }
    for (int c = 0; c < s.cycles; ++c) vcycle();
    cycles_sum_ += s.cycles;
    ++solves_;
    last_iterations_ = s.cycles;
    last_converged_ = true;  // no tolerance to miss (solver_stats() reports the reduction)
  }

  void record_trace(const ConvergenceTrace& tr, int iterations) {
    record_tolerance_solve(iterations, tr.residual.front(), tr.residual.back(), m_.solver.tolerance);
  }

  void gs_colour(int l, int c) {
    const LevelView<T>& L = views_[l];
    const auto& cb = m_.levels[l].colour_begin;
    const int64_t b = cb[c], e = cb[c + 1];
#pragma omp parallel for schedule(static)
    for (int64_t x = b; x < e; ++x) gauss_seidel_vertex(x, L);
  }

  void gs_sweep(int l, bool backward = false) {
    for (int c = 0; c < 8; ++c) gs_colour(l, backward ? 7 - c : c);
  }

  double residual(int l) {
    const LevelView<T>& L = views_[l];
    const int64_t n = L.n;
    double n2 = 0;
#pragma omp parallel for schedule(static) reduction(+ : n2)
    for (int64_t x = 0; x < n; ++x) n2 += double(residual_vertex(x, L));
    return n2;
  }

  void vcycle_level(int l) {
    const int last = m_.n_levels() - 1;
    if (l == last) {
      coarse_cg(l);
      return;
    }
    for (int i = 0; i < m_.solver.pre_smooth; ++i) gs_sweep(l);
    residual(l);
    restrict_to(l + 1);
    vcycle_level(l + 1);
    interpolate_from(l + 1);
    for (int i = 0; i < m_.solver.post_smooth; ++i) gs_sweep(l);
  }

  // b and u (= 0) of coarse level lc from the residual of level lc - 1.
  void restrict_to(int lc) {
    const LevelView<T>&F = views_[lc - 1], &C = views_[lc];
    const int64_t n = C.n;
#pragma omp parallel for schedule(static)
    for (int64_t x = 0; x < n; ++x) restrict_vertex(x, F, C);
  }

  // u of level lc - 1 += the interpolated u of level lc.
  void interpolate_from(int lc) {
    const LevelView<T>&F = views_[lc - 1], &C = views_[lc];
    const int64_t n = F.n;
#pragma omp parallel for schedule(static)
    for (int64_t x = 0; x < n; ++x) interpolate_correct_vertex(x, F, C);
  }

  // The shared Jacobi-PCG (solvers/linalg/cg.h) on one level, with its operator, solver and the
  // scratch of the correction form. The solver is made at the first solve (the matrix is assembled
  // by then; the Jacobi preconditioner refuses the zero diagonal of an empty level) and again only
  // when the iteration limit or tolerance change (jacobi_pcg()'s arguments; a run keeps them);
  // otherwise its preconditioner is refreshed before every solve, because the level's matrix
  // changes every step (co-rotation, set_array). A diagonal entry that is not positive and finite
  // is an InputError naming the row when the solver is made and a NonFinite solve (no iteration,
  // u untouched) after a refresh (CgSolver's contract); the matrices are SPD unless the state is
  // not finite, and then the step is not solved (advance()).
  struct LevelCg {
    std::unique_ptr<LevelOperator<T>> op;
    std::unique_ptr<linalg::CgSolver<T>> solver;
    int max_iterations = -1;
    double tolerance = -1;
    std::function<bool(int, double)> observer;  // CgOptions::on_iteration of the current solve
    std::vector<T> rhs, dx;
  };

  // Jacobi-PCG on level l from its current u (updated in place) to |r_k| <= tolerance |r_0|, as
  // the hand-written loops did. The shared solver stops at |r_k| <= tolerance |b| and iterates on
  // the padding slots too (identity rows). Both rules coincide when u = 0 everywhere and b = 0 on
  // the padding: then r_0 = b - A 0 = b exactly, so the solver runs on (b, u) in place, which is
  // the old iteration operation for operation (bit for bit on one thread; with more threads the
  // reductions split differently). That holds at every call of a time step: restrict_vertex sets
  // a coarse level's u = 0 and its padding b = 0, assemble_vertex sets level 0's u = 0 and nothing
  // writes level 0's padding b, and Fig. 11 (dick2011.cpp) calls restart_solve() first. It does
  // not hold for a one-level model's coarse solve in a second V-cycle (u is the first cycle's
  // solution), for jacobi_pcg() from a nonzero increment, or after set_array: then this solves
  // for the correction, A d = r_0 with r_0 = b - A u (0 on padding) from d = 0, and adds d to u:
  // the same stopping rule and mathematically the same iterates.
  linalg::CgResult solve_level(LevelCg& c, int l, int max_iterations, double tolerance,
                               std::function<bool(int, double)> observer = {}) {
    if (!c.solver || c.max_iterations != max_iterations || c.tolerance != tolerance) {
      linalg::CgOptions o;
      o.preconditioner = linalg::Preconditioner::Jacobi;
      o.max_iterations = max_iterations;
      o.tolerance = tolerance;
      o.on_iteration = [&c](int k, double r) { return !c.observer || c.observer(k, r); };
      c.solver.reset();
      c.solver = std::make_unique<linalg::CgSolver<T>>(*c.op, o);
      c.max_iterations = max_iterations;
      c.tolerance = tolerance;
    } else {
      c.solver->refresh_preconditioner();
    }
    c.observer = std::move(observer);
    Store& s = store_[l];
    const int32_t* nbr = m_.levels[l].nbr[0].data();
    const size_t n = s.u.size();
    bool in_place = true;
    for (size_t i = 0; i < n && in_place; ++i) in_place = s.u[i] == T(0) && (nbr[27 * (i / 3) + kCentre] >= 0 || s.b[i] == T(0));
    if (in_place) return c.solver->solve(s.b.data(), s.u.data());
    c.rhs.resize(n);
    c.dx.assign(n, T(0));
    c.op->apply(s.u.data(), c.rhs.data(), nullptr);
    for (size_t i = 0; i < n; ++i) c.rhs[i] = nbr[27 * (i / 3) + kCentre] < 0 ? T(0) : s.b[i] - c.rhs[i];
    const linalg::CgResult r = c.solver->solve(c.rhs.data(), c.dx.data());
    for (size_t i = 0; i < n; ++i) s.u[i] += c.dx[i];  // dx = 0 on padding
    return r;
  }

  // Conjugate gradients on the coarsest level (Sec. 4.2.7), serial: it has < 512 vertices. With a
  // Jacobi (diagonal) preconditioner: coarse cells that cover only a few fine elements give
  // basis functions with tiny diagonal entries, and the unscaled system is so ill-conditioned
  // that plain CG neither converges in hundreds of iterations nor gives reproducible iterates
  // (CPU and GPU rounding then differ at 1e-4 after 20 bunny steps, even in fp64).
  void coarse_cg(int l) {
    const linalg::CgResult r = solve_level(coarse_, l, m_.solver.coarse_max_iterations, m_.solver.coarse_tolerance);
    coarse_iter_sum_ += r.iterations;
    ++coarse_solves_;
  }

  // Jacobi (scalar diagonal) preconditioned CG on the simulation level from the current u, with
  // the time since the call began and |r| after the start and after each iteration; stops after
  // the first entry at or past max_seconds.
  ConvergenceTrace pcg_level0(int iterations, double rel_tolerance, double max_seconds = 1e30) {
    ConvergenceTrace tr;
    Stopwatch clock;
    solve_level(level0_, 0, iterations, rel_tolerance, [&](int, double residual) {
      tr.seconds.push_back(clock.elapsed_ms() / 1000.0);
      tr.residual.push_back(residual);
      return tr.seconds.back() < max_seconds;
    });
    return tr;
  }

  // --- the smoothed hierarchy (smoothed_hierarchy.h): level 0 is the simulation level above --------
  struct SmoothedStore {
    std::vector<T> A, AP, P, R, b, u, r;
  };

  const SmoothedPlan& plan() const { return *m_.smoothed; }
  void init_smoothed() {
    const int nl = plan().n_levels();
    a0_blk_.resize(plan().A0_offset.size());
    for (int32_t x = 0; x < plan().A0.rows; ++x)
      for (int32_t p = plan().A0.ptr[x]; p < plan().A0.ptr[x + 1]; ++p) a0_blk_[size_t(p)] = 27 * x + plan().A0_offset[size_t(p)];
    sm_.resize(size_t(nl));
    for (int l = 1; l < nl; ++l) {
      const SmoothedLevel& S = plan().levels[size_t(l)];
      SmoothedStore& st = sm_[size_t(l)];
      st.A.assign(size_t(S.A.nnz()) * 9, T(0));
      st.AP.assign(size_t(S.AP.nnz()) * 9, T(0));
      st.P.assign(S.P_val.begin(), S.P_val.end());
      st.R.assign(S.R_val.begin(), S.R_val.end());
      st.b.assign(size_t(S.n) * 3, T(0));
      st.u.assign(size_t(S.n) * 3, T(0));
      st.r.assign(size_t(S.n) * 3, T(0));
    }
    if (nl > 1) {
      const int last = nl - 1;
      sm_coarse_op_ = std::make_unique<BlockOperator<T>>(sm_A(last), plan().levels[size_t(last)].dead.data(),
                                                         "hexmg smoothed coarsest level " + std::to_string(last));
    }
  }

  static BlockRows<const T> rows_of(const BlockPattern& p, const std::vector<T>& v, const int32_t* blk = nullptr) {
    return {p.rows, p.ptr.data(), p.col.data(), blk, {v.data(), 9, 1}};
  }
  static BlockRows<T> rows_of_mut(const BlockPattern& p, std::vector<T>& v) {
    return {p.rows, p.ptr.data(), p.col.data(), nullptr, {v.data(), 9, 1}};
  }
  // A of level l (level 0: the stencil read in place).
  BlockRows<const T> sm_A(int l) const {
    if (l == 0) return rows_of(plan().A0, store_[0].A, a0_blk_.data());
    return rows_of(plan().levels[size_t(l)].A, sm_[size_t(l)].A);
  }
  std::vector<T>& sm_array(SmoothedArray a, int l) {
    if (!m_.solver.smoothed) throw InputError("hexmg: this variant has no smoothed hierarchy");
    if (l < 0 || l >= m_.n_levels() || (l == 0 && (a == SmoothedArray::A || a == SmoothedArray::AP)))
      throw std::invalid_argument("hexmg: the smoothed hierarchy has no such array on level " + std::to_string(l));
    switch (a) {
      case SmoothedArray::A: return sm_[size_t(l)].A;
      case SmoothedArray::AP: return sm_[size_t(l)].AP;
      case SmoothedArray::b: return sm_vec(l, 'b');
      case SmoothedArray::u: return sm_vec(l, 'u');
      case SmoothedArray::r: return sm_vec(l, 'r');
    }
    throw std::logic_error("hexmg cpu: unknown smoothed array");
  }

  // b, u, r of level l (level 0: the simulation's).
  std::vector<T>& sm_vec(int l, char which) {
    if (l == 0) return which == 'b' ? store_[0].b : which == 'u' ? store_[0].u : store_[0].r;
    return which == 'b' ? sm_[size_t(l)].b : which == 'u' ? sm_[size_t(l)].u : sm_[size_t(l)].r;
  }

  // A_l = R_l (A_{l-1} P_l), row by row in a fixed order: the upper triangle, then its mirror.
  void sm_galerkin(int l) {
    const SmoothedLevel& S = plan().levels[size_t(l)];
    SmoothedStore& st = sm_[size_t(l)];
    const BlockRows<const T> Af = sm_A(l - 1), P = rows_of(S.P, st.P), R = rows_of(S.R, st.R);
    const BlockRows<T> AP = rows_of_mut(S.AP, st.AP), A = rows_of_mut(S.A, st.A);
    const BlockRows<const T> APc = rows_of(S.AP, st.AP);
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < S.AP.rows; ++i) spgemm_row(i, Af, P, AP);
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < S.A.rows; ++i) spgemm_row(i, R, APc, A, i);
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < S.A.rows; ++i) mirror_row(i, S.A_mirror.data(), A);
  }

  // One multicolour block Gauss-Seidel sweep on coarse level l (colours in reverse if backward).
  void sm_sweep(int l, bool backward) {
    const SmoothedLevel& S = plan().levels[size_t(l)];
    const BlockRows<const T> A = sm_A(l);
    const auto b = aos<const T>(sm_[size_t(l)].b.data(), 3);
    const auto u = aos(sm_[size_t(l)].u.data(), 3);
    const int nc = S.colours();
    for (int k = 0; k < nc; ++k) {
      const int c = backward ? nc - 1 - k : k;
      const int32_t b0 = S.colour_begin[size_t(c)], e0 = S.colour_begin[size_t(c) + 1];
      // Coarse colours hold a few hundred rows or less: a thread team per colour costs more there.
#pragma omp parallel for schedule(static) if (e0 - b0 >= 1024)
      for (int32_t q = b0; q < e0; ++q)
        block_gs_row(S.colour_order[size_t(q)], A, S.dead.data(), b, u);
    }
  }

  double sm_residual(int l) {
    if (l == 0) return residual(0);
    const BlockRows<const T> A = sm_A(l);
    SmoothedStore& st = sm_[size_t(l)];
    double n2 = 0;
#pragma omp parallel for schedule(static) reduction(+ : n2)
    for (int32_t i = 0; i < A.rows; ++i)
      n2 += double(block_residual_row(i, A, aos<const T>(st.b.data(), 3), aos<const T>(st.u.data(), 3), aos(st.r.data(), 3)));
    return n2;
  }

  // b_l = R_l r_{l-1}, u_l = 0.
  void sm_restrict(int l) {
    const SmoothedLevel& S = plan().levels[size_t(l)];
    SmoothedStore& st = sm_[size_t(l)];
    const BlockRows<const T> R = rows_of(S.R, st.R);
    const auto r = aos<const T>(sm_vec(l - 1, 'r').data(), 3);
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < S.R.rows; ++i) block_gather_row(i, R, r, aos(st.b.data(), 3), false);
    std::fill(st.u.begin(), st.u.end(), T(0));
  }

  // u_{l-1} += P_l u_l.
  void sm_prolong(int l) {
    const SmoothedLevel& S = plan().levels[size_t(l)];
    SmoothedStore& st = sm_[size_t(l)];
    const BlockRows<const T> P = rows_of(S.P, st.P);
    const auto u = aos(sm_vec(l - 1, 'u').data(), 3);
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < S.P.rows; ++i) block_gather_row(i, P, aos<const T>(st.u.data(), 3), u, true);
  }

  // The coarsest level by the shared Jacobi-PCG from u = 0 (sm_restrict), as coarse_cg.
  void sm_coarse_solve(int l) {
    SmoothedStore& st = sm_[size_t(l)];
    if (!sm_coarse_cg_) {
      linalg::CgOptions o;
      o.preconditioner = linalg::Preconditioner::Jacobi;
      o.max_iterations = m_.solver.coarse_max_iterations;
      o.tolerance = m_.solver.coarse_tolerance;
      sm_coarse_cg_ = std::make_unique<linalg::CgSolver<T>>(*sm_coarse_op_, o);
    } else {
      sm_coarse_cg_->refresh_preconditioner();
    }
    const linalg::CgResult r = sm_coarse_cg_->solve(st.b.data(), st.u.data());
    coarse_iter_sum_ += r.iterations;
    ++coarse_solves_;
  }

  // One V-cycle on level l for its b from its u; symmetric: post-smoothing in reverse colour order.
  void sm_cycle(int l, bool symmetric) {
    const int last = m_.n_levels() - 1;
    if (l == last) {
      l == 0 ? coarse_cg(0) : sm_coarse_solve(l);
      return;
    }
    const SolverChoice& s = m_.solver;
    for (int i = 0; i < s.pre_smooth; ++i) l == 0 ? gs_sweep(0) : sm_sweep(l, false);
    sm_residual(l);
    sm_restrict(l + 1);
    sm_cycle(l + 1, symmetric);
    sm_prolong(l + 1);
    for (int i = 0; i < s.post_smooth; ++i) l == 0 ? gs_sweep(0, symmetric) : sm_sweep(l, symmetric);
  }

  // CG on the level-0 system from its current u, preconditioned by the symmetric V-cycle from 0,
  // to |r_k| <= tolerance |r_0| (recurrence residual). The flexible (Polak-Ribiere) beta keeps
  // CG's convergence where the coarsest solve's truncation or rounding (fp32) make the
  // preconditioner slightly nonlinear or unsymmetric; it equals Fletcher-Reeves for a fixed one.
  ConvergenceTrace sm_pcg(int iterations, double rel_tolerance) {
    ConvergenceTrace tr;
    Store& s0 = store_[0];
    const size_t n = s0.u.size();
    std::vector<T> x = s0.u, b = s0.b, r(n), z(n), zold(n), p(n), q(n);
    auto dot = [&](const std::vector<T>& a, const std::vector<T>& c) {
      double d = 0;
#pragma omp parallel for schedule(static) reduction(+ : d)
      for (size_t i = 0; i < n; ++i) d += double(a[i]) * double(c[i]);
      return d;
    };
    auto precondition = [&](const std::vector<T>& rr, std::vector<T>& zz) {
      std::copy(rr.begin(), rr.end(), s0.b.begin());
      std::fill(s0.u.begin(), s0.u.end(), T(0));
      sm_cycle(0, true);
      std::copy(s0.u.begin(), s0.u.end(), zz.begin());
    };
    level0_.op->apply(x.data(), q.data(), nullptr);
    for (size_t i = 0; i < n; ++i) r[i] = b[i] - q[i];
    double rn = std::sqrt(dot(r, r));
    const double r0 = rn;
    tr.residual.push_back(rn);
    int k = 0;
    if (r0 > 0) {
      precondition(r, z);
      p = z;
      double rz = dot(r, z);
      while (k < iterations && rn > rel_tolerance * r0 && rz > 0 && std::isfinite(rz)) {
        level0_.op->apply(p.data(), q.data(), nullptr);
        const double pq = dot(p, q);
        if (!(pq > 0)) break;
        const T a = T(rz / pq);
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; ++i) {
          x[i] += a * p[i];
          r[i] -= a * q[i];
        }
        ++k;
        rn = std::sqrt(dot(r, r));
        tr.residual.push_back(rn);
        if (!(rn > rel_tolerance * r0)) break;
        zold.swap(z);
        precondition(r, z);
        const double rz_new = dot(r, z);
        const T beta = T((rz_new - dot(r, zold)) / rz);
#pragma omp parallel for schedule(static)
        for (size_t i = 0; i < n; ++i) p[i] = z[i] + beta * p[i];
        rz = rz_new;
      }
    }
    // Copied, not moved: the level views point into these vectors.
    std::copy(b.begin(), b.end(), s0.b.begin());
    std::copy(x.begin(), x.end(), s0.u.begin());
    return tr;
  }

  std::vector<int32_t> a0_blk_;      // value index of each level-0 entry: 27 slot + stencil offset
  std::vector<SmoothedStore> sm_;    // [l] for l >= 1
  std::unique_ptr<BlockOperator<T>> sm_coarse_op_;
  std::unique_ptr<linalg::CgSolver<T>> sm_coarse_cg_;

  int threads_;
  std::vector<T> K_;
  std::vector<Store> store_;
  std::vector<LevelView<T>> views_;
  std::vector<T> youngs_, R_, mass_, u0_, v0_, a0_, force_, presc_, factor_;
  FineView<T> fine_;
  LevelCg coarse_, level0_;  // coarse_cg and pcg_level0 (both on level 0 for a one-level model)
  int64_t coarse_iter_sum_ = 0, coarse_solves_ = 0;
  bool step_open_ = false;  // begin_step() done, end_step() not yet: u = u0 + du
};

}  // namespace

std::unique_ptr<HexmgSimulation> make_hexmg_cpu_impl(const Scenario& sc, const RunOptions& o) {
  Model m = build_model(sc, o);
  const int threads = o.threads > 0 ? o.threads : omp_get_num_procs();
  if (o.precision == Precision::Fp32) return std::make_unique<HexmgCpu<float>>(std::move(m), o.precision, threads);
  return std::make_unique<HexmgCpu<double>>(std::move(m), o.precision, threads);
}

std::unique_ptr<Simulation> make_hexmg_cpu(const Scenario& sc, const RunOptions& o) { return make_hexmg_cpu_impl(sc, o); }

SparseRows rest_level0_system(const Model& m, int threads) {
  Model rest = m;
  rest.solver.smoothed = rest.solver.mg_pcg = false;
  rest.smoothed.reset();
  HexmgCpu<double> sim(std::move(rest), Precision::Fp64, threads);
  sim.begin_step();  // u = v = a = 0: R = I
  std::vector<HexmgSimulation::Triplet> trip;
  std::vector<double> b, u;
  sim.export_system(trip, b, u);
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(trip.size());
  for (const auto& e : trip) t.emplace_back(Eigen::Index(e.row), Eigen::Index(e.col), e.value);
  const Eigen::Index n = 3 * Eigen::Index(m.levels[0].n_padded);
  SparseRows A(n, n);
  A.setFromTriplets(t.begin(), t.end());
  return A;
}

}  // namespace eb::hexmg
