// Every kernel phase of hexmg, one at a time, against the CPU fp64 backend as the oracle (the
// design of Ginkgo's reference-backend tests): both simulations get the same inputs through the
// phase interface (HexmgSimulation::set_array, backend-neutral slot order), run exactly one phase
// (run_phase) and their outputs are compared. Compiled into test_hexmg (subject: the CPU backend
// in fp32 and fp64) and test_hexmg_gpu (subject: CUDA fp32 and fp64, label gpu).
//
// Inputs. A planted state (kernel_state below): a rigid rotation of the whole model times a
// compression along z whose volume ratio det F steps down element by element past two lattice
// planes, so that the co-rotated models hold normal elements, elements just above the kept-
// rotation threshold (det F = 0.0625 > 0.05), just below it (0.0375, 0.0125) and inverted ones
// (< 0), each at least 0.0075 away from the threshold; random velocities, accelerations and
// previous rotations; random b, u, r per level. The matrices of every level come from the
// oracle's own rotations, assembly and Galerkin products (symmetric positive definite). Every
// input is rounded to fp32 first, so the fp32 subject starts from exactly the oracle's values.
//
// Outputs are filled with NaN before each phase (both simulations), so an output that a kernel
// does not write is caught; arrays that the phase must not write are compared bit for bit before
// and after it on the subject. Only real vertices are compared: padding slots carry no equation
// and no kernel reads them.
//
// Tolerances (normwise relative, 2-norm and max-norm, over the real entries of each output):
//  - fp64: 1e-12. Same formulas; what differs is FMA contraction, the order of a few sums (the
//    13-way split of Gauss-Seidel's row sum, reduction trees) and nvcc's math: each output is a
//    sum of at most a few hundred terms of similar size, ~1e-14 of rounding, 100x margin.
//  - fp32: 1e-5. Each output is ~eps32 = 6e-8 times the few terms that cancel in it (the model's
//    constants h, dt, E, masses and K are rounded to fp32 too; F comes from differences of
//    rotated positions and the polar iteration amplifies its rounding by up to 1/sigma_min(F) on
//    the near-inverted elements; in a Gauss-Seidel sweep 8 colours feed each other). The CPU
//    fp32 instance measures 2e-8 .. 1e-6 for every phase (max-norm), so 10x or more margin.
//  - coarsest CG: stops on its own tolerance (1e-10 fp64, 1e-6 fp32), so iterates of two
//    summation orders differ by what that tolerance leaves, not by rounding. Checked: the true
//    residual |b - A u| / |b| of the subject's solution (computed here in fp64) below 1e-9
//    (fp64) or 1e-5 + 50 eps32 |A||u|/|b| (fp32: rounding u alone to fp32 leaves eps32 |A||u|;
//    the iteration adds to it), the forward error against the oracle within kappa(A) times both
//    residuals, and, in fp64, the same number of iterations within 5% + 1. The oracle's (and the
//    CPU subject's) coarsest CG is the shared Jacobi-PCG of solvers/linalg/cg.h (issue 10:
//    hexmg_cpu.cpp runs it on the level through a LinearOperator), so in test_hexmg_gpu this
//    compares the CUDA backend's single-block coarsest-CG kernel (k_coarse_cg in
//    hexmg_cuda_kernels.cuh: the steps of solvers/linalg/cg_algorithm.h in one thread block)
//    with linalg::CgSolver on the same matrix and right-hand side: same iteration, same
//    stopping rule, the sums in another order (test_shared_cg.cpp checks the shared path
//    against the loops it replaced, bit for bit).
// The 13-warp CUDA Gauss-Seidel computes each vertex of a colour from the previous colours only,
// exactly as the CPU colour-ordered sweep, so the two agree up to rounding.
#include <Eigen/Dense>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

#include "assembly/hexmg/hex_element.h"
#include "experiments/dick2011/bunny_scenario.h"
#include "tests/hexmg/hexmg_test_util.h"

namespace eb::hexmg::test {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct KernelCase {
  std::string model;  // cube, bunny, cantilever, element
  Regime subject;
  // CUDA kernel variant of the subject (KernelVariants): gs1, coarse-overflow; "default" otherwise.
  std::string variant = "default";
};

std::string label(const KernelCase& c) {
  std::string v = c.variant == "default" ? "" : "_" + c.variant;
  for (char& ch : v) ch = ch == '-' ? '_' : ch;
  return c.model + v + "_" + to_string(c.subject.backend) + "_" + to_string(c.subject.precision);
}
std::string case_name(const ::testing::TestParamInfo<KernelCase>& i) { return label(i.param); }
void PrintTo(const KernelCase& c, std::ostream* os) { *os << label(c); }

// 15^3 cube (3 levels, coarse cells partly covered), bottom clamped, top pushed down along a
// linear curve and a point force along a smooth one (load factors enter the assembly), softer
// and heavier on one half (per-element E and mass).
Scenario kernel_cube() {
  return from_toml(R"(name = "hexmg-kernel-cube"
[mesh]
source = "box"
origin = [0.0, 0.0, 0.0]
size = [0.1, 0.1, 0.1]
elements_per_edge = 15
[material]
youngs_modulus = 1.0e6
poisson_ratio = 0.3
density = 1.0e5
[[material.overrides]]
min = [0.0, 0.0, 0.0]
max = [0.05, 0.1, 0.1]
youngs_modulus = 3.0e6
density = 2.0e5
[boundary]
gravity = [0.0, 0.0, -9.81]
[[boundary.fixed]]
components = "xyz"
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] }
[[boundary.prescribed]]
components = "z"
displacement = [0.0, 0.0, -0.02]
where = { kind = "plane", point = [0.0, 0.0, 0.1], normal = [0.0, 0.0, 1.0] }
curve = { shape = "linear", start = 0.0, duration = 1.0 }
[[boundary.point_forces]]
position = [0.1, 0.1, 0.05]
force = [1.0, -2.0, 0.5]
curve = { shape = "smooth", start = 0.0, duration = 0.2 }
[time]
dt = 0.05
damping = 1.0
steps = 10
)");
}

Scenario scenario_of(const std::string& model, const std::string& variant) {
  if (variant == "gs1") {  // one thread per vertex (the CPU backend ignores the option)
    Scenario s = scenario_of(model, "default");
    s.method_options["hexmg"]["gs_thread_per_vertex"] = true;
    return s;
  }
  if (variant == "coarse-overflow") {  // at most 4 warp-slots per warp in shared memory (CUDA)
    Scenario s = scenario_of(model, "default");
    s.method_options["hexmg"]["coarse_shared_slots"] = 4;
    return s;
  }
  if (model == "cube") return kernel_cube();
  if (model == "bunny") {
    dick2011::register_bunny_scenario();
    return load_scenario(dick2011::kBunnyScenario, {"mesh.target_elements=2000"});
  }
  if (model == "cantilever") return load_scenario("cantilever", {"mesh.element_size=0.05"});  // one level
  return clamped_cube(1);  // a single element, 4 of its 8 vertices clamped
}

std::vector<KernelCase> kernel_cases() {
  std::vector<KernelCase> out;
  for (const char* m : {"cube", "bunny", "cantilever", "element"})
    for (const Regime& r : regimes()) out.push_back({m, r});
  return out;
}

double f32(double x) { return double(float(x)); }
std::vector<double> f32(std::vector<double> v) {
  for (double& x : v) x = f32(x);
  return v;
}

// How far two outputs are apart over the entries `use` selects.
struct Diff {
  double rel2 = 0, relmax = 0;      // |got - ref| / |ref| in the 2-norm and the max-norm
  size_t nan_mismatch = 0;          // entries NaN (unwritten) on one side only
  size_t ref_nonfinite = 0;         // entries the oracle left NaN or infinite
  size_t worst = 0, compared = 0;   // index of the largest difference; entries compared
  double worst_ref = 0, worst_got = 0;
};

Diff diff(const std::vector<double>& ref, const std::vector<double>& got, const std::vector<char>& use) {
  Diff d;
  double n2 = 0, r2 = 0, nmax = 0, rmax = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!use[i]) continue;
    ++d.compared;
    if (!std::isfinite(ref[i])) ++d.ref_nonfinite;
    if (std::isnan(ref[i]) != std::isnan(got[i])) ++d.nan_mismatch;
    if (!std::isfinite(ref[i]) || !std::isfinite(got[i])) continue;
    const double e = std::abs(got[i] - ref[i]);
    n2 += e * e;
    r2 += ref[i] * ref[i];
    rmax = std::max(rmax, std::abs(ref[i]));
    if (e >= nmax) {
      nmax = e;
      d.worst = i;
      d.worst_ref = ref[i];
      d.worst_got = got[i];
    }
  }
  d.rel2 = r2 > 0 ? std::sqrt(n2 / r2) : std::sqrt(n2);
  d.relmax = rmax > 0 ? nmax / rmax : nmax;
  return d;
}

bool bitwise_equal(const std::vector<double>& a, const std::vector<double>& b, size_t* first) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0) {
      *first = i;
      return false;
    }
  return true;
}

struct Array {
  PhaseArray a;
  int level;
};
std::string name_of(const Array& x) { return to_string(x.a) + "[level " + std::to_string(x.level) + "]"; }

class KernelPhases : public ::testing::TestWithParam<KernelCase> {
 protected:
  void SetUp() override {
    const KernelCase& c = GetParam();
    EB_HEXMG_SKIP_WITHOUT_DEVICE(c.subject);
    const Scenario sc = scenario_of(c.model, c.variant);
    oracle_ = make(sc, {Backend::Cpu, Precision::Fp64}, 2);
    subject_ = make(sc, c.subject, 2);
    m_ = &oracle_->model();
    ASSERT_EQ(m_->n_levels(), subject_->model().n_levels());
    plant_state();
    build_matrices();
  }

  bool fp32() const { return GetParam().subject.precision == Precision::Fp32; }
  // The tolerance of a phase: fp64 1e-12, fp32 as stated at the top of this file.
  double tol(double fp32_tol) const { return fp32() ? fp32_tol : 1e-12; }
  int levels() const { return m_->n_levels(); }
  int last() const { return m_->n_levels() - 1; }

  // Entries of an array that belong to real items (vertices of its level, or elements).
  std::vector<char> real_entries(const Array& x) const {
    if (x.a == PhaseArray::R) return std::vector<char>(size_t(m_->n_elems()) * 9, 1);
    const bool fine = x.a == PhaseArray::u0 || x.a == PhaseArray::v0 || x.a == PhaseArray::a0;
    const Level& L = m_->levels[fine ? 0 : x.level];
    const size_t comps = x.a == PhaseArray::A ? size_t(kCoeffs) : 3;
    std::vector<char> use(size_t(L.n_padded) * comps, 0);
    for (int32_t s = 0; s < L.n_padded; ++s)
      if (L.nbr[s][kCentre] >= 0)
        for (size_t k = 0; k < comps; ++k) use[s * comps + k] = 1;
    return use;
  }

  void set_both(const Array& x, const std::vector<double>& v) {
    oracle_->set_array(x.a, x.level, v);
    subject_->set_array(x.a, x.level, v);
  }

  // Random values on the fp32 grid for the real entries of a level vector (padding 0).
  std::vector<double> random_vector(const Array& x, double scale) {
    const std::vector<char> use = real_entries(x);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    std::vector<double> v(use.size(), 0.0);
    for (size_t i = 0; i < v.size(); ++i)
      if (use[i]) v[i] = f32(scale * U(rng_));
    return v;
  }

  // Sets `inputs` on both, NaN into `outputs` on both, runs the phase on both and compares the
  // outputs; everything else the subject holds must come out bit for bit as it went in.
  void run_and_compare(const Phase& p, const std::vector<std::pair<Array, std::vector<double>>>& inputs,
                       const std::vector<Array>& outputs, const std::vector<Array>& poisoned, double tolerance) {
    SCOPED_TRACE("phase " + to_string(p));
    for (const auto& [x, v] : inputs) set_both(x, v);
    for (const Array& x : poisoned) set_both(x, std::vector<double>(subject_->array_size(x.a, x.level), kNaN));
    std::vector<Array> all;
    for (int l = 0; l < levels(); ++l)
      for (PhaseArray a : {PhaseArray::A, PhaseArray::b, PhaseArray::u, PhaseArray::r}) all.push_back({a, l});
    for (PhaseArray a : {PhaseArray::u0, PhaseArray::v0, PhaseArray::a0, PhaseArray::R}) all.push_back({a, 0});
    std::vector<std::vector<double>> before;
    for (const Array& x : all) before.push_back(subject_->get_array(x.a, x.level));
    oracle_->run_phase(p);
    subject_->run_phase(p);
    for (const Array& x : outputs) {
      SCOPED_TRACE("output " + name_of(x));
      const Diff d = diff(oracle_->get_array(x.a, x.level), subject_->get_array(x.a, x.level), real_entries(x));
      const size_t comps = x.a == PhaseArray::A ? size_t(kCoeffs) : (x.a == PhaseArray::R ? 9 : 3);
      std::printf("%-34s %-16s rel2 %.2e  relmax %.2e  (tolerance %.0e, %zu entries)\n", to_string(p).c_str(),
                  name_of(x).c_str(), d.rel2, d.relmax, tolerance, d.compared);
      EXPECT_GT(d.compared, 0u);
      EXPECT_EQ(d.ref_nonfinite, 0u) << "the oracle left real entries unwritten (or non-finite)";
      EXPECT_EQ(d.nan_mismatch, 0u) << "entries written by one backend only (NaN poison left on the other)";
      EXPECT_LE(d.rel2, tolerance) << "worst entry " << d.worst << " (item " << d.worst / comps << ", component "
                                   << d.worst % comps << "): oracle " << d.worst_ref << ", subject " << d.worst_got;
      EXPECT_LE(d.relmax, tolerance) << "worst entry " << d.worst << " (item " << d.worst / comps << ", component "
                                     << d.worst % comps << "): oracle " << d.worst_ref << ", subject " << d.worst_got;
    }
    for (size_t i = 0; i < all.size(); ++i) {
      bool out = false;
      for (const Array& x : outputs) out = out || (x.a == all[i].a && x.level == all[i].level);
      if (out) continue;
      size_t first = 0;
      EXPECT_TRUE(bitwise_equal(before[i], subject_->get_array(all[i].a, all[i].level), &first))
          << "the phase wrote " << name_of(all[i]) << ", which is not its output (first changed entry " << first << ")";
    }
  }

  // det F of every element of the planted state (fp64, as the oracle computes it).
  std::vector<double> planted_dets() const {
    std::vector<double> det(size_t(m_->n_elems()));
    for (int64_t e = 0; e < m_->n_elems(); ++e) {
      double u[8][3], F[9];
      for (int c = 0; c < 8; ++c)
        for (int d = 0; d < 3; ++d) u[c][d] = u0_[3 * size_t(m_->ev[e][c]) + d];
      average_deformation_gradient(u, m_->h, F);
      det[e] = det3(F);
    }
    return det;
  }

  // See the top of this file. s(x, y) = 1 - 0.125 max(0, x - xk) / h - 0.05 max(0, y - yk) / h
  // with xk, yk lattice planes: each element lies on one side of both, so its det F is s at its
  // centre, 0.9125 - 0.125 m - 0.05 n (or the one-sided forms), i.e. an odd multiple of 0.0125
  // and never within 0.0075 of 0.05.
  void plant_state() {
    const Level& L0 = m_->levels[0];
    std::array<int, 3> lo{1 << 30, 1 << 30, 1 << 30}, hi{-(1 << 30), -(1 << 30), -(1 << 30)};
    for (int32_t s = 0; s < L0.n_padded; ++s)
      if (L0.coord[s][0] >= 0)
        for (int d = 0; d < 3; ++d) {
          lo[d] = std::min(lo[d], L0.coord[s][d]);
          hi[d] = std::max(hi[d], L0.coord[s][d]);
        }
    const int xk = lo[0] + (hi[0] - lo[0]) * 35 / 100, yk = lo[1] + (hi[1] - lo[1]) / 2;
    // A rigid rotation of 0.6 rad about a random axis.
    std::normal_distribution<double> N(0.0, 1.0);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    double ax[3] = {N(rng_), N(rng_), N(rng_)};
    const double an = std::sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
    for (double& a : ax) a /= an;
    double Q[9];
    rotation(ax, 0.6, Q);
    const double h = m_->h;
    const size_t n0 = size_t(L0.n_padded);
    u0_.assign(3 * n0, 0.0);
    std::vector<double> v0(3 * n0, 0.0), a0(3 * n0, 0.0);
    for (size_t s = 0; s < n0; ++s) {
      if (L0.coord[s][0] < 0) continue;
      const double p[3] = {h * L0.coord[s][0], h * L0.coord[s][1], h * L0.coord[s][2]};
      const double sx = 1.0 - 0.125 * std::max(0, L0.coord[s][0] - xk) - 0.05 * std::max(0, L0.coord[s][1] - yk);
      const double q[3] = {p[0], p[1], p[2] + (sx - 1.0) * h * (L0.coord[s][2] - lo[2])};
      for (int i = 0; i < 3; ++i) {
        u0_[3 * s + i] = f32(Q[3 * i] * q[0] + Q[3 * i + 1] * q[1] + Q[3 * i + 2] * q[2] - p[i] + 1e-4 * h * U(rng_));
        v0[3 * s + i] = f32(0.1 * h / m_->dt * U(rng_));
        a0[3 * s + i] = f32(0.1 * h / (m_->dt * m_->dt) * U(rng_));
      }
    }
    det_ = planted_dets();
    R_prev_.assign(size_t(m_->n_elems()) * 9, 0.0);
    for (int64_t e = 0; e < m_->n_elems(); ++e) {
      double axe[3] = {N(rng_), N(rng_), N(rng_)};
      const double n = std::sqrt(axe[0] * axe[0] + axe[1] * axe[1] + axe[2] * axe[2]);
      for (double& a : axe) a /= n;
      rotation(axe, 3.0 * U(rng_), &R_prev_[9 * e]);
    }
    R_prev_ = f32(R_prev_);
    set_both({PhaseArray::u0, 0}, u0_);
    set_both({PhaseArray::v0, 0}, v0);
    set_both({PhaseArray::a0, 0}, a0);
    v0_ = v0;
    a0_ = a0;
  }

  // Rodrigues: rotation by angle t about the unit axis a (row-major).
  static void rotation(const double* a, double t, double* R) {
    const double c = std::cos(t), s = std::sin(t), C = 1 - c;
    R[0] = c + a[0] * a[0] * C, R[1] = a[0] * a[1] * C - a[2] * s, R[2] = a[0] * a[2] * C + a[1] * s;
    R[3] = a[1] * a[0] * C + a[2] * s, R[4] = c + a[1] * a[1] * C, R[5] = a[1] * a[2] * C - a[0] * s;
    R[6] = a[2] * a[0] * C - a[1] * s, R[7] = a[2] * a[1] * C + a[0] * s, R[8] = c + a[2] * a[2] * C;
  }

  // Previous rotations for the Rotations phase: NaN where det F > 0.05, since those elements must
  // compute their rotation and not keep this one.
  std::vector<double> previous_rotations() const {
    std::vector<double> R = R_prev_;
    for (int64_t e = 0; e < m_->n_elems(); ++e)
      if (det_[e] > kInvertedVolumeRatio)
        for (int i = 0; i < 9; ++i) R[9 * e + i] = kNaN;
    return R;
  }

  // The matrices of every level from the oracle's own phases (so symmetric positive definite).
  void build_matrices() {
    oracle_->set_array(PhaseArray::R, 0, previous_rotations());
    oracle_->run_phase({PhaseKind::Rotations});
    R_ = f32(oracle_->get_array(PhaseArray::R));
    oracle_->set_array(PhaseArray::R, 0, R_);
    oracle_->run_phase({PhaseKind::FineAssembly});
    A_.assign(size_t(levels()), {});
    A_[0] = f32(oracle_->get_array(PhaseArray::A, 0));
    for (int l = 1; l < levels(); ++l) {
      oracle_->set_array(PhaseArray::A, l - 1, A_[l - 1]);
      oracle_->run_phase({PhaseKind::Galerkin, l});
      A_[l] = f32(oracle_->get_array(PhaseArray::A, l));
    }
  }

  // (A v) on the real vertices of level l, in fp64 (padding rows 0).
  std::vector<double> apply(int l, const std::vector<double>& v) const {
    const Level& L = m_->levels[l];
    std::vector<double> out(v.size(), 0.0);
    for (int32_t x = 0; x < L.n_padded; ++x) {
      if (L.nbr[x][kCentre] < 0) continue;
      for (int k = 0; k < kStencil; ++k) {
        const int32_t y = L.nbr[x][k];
        if (y < 0) continue;
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) out[3 * x + i] += A_[l][size_t(x) * kCoeffs + 9 * k + 3 * i + j] * v[3 * y + j];
      }
    }
    return out;
  }

  // A right-hand side b = A w + noise for a random w of the size of the random u: every row on
  // its own scale (identity rows of constrained and dead components are ~1e4 times smaller than
  // stiffness rows; a noise of one global scale would make them dominate every norm).
  std::vector<double> random_rhs(int l) {
    const std::vector<double> w = random_vector({PhaseArray::u, l}, 1e-3);
    std::vector<double> b = apply(l, w);
    const std::vector<double> noise = random_vector({PhaseArray::b, l}, 1e-4);
    for (size_t i = 0; i < b.size(); ++i) {
      const double diag = A_[l][(i / 3) * kCoeffs + 9 * kCentre + 4 * (i % 3)];
      b[i] = f32(b[i] + std::abs(diag) * noise[i]);
    }
    return b;
  }

  // Inputs of the phases that work on one level's system: its matrix, a right-hand side and a
  // current solution.
  std::vector<std::pair<Array, std::vector<double>>> system_inputs(int l) {
    return {{{PhaseArray::A, l}, A_[l]}, {{PhaseArray::b, l}, random_rhs(l)},
            {{PhaseArray::u, l}, random_vector({PhaseArray::u, l}, 1e-3)}};
  }

  // One colour at a time and whole sweeps on every level (the solver smooths all but the
  // coarsest; the kernel serves any level).
  void check_gs_colours() {
    for (int l = 0; l < levels(); ++l)
      for (int c = 0; c < 8; ++c) {
        const auto& cb = m_->levels[l].colour_begin;
        if (cb[c + 1] == cb[c]) continue;
        run_and_compare({PhaseKind::SmoothColour, l, c}, system_inputs(l), {{PhaseArray::u, l}}, {}, tol(1e-5));
      }
  }

  void check_gs_sweeps() {
    for (int l = 0; l < levels(); ++l)
      run_and_compare({PhaseKind::SmoothSweep, l}, system_inputs(l), {{PhaseArray::u, l}}, {}, tol(1e-5));
  }

  // See the top of this file for why the coarsest CG is checked by residual and forward error.
  // The oracle's CoarseSolve is the shared linalg CG (hexmg_cpu.cpp, coarse_cg): on the CUDA
  // subject this compares the single-block coarse-CG kernel with the shared solver.
  void check_coarse_cg() {
    const int l = last();
    const Level& L = m_->levels[l];
    const std::vector<double> b = random_rhs(l);
    const std::vector<double> zero(b.size(), 0.0);
    set_both({PhaseArray::A, l}, A_[l]);
    set_both({PhaseArray::b, l}, b);
    set_both({PhaseArray::u, l}, zero);
    oracle_->run_phase({PhaseKind::CoarseSolve});
    subject_->run_phase({PhaseKind::CoarseSolve});
    const std::vector<double> uo = oracle_->get_array(PhaseArray::u, l), us = subject_->get_array(PhaseArray::u, l);
    // Fresh simulations: the mean is this one solve's count.
    const double it_o = oracle_->mean_coarse_iterations(), it_s = subject_->mean_coarse_iterations();
    const std::vector<char> use = real_entries({PhaseArray::u, l});
    auto rel_residual = [&](const std::vector<double>& u) {
      const std::vector<double> Au = apply(l, u);
      double r2 = 0, b2 = 0;
      for (size_t i = 0; i < b.size(); ++i)
        if (use[i]) {
          r2 += (b[i] - Au[i]) * (b[i] - Au[i]);
          b2 += b[i] * b[i];
        }
      return std::sqrt(r2 / b2);
    };
    const double ro = rel_residual(uo), rs = rel_residual(us);
    // | |A| |u| | / |b|: the residual that rounding u alone to the subject's precision can leave.
    double mu = 0;
    {
      std::vector<double> absu(us.size());
      for (size_t i = 0; i < us.size(); ++i) absu[i] = std::abs(us[i]);
      std::vector<double> absA = A_[l];
      for (double& a : absA) a = std::abs(a);
      std::swap(A_[l], absA);
      const std::vector<double> Au = apply(l, absu);
      std::swap(A_[l], absA);
      double n2 = 0, b2 = 0;
      for (size_t i = 0; i < b.size(); ++i)
        if (use[i]) {
          n2 += Au[i] * Au[i];
          b2 += b[i] * b[i];
        }
      mu = std::sqrt(n2 / b2);
    }
    // kappa(A) of the real dofs (dense: the coarsest level has < 512 vertices).
    std::vector<int32_t> dof(size_t(L.n_padded), -1);
    int nd = 0;
    for (int32_t x = 0; x < L.n_padded; ++x)
      if (L.nbr[x][kCentre] >= 0) dof[x] = nd++;
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(3 * nd, 3 * nd);
    for (int32_t x = 0; x < L.n_padded; ++x) {
      if (dof[x] < 0) continue;
      for (int k = 0; k < kStencil; ++k) {
        const int32_t y = L.nbr[x][k];
        if (y < 0) continue;
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) M(3 * dof[x] + i, 3 * dof[y] + j) = A_[l][size_t(x) * kCoeffs + 9 * k + 3 * i + j];
      }
    }
    const double asym = (M - M.transpose()).cwiseAbs().maxCoeff() / M.cwiseAbs().maxCoeff();
    const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(M, Eigen::EigenvaluesOnly).eigenvalues();
    const double kappa = ev.maxCoeff() / ev.minCoeff();
    double num = 0, den = 0;
    for (size_t i = 0; i < uo.size(); ++i)
      if (use[i]) {
        num += (us[i] - uo[i]) * (us[i] - uo[i]);
        den += uo[i] * uo[i];
      }
    const double fwd = std::sqrt(num / den);
    const double res_tol = fp32() ? 1e-5 + 50 * 6e-8 * mu : 1e-9;
    std::printf("coarsest CG, level %d (%d dofs): kappa(A) %.3e, asymmetry %.1e, |A||u|/|b| %.2e; iterations oracle %.0f "
                "subject %.0f; |b - A u| / |b| oracle %.2e subject %.2e (tolerance %.1e); |u - u_oracle| / |u_oracle| %.2e\n",
                l, 3 * nd, kappa, asym, mu, it_o, it_s, ro, rs, res_tol, fwd);
    ASSERT_GT(ev.minCoeff(), 0.0) << "test setup: the coarsest matrix is not positive definite";
    EXPECT_LT(asym, 1e-6) << "test setup: the coarsest matrix is not symmetric";
    EXPECT_LE(ro, 1e-9);
    EXPECT_LE(rs, res_tol);
    EXPECT_LE(fwd, kappa * (ro + rs) * 1.01 + 1e-15) << "forward error beyond what the residuals allow";
    // The same iteration in fp64 stops within a few iterations of the oracle: where the residual
    // stagnates near the tolerance, rounding moves the crossing (H100, bunny coarse level with
    // kappa 6e5: 94 vs 96).
    if (!fp32()) EXPECT_LE(std::abs(it_s - it_o), 0.05 * it_o + 1.0);
    EXPECT_GT(it_s, 0.0);
  }

  std::mt19937_64 rng_{20240917};
  std::unique_ptr<HexmgSimulation> oracle_, subject_;
  const Model* m_ = nullptr;
  std::vector<double> u0_, v0_, a0_, R_prev_, R_, det_;
  std::vector<std::vector<double>> A_;
};

TEST_P(KernelPhases, Rotations) {
  if (HasFatalFailure() || IsSkipped()) return;
  // The planted categories are really there (co-rotated models of several elements).
  if (m_->n_elems() > 1) {
    int64_t above = 0, kept = 0, inverted = 0, normal = 0;
    for (double d : det_) {
      above += d > 0.05 && d < 0.07;
      kept += d > 0 && d <= 0.05;
      inverted += d <= 0;
      normal += d > 0.5;
      ASSERT_GT(std::abs(d - 0.05), 0.007) << "test setup: det F this close to the threshold is decided by rounding";
    }
    std::printf("planted det F: %lld in (0.05, 0.07), %lld in (0, 0.05], %lld <= 0, %lld > 0.5 of %lld elements\n",
                (long long)above, (long long)kept, (long long)inverted, (long long)normal, (long long)m_->n_elems());
    EXPECT_GT(above, 0);
    EXPECT_GT(kept, 0);
    EXPECT_GT(inverted, 0);
    EXPECT_GT(normal, 0);
  }
  // validity() counts what the steps' rotations saw plus its own check of the latest state, so
  // the phase's share is the difference (the oracle has run the phase once more, in SetUp).
  const ValidityCounts vo0 = oracle_->validity(), vs0 = subject_->validity();
  run_and_compare({PhaseKind::Rotations},
                  {{{PhaseArray::u0, 0}, u0_}, {{PhaseArray::R, 0}, previous_rotations()}},
                  {{PhaseArray::R, 0}}, {}, tol(1e-5));
  // Kept rotations are copies, bit for bit.
  const std::vector<double> Rs = subject_->get_array(PhaseArray::R);
  int64_t expected_kept = 0, first = -1;
  for (int64_t e = 0; e < m_->n_elems(); ++e) {
    if (det_[e] > kInvertedVolumeRatio) continue;
    if (first < 0) first = e;
    ++expected_kept;
    for (int i = 0; i < 9; ++i) ASSERT_EQ(Rs[9 * e + i], R_prev_[9 * e + i]) << "element " << e << " (det F " << det_[e] << ")";
  }
  const ValidityCounts vo = oracle_->validity(), vs = subject_->validity();
  EXPECT_TRUE(vs.det_f_checked);
  EXPECT_EQ(vo.inverted_element_steps - vo0.inverted_element_steps, expected_kept);
  EXPECT_EQ(vs.inverted_element_steps - vs0.inverted_element_steps, expected_kept);
  EXPECT_EQ(vs0.inverted_element_steps, expected_kept) << "validity() before the phase: its check of the state";
  EXPECT_EQ(vs.first_inverted_element, first);
  EXPECT_EQ(vs.first_inverted_step, expected_kept ? 0 : -1);  // the state the phase saw is that of step 0
  double min_det = std::numeric_limits<double>::infinity();
  for (double d : det_) min_det = std::min(min_det, d);
  EXPECT_NEAR(vo.min_det_f, min_det, 1e-12);
  EXPECT_NEAR(vs.min_det_f, min_det, fp32() ? 1e-5 : 1e-12);
}

TEST_P(KernelPhases, FineAssembly) {
  if (HasFatalFailure() || IsSkipped()) return;
  run_and_compare({PhaseKind::FineAssembly},
                  {{{PhaseArray::u0, 0}, u0_}, {{PhaseArray::v0, 0}, v0_}, {{PhaseArray::a0, 0}, a0_}, {{PhaseArray::R, 0}, R_}},
                  {{PhaseArray::A, 0}, {PhaseArray::b, 0}, {PhaseArray::u, 0}},
                  {{PhaseArray::A, 0}, {PhaseArray::b, 0}, {PhaseArray::u, 0}}, tol(1e-5));
}

TEST_P(KernelPhases, Galerkin) {
  if (HasFatalFailure() || IsSkipped()) return;
  if (levels() == 1) GTEST_SKIP() << "one level: no coarse-grid operator";
  for (int l = 1; l < levels(); ++l)
    run_and_compare({PhaseKind::Galerkin, l}, {{{PhaseArray::A, l - 1}, A_[l - 1]}}, {{PhaseArray::A, l}},
                    {{PhaseArray::A, l}}, tol(1e-5));
}

TEST_P(KernelPhases, GaussSeidelColour) {
  if (HasFatalFailure() || IsSkipped()) return;
  check_gs_colours();
}

TEST_P(KernelPhases, GaussSeidelSweep) {
  if (HasFatalFailure() || IsSkipped()) return;
  check_gs_sweeps();
}

TEST_P(KernelPhases, Residual) {
  if (HasFatalFailure() || IsSkipped()) return;
  for (int l = 0; l < levels(); ++l)
    run_and_compare({PhaseKind::Residual, l}, system_inputs(l), {{PhaseArray::r, l}}, {{PhaseArray::r, l}}, tol(1e-5));
}

TEST_P(KernelPhases, Restriction) {
  if (HasFatalFailure() || IsSkipped()) return;
  if (levels() == 1) GTEST_SKIP() << "one level: no restriction";
  for (int l = 0; l + 1 < levels(); ++l)
    run_and_compare({PhaseKind::Restrict, l}, {{{PhaseArray::r, l}, random_vector({PhaseArray::r, l}, 1.0)}},
                    {{PhaseArray::b, l + 1}, {PhaseArray::u, l + 1}}, {{PhaseArray::b, l + 1}, {PhaseArray::u, l + 1}},
                    tol(1e-5));
}

TEST_P(KernelPhases, Interpolation) {
  if (HasFatalFailure() || IsSkipped()) return;
  if (levels() == 1) GTEST_SKIP() << "one level: no interpolation";
  for (int l = 0; l + 1 < levels(); ++l)
    run_and_compare({PhaseKind::Interpolate, l},
                    {{{PhaseArray::u, l + 1}, random_vector({PhaseArray::u, l + 1}, 1.0)},
                     {{PhaseArray::u, l}, random_vector({PhaseArray::u, l}, 1.0)}},
                    {{PhaseArray::u, l}}, {}, tol(1e-5));
}

TEST_P(KernelPhases, NewmarkUpdate) {
  if (HasFatalFailure() || IsSkipped()) return;
  run_and_compare({PhaseKind::Update},
                  {{{PhaseArray::u0, 0}, u0_}, {{PhaseArray::v0, 0}, v0_}, {{PhaseArray::a0, 0}, a0_},
                   {{PhaseArray::u, 0}, random_vector({PhaseArray::u, 0}, 1e-3 * m_->h)}},
                  {{PhaseArray::u0, 0}, {PhaseArray::v0, 0}, {PhaseArray::a0, 0}}, {}, tol(1e-5));
}

TEST_P(KernelPhases, CoarsestCg) {
  if (HasFatalFailure() || IsSkipped()) return;
  check_coarse_cg();
}

TEST_P(KernelPhases, InterfaceChecksArguments) {
  if (HasFatalFailure() || IsSkipped()) return;
  EXPECT_THROW(subject_->run_phase({PhaseKind::Galerkin, 0}), std::invalid_argument);
  EXPECT_THROW(subject_->run_phase({PhaseKind::SmoothColour, 0, 8}), std::invalid_argument);
  EXPECT_THROW(subject_->run_phase({PhaseKind::Restrict, last()}), std::invalid_argument);
  EXPECT_THROW(subject_->run_phase({PhaseKind::Residual, levels()}), std::invalid_argument);
  EXPECT_THROW(subject_->set_array(PhaseArray::b, 0, std::vector<double>(5, 0.0)), std::invalid_argument);
  // Round trip of every array on the fp32 grid: exact.
  for (int l = 0; l < levels(); ++l)
    for (PhaseArray a : {PhaseArray::A, PhaseArray::b, PhaseArray::u, PhaseArray::r}) {
      const std::vector<double> v = random_vector({a, l}, 3.0);
      subject_->set_array(a, l, v);
      size_t first = 0;
      EXPECT_TRUE(bitwise_equal(v, subject_->get_array(a, l), &first)) << to_string(a) << " level " << l << " entry " << first;
    }
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelPhases, ::testing::ValuesIn(kernel_cases()), case_name);

#if defined(EB_HEXMG_TEST_CUDA)
// The CUDA backend's other Gauss-Seidel kernel (hexmg.gs_thread_per_vertex) and the coarsest CG
// with its blocks overflowing to global memory (hexmg.coarse_shared_slots), on a three-level
// cube and the one-level cantilever.
class KernelVariants : public KernelPhases {};

std::vector<KernelCase> variant_cases() {
  std::vector<KernelCase> out;
  for (const char* v : {"gs1", "coarse-overflow"})
    for (const char* m : {"cube", "cantilever"})
      for (const Regime& r : regimes()) out.push_back({m, r, v});
  return out;
}

TEST_P(KernelVariants, ItsKernels) {
  if (HasFatalFailure() || IsSkipped()) return;
  const std::string& v = GetParam().variant;
  const nlohmann::json d = subject_->details();
  if (v == "gs1") EXPECT_EQ(d.value("gauss_seidel_design", ""), "one thread per vertex (27 blocks unrolled)") << d.dump();
  if (v == "coarse-overflow") EXPECT_GT(d.value("coarse_cg_global_warp_slots", 0), 0) << "the overflow path is not taken";
  if (v.rfind("gs", 0) == 0) {
    check_gs_colours();
    check_gs_sweeps();
  } else {
    check_coarse_cg();
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, KernelVariants, ::testing::ValuesIn(variant_cases()), case_name);
#endif

}  // namespace
}  // namespace eb::hexmg::test
