// The matrix-free operator against an explicitly assembled one (fp64, Eigen): on random deformed
// states, A v from the element-by-element gathers equals the assembled (masked) matrix times v to
// 1e-12 relative, for the static (K) and the time step's ((1 + h alpha) M + h (h + beta) K)
// coefficients, ground contacts included; the operator's diagonal likewise. And the edge frame
// against the polar rotation: equal for rigid motions, close for small strains.
#include <Eigen/Dense>

#include "assembly/tet/corotation.h"
#include "corot_cg_test_util.h"

namespace eb::corot_cg::test {
namespace {

class Operator : public ::testing::TestWithParam<Backend> {};

// u = (Q - I) X + noise: a large rotation about an oblique axis plus random strain.
std::vector<double> deformed_state(const CorotCgSetup& s, double angle, double noise, unsigned seed) {
  const double a[3] = {0.3, -0.5, 0.8};
  const double len = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  Eigen::Vector3d axis(a[0] / len, a[1] / len, a[2] / len);
  const Eigen::Matrix3d Q = Eigen::AngleAxisd(angle, axis).toRotationMatrix();
  std::vector<double> u = random_vector(3 * size_t(s.num_nodes), noise, seed);
  for (size_t n = 0; n < size_t(s.num_nodes); ++n) {
    const Eigen::Vector3d X(s.nodes[n][0], s.nodes[n][1], s.nodes[n][2]);
    const Eigen::Vector3d d = Q * X - X;
    for (int i = 0; i < 3; ++i) u[3 * n + size_t(i)] += d[i];
  }
  return u;
}

// The assembled operator: sum_e R_e K_e R_e^T (+ ground k n n^T at nodes below the plane), times
// k.stiffness, plus k.mass M; fixed rows and columns replaced by the identity.
Eigen::MatrixXd assembled(const CorotCgSetup& s, const std::vector<double>& R, const std::vector<double>& u,
                          const RayleighEuler<double>& k) {
  const size_t n = 3 * size_t(s.num_nodes);
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(Eigen::Index(n), Eigen::Index(n));
  const tet::Lame<double> lame{s.lambda, s.mu};
  for (size_t e = 0; e < size_t(s.num_elements); ++e) {
    tet::Tet4Reference<double> ref;
    std::copy(s.Dm_inv.begin() + 9 * long(e), s.Dm_inv.begin() + 9 * long(e) + 9, ref.Dm_inv);
    ref.volume = s.volume[e];
    double K[144], KR[144];
    tet::tet4_linear_stiffness(ref, lame, K);
    tet::rotate_stiffness(&R[9 * e], K, KR);
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j)
            A(3 * s.connectivity[4 * e + size_t(a)] + i, 3 * s.connectivity[4 * e + size_t(b)] + j) +=
                k.stiffness * KR[(3 * a + i) * 12 + 3 * b + j];
  }
  for (size_t node = 0; node < size_t(s.num_nodes); ++node) {
    for (int i = 0; i < 3; ++i) A(Eigen::Index(3 * node) + i, Eigen::Index(3 * node) + i) += k.mass * s.mass[node];
    if (!s.ground) continue;
    double depth = -s.ground_height;
    for (int i = 0; i < 3; ++i) depth += s.ground_normal[i] * (s.nodes[node][size_t(i)] + u[3 * node + size_t(i)]);
    if (depth < 0)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          A(Eigen::Index(3 * node) + i, Eigen::Index(3 * node) + j) +=
              k.stiffness * s.ground_stiffness * s.ground_normal[i] * s.ground_normal[j];
  }
  for (size_t r = 0; r < n; ++r)
    if (s.fixed_rows[r]) {
      A.row(Eigen::Index(r)).setZero();
      A.col(Eigen::Index(r)).setZero();
      A(Eigen::Index(r), Eigen::Index(r)) = 1.0;
    }
  return A;
}

TEST_P(Operator, MatrixFreeProductEqualsAssembledMatrix) {
  EB_COROT_CG_SKIP_WITHOUT_DEVICE(GetParam());
  for (const char* variant : {"edge", "polar"}) {
    const Scenario sc = scenario_from_toml(box_toml(), {std::string("solver.variant=") + variant});
    auto sim = make_corot_cg(sc, run_options(GetParam(), Precision::Fp64));
    const CorotCgSetup& s = sim->setup();
    for (unsigned seed : {1u, 2u, 3u}) {
      const std::vector<double> u = deformed_state(s, 0.4 * seed, 0.002, seed);
      sim->set_array(StageArray::u, u);
      sim->set_array(StageArray::v, random_vector(u.size(), 0.1, seed + 10));
      for (const RayleighEuler<double> k : {static_coefficients<double>(), rayleigh_euler<double>(0.01, 0.5, 0.002)}) {
        sim->set_coefficients(k);
        sim->run_stage(Stage::Forces);
        const std::vector<double> R = sim->get_array(StageArray::R);
        const Eigen::MatrixXd A = assembled(s, R, u, k);
        const std::vector<double> v = random_vector(u.size(), 1.0, seed + 20);
        const std::vector<double> y = sim->apply_operator(v);
        const Eigen::VectorXd ya = A * Eigen::Map<const Eigen::VectorXd>(v.data(), Eigen::Index(v.size()));
        const std::vector<double> yref(ya.data(), ya.data() + ya.size());
        EXPECT_LT(rel_diff(y, yref), 1e-12) << variant << " seed " << seed << " mass " << k.mass;
        // The diagonal the Jacobi preconditioner reads (free rows: the unmasked operator's).
        const std::vector<double> d = sim->get_array(StageArray::diag);
        std::vector<double> dref(d.size()), dgot(d.size());
        for (size_t r = 0; r < d.size(); ++r) {
          dref[r] = s.fixed_rows[r] ? 0.0 : A(Eigen::Index(r), Eigen::Index(r));
          dgot[r] = s.fixed_rows[r] ? 0.0 : d[r];
        }
        EXPECT_LT(rel_diff(dgot, dref), 1e-12) << variant << " seed " << seed;
      }
    }
  }
}

// The CPU's product (stored blocks R K_ab R^T, node_blocks_times) against the function the CUDA
// kernel runs (node_stiffness_times: K_ab rebuilt, R^T p, then R), with the kernel's 32 lanes and
// its xor shuffle tree emulated: the same mathematics, so they differ by rounding only, and that
// difference must stay well inside CpuVsCuda's product tolerances (fp64 1e-12, fp32 2e-5
// relative), which this test is the CPU-side evidence for.
template <class T>
struct TwoGathers {
  TwoGathers(const CorotCgSetup& setup, const std::vector<double>& R_element_major) : s(setup), el(setup) {
    el.R = entry_major<T>(R_element_major, s.num_elements, 9);
    m = el.view();
    blocks.resize(kRotatedBlockValues * size_t(s.num_elements));
    for (int64_t e = 0; e < s.num_elements; ++e) element_rotated_blocks(m, e, &blocks[kRotatedBlockValues * size_t(e)]);
  }
  void stored(const T* p, T* y) const {
    std::vector<T> pm(p, p + 3 * s.num_nodes);
    for (int64_t n = 0; n < s.num_nodes; ++n)
      for (int i = 0; i < 3; ++i)
        if ((s.constrained[size_t(n)] >> i) & 1) pm[size_t(3 * n + i)] = T(0);
    for (int64_t n = 0; n < s.num_nodes; ++n)
      node_blocks_times(s.connectivity.data(), blocks.data(), s.node_ptr.data(), s.incidence.data(), n, pm.data(),
                        y + 3 * n);
  }
  void warp(const T* p, T* y) const {
    constexpr int kLanes = 32;
    for (int64_t n = 0; n < s.num_nodes; ++n) {
      T lane[kLanes][3], next[kLanes][3];
      for (int l = 0; l < kLanes; ++l)
        node_stiffness_times(m, s.node_ptr.data(), s.incidence.data(), s.constrained.data(), n, p, lane[l], l, kLanes);
      for (int o = kLanes / 2; o > 0; o /= 2) {
        for (int l = 0; l < kLanes; ++l)
          for (int i = 0; i < 3; ++i) next[l][i] = lane[l][i] + lane[l ^ o][i];
        std::copy(&next[0][0], &next[0][0] + 3 * kLanes, &lane[0][0]);
      }
      for (int i = 0; i < 3; ++i) y[3 * n + i] = lane[0][i];
    }
  }
  const CorotCgSetup& s;
  HostElementArrays<T> el;
  ElementArrays<T> m;
  std::vector<T> blocks;
};

// The CPU's forces (element rows gathered, diagonal from the stored blocks) against node_force
// with the kernel's 32 lanes: max relative difference of f and of the diagonal.
template <class T>
double stored_forces_vs_warp_gather(const CorotCgSetup& s, const std::vector<double>& R, const std::vector<double>& u,
                                    const std::vector<double>& v, double c) {
  const TwoGathers<T> g(s, R);
  const std::vector<T> ut(u.begin(), u.end()), vt(v.begin(), v.end());
  std::vector<T> rows(12 * size_t(s.num_elements));
  for (int64_t e = 0; e < s.num_elements; ++e)
    element_force_rows(g.m, e, ut.data(), vt.data(), T(c), reinterpret_cast<T(*)[3]>(&rows[12 * size_t(e)]));
  constexpr int kLanes = 32;
  std::vector<double> got(2 * u.size()), want(2 * u.size());
  for (int64_t n = 0; n < s.num_nodes; ++n) {
    T f[3], d[3], lane[kLanes][6];
    node_gather_force(rows.data(), g.blocks.data(), s.node_ptr.data(), s.incidence.data(), n, f, d);
    for (int l = 0; l < kLanes; ++l)
      node_force(g.m, s.node_ptr.data(), s.incidence.data(), n, ut.data(), vt.data(), T(c), lane[l], lane[l] + 3, l,
                 kLanes);
    for (int o = kLanes / 2; o > 0; o /= 2) {
      T next[kLanes][6];
      for (int l = 0; l < kLanes; ++l)
        for (int i = 0; i < 6; ++i) next[l][i] = lane[l][i] + lane[l ^ o][i];
      std::copy(&next[0][0], &next[0][0] + 6 * kLanes, &lane[0][0]);
    }
    for (int i = 0; i < 3; ++i) {
      got[size_t(3 * n + i)] = double(f[i]);
      got[u.size() + size_t(3 * n + i)] = double(d[i]);
      want[size_t(3 * n + i)] = double(lane[0][i]);
      want[u.size() + size_t(3 * n + i)] = double(lane[0][3 + i]);
    }
  }
  const std::vector<double> fg(got.begin(), got.begin() + long(u.size())), fw(want.begin(), want.begin() + long(u.size()));
  const std::vector<double> dg(got.begin() + long(u.size()), got.end()), dw(want.begin() + long(u.size()), want.end());
  return std::max(rel_diff(fg, fw), rel_diff(dg, dw));
}

template <class T>
double stored_blocks_vs_warp_gather(const CorotCgSetup& s, const std::vector<double>& R, const std::vector<double>& p) {
  const TwoGathers<T> g(s, R);
  const std::vector<T> pt(p.begin(), p.end());
  std::vector<T> y1(p.size()), y2(p.size());
  g.stored(pt.data(), y1.data());
  g.warp(pt.data(), y2.data());
  return rel_diff(std::vector<double>(y1.begin(), y1.end()), std::vector<double>(y2.begin(), y2.end()));
}

TEST(StoredBlocks, ProductAndForcesEqualTheCudaKernelsGathersToRounding) {
  for (const char* variant : {"edge", "polar"}) {
    const Scenario sc = scenario_from_toml(box_toml(), {std::string("solver.variant=") + variant});
    auto sim = make_corot_cg(sc, run_options(Backend::Cpu, Precision::Fp64));
    const CorotCgSetup& s = sim->setup();
    for (unsigned seed : {1u, 2u}) {
      sim->set_array(StageArray::u, deformed_state(s, 0.6 * seed, 0.003, seed));
      sim->set_coefficients(static_coefficients<double>());
      sim->run_stage(Stage::Forces);
      const std::vector<double> R = sim->get_array(StageArray::R);
      const std::vector<double> p = random_vector(3 * size_t(s.num_nodes), 1.0, seed + 30);
      const double d64 = stored_blocks_vs_warp_gather<double>(s, R, p);
      const double d32 = stored_blocks_vs_warp_gather<float>(s, R, p);
      EXPECT_LT(d64, 1e-13) << variant << " seed " << seed;
      EXPECT_LT(d32, 2e-6) << variant << " seed " << seed;
      // The forces add node_force's own terms, only in another order than the warp's.
      const std::vector<double> u = sim->get_array(StageArray::u), v = random_vector(u.size(), 0.1, seed + 40);
      const double f64 = stored_forces_vs_warp_gather<double>(s, R, u, v, 0.01);
      const double f32 = stored_forces_vs_warp_gather<float>(s, R, u, v, 0.01);
      EXPECT_LT(f64, 1e-13) << variant << " seed " << seed;
      EXPECT_LT(f32, 2e-6) << variant << " seed " << seed;
      std::printf("%s seed %u: CPU against the kernel's gather, max |d| / max: product fp64 %.3g fp32 %.3g, "
                  "forces and diagonal fp64 %.3g fp32 %.3g\n", variant, seed, d64, d32, f64, f32);
    }
  }
}

// The edge frame and the polar rotation are both exact for rigid motions, and differ by the order
// of the strain otherwise (the edge frame follows edge 01, the polar factor the average).
TEST_P(Operator, EdgeFrameAndPolarAgreeForSmallDeformations) {
  EB_COROT_CG_SKIP_WITHOUT_DEVICE(GetParam());
  std::vector<double> R[2];
  std::vector<double> u;
  for (int k = 0; k < 2; ++k) {
    const Scenario sc = scenario_from_toml(box_toml(), {std::string("solver.variant=") + (k ? "polar" : "edge")});
    auto sim = make_corot_cg(sc, run_options(GetParam(), Precision::Fp64));
    for (double noise : {0.0, 1e-7}) {
      u = deformed_state(sim->setup(), 0.9, noise * 0.02, 5);
      sim->set_array(StageArray::u, u);
      sim->set_coefficients(static_coefficients<double>());
      sim->run_stage(Stage::Forces);
      if (noise == 0.0) {
        const std::vector<double> Rr = sim->get_array(StageArray::R);
        // Rigid: every element's R is the same rotation.
        for (size_t e = 1; e < Rr.size() / 9; ++e)
          for (int q = 0; q < 9; ++q) ASSERT_NEAR(Rr[9 * e + size_t(q)], Rr[size_t(q)], 1e-12);
      } else {
        R[k] = sim->get_array(StageArray::R);
      }
    }
  }
  double worst = 0;
  for (size_t i = 0; i < R[0].size(); ++i) worst = std::max(worst, std::abs(R[0][i] - R[1][i]));
  // Strains of about 1e-7 (noise 2e-9 over 2 cm edges): rotations agree to a few 1e-7.
  EXPECT_LT(worst, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(CorotCg, Operator,
#if defined(EB_COROT_CG_TEST_CUDA)
                         ::testing::Values(Backend::Cuda),
#else
                         ::testing::Values(Backend::Cpu),
#endif
                         [](const ::testing::TestParamInfo<Backend>& i) { return to_string(i.param); });

}  // namespace
}  // namespace eb::corot_cg::test
