// The host engine of nr-neohookean (nr_neohookean_host_engine.h). Vector loops run on OpenMP
// threads with fixed static partitions; norms are summed per thread partition and then in thread
// order, so a run's bits depend on the thread count only through the norms' rounding, which
// only decides when Newton and CG stop.
#include "solvers/nr_neohookean/nr_neohookean_host_engine.h"

#include <algorithm>
#include <cmath>

#include <omp.h>

namespace eb::nr_neohookean {

namespace {

// sqrt(sum v_i^2), summed in double over fixed chunks in order (independent of the thread count).
template <class T>
double norm2(const std::vector<T>& v) {
  constexpr int64_t kChunk = 4096;
  const int64_t n = int64_t(v.size()), chunks = (n + kChunk - 1) / kChunk;
  std::vector<double> part(size_t(chunks), 0.0);
#pragma omp parallel for schedule(static) if (n > 32768)
  for (int64_t c = 0; c < chunks; ++c) {
    double s = 0;
    for (int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) s += double(v[size_t(i)]) * double(v[size_t(i)]);
    part[size_t(c)] = s;
  }
  double s = 0;
  for (double p : part) s += p;
  return std::sqrt(s);
}

}  // namespace

template <class T>
HostEngine<T>::HostEngine(const EngineInput<T>& in, int threads)
    : in_(in), threads_(threads), n_(3 * in.setup->num_nodes) {
  for (auto& v : vecs_) v.assign(size_t(n_), T(0));
  strategy_ = make_strategy<T>(in.setup->strategy, in.problem);
  A_ = linalg::make_matrix_operator(linalg::cast_values<T>(in.setup->pattern), in.setup->format,
                                    linalg::Location::Host);
  // The solver now (its Jacobi setup on the lumped mass; every solve refreshes it).
  const linalg::ValueSegments<T> v = A_->values();
  for (int64_t i = 0; i < n_; ++i) v.at(in.setup->map.diag[size_t(i)]) = in.dof_mass[size_t(i)];
  cg_ = std::make_unique<linalg::CgSolver<T>>(*A_, in.cg);
}

template <class T>
void HostEngine<T>::upload(Vec v, const std::vector<double>& host) {
  std::copy(host.begin(), host.end(), vec(v).begin());
}
template <class T>
std::vector<double> HostEngine<T>::download(Vec v) {
  return std::vector<double>(vec(v).begin(), vec(v).end());
}
template <class T>
void HostEngine<T>::set_entries(Vec v, const std::vector<int32_t>& idx, const std::vector<double>& val) {
  for (size_t k = 0; k < idx.size(); ++k) vec(v)[size_t(idx[k])] = T(val[k]);
}
template <class T>
void HostEngine<T>::copy(Vec to, Vec from) {
  StageTimer t(times_, "nr");
  vec(to) = vec(from);
}

template <class T>
void HostEngine<T>::midpoint() {
  StageTimer t(times_, "nr");
  T* m = vec(Vec::Mid).data();
  const T *a = vec(Vec::Phi).data(), *b = vec(Vec::PhiK).data();
#pragma omp parallel for schedule(static) num_threads(threads_) if (n_ > 32768)
  for (int64_t i = 0; i < n_; ++i) m[i] = T(0.5) * (a[i] + b[i]);
}

template <class T>
void HostEngine<T>::predict(double dt) {
  StageTimer t(times_, "nr");
  T* phi = vec(Vec::Phi).data();
  const T *phik = vec(Vec::PhiK).data(), *p = vec(Vec::P).data();
  const T *m = in_.dof_mass.data(), *f = in_.free.data();
  const T h = T(dt);
#pragma omp parallel for schedule(static) num_threads(threads_) if (n_ > 32768)
  for (int64_t i = 0; i < n_; ++i) phi[i] = phik[i] + f[i] * h * p[i] / m[i];
}

template <class T>
ElementChecks HostEngine<T>::assemble(Vec at, double tangent_scale, double diag_mass) {
  StageTimer t(times_, "assembly");
  ElementCheckSlot slot;
  AssemblyTargets<T> out;
  out.values = A_->values();
  out.force = vec(Vec::Force).data();
  out.tangent_scale = T(tangent_scale);
  out.force_scale = T(1);
  out.checks = &slot;
  strategy_->assemble(vec(at).data(), out);
  if (diag_mass != 0) {
    const T c = T(diag_mass);
    const int32_t* d = in_.setup->map.diag.data();
    for (int64_t i = 0; i < n_; ++i) out.values.at(d[i]) += c * in_.dof_mass[size_t(i)];
  }
  return checks_from_slot(slot);
}

template <class T>
double HostEngine<T>::residual_dynamic(double mass_coef, double force_coef) {
  StageTimer t(times_, "nr");
  T* r = vec(Vec::Res).data();
  const T *phi = vec(Vec::Phi).data(), *phik = vec(Vec::PhiK).data(), *p = vec(Vec::P).data();
  const T *f = vec(Vec::Force).data(), *fe = vec(Vec::Fext).data(), *m = in_.dof_mass.data(), *fr = in_.free.data();
  const T a = T(mass_coef), h = T(force_coef);
#pragma omp parallel for schedule(static) num_threads(threads_) if (n_ > 32768)
  for (int64_t i = 0; i < n_; ++i) r[i] = fr[i] * (p[i] - a * m[i] * (phi[i] - phik[i]) - h * (f[i] - fe[i]));
  return norm2(vec(Vec::Res));
}

template <class T>
double HostEngine<T>::residual_static() {
  StageTimer t(times_, "nr");
  T* r = vec(Vec::Res).data();
  const T *f = vec(Vec::Force).data(), *fe = vec(Vec::Fext).data(), *fr = in_.free.data();
#pragma omp parallel for schedule(static) num_threads(threads_) if (n_ > 32768)
  for (int64_t i = 0; i < n_; ++i) r[i] = fr[i] * (fe[i] - f[i]);
  return norm2(vec(Vec::Res));
}

template <class T>
linalg::CgResult HostEngine<T>::solve() {
  StageTimer t(times_, "cg");
  cg_->refresh_preconditioner();
  std::fill(vec(Vec::Dx).begin(), vec(Vec::Dx).end(), T(0));
  return cg_->solve(vec(Vec::Res).data(), vec(Vec::Dx).data());
}

template <class T>
void HostEngine<T>::step(double alpha) {
  StageTimer t(times_, "nr");
  T* phi = vec(Vec::Phi).data();
  const T* dx = vec(Vec::Dx).data();
  const T a = T(alpha);
#pragma omp parallel for schedule(static) num_threads(threads_) if (n_ > 32768)
  for (int64_t i = 0; i < n_; ++i) phi[i] += a * dx[i];
}

template <class T>
void HostEngine<T>::finish_dynamic(double momentum_coef, double keep) {
  StageTimer t(times_, "nr");
  T *p = vec(Vec::P).data(), *phik = vec(Vec::PhiK).data();
  const T *phi = vec(Vec::Phi).data(), *m = in_.dof_mass.data();
  const T s = T(momentum_coef), q = T(keep);
#pragma omp parallel for schedule(static) num_threads(threads_) if (n_ > 32768)
  for (int64_t i = 0; i < n_; ++i) {
    p[i] = s * m[i] * (phi[i] - phik[i]) - q * p[i];
    phik[i] = phi[i];
  }
}

template <class T>
StageTimes HostEngine<T>::take_times() {
  StageTimes t;
  std::swap(t, times_);
  return t;
}

template <class T>
std::vector<double> HostEngine<T>::tangent_values() {
  const linalg::ValueSegments<T> v = A_->values();
  std::vector<double> out(size_t(v.size()));
  for (int64_t q = 0; q < v.size(); ++q) out[size_t(q)] = double(v.at(q));
  return out;
}

template <class T>
double HostEngine<T>::time_spmv_ms(int repeats) {
  std::vector<double> ms;
  std::vector<T> y(static_cast<size_t>(n_));
  for (int k = 0; k < repeats; ++k) {
    Stopwatch w;
    A_->apply(vec(Vec::Phi).data(), y.data());
    ms.push_back(w.elapsed_ms());
  }
  std::sort(ms.begin(), ms.end());
  return ms.empty() ? 0.0 : ms[ms.size() / 2];
}

template <class T>
std::string HostEngine<T>::describe_cg() const {
  return "DCG_CPU (" + A_->name() + ")";
}

ElementChecks checks_from_slot(const ElementCheckSlot& slot) {
  ElementChecks c;
  c.inverted = int64_t(slot.inverted);
  c.first_inverted = slot.inverted ? slot.first_inverted : -1;
  c.first_nonfinite = slot.first_nonfinite == 0x7fffffffffffffffLL ? -1 : slot.first_nonfinite;
  if (slot.min_det_key != ~0ULL) c.min_det_f = det_from_key(slot.min_det_key);
  return c;
}

template <class T>
std::unique_ptr<EngineInput<T>> make_engine_input(const NrSetup& setup, int threads, int device) {
  auto p = std::make_unique<EngineInput<T>>();
  EngineInput<T>& in = *p;
  in.setup = &setup;
  in.supplemental.assign(setup.supplemental.begin(), setup.supplemental.end());
  const size_t N = size_t(setup.num_nodes);
  in.dof_mass.resize(3 * N);
  in.free.resize(3 * N);
  for (size_t n = 0; n < N; ++n)
    for (int d = 0; d < 3; ++d) {
      in.dof_mass[3 * n + size_t(d)] = T(setup.node_mass[n]);
      in.free[3 * n + size_t(d)] = (setup.constrained[n] >> d & 1) ? T(0) : T(1);
    }
  in.problem.nodes = setup.num_nodes;
  in.problem.elements = setup.num_elements;
  in.problem.connectivity = &setup.connectivity;
  in.problem.form = setup.form;
  in.problem.supplemental = &in.supplemental;
  in.problem.lame = tet::Lame<T>{T(setup.lambda), T(setup.mu)};
  in.problem.map = &setup.map;
  in.problem.threads = threads;
  in.problem.device = device;
  in.problem.partitioner = mesh::parse_node_partitioner(setup.options.partitioner);
  in.cg.preconditioner = linalg::Preconditioner::Jacobi;
  in.cg.tolerance = setup.options.cg_tolerance;
  in.cg.max_iterations = setup.options.cg_max_iterations;
  return p;
}

template <class T>
StrategyRun run_strategy(const std::string& name, const NrSetup& setup, const std::vector<double>& x, int repeats,
                         int threads, int device) {
  NrSetup s = setup;  // the strategy `name`, whatever the setup's variant
  s.strategy = name;
  const auto in = make_engine_input<T>(s, threads, device);
#if defined(ELASTOBENCH_HAVE_CUDA)
  if (find_strategy(name).location == linalg::Location::Device) return run_device_strategy<T>(*in, x, repeats);
#endif
  HostEngine<T> engine(*in, threads);
  StrategyRun r;
  engine.upload(Vec::Mid, x);
  r.checks = engine.assemble(Vec::Mid, 1.0, 0.0);
  r.values = engine.tangent_values();
  r.force = engine.download(Vec::Force);
  for (int k = 0; k < repeats; ++k) {
    Stopwatch w;
    engine.assemble(Vec::Mid, 1.0, 0.0);
    r.ms.push_back(w.elapsed_ms());
  }
  r.work = engine.strategy().work();
  return r;
}

template <class T>
std::unique_ptr<NrEngine<T>> make_host_engine(const EngineInput<T>& in, int threads) {
  return std::make_unique<HostEngine<T>>(in, threads);
}

template std::unique_ptr<EngineInput<float>> make_engine_input(const NrSetup&, int, int);
template std::unique_ptr<EngineInput<double>> make_engine_input(const NrSetup&, int, int);
template StrategyRun run_strategy<float>(const std::string&, const NrSetup&, const std::vector<double>&, int, int, int);
template StrategyRun run_strategy<double>(const std::string&, const NrSetup&, const std::vector<double>&, int, int, int);
template class HostEngine<float>;
template class HostEngine<double>;
template std::unique_ptr<NrEngine<float>> make_host_engine(const EngineInput<float>&, int);
template std::unique_ptr<NrEngine<double>> make_host_engine(const EngineInput<double>&, int);

}  // namespace eb::nr_neohookean
