// OpenMP backend of TLED: the readable oracle. The loops below are the three kernels of the
// paper (element forces; per-node summation + central difference; boundary conditions) and call
// the same element functions as the CUDA kernels (assembly/tled/hex8_tled.h).
#include <omp.h>
#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "assembly/tled/hex8_tled.h"
#include "solvers/common/timers.h"
#include "solvers/tled/tled_simulation.h"

namespace eb::tled {
namespace {

// Subnormal numbers appear ahead of the loading wave front (values decaying towards zero) and
// make x86 arithmetic on them ~100x slower (a 5 s fp32 run took 25 s instead of 0.5 s). The
// loops therefore run with flush-to-zero / denormals-are-zero set, restored afterwards so that
// other code in the process is unaffected. CUDA does not flush by default; the values concerned
// are below 1e-38 (fp32) and do not affect the CPU-vs-CUDA comparison.
class FlushDenormals {
 public:
#if defined(__SSE2__)
  FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }
  ~FlushDenormals() { _mm_setcsr(saved_); }

 private:
  unsigned saved_;
#endif
};

template <class T, bool Damage, Assembly Asm>
class TledCpu final : public TledSimulationBase {
 public:
  TledCpu(TledSetup setup, const RunOptions& options)
      : TledSimulationBase(std::move(setup), Backend::Cpu, sizeof(T) == 4 ? Precision::Fp32 : Precision::Fp64) {
    threads_ = options.threads > 0 ? options.threads : omp_get_max_threads();
    const size_t N = size_t(setup_.num_nodes), E = size_t(setup_.num_elements);
    u_.assign(3 * N, T(0));
    u_prev_.assign(3 * N, T(0));
    beta_.assign(E, T(0));
    G_.resize(9 * E);
    for (size_t i = 0; i < G_.size(); ++i) G_[i] = T(setup_.G[i]);
    V_.resize(E);
    for (size_t e = 0; e < E; ++e) V_[e] = T(setup_.volume[e]);
    a_.resize(N);
    for (size_t n = 0; n < N; ++n) a_[n] = T(setup_.a[n]);
    if (Asm == Assembly::Hourglass) hg_.assign(setup_.hourglass.begin(), setup_.hourglass.end());
    if (gathers(Asm))
      fe_.assign(3 * size_t(kSlots) * E, T(0));
    else
      fnode_.assign(3 * N, T(0));
    material_ = {T(setup_.mu), T(setup_.kappa), T(setup_.damage.gamma), T(setup_.damage.m), T(setup_.damage.psi0)};
    // Displacements prescribed at t = 0 (non-zero only for step curves); at rest: u_prev = u.
    apply_boundary(u_.data(), 0.0, false);
    u_prev_ = u_;
  }

  void advance(int steps) override {
    for (int k = 0; k < steps; ++k) {
      {
        CpuPhase ph(timings_, "element_forces");
        element_forces();
      }
      {
        CpuPhase ph(timings_, "node_update");
        node_update();
        boundary_update();
      }
      std::swap(u_, u_prev_);  // u_prev_ now holds u^n, u_ holds u^{n+1}
      ++step_;
    }
  }

  void copy_state_to_host(std::vector<double>& u, std::vector<double>& v) override {
    u.resize(u_.size());
    v.resize(u_.size());
    const double inv_dt = 1.0 / setup_.dt;
    for (size_t i = 0; i < u_.size(); ++i) {
      u[i] = double(u_[i]);
      v[i] = (double(u_[i]) - double(u_prev_[i])) * inv_dt;  // backward difference
    }
  }

  void cell_fields(std::vector<mesh::Field>& out) override { tled_cell_fields(setup_, u_, beta_, out); }

 protected:
  void add_details(nlohmann::json& j) const override {
    j["threads"] = threads_;
    j["texture_note"] = "texture fetching applies to the CUDA backend only; the CPU ignores tled.texture";
  }

  // The neutral layout of get_array/set_array is this backend's own.
  std::vector<double> read_array(PhaseArray a) override {
    const std::vector<T>& v = array_of(a);
    return std::vector<double>(v.begin(), v.end());
  }
  void write_array(PhaseArray a, const std::vector<double>& values) override {
    std::vector<T>& v = array_of(a);
    for (size_t i = 0; i < v.size(); ++i) v[i] = T(values[i]);
  }

  // The functions advance() calls, one at a time.
  void run_phase_impl(Phase p) override {
    switch (p) {
      case Phase::Element: element_forces(); break;
      case Phase::Node: node_update(); break;
      case Phase::Boundary: boundary_update(); break;
    }
  }

 private:
  // Steps 5-8 (Eqs. 8-11) for every element, with the checks of det F on the state u^n
  // (step_ = n) that the CUDA element kernel makes too.
  void element_forces() {
    const int64_t E = setup_.num_elements;
    const int32_t* conn = setup_.connectivity.data();
    const T* u = u_.data();
    constexpr int64_t none = std::numeric_limits<int64_t>::max();
    int64_t inverted = 0, first_inverted = none, first_nonfinite = none;
    double min_j = std::numeric_limits<double>::infinity();
#pragma omp parallel num_threads(threads_) reduction(+ : inverted) reduction(min : first_inverted, first_nonfinite, min_j)
    {
    const FlushDenormals ftz;
#pragma omp for schedule(static)
    for (int64_t e = 0; e < E; ++e) {
      T ue[8][3];
      int32_t nodes[8];
      for (int a = 0; a < 8; ++a) {
        nodes[a] = conn[8 * e + a];
        for (int d = 0; d < 3; ++d) ue[a][d] = u[3 * size_t(nodes[a]) + d];
      }
      T f[4][3];
      const T J = tled_element_forces<T, Damage>(ue, &G_[9 * e], V_[e], material_, &beta_[e], f);
      if (std::isfinite(J)) {
        min_j = std::min(min_j, double(J));
        if (!(J > T(0))) {
          ++inverted;
          first_inverted = std::min(first_inverted, e);
        }
      } else {
        first_nonfinite = std::min(first_nonfinite, e);
      }
      if constexpr (Asm == Assembly::Hourglass) {
        T f8[8][3];
        const T* K = &hg_[size_t(kHourglassEntries) * e];
        tled_forces_with_hourglass(ue, f, [K](int i) { return K[i]; }, f8);
        for (int k = 0; k < 8; ++k)
          for (int d = 0; d < 3; ++d) fe_[3 * (size_t(k) * E + e) + d] = f8[k][d];
      } else if constexpr (Asm == Assembly::Gather) {
        for (int k = 0; k < 4; ++k)
          for (int d = 0; d < 3; ++d) fe_[3 * (size_t(k) * E + e) + d] = f[k][d];
      } else {
        for (int a = 0; a < 8; ++a) {
          const int k = a < 4 ? a : hex_antipode(a);
          for (int d = 0; d < 3; ++d) {
            const T v = a < 4 ? f[k][d] : -f[k][d];
#pragma omp atomic
            fnode_[3 * size_t(nodes[a]) + d] += v;
          }
        }
      }
    }
    }  // omp parallel
    counts_.add(step_, {inverted, first_inverted == none ? -1 : first_inverted, min_j,
                        first_nonfinite == none ? -1 : first_nonfinite});
  }

  // Eq. 12 (sum of element contributions) and Eq. 3 (central difference) per node; the new
  // displacement overwrites u_prev (only this node reads it).
  void node_update() {
    const int64_t N = setup_.num_nodes;
    const T b = T(setup_.b), c = T(setup_.c);
    const T ag[3] = {T(setup_.a_factor * setup_.gravity[0]), T(setup_.a_factor * setup_.gravity[1]),
                     T(setup_.a_factor * setup_.gravity[2])};
    const int32_t* off = setup_.slot_offset.data();
    const int32_t* idx = setup_.slot_index.data();
    const uint8_t* mask = setup_.constrained.data();
#pragma omp parallel num_threads(threads_)
    {
    const FlushDenormals ftz;
#pragma omp for schedule(static)
    for (int64_t n = 0; n < N; ++n) {
      T p[3] = {T(0), T(0), T(0)};
      if constexpr (gathers(Asm)) {
        for (int32_t s = off[n]; s < off[n + 1]; ++s) {
          const int32_t code = idx[s];
          const T* fs = &fe_[3 * size_t(code >> 1)];
          for (int d = 0; d < 3; ++d) p[d] += (code & 1) ? -fs[d] : fs[d];
        }
      } else {
        for (int d = 0; d < 3; ++d) {
          p[d] = fnode_[3 * n + d];
          fnode_[3 * n + d] = T(0);
        }
      }
      for (int d = 0; d < 3; ++d) {
        const size_t i = 3 * size_t(n) + d;
        const T next = a_[n] * (-p[d]) + ag[d] + b * u_[i] - c * u_prev_[i];
        u_prev_[i] = (mask[n] >> d) & 1 ? T(0) : next;
      }
    }
    }  // omp parallel
  }

  std::vector<T>& array_of(PhaseArray a) {
    switch (a) {
      case PhaseArray::u: return u_;
      case PhaseArray::u_prev: return u_prev_;
      case PhaseArray::fe: return fe_;
      case PhaseArray::fnode: return fnode_;
      case PhaseArray::beta: return beta_;
    }
    throw std::logic_error("tled cpu: unknown array");
  }

  // The boundary conditions of t_{n+1} on the new displacement (held in u_prev until the swap).
  void boundary_update() { apply_boundary(u_prev_.data(), double(step_ + 1) * setup_.dt, true); }

  // Eqs. 13-14: external nodal forces (a R added to free components) and prescribed
  // displacements at time t.
  void apply_boundary(T* u_next, double t, bool with_forces) {
    if (with_forces)
      for (const auto& f : setup_.forces) {
        const double fac = curve_factor(setup_.curves[f.curve], t);
        for (int d = 0; d < 3; ++d)
          if (!((setup_.constrained[f.node] >> d) & 1))
            u_next[3 * size_t(f.node) + d] += a_[f.node] * T(f.force[d] * fac);
      }
    for (const auto& p : setup_.prescribed) {
      const double fac = curve_factor(setup_.curves[p.curve], t);
      for (int d = 0; d < 3; ++d)
        if ((p.mask >> d) & 1) u_next[3 * size_t(p.node) + d] = T(p.displacement[d] * fac);
    }
  }

  static constexpr int kSlots = slots_per_element(Asm);
  int threads_ = 1;
  std::vector<T> u_, u_prev_, beta_, G_, V_, a_, fe_, fnode_, hg_;
  TledMaterial<T> material_;
};

template <class T>
std::unique_ptr<Simulation> make_cpu_typed(TledSetup s, const RunOptions& o) {
  const bool dmg = s.damage_enabled;
  const Assembly asmb = s.assembly;
  if (asmb == Assembly::Gather) {
    if (dmg) return std::make_unique<TledCpu<T, true, Assembly::Gather>>(std::move(s), o);
    return std::make_unique<TledCpu<T, false, Assembly::Gather>>(std::move(s), o);
  }
  if (asmb == Assembly::Hourglass) {
    if (dmg) return std::make_unique<TledCpu<T, true, Assembly::Hourglass>>(std::move(s), o);
    return std::make_unique<TledCpu<T, false, Assembly::Hourglass>>(std::move(s), o);
  }
  if (dmg) return std::make_unique<TledCpu<T, true, Assembly::Atomic>>(std::move(s), o);
  return std::make_unique<TledCpu<T, false, Assembly::Atomic>>(std::move(s), o);
}

}  // namespace

std::unique_ptr<Simulation> make_tled_cpu(const Scenario& scenario, const RunOptions& options) {
  TledSetup s = build_tled_setup(scenario, options);
  if (options.precision == Precision::Fp32) return make_cpu_typed<float>(std::move(s), options);
  return make_cpu_typed<double>(std::move(s), options);
}

}  // namespace eb::tled
