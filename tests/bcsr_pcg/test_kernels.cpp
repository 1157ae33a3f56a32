// Every phase of a bcsr-pcg step (Rotation, Matrix, Update, Solve, Integrate, and the static
// Increment), one at a time, against the CPU fp64 backend as the oracle: both simulations get
// the same inputs through the phase interface (set_array, backend-neutral layout), run exactly
// one phase (run_phase) and their outputs are compared. Compiled into test_bcsr_pcg (subject: the
// CPU backend in fp32 and fp64, 2 threads) and test_bcsr_pcg_gpu (subject: CUDA fp32 and fp64).
// The Update phase runs for both variants (gather, scatter).
//
// Models: the loaded box of bcsr_pcg_test_util.h (864 elements: 7 element blocks of 128 threads,
// a partial one) and a single element read from a .vtu file (node 0 fixed in x and y).
// States (u; v random, 0.1 m/s). Random: u = (A - I) X + noise, A = I + entries of +-0.2, noise
// of 2 % of an edge (det F ~ 0.5 .. 1.5). Planted, box: x = Q (X, Y, Z s(X)) with a random
// rotation Q and s(X) = 1 - 9.95 X: every tetrahedron of the 6-tet lattice (paths from a cube's
// corner 000 to 111) then has det F = s at one of its corners' X exactly, i.e. 1, 0.9005, ...,
// 0.1045, 0.005 (near-inverted) and -0.0945, -0.194 (inverted), no det F within 1e-3 of 0 (the
// test checks these facts before using the state). Planted, single element: F = Q diag(1.2,
// 0.9, 0.005) (near-inverted); Inverted: F = Q diag(1.1, 1.0, -0.25). The inputs of each phase are
// the oracle's outputs of the previous ones on that state, rounded to fp32 so that an fp32
// subject starts from exactly the oracle's values.
//
// Outputs are filled with NaN before the phase (so an entry a kernel does not write is caught),
// and the arrays a phase only reads are compared bit for bit before and after it on the subject.
//
// Tolerances: each output is compared against its own first-order rounding scale, computed here
// in fp64 from the inputs, times tol (1e-12 fp64: the same formulas, FMA contraction and another
// summation order on the device, measured at most 8e-16 on CUDA (H100); 1e-5 fp32: measured at
// most 2.7e-7 on these scales, CPU and CUDA alike (R 2.4e-7, local matrices 2.7e-7, element
// vectors 2.1e-8, matrix 2.3e-7, right-hand side 1.2e-7, u 7.8e-8): a margin of 37):
//  - R, per element: tol kappa_e, kappa_e = (1 + 2 U_e g_e) / min_{i<j}(s_i + s_j): F = I +
//    grad u rounds at eps (1 + 2 U_e g_e) (U_e the element's largest |u|, g_e the largest row sum
//    of |Dm^-1|), and the polar factor amplifies a perturbation of F by 1 / (s_i + s_j) (s the
//    singular values of F, s_2 carrying the sign of det F); the det F checks: the same count of
//    inverted elements and the same first element, min det F to tol 6 |F|^3 (1 + 2 U g);
//  - local matrices, per element: tol max |entry of the oracle's|; element vectors, per element:
//    tol (c_v V/4 |v| + c_f (|K_e|_rows (|Dm| + 2 U) + |b| V / 4)), the residual's w = R^T (x_b -
//    x_0) - (X_b - X_0) rounds at the edge length, not at the displacement;
//  - matrix and right-hand side, per value: tol x the sum of |summands| (and |loads|);
//  - Solve, the 18 fixed CG iterations of a step: normwise, 1e-4 fp32 and 1e-10 fp64 of |sol|
//    (two CG runs whose iterates differ by rounding, amplified by the iteration; the printed
//    reduction says how far they converged: 5e-5 on the box; measured 3.6e-7 fp32, 7e-16 fp64);
//  - Integrate: v = sol exactly, u per entry tol (|u| + dt |sol|); Increment tol (|u| + |sol|).
#include <Eigen/SVD>

#include <cstdio>

#include "tests/bcsr_pcg/bcsr_pcg_test_util.h"

namespace eb::bcsr_pcg::test {
namespace {

enum class Model { Box, Single };
enum class State { Random, Planted, Inverted };

struct KernelCase {
  Phase phase;
  Model model;
  State state;
  Regime regime;
  std::string variant;
};

std::string case_label(const KernelCase& c) {
  const char* st = c.state == State::Random ? "random" : c.state == State::Planted ? "planted" : "inverted";
  return to_string(c.phase) + "_" + (c.model == Model::Box ? "box" : "single") + "_" + st + "_" +
         regime_label(c.regime) + (c.phase == Phase::Update ? "_" + c.variant : "");
}
std::string case_name(const ::testing::TestParamInfo<KernelCase>& i) { return case_label(i.param); }

std::vector<KernelCase> cases() {
  std::vector<KernelCase> out;
  for (Phase p : {Phase::Rotation, Phase::Matrix, Phase::Update, Phase::Solve, Phase::Integrate, Phase::Increment})
    for (Model m : {Model::Box, Model::Single})
      for (State s : {State::Random, State::Planted, State::Inverted}) {
        if (m == Model::Box && s == State::Inverted) continue;  // the box's planted state has both
        for (const Regime& r : regimes())
          for (const char* v : {"gather", "scatter"})
            if (p == Phase::Update || std::string(v) == "gather") out.push_back({p, m, s, r, v});
      }
  return out;
}

double tolerance(Precision p) { return p == Precision::Fp32 ? 1e-5 : 1e-12; }
double solve_tolerance(Precision p) { return p == Precision::Fp32 ? 1e-4 : 1e-10; }

std::vector<double> nans(size_t n) { return std::vector<double>(n, std::numeric_limits<double>::quiet_NaN()); }

std::vector<double> state_u(const BcsrPcgSetup& s, Model m, State st) {
  const double edge = std::cbrt(6.0 * std::sqrt(2.0) * s.max_volume);
  if (st == State::Random) {
    Eigen::Matrix3d A = Eigen::Matrix3d::Identity();
    const std::vector<double> a = random_values(9, 0.2, 77);
    for (int k = 0; k < 9; ++k) A(k / 3, k % 3) += a[size_t(k)];
    std::vector<double> u = affine_displacement(s.nodes, A);
    const std::vector<double> noise = random_values(u.size(), 0.02 * edge, 78);
    for (size_t i = 0; i < u.size(); ++i) u[i] += noise[i];
    return on_fp32_grid(u);
  }
  const Eigen::Matrix3d Q = random_rotation(79);
  if (m == Model::Single) {
    const Eigen::Vector3d d = st == State::Planted ? Eigen::Vector3d(1.2, 0.9, 0.005) : Eigen::Vector3d(1.1, 1.0, -0.25);
    return on_fp32_grid(affine_displacement(s.nodes, Q * d.asDiagonal()));
  }
  std::vector<double> u(3 * s.nodes.size());
  for (size_t n = 0; n < s.nodes.size(); ++n) {
    const auto& X = s.nodes[n];
    const Eigen::Vector3d x = Q * Eigen::Vector3d(X[0], X[1], X[2] * (1.0 - 9.95 * X[0]));
    for (int i = 0; i < 3; ++i) u[3 * n + size_t(i)] = x[i] - X[size_t(i)];
  }
  return on_fp32_grid(u);
}

// Every array a phase reads, on the fp32 grid: the state and the oracle's outputs on it.
struct Inputs {
  std::vector<double> u, v, R, local, local_rhs, matrix, rhs, sol;
  ElementCoefficients<double> k;
  double load_time = 0.013, load_scale = 0;
};

Inputs prepare(BcsrPcgSimulation& oracle, Model m, State st) {
  const BcsrPcgSetup& s = oracle.setup();
  Inputs in;
  in.u = state_u(s, m, st);
  in.v = random_values(in.u.size(), 0.1, 80);
  in.k = oracle.dynamic_coefficients();
  in.load_scale = s.dt;
  oracle.set_coefficients(in.k);
  oracle.set_load_time(in.load_time, in.load_scale);
  oracle.set_array(PhaseArray::u, in.u);
  oracle.set_array(PhaseArray::v, in.v);
  auto step = [&](Phase p, PhaseArray a, std::vector<double>& out) {
    oracle.run_phase(p);
    out = on_fp32_grid(oracle.get_array(a));
    oracle.set_array(a, out);
  };
  step(Phase::Rotation, PhaseArray::R, in.R);
  step(Phase::Matrix, PhaseArray::local, in.local);
  in.local_rhs = on_fp32_grid(oracle.get_array(PhaseArray::local_rhs));
  oracle.set_array(PhaseArray::local_rhs, in.local_rhs);
  step(Phase::Update, PhaseArray::matrix, in.matrix);
  in.rhs = on_fp32_grid(oracle.get_array(PhaseArray::rhs));
  oracle.set_array(PhaseArray::rhs, in.rhs);
  in.sol = random_values(in.u.size(), 0.1, 81);  // the CG's initial guess
  oracle.set_array(PhaseArray::sol, in.sol);
  step(Phase::Solve, PhaseArray::sol, in.sol);
  return in;
}

// The arrays a phase reads (set before it) and those it writes (NaN before it, except the ones
// it updates in place, which are inputs too).
std::vector<PhaseArray> reads(Phase p) {
  switch (p) {
    case Phase::Rotation: return {PhaseArray::u};
    case Phase::Matrix: return {PhaseArray::R, PhaseArray::u, PhaseArray::v};
    case Phase::Update: return {PhaseArray::local, PhaseArray::local_rhs};
    case Phase::Solve: return {PhaseArray::matrix, PhaseArray::rhs};
    case Phase::Integrate: return {PhaseArray::sol};
    case Phase::Increment: return {PhaseArray::v, PhaseArray::sol};  // v first: setting v sets sol too
  }
  return {};
}
std::vector<PhaseArray> writes(Phase p) {
  switch (p) {
    case Phase::Rotation: return {PhaseArray::R};
    case Phase::Matrix: return {PhaseArray::local, PhaseArray::local_rhs};
    case Phase::Update: return {PhaseArray::matrix, PhaseArray::rhs};
    case Phase::Integrate: return {PhaseArray::v};
    default: return {};
  }
}
const std::vector<double>& input(const Inputs& in, PhaseArray a) {
  switch (a) {
    case PhaseArray::u: return in.u;
    case PhaseArray::v: return in.v;
    case PhaseArray::sol: return in.sol;
    case PhaseArray::R: return in.R;
    case PhaseArray::local: return in.local;
    case PhaseArray::local_rhs: return in.local_rhs;
    case PhaseArray::matrix: return in.matrix;
    case PhaseArray::rhs: return in.rhs;
  }
  throw std::logic_error("array");
}

void set_inputs(BcsrPcgSimulation& sim, const Inputs& in, Phase p) {
  sim.set_coefficients(in.k);
  sim.set_load_time(in.load_time, in.load_scale);
  for (PhaseArray a : writes(p)) sim.set_array(a, nans(input(in, a).size()));
  for (PhaseArray a : reads(p)) sim.set_array(a, input(in, a));
  // Updated in place: u by Integrate and Increment, sol by Solve (its initial guess; set after v,
  // which sets sol too).
  if (p == Phase::Integrate || p == Phase::Increment) sim.set_array(PhaseArray::u, in.u);
  if (p == Phase::Solve) sim.set_array(PhaseArray::sol, random_values(in.u.size(), 0.1, 81));
}

// Per element of the setup: largest |u| of its nodes, largest row sum of |Dm^-1|, largest |Dm|.
struct ElementScales {
  std::vector<double> U, g, dm, Kabs;
};
ElementScales element_scales(const BcsrPcgSetup& s, const std::vector<double>& u) {
  ElementScales out;
  const tet::Lame<double> lame{s.lambda, s.mu};
  for (int64_t e = 0; e < s.num_elements; ++e) {
    double U = 0, g = 0, dm = 0, kabs = 0;
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) U = std::max(U, std::abs(u[3 * size_t(s.connectivity[size_t(4 * e + a)]) + size_t(i)]));
    for (int i = 0; i < 3; ++i) {
      double row = 0;
      for (int j = 0; j < 3; ++j) row += std::abs(s.Dm_inv[size_t(9 * e + 3 * i + j)]);
      g = std::max(g, row);
    }
    for (int k = 0; k < 9; ++k) dm = std::max(dm, std::abs(s.Dm[size_t(9 * e + k)]));
    tet::Tet4Reference<double> ref;
    std::copy(&s.Dm_inv[size_t(9 * e)], &s.Dm_inv[size_t(9 * e)] + 9, ref.Dm_inv);
    ref.volume = s.volume[size_t(e)];
    double K[144];
    tet::tet4_linear_stiffness(ref, lame, K);
    for (int r = 0; r < 12; ++r) {
      double row = 0;
      for (int c = 0; c < 12; ++c) row += std::abs(K[12 * r + c]);
      kabs = std::max(kabs, row);
    }
    out.U.push_back(U);
    out.g.push_back(g);
    out.dm.push_back(dm);
    out.Kabs.push_back(kabs);
  }
  return out;
}

// Largest |a_i - b_i| / scale over blocks of `width` values (scale per block), reported as
// (worst ratio, plain largest difference relative to the largest |b|).
struct Measure {
  double scaled = 0, plain = 0;
};
Measure compare_blocks(const std::vector<double>& a, const std::vector<double>& b, size_t width,
                       const std::vector<double>& scale) {
  Measure m;
  if (a.size() != b.size()) return {1e300, 1e300};
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(a[i] - b[i]), s = scale[i / width];
    const double r = s > 0 ? d / s : (d != 0 ? 1e300 : 0.0);
    m.scaled = std::max(m.scaled, std::isnan(d) ? 1e300 : r);
  }
  m.plain = max_relative_difference(a, b);
  return m;
}

void expect_within(const char* what, const Measure& m, double tol) {
  std::printf("  %-22s %.2e of its scale (plain relative %.2e)\n", what, m.scaled, m.plain);
  EXPECT_LE(m.scaled, tol) << what;
}

class Kernels : public ::testing::TestWithParam<KernelCase> {};

TEST_P(Kernels, PhaseMatchesFp64Oracle) {
  const KernelCase c = GetParam();
  EB_BCSR_PCG_SKIP_WITHOUT_DEVICE(c.regime);
  std::unique_ptr<TempMesh> file;
  Scenario sc;
  if (c.model == Model::Box) {
    sc = test_box();
  } else {
    file = std::make_unique<TempMesh>(single_element_nodes(), std::vector<std::array<int32_t, 4>>{{0, 1, 2, 3}});
    sc = single_element(file->path());
  }
  auto oracle = make(sc, Backend::Cpu, Precision::Fp64, 1, c.variant);
  auto subject = make(sc, c.regime, 2, c.variant);
  const BcsrPcgSetup& s = oracle->setup();
  ASSERT_EQ(subject->setup().connectivity, s.connectivity);
  const Inputs in = prepare(*oracle, c.model, c.state);
  const double tol = tolerance(c.regime.precision);

  // The planted states are what the header says.
  const std::vector<double> det = determinants(s, in.u);
  double near = 1e9, lowest = 1e9, closest = 1e9;
  for (double d : det) {
    if (d > 0) near = std::min(near, d);
    lowest = std::min(lowest, d);
    closest = std::min(closest, std::abs(d));
  }
  std::printf("%s: %lld elements, det F in [%.4f, ...], smallest positive %.4f\n", case_label(c).c_str(),
              (long long)s.num_elements, lowest, near);
  if (c.state != State::Random) ASSERT_GT(closest, 1e-3) << "a det F near 0: its sign would be a matter of rounding";
  if (c.state == State::Planted) ASSERT_LE(near, 0.02) << "no near-inverted element";
  if (c.state == State::Planted && c.model == Model::Box) ASSERT_LT(lowest, 0.0) << "no inverted element";
  if (c.state == State::Inverted) ASSERT_LT(lowest, 0.0);

  set_inputs(*oracle, in, c.phase);
  set_inputs(*subject, in, c.phase);
  const ValidityCounts before = subject->validity(), before_o = oracle->validity();
  const linalg::CgResult ro = oracle->run_phase(c.phase);
  const linalg::CgResult rs = subject->run_phase(c.phase);
  // Arrays the phase only reads are untouched.
  for (PhaseArray a : reads(c.phase))
    EXPECT_EQ(first_bitwise_difference(subject->get_array(a), input(in, a)), "") << to_string(a) << " changed";

  const ElementScales es = element_scales(s, in.u);
  const size_t E = size_t(s.num_elements);
  auto got = [&](PhaseArray a) { return subject->get_array(a); };
  auto want = [&](PhaseArray a) { return oracle->get_array(a); };

  switch (c.phase) {
    case Phase::Rotation: {
      std::vector<double> scale(E);
      double det_scale = 0;
      for (size_t e = 0; e < E; ++e) {
        const Eigen::Matrix3d F = deformation_gradient(s, int64_t(e), in.u);
        Eigen::JacobiSVD<Eigen::Matrix3d> svd(F);
        Eigen::Vector3d sv = svd.singularValues();
        if (F.determinant() < 0) sv[2] = -sv[2];
        const double pair = std::min({sv[0] + sv[1], sv[0] + sv[2], sv[1] + sv[2]});
        const double rounding = 1 + 2 * es.U[e] * es.g[e];
        scale[e] = rounding / pair;
        det_scale = std::max(det_scale, 6 * std::pow(F.cwiseAbs().maxCoeff(), 3) * rounding);
      }
      expect_within("R", compare_blocks(got(PhaseArray::R), want(PhaseArray::R), 9, scale), tol);
      const ValidityCounts vs = subject->validity(), vo = oracle->validity();
      const int64_t inverted_s = vs.inverted_element_steps - before.inverted_element_steps,
                    inverted_o = vo.inverted_element_steps - before_o.inverted_element_steps;
      EXPECT_EQ(inverted_s, inverted_o);
      EXPECT_EQ(vs.first_inverted_element, vo.first_inverted_element);
      EXPECT_NEAR(vs.min_det_f, vo.min_det_f, tol * det_scale);
      int64_t inverted = 0;
      for (double d : det) inverted += d <= 0;
      EXPECT_EQ(inverted_o, inverted) << "the oracle's own count against det F computed here";
      EXPECT_EQ(vs.nonfinite_steps, 0);
      break;
    }
    case Phase::Matrix: {
      std::vector<double> scale_a(E), scale_b(E);
      const std::vector<double> local_o = want(PhaseArray::local);
      const double body = std::sqrt(in.k.body[0] * in.k.body[0] + in.k.body[1] * in.k.body[1] + in.k.body[2] * in.k.body[2]);
      for (size_t e = 0; e < E; ++e) {
        double m = 0, vmax = 0;
        for (int q = 0; q < 144; ++q) m = std::max(m, std::abs(local_o[144 * e + size_t(q)]));
        for (int a = 0; a < 4; ++a)
          for (int i = 0; i < 3; ++i)
            vmax = std::max(vmax, std::abs(in.v[3 * size_t(s.connectivity[4 * e + size_t(a)]) + size_t(i)]));
        const double V = s.volume[e];
        scale_a[e] = m;
        scale_b[e] = in.k.rhs_mass * V / 4 * vmax +
                     in.k.rhs_force * (es.Kabs[e] * (es.dm[e] + 2 * es.U[e]) + body * V / 4);
      }
      expect_within("local matrices", compare_blocks(got(PhaseArray::local), local_o, 144, scale_a), tol);
      expect_within("local vectors", compare_blocks(got(PhaseArray::local_rhs), want(PhaseArray::local_rhs), 12, scale_b),
                    tol);
      break;
    }
    case Phase::Update: {
      std::vector<double> rhs_scale(3 * size_t(s.num_nodes), 0.0);
      for (size_t e = 0; e < E; ++e)
        for (int a = 0; a < 4; ++a)
          for (int i = 0; i < 3; ++i)
            rhs_scale[3 * size_t(s.connectivity[4 * e + size_t(a)]) + size_t(i)] += std::abs(in.local_rhs[12 * e + size_t(3 * a + i)]);
      for (const NodeLoad& l : s.loads)
        for (int d = 0; d < 3; ++d)
          rhs_scale[3 * size_t(l.node) + size_t(d)] +=
              std::abs(in.load_scale * load_factor(s.curves[size_t(l.curve)], in.load_time) * l.force[d]);
      for (size_t n = 0; n < size_t(s.num_nodes); ++n)
        for (int i = 0; i < 3; ++i)
          if (s.constrained[n] >> i & 1) rhs_scale[3 * n + size_t(i)] = 0;  // exactly 0 there
      expect_within("matrix", compare_blocks(got(PhaseArray::matrix), want(PhaseArray::matrix), 1,
                                             gather_magnitudes(s.plan, in.local)),
                    tol);
      expect_within("right-hand side", compare_blocks(got(PhaseArray::rhs), want(PhaseArray::rhs), 1, rhs_scale), tol);
      break;
    }
    case Phase::Solve: {
      const double d = max_relative_difference(got(PhaseArray::sol), want(PhaseArray::sol));
      std::printf("  sol                    %.2e relative (oracle: %d iterations, residual reduced %.2e; subject %d)\n", d,
                  ro.iterations, ro.final_residual() / ro.initial_residual(), rs.iterations);
      EXPECT_LE(d, solve_tolerance(c.regime.precision));
      if (c.model == Model::Box) {  // 12 unknowns may reach a residual of exactly 0 before 18
        EXPECT_EQ(ro.iterations, s.options.cg_iterations);
        EXPECT_EQ(rs.iterations, ro.iterations);
      }
      break;
    }
    case Phase::Integrate:
    case Phase::Increment: {
      const bool dyn = c.phase == Phase::Integrate;
      std::vector<double> scale(in.u.size());
      for (size_t i = 0; i < scale.size(); ++i) scale[i] = std::abs(in.u[i]) + (dyn ? s.dt : 1.0) * std::abs(in.sol[i]);
      expect_within("u", compare_blocks(got(PhaseArray::u), want(PhaseArray::u), 1, scale), tol);
      if (dyn) EXPECT_EQ(first_bitwise_difference(got(PhaseArray::v), in.sol), "") << "v = sol";
      break;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BcsrPcg, Kernels, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace eb::bcsr_pcg::test
