// hexmg's CPU coarsest-level CG and level-0 Jacobi-PCG (the jacobi-pcg variant, Fig. 11's
// comparison) run on the shared solver of solvers/linalg/cg.h (issue 10). Checked here:
//  - against the hand-written loops they replaced, kept below as the reference (reference_cg: the
//    pre-move coarse_cg / pcg_level0 of hexmg_cpu.cpp, serial). On one thread the shared solver
//    does the same operations in the same order (cg_algorithm.h), so iterates, iteration counts
//    and the residual history agree bit for bit in fp32 and fp64. From a nonzero initial guess
//    hexmg solves for the correction instead (hexmg_cpu.cpp, solve_level()): same iteration in
//    exact arithmetic, another rounding, so the solutions agree to 1e-12 (fp64) or 1e-5 (fp32)
//    and the iteration counts within one;
//  - the jacobi-pcg variant as a simulation (it had no test of its own), jacobi_pcg()'s trace,
//    iteration limit and max_seconds cutoff (CgOptions::on_iteration);
//  - CgOptions::on_iteration itself on a small operator, and that a device operator refuses it;
//  - the per-variant keys of the [hexmg] section (VariantInfo::keys).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "assembly/hexmg/hexmg_kernels.h"
#include "experiments/dick2011/bunny_scenario.h"
#include "meshes/errors.h"
#include "solvers/common/registry.h"
#include "solvers/hexmg/hexmg_model.h"
#include "solvers/linalg/cg.h"
#include "tests/hexmg/hexmg_test_util.h"

namespace eb::hexmg::test {
namespace {

// The loops that hexmg_cpu.cpp ran before the move, serial: Jacobi-PCG on a level from u, to
// |r_k| <= tol |r_0| or `iterations`, r = 0 on padding. Returns the residual history |r_k|.
template <class T>
std::vector<double> reference_cg(const Level& lev, const std::vector<T>& A, const std::vector<T>& b, std::vector<T>& u,
                                 int iterations, double tol) {
  std::vector<T> Ac = A, bc = b;
  LevelView<T> L;
  L.n = lev.n_padded;
  L.A = {Ac.data(), kCoeffs, 1};
  L.b = {bc.data(), 3, 1};
  L.u = {u.data(), 3, 1};
  L.nbr = {lev.nbr[0].data(), 27, 1};
  L.dead = lev.dead.data();
  const int64_t n = L.n;
  std::vector<T> rb(size_t(n) * 3), pb(size_t(n) * 3), qb(size_t(n) * 3);
  Strided<T> r{rb.data(), 3, 1}, p{pb.data(), 3, 1}, q{qb.data(), 3, 1};
  double rr = 0, rz = 0;
  for (int64_t x = 0; x < n; ++x) {
    stencil_apply_vertex(x, L, L.u, q);
    for (int d = 0; d < 3; ++d) {
      const T rv = (L.nbr(x, kCentre) < 0) ? T(0) : L.b(x, d) - q(x, d);
      const T zv = rv * jacobi_inverse(x, d, L);
      r(x, d) = rv;
      p(x, d) = zv;
      rr += double(rv) * rv;
      rz += double(rv) * zv;
    }
  }
  std::vector<double> history{std::sqrt(rr)};
  const double stop = tol * tol * rr;
  int it = 0;
  while (it < iterations && rr > stop && rz > 0) {
    double pq = 0;
    for (int64_t x = 0; x < n; ++x) {
      stencil_apply_vertex(x, L, p, q);
      for (int d = 0; d < 3; ++d) pq += double(p(x, d)) * q(x, d);
    }
    if (!(pq > 0)) break;
    const T a = T(rz / pq);
    double rr_new = 0, rz_new = 0;
    for (int64_t x = 0; x < n; ++x)
      for (int d = 0; d < 3; ++d) {
        L.u(x, d) += a * p(x, d);
        r(x, d) -= a * q(x, d);
        rr_new += double(r(x, d)) * r(x, d);
        rz_new += double(r(x, d)) * (r(x, d) * jacobi_inverse(x, d, L));
      }
    const T beta = T(rz_new / rz);
    for (int64_t x = 0; x < n; ++x)
      for (int d = 0; d < 3; ++d) p(x, d) = r(x, d) * jacobi_inverse(x, d, L) + beta * p(x, d);
    rr = rr_new;
    rz = rz_new;
    history.push_back(std::sqrt(rr));
    ++it;
  }
  return history;
}

template <class T>
std::vector<T> as(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// Bitwise equality of the simulation's array (doubles read from T) and a T vector.
template <class T>
bool same_bits(const std::vector<double>& got, const std::vector<T>& want, size_t* first) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i)
    if (T(got[i]) != want[i] || std::signbit(double(T(got[i]))) != std::signbit(double(want[i]))) {
      *first = i;
      return false;
    }
  return true;
}

double relative(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

struct CgCase {
  std::string model;  // cube (3 levels), bunny (3 levels), cantilever (1 level)
  Precision precision;
};
std::string cg_case_name(const ::testing::TestParamInfo<CgCase>& i) {
  return i.param.model + "_" + to_string(i.param.precision);
}
void PrintTo(const CgCase& c, std::ostream* os) { *os << c.model << "_" << to_string(c.precision); }

Scenario model_of(const std::string& m) {
  if (m == "cube") return clamped_cube(16);
  if (m == "bunny") {
    dick2011::register_bunny_scenario();
    return load_scenario(dick2011::kBunnyScenario, {"mesh.target_elements=2000"});
  }
  return load_scenario("cantilever", {"mesh.element_size=0.05"});  // one level: the coarse CG runs on level 0
}

class SharedCg : public ::testing::TestWithParam<CgCase> {
 protected:
  bool fp32() const { return GetParam().precision == Precision::Fp32; }
  std::unique_ptr<HexmgSimulation> fresh() {
    auto sim = make(model_of(GetParam().model), {Backend::Cpu, GetParam().precision}, 1);
    sim->begin_step();
    return sim;
  }

  // The coarsest solve of the first V-cycle (b the restricted residual, u = 0), by the simulation
  // and by the reference; then again from a nonzero initial guess (hexmg's correction form).
  template <class T>
  void check_coarse() {
    auto sim = fresh();
    const Model& m = sim->model();
    const int last = m.n_levels() - 1;
    for (int l = 0; l < last; ++l) {
      for (int i = 0; i < m.solver.pre_smooth; ++i) sim->run_phase({PhaseKind::SmoothSweep, l});
      sim->run_phase({PhaseKind::Residual, l});
      sim->run_phase({PhaseKind::Restrict, l});
    }
    const std::vector<T> A = as<T>(sim->get_array(PhaseArray::A, last)), b = as<T>(sim->get_array(PhaseArray::b, last));
    std::vector<T> u = as<T>(sim->get_array(PhaseArray::u, last));
    for (T v : u) ASSERT_EQ(v, T(0)) << "test setup: the coarse solve of a V-cycle starts from 0";
    sim->run_phase({PhaseKind::CoarseSolve});
    const double it_sim = sim->mean_coarse_iterations();  // one solve so far
    const std::vector<double> u_sim = sim->get_array(PhaseArray::u, last);
    const std::vector<double> hist = reference_cg(m.levels[last], A, b, u, m.solver.coarse_max_iterations, m.solver.coarse_tolerance);
    const int it_ref = int(hist.size()) - 1;
    std::printf("%s %s coarsest CG (level %d, %d padded vertices): reference %d iterations, shared solver %.0f\n",
                GetParam().model.c_str(), to_string(GetParam().precision).c_str(), last, m.levels[last].n_padded, it_ref, it_sim);
    EXPECT_EQ(it_sim, double(it_ref));
    EXPECT_GT(it_ref, 5);
    size_t first = 0;
    EXPECT_TRUE(same_bits(u_sim, u, &first)) << "entry " << first << ": " << u_sim[first] << " vs " << u[first];

    // Again from half the solution (correction form): the same fixed point to the tolerance.
    std::vector<double> start = u_sim;
    for (double& v : start) v = double(T(0.5 * v));
    sim->set_array(PhaseArray::u, last, start);
    sim->run_phase({PhaseKind::CoarseSolve});
    const double it_sim2 = 2 * sim->mean_coarse_iterations() - it_sim;
    std::vector<T> u2 = as<T>(start);
    const std::vector<double> hist2 = reference_cg(m.levels[last], A, b, u2, m.solver.coarse_max_iterations, m.solver.coarse_tolerance);
    const std::vector<double> u2_sim = sim->get_array(PhaseArray::u, last);
    const double d = relative(u2_sim, std::vector<double>(u2.begin(), u2.end()));
    std::printf("  from u = u*/2: reference %zu iterations, shared solver (correction form) %.0f; |u - u_ref| / |u_ref| %.2e\n",
                hist2.size() - 1, it_sim2, d);
    EXPECT_LE(std::abs(it_sim2 - double(hist2.size() - 1)), 1.0);
    // The same iteration shifted by u_0 in exact arithmetic, so only rounding separates them
    // (measured: 2e-16 .. 5e-16 fp64, 1.6e-7 .. 2.5e-7 fp32; the iteration counts were equal).
    EXPECT_LE(d, fp32() ? 1e-5 : 1e-12);
  }

  // The level-0 Jacobi-PCG (jacobi_pcg(), the jacobi-pcg variant's solve) from u = 0.
  template <class T>
  void check_level0() {
    auto sim = fresh();
    const Model& m = sim->model();
    sim->restart_solve();
    const std::vector<T> A = as<T>(sim->get_array(PhaseArray::A, 0)), b = as<T>(sim->get_array(PhaseArray::b, 0));
    std::vector<T> u(b.size(), T(0));
    const double tol = 1e-6;
    const ConvergenceTrace tr = sim->jacobi_pcg(400, tol);
    const std::vector<double> u_sim = sim->get_array(PhaseArray::u, 0);
    const std::vector<double> hist = reference_cg(m.levels[0], A, b, u, 400, tol);
    std::printf("%s %s level-0 PCG (%d padded vertices): reference %zu iterations, shared solver %zu\n",
                GetParam().model.c_str(), to_string(GetParam().precision).c_str(), m.levels[0].n_padded, hist.size() - 1,
                tr.residual.size() - 1);
    ASSERT_EQ(tr.residual.size(), hist.size());
    ASSERT_EQ(tr.seconds.size(), hist.size());
    EXPECT_LT(hist.size() - 1, 400u) << "did not converge";
    for (size_t k = 0; k < hist.size(); ++k) EXPECT_EQ(tr.residual[k], hist[k]) << "iteration " << k;
    for (size_t k = 1; k < tr.seconds.size(); ++k) EXPECT_GE(tr.seconds[k], tr.seconds[k - 1]);
    size_t first = 0;
    EXPECT_TRUE(same_bits(u_sim, u, &first)) << "entry " << first << ": " << u_sim[first] << " vs " << u[first];

    // A second call from u = 0 reuses the solver (preconditioner refreshed): the same again.
    sim->restart_solve();
    const ConvergenceTrace again = sim->jacobi_pcg(400, tol);
    EXPECT_EQ(again.residual, tr.residual);
    EXPECT_EQ(sim->get_array(PhaseArray::u, 0), u_sim);
  }
};

TEST_P(SharedCg, CoarsestCgMatchesTheLoopsItReplaced) {
  if (fp32())
    check_coarse<float>();
  else
    check_coarse<double>();
}

TEST_P(SharedCg, Level0PcgMatchesTheLoopsItReplaced) {
  if (fp32())
    check_level0<float>();
  else
    check_level0<double>();
}

std::vector<CgCase> cg_cases() {
  std::vector<CgCase> out;
  for (const char* m : {"cube", "bunny", "cantilever"})
    for (Precision p : {Precision::Fp32, Precision::Fp64}) out.push_back({m, p});
  return out;
}
INSTANTIATE_TEST_SUITE_P(Hexmg, SharedCg, ::testing::ValuesIn(cg_cases()), cg_case_name);

// ---- the jacobi-pcg variant ----------------------------------------------------------------------

class JacobiPcgVariant : public ::testing::TestWithParam<Regime> {};

// Steps solved by Jacobi-PCG to hexmg.tolerance end where V-cycles to the same tolerance end.
TEST_P(JacobiPcgVariant, SolvesEveryStepToTolerance) {
  const Regime r = GetParam();
  const bool f32 = r.precision == Precision::Fp32;
  const std::string tol = f32 ? "hexmg.tolerance=1e-5" : "hexmg.tolerance=1e-9";
  auto pcg = make(clamped_cube(8, {"solver.variant=jacobi-pcg", tol, "hexmg.max_iterations=500"}), r, 2);
  auto mg = make(clamped_cube(8, {"solver.variant=tolerance", tol, "hexmg.max_iterations=60"}), r, 2);
  for (int step = 0; step < 5; ++step) {
    pcg->advance(1);
    mg->advance(1);
    const SolverStats s = pcg->solver_stats();
    EXPECT_TRUE(s.converged) << "step " << step;
  }
  EXPECT_GT(pcg->mean_cycles(), 10.0);  // CG iterations per step
  EXPECT_LT(pcg->mean_cycles(), 500.0);
  const double d = relative_difference(*pcg, *mg);
  std::printf("jacobi-pcg %s: %.1f CG iterations per step; |u_pcg - u_mg| / |u_mg| = %.2e after 5 steps\n",
              to_string(r.precision).c_str(), pcg->mean_cycles(), d);
  EXPECT_LT(d, f32 ? 1e-3 : 1e-6);
}

// jacobi_pcg()'s trace: one (seconds, |r|) entry for the start and for each iteration; the
// iteration limit; max_seconds stops at the first entry at or past it.
TEST_P(JacobiPcgVariant, TraceLimitAndCutoff) {
  const Regime r = GetParam();
  auto sim = make(clamped_cube(8), r, 1);
  sim->begin_step();
  const ConvergenceTrace t = sim->jacobi_pcg(5, 1e-30);
  EXPECT_EQ(t.residual.size(), 6u);
  EXPECT_EQ(t.seconds.size(), 6u);
  for (size_t k = 1; k < t.seconds.size(); ++k) EXPECT_GE(t.seconds[k], t.seconds[k - 1]);
  EXPECT_LT(t.residual.back(), t.residual.front());
  const std::vector<double> five = sim->get_array(PhaseArray::u, 0);
  sim->restart_solve();
  const ConvergenceTrace cut = sim->jacobi_pcg(1000, 1e-30, 0.0);  // the start's entry is already past the cutoff
  EXPECT_EQ(cut.residual.size(), 1u);
  EXPECT_EQ(cut.residual.front(), t.residual.front());
  for (double v : sim->get_array(PhaseArray::u, 0)) ASSERT_EQ(v, 0.0);
  // Continuing from the 5-iteration increment (correction form): it starts from that residual
  // (recurrence and true residual agree to rounding) and reduces it by the tolerance.
  sim->set_array(PhaseArray::u, 0, five);
  const ConvergenceTrace more = sim->jacobi_pcg(400, 1e-4);
  EXPECT_NEAR(more.residual.front(), t.residual.back(), 1e-3 * t.residual.back());
  EXPECT_LE(more.residual.back(), 1e-4 * more.residual.front());
  EXPECT_LE(sim->system_residual(), 1e-3 * t.residual.back());
}

INSTANTIATE_TEST_SUITE_P(Hexmg, JacobiPcgVariant,
                         ::testing::Values(Regime{Backend::Cpu, Precision::Fp32}, Regime{Backend::Cpu, Precision::Fp64}),
                         regime_name);

// ---- CgOptions::on_iteration ----------------------------------------------------------------------

// A 1D Laplacian with a varying diagonal (SPD), n = 40.
linalg::HostFunctionOperator<double> laplacian() {
  const int n = 40;
  std::vector<double> diag(n);
  for (int i = 0; i < n; ++i) diag[i] = 2.0 + 0.1 * i;
  auto apply = [n, diag](const double* x, double* y) {
    for (int i = 0; i < n; ++i) y[i] = diag[i] * x[i] - (i > 0 ? x[i - 1] : 0.0) - (i + 1 < n ? x[i + 1] : 0.0);
  };
  return linalg::HostFunctionOperator<double>(n, apply, diag, "test laplacian");
}

TEST(SharedCgCallback, SeesEveryResidualAndCanStop) {
  const auto A = laplacian();
  const std::vector<double> b(40, 1.0);
  linalg::CgOptions o;
  o.tolerance = 1e-12;
  std::vector<std::pair<int, double>> seen;
  o.on_iteration = [&](int k, double r) {
    seen.push_back({k, r});
    return true;
  };
  std::vector<double> x(40, 0.0);
  const linalg::CgResult full = linalg::cg_solve_from_host(A, b, x, o);
  ASSERT_EQ(full.status, linalg::CgStatus::Converged);
  ASSERT_EQ(seen.size(), full.residuals.size());
  for (size_t k = 0; k < seen.size(); ++k) {
    EXPECT_EQ(seen[k].first, int(k));
    EXPECT_EQ(seen[k].second, full.residuals[k]);
  }
  // Stopping after iteration 3 leaves iterate 3, which a 3-iteration solve also gives.
  o.on_iteration = [](int k, double) { return k < 3; };
  std::vector<double> xs(40, 0.0);
  const linalg::CgResult stopped = linalg::cg_solve_from_host(A, b, xs, o);
  EXPECT_EQ(stopped.status, linalg::CgStatus::Stopped);
  EXPECT_EQ(stopped.iterations, 3);
  EXPECT_EQ(stopped.residuals.size(), 4u);
  o.on_iteration = nullptr;
  o.max_iterations = 3;
  std::vector<double> x3(40, 0.0);
  EXPECT_EQ(linalg::cg_solve_from_host(A, b, x3, o).status, linalg::CgStatus::IterationLimit);
  EXPECT_EQ(xs, x3);
  // Stopping at the start: no iteration, x untouched.
  o.max_iterations = 1000;
  o.on_iteration = [](int, double) { return false; };
  std::vector<double> x0(40, 0.0);
  const linalg::CgResult none = linalg::cg_solve_from_host(A, b, x0, o);
  EXPECT_EQ(none.status, linalg::CgStatus::Stopped);
  EXPECT_EQ(none.iterations, 0);
  EXPECT_EQ(x0, std::vector<double>(40, 0.0));
  EXPECT_EQ(linalg::to_string(linalg::CgStatus::Stopped), "stopped by the caller (on_iteration)");
}

// An operator that says it lives on the device (never applied): the solver must refuse the
// host-only callback before making any engine, so no GPU is needed to check it.
class FakeDeviceOperator final : public linalg::LinearOperator<double> {
 public:
  linalg::Index rows() const override { return 4; }
  linalg::Location location() const override { return linalg::Location::Device; }
  void apply(const double*, double*, linalg::StreamHandle) const override {}
  void diagonal(double*, linalg::StreamHandle) const override {}
  std::string name() const override { return "fake device operator"; }
};

TEST(SharedCgCallback, DeviceOperatorRefusesIt) {
  FakeDeviceOperator A;
  linalg::CgOptions o;
  o.on_iteration = [](int, double) { return true; };
  try {
    linalg::CgSolver<double> s(A, o);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("on_iteration is host-only"), std::string::npos) << e.what();
  }
}

// ---- per-variant keys of [hexmg] --------------------------------------------------------------------

std::string resolve_error(const std::vector<std::string>& overrides) {
  try {
    methods().resolve(load_scenario("cantilever", overrides), "hexmg", Backend::Cpu, Precision::Fp64);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

TEST(HexmgVariantKeys, JacobiPcgRefusesMultigridKeys) {
  // What `elastobench run -m hexmg --set solver.variant=jacobi-pcg --set hexmg.cycles=3` resolves.
  const std::string e = resolve_error({"solver.variant=jacobi-pcg", "hexmg.cycles=3"});
  EXPECT_NE(e.find("'hexmg.cycles' does not apply to variant 'jacobi-pcg'"), std::string::npos) << e;
  for (const char* k : {"hexmg.pre_smooth=1", "hexmg.post_smooth=2", "hexmg.profile=true", "hexmg.gs_thread_per_vertex=true",
                        "hexmg.programmatic_dependent_launch=false", "hexmg.lattice_order=false", "hexmg.coarse_shared_slots=4"})
    EXPECT_NE(resolve_error({"solver.variant=jacobi-pcg", k}).find("does not apply to variant 'jacobi-pcg'"), std::string::npos) << k;
  EXPECT_NE(resolve_error({"hexmg.tolerance=1e-4"}).find("'hexmg.tolerance' does not apply to variant 'vcycle'"), std::string::npos);
  EXPECT_NE(resolve_error({"solver.variant=tolerance", "hexmg.cycles=3"}).find("'hexmg.cycles'"), std::string::npos);
  // Keys that apply are taken.
  EXPECT_EQ(resolve_error({"solver.variant=jacobi-pcg", "hexmg.tolerance=1e-4", "hexmg.max_iterations=50", "hexmg.corotated=false"}),
            "(no InputError)");
  EXPECT_EQ(resolve_error({"hexmg.cycles=3", "hexmg.pre_smooth=1", "hexmg.profile=true"}), "(no InputError)");
  EXPECT_EQ(resolve_error({"hexmg.programmatic_dependent_launch=false", "hexmg.lattice_order=false",
                           "hexmg.coarse_shared_slots=0"}),
            "(no InputError)");
  EXPECT_EQ(resolve_error({"solver.variant=tolerance", "hexmg.tolerance=1e-4", "hexmg.post_smooth=2"}), "(no InputError)");
}

// The CUDA launch keys are validated like every other key (the CPU backend resolves them too).
TEST(HexmgVariantKeys, LaunchKeysAreValidated) {
  EXPECT_NE(resolve_error({"hexmg.coarse_shared_slots=-2"}).find("'hexmg.coarse_shared_slots' must be >= 0"), std::string::npos)
      << resolve_error({"hexmg.coarse_shared_slots=-2"});
  EXPECT_EQ(resolve_error({"hexmg.coarse_shared_slots=-1"}), "(no InputError)");
  EXPECT_NE(resolve_error({"hexmg.lattice_order=3"}).find("hexmg.lattice_order"), std::string::npos)
      << resolve_error({"hexmg.lattice_order=3"});
  EXPECT_NE(resolve_error({"hexmg.programmatic_dependent_launch=\"yes\""}).find("hexmg.programmatic_dependent_launch"),
            std::string::npos);
}

// hexmg.galerkin_every: the smoothed variants take it, >= 1; the others refuse it.
TEST(HexmgVariantKeys, GalerkinEveryIsValidated) {
  for (const char* v : {"smoothed-vcycle", "smoothed-tolerance", "smoothed-pcg"}) {
    const std::string variant = std::string("solver.variant=") + v;
    EXPECT_EQ(resolve_error({variant, "hexmg.galerkin_every=4"}), "(no InputError)") << v;
    for (const char* bad : {"hexmg.galerkin_every=0", "hexmg.galerkin_every=-3"}) {
      const std::string e = resolve_error({variant, bad});
      EXPECT_NE(e.find("'hexmg.galerkin_every' must be >= 1"), std::string::npos) << v << " " << bad << ": " << e;
    }
    const std::string e = resolve_error({variant, "hexmg.galerkin_every=2.5"});
    EXPECT_NE(e.find("hexmg.galerkin_every"), std::string::npos) << e;
  }
  for (const char* v : {"vcycle", "tolerance", "jacobi-pcg"}) {
    const std::string e = resolve_error({std::string("solver.variant=") + v, "hexmg.galerkin_every=4"});
    EXPECT_NE(e.find("'hexmg.galerkin_every' does not apply to variant '" + std::string(v) + "'"), std::string::npos) << e;
  }
}

// Every declared key is a key of the section, and every key of the section applies to some variant.
TEST(HexmgVariantKeys, DeclaredKeysAreTheSectionsKeys) {
  const nlohmann::json section =
      methods().resolve(load_scenario("cantilever", {}), "hexmg", Backend::Cpu, Precision::Fp64).options;
  std::set<std::string> declared;
  for (const auto& v : hexmg_variants()) {
    EXPECT_FALSE(v.keys.empty()) << v.name;
    for (const auto& k : v.keys) {
      EXPECT_TRUE(section.contains(k)) << v.name << ": " << k;
      declared.insert(k);
    }
  }
  for (auto it = section.begin(); it != section.end(); ++it) EXPECT_TRUE(declared.count(it.key())) << it.key();
}

}  // namespace
}  // namespace eb::hexmg::test
