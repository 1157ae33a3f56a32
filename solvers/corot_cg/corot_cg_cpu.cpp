// corot-cg on the CPU (OpenMP; one thread is the thesis's serial CPU): the readable reference of
// the CUDA kernels. One loop per stage over elements or nodes, each calling the functions of
// corot_cg_element.h; the CG is linalg's, on a matrix-free FunctionOperator. Unlike the kernels,
// the forces stage's element loop stores each element's rotated blocks R K_ab R^T and force rows
// once, and the node loops (forces, every CG product) gather them in the incidence order.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "meshes/errors.h"
#include "solvers/corot_cg/corot_cg_simulation.h"
#include "solvers/linalg/function_operator.h"

namespace eb::corot_cg {
namespace {

template <class T>
class CorotCgCpu final : public CorotCgSimulation {
 public:
  CorotCgCpu(CorotCgSetup setup, Precision p, int threads)
      : CorotCgSimulation(std::move(setup), Backend::Cpu, p), threads_(threads), el_(setup_) {
    const CorotCgSetup& s = setup_;
    const int64_t E = s.num_elements;
    const size_t n = 3 * size_t(s.num_nodes);
    blocks_.resize(kRotatedBlockValues * size_t(E));
    force_rows_.resize(12 * size_t(E));
    p_masked_.resize(n);
    X_.resize(n);
    for (size_t i = 0; i < size_t(s.num_nodes); ++i)
      for (int d = 0; d < 3; ++d) X_[3 * i + size_t(d)] = T(s.nodes[i][size_t(d)]);
    mass_.assign(s.mass.begin(), s.mass.end());
    u_.assign(n, T(0));
    v_.assign(n, T(0));
    dv_.assign(n, T(0));
    b_.assign(n, T(0));
    contact_.assign(size_t(s.num_nodes), 0);
    map_nodes_.resize(4 * size_t(s.render_vertices));
    map_weights_.resize(4 * size_t(s.render_vertices));
    for (size_t v = 0; v < size_t(s.render_vertices); ++v)
      for (int a = 0; a < 4; ++a) {
        map_nodes_[4 * v + size_t(a)] = s.binding.nodes[v][size_t(a)];
        map_weights_[4 * v + size_t(a)] = T(s.binding.weights[v][size_t(a)]);
      }
    render_.assign(3 * size_t(s.render_vertices), T(0));
    elements_ = el_.view();
    update_blocks();
    loads_.mass = mass_.data();
    for (int d = 0; d < 3; ++d) loads_.gravity[d] = T(s.gravity[d]);
    loads_.load_ptr = s.loads.empty() ? nullptr : s.load_ptr.data();
    loads_.load_curve = s.load_curve.data();
    loads_.load_force = s.load_force.data();
    loads_.curve_factor = curve_factors_.data();
    loads_.ground = s.ground;
    for (int d = 0; d < 3; ++d) loads_.plane.normal[d] = T(s.ground_normal[d]);
    loads_.plane.height = T(s.ground_height);
    loads_.plane.stiffness = T(s.ground_stiffness);
    operator_ = linalg::make_function_operator<T>(
        linalg::Location::Host, linalg::Index(n), [this](const T* x, T* y, linalg::StreamHandle) { product(x, y); },
        s.fixed_rows, "corot-cg matrix-free (host)");
    cg_dynamic_ = std::make_unique<linalg::CgSolver<T>>(*operator_, cg_options(s.options, false, 3 * s.num_nodes));
    static_cg_ = cg_options(s.options, true, 3 * s.num_nodes);
    cg_static_ = std::make_unique<linalg::CgSolver<T>>(*operator_, static_cg_);
  }

  void set_coefficients(const RayleighEuler<double>& k) override {
    k_ = {T(k.mass), T(k.stiffness), T(k.rhs_v), T(k.rhs_mass), T(k.h)};
    static_coefficients_ = k.mass == 0;
  }
  void use_static_solver(bool on) override { static_ = on; }
  void set_static_cg(double tolerance, int max_iterations) override {
    if (tolerance == static_cg_.tolerance && max_iterations == static_cg_.max_iterations) return;
    static_cg_.tolerance = tolerance;
    static_cg_.max_iterations = max_iterations;
    cg_static_ = std::make_unique<linalg::CgSolver<T>>(*operator_, static_cg_);
  }

  std::vector<double> get_array(StageArray a) override {
    if (a == StageArray::R) {  // element-major for the caller
      const int64_t E = setup_.num_elements;
      std::vector<double> out(9 * size_t(E));
      for (int64_t e = 0; e < E; ++e)
        for (int k = 0; k < 9; ++k) out[size_t(9 * e + k)] = double(el_.R[size_t(k * E + e)]);
      return out;
    }
    if (a == StageArray::diag) return std::vector<double>(operator_->diagonal_data(), operator_->diagonal_data() + u_.size());
    const auto& src = array(a);
    return std::vector<double>(src.begin(), src.end());
  }
  void set_array(StageArray a, const std::vector<double>& values) override {
    if (a == StageArray::R) {
      const int64_t E = setup_.num_elements;
      check_size(a, values.size(), 9 * size_t(E));
      for (int64_t e = 0; e < E; ++e)
        for (int k = 0; k < 9; ++k) el_.R[size_t(k * E + e)] = T(values[size_t(9 * e + k)]);
      update_blocks();
      return;
    }
    if (a == StageArray::diag) throw std::invalid_argument("corot-cg: diag is computed by Forces");
    auto& dst = array(a);
    check_size(a, values.size(), dst.size());
    std::copy(values.begin(), values.end(), dst.begin());
  }

  linalg::CgResult run_stage(Stage st) override {
    omp_set_num_threads(threads_);  // process-wide in OpenMP: set where the loops run
    CpuPhase timer(timings_, stage_name(st));
    switch (st) {
      case Stage::Forces: forces(); break;
      case Stage::Solve: return solve();
      case Stage::Integrate: integrate(); break;
      case Stage::Mapping: mapping(); break;
    }
    return {};
  }

  std::vector<double> apply_operator(const std::vector<double>& p) override {
    omp_set_num_threads(threads_);
    const std::vector<T> pt(p.begin(), p.end());
    std::vector<T> y(pt.size());
    operator_->apply(pt.data(), y.data());
    return std::vector<double>(y.begin(), y.end());
  }

  double time_product_ms(int repeats) override {
    omp_set_num_threads(threads_);
    std::vector<T> y(u_.size());
    std::vector<double> ms;
    for (int r = 0; r < repeats; ++r) {
      Stopwatch w;
      for (int k = 0; k < kProductBatch; ++k) operator_->apply(b_.data(), y.data());
      ms.push_back(w.elapsed_ms() / kProductBatch);
    }
    std::sort(ms.begin(), ms.end());
    return ms.empty() ? 0.0 : ms[ms.size() / 2];
  }

  void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) override {
    u.assign(u_.begin(), u_.end());
    v.assign(v_.begin(), v_.end());
  }

 private:
  static void check_size(StageArray a, size_t got, size_t want) {
    if (got != want)
      throw std::invalid_argument("corot-cg: array " + std::to_string(int(a)) + " has " + std::to_string(want) +
                                  " values, got " + std::to_string(got));
  }
  std::vector<T>& array(StageArray a) {
    switch (a) {
      case StageArray::u: return u_;
      case StageArray::v: return v_;
      case StageArray::dv: return dv_;
      case StageArray::b: return b_;
      case StageArray::render: return render_;
      default: break;
    }
    throw std::invalid_argument("corot-cg: no host array for this stage array");
  }

  void forces() {
    const int64_t E = setup_.num_elements, N = setup_.num_nodes;
    const Rotation method = setup_.rotation;
    int64_t inverted = 0, first_inverted = std::numeric_limits<int64_t>::max();
    int64_t first_nonfinite = std::numeric_limits<int64_t>::max();
    double min_det = std::numeric_limits<double>::infinity();
#pragma omp parallel for schedule(static) reduction(+ : inverted) \
    reduction(min : first_inverted, first_nonfinite, min_det)
    for (int64_t e = 0; e < E; ++e) {
      T Xe[4][3], xe[4][3], Dinv[9], R[9], det_f;
      gather_positions(elements_, e, u_.data(), Xe, xe);
      for (int k = 0; k < 9; ++k) Dinv[k] = el_.Dm_inv[size_t(k * E + e)];
      const bool ok = element_rotation(method, Xe, xe, Dinv, R, det_f);
      for (int k = 0; k < 9; ++k) el_.R[size_t(k * E + e)] = R[k];
      element_rotated_blocks(elements_, e, &blocks_[kRotatedBlockValues * size_t(e)]);
      T fr[4][3];
      element_force_rows(elements_, e, u_.data(), v_.data(), k_.rhs_v, fr);
      for (int a = 0; a < 4; ++a)
        for (int i = 0; i < 3; ++i) force_rows_[12 * size_t(e) + size_t(3 * a + i)] = fr[a][i];
      if (!std::isfinite(double(det_f))) {
        first_nonfinite = std::min(first_nonfinite, e);
        continue;
      }
      min_det = std::min(min_det, double(det_f));
      // A collapsed edge frame (no rotation could be made) counts with the inverted elements.
      if (det_f <= T(0) || !ok) {
        ++inverted;
        first_inverted = std::min(first_inverted, e);
      }
    }
    ElementChecks c;
    c.inverted = inverted;
    c.first_inverted = inverted ? first_inverted : -1;
    c.first_nonfinite = first_nonfinite == std::numeric_limits<int64_t>::max() ? -1 : first_nonfinite;
    c.min_det_f = min_det;
    record_checks(c);

    T* diag = operator_->diagonal_data();
    const T imp[3] = {impulse_ ? T(impulse_->force[0]) : T(0), impulse_ ? T(impulse_->force[1]) : T(0),
                      impulse_ ? T(impulse_->force[2]) : T(0)};
    const int64_t imp_node = impulse_ ? impulse_->node : -1;
    loads_.gravity_scale = T(gravity_scale_);
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; ++n) {
      T f[3], dk[3], b[3], d[3];
      node_gather_force(force_rows_.data(), blocks_.data(), setup_.node_ptr.data(), setup_.incidence.data(), n, f, dk);
      node_rhs(k_, loads_, n, X_.data(), u_.data(), v_.data(), f, dk, n == imp_node ? imp : nullptr,
               setup_.constrained[size_t(n)], b, d, contact_[size_t(n)]);
      for (int i = 0; i < 3; ++i) {
        b_[size_t(3 * n + i)] = b[i];
        diag[3 * n + i] = d[i];
      }
    }
  }

  void product(const T* p, T* y) {
    const int64_t N = setup_.num_nodes;
    const uint8_t* constrained = setup_.constrained.data();
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; ++n)
      for (int i = 0; i < 3; ++i) p_masked_[size_t(3 * n + i)] = (constrained[n] >> i) & 1 ? T(0) : p[3 * n + i];
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; ++n) {
      T kp[3], yn[3];
      node_blocks_times(setup_.connectivity.data(), blocks_.data(), setup_.node_ptr.data(), setup_.incidence.data(), n,
                        p_masked_.data(), kp);
      node_operator(k_, mass_.data(), loads_.ground, loads_.plane, contact_.data(), n, p, kp, yn);
      for (int i = 0; i < 3; ++i) y[3 * n + i] = yn[i];
    }
  }

  // The stored blocks from R where R is set other than by forces() (construction, set_array).
  void update_blocks() {
    const int64_t E = setup_.num_elements;
#pragma omp parallel for schedule(static)
    for (int64_t e = 0; e < E; ++e) element_rotated_blocks(elements_, e, &blocks_[kRotatedBlockValues * size_t(e)]);
  }

  linalg::CgResult solve() {
    linalg::CgSolver<T>& cg = static_ ? *cg_static_ : *cg_dynamic_;
    std::fill(dv_.begin(), dv_.end(), T(0));
    if (setup_.options.preconditioner == "jacobi" || static_) cg.refresh_preconditioner();
    return cg.solve(b_.data(), dv_.data());
  }

  void integrate() {
    const int64_t N = setup_.num_nodes;
    if (static_coefficients_) {
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < 3 * N; ++i) u_[size_t(i)] += dv_[size_t(i)];
      return;
    }
    const T h = T(setup_.dt);
#pragma omp parallel for schedule(static)
    for (int64_t n = 0; n < N; ++n) node_integrate(n, h, dv_.data(), u_.data(), v_.data());
  }

  void mapping() {
    const int64_t V = setup_.render_vertices;
#pragma omp parallel for schedule(static)
    for (int64_t s = 0; s < V; ++s) {
      T y[3];
      map_vertex(s, map_nodes_.data(), map_weights_.data(), X_.data(), u_.data(), y);
      for (int i = 0; i < 3; ++i) render_[size_t(3 * s + i)] = y[i];
    }
  }

  int threads_;
  bool static_ = false, static_coefficients_ = false;
  RayleighEuler<T> k_{};
  HostElementArrays<T> el_;
  std::vector<T> X_, mass_, u_, v_, dv_, b_, render_, map_weights_;
  // The step's R K R^T (element_rotated_blocks, 90 per element) and the element rows of the
  // internal force (element_force_rows, 12 per element), both element-major, written by forces().
  std::vector<T> blocks_, force_rows_;
  std::vector<T> p_masked_;  // the product's p, 0 at the constrained components
  std::vector<int32_t> map_nodes_;
  std::vector<uint8_t> contact_;
  ElementArrays<T> elements_;
  NodeLoads<T> loads_;
  std::unique_ptr<linalg::FunctionOperator<T>> operator_;
  std::unique_ptr<linalg::CgSolver<T>> cg_dynamic_, cg_static_;
  linalg::CgOptions static_cg_;  // cg_static_'s (set_static_cg)
};

}  // namespace

std::unique_ptr<CorotCgSimulation> make_corot_cg_cpu_impl(const Scenario& sc, const RunOptions& o) {
  CorotCgSetup s = build_corot_cg_setup(sc, o);
  const int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
  if (o.precision == Precision::Fp32) return std::make_unique<CorotCgCpu<float>>(std::move(s), o.precision, threads);
  return std::make_unique<CorotCgCpu<double>>(std::move(s), o.precision, threads);
}

}  // namespace eb::corot_cg
