// The tet4 element functions of assembly/tet/ in a CUDA kernel (one thread per element) against
// the very same functions on the host, on seeded random elements and planted edge cases (rest,
// rigid rotation, inverted, collapsed, degenerate reference, NaN, collinear edge frame), float
// and double. Each quantity must agree within 1e-5 (fp32) / 1e-12 (fp64) of its magnitude;
// statuses must be equal. Skipped without a usable CUDA device.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
#include "tests/tet/tet_test_util.h"

namespace eb::tet::test {
namespace {

constexpr int kIn = 24;  // X[4][3], x[4][3]

// The output blocks of evaluate_element, in the order it writes them.
struct Block {
  const char* name;
  int size;
};
constexpr Block kBlocks[] = {{"statuses", 5},          {"Dm^-1", 9},         {"volume", 1},        {"grad N", 12},
                             {"F", 9},                 {"lumped mass", 1},   {"consistent mass", 16},
                             {"linear K", 144},        {"polar R", 9},       {"edge-frame R", 9},  {"R K R^T", 144},
                             {"polar force", 12},      {"edge-frame force", 12},                   {"R K R^T d", 12},
                             {"signed singular values", 3},                  {"neo-Hookean W", 1}, {"neo-Hookean P", 9},
                             {"neo-Hookean dP/dF", 81}, {"neo-Hookean dP", 9}, {"neo-Hookean force", 12},
                             {"neo-Hookean tangent", 144}};
constexpr int block_total() {
  int n = 0;
  for (const Block& b : kBlocks) n += b.size;
  return n;
}
constexpr int kOut = block_total();

template <class T>
EB_HD void put(T*& o, const T* v, int n) {
  for (int k = 0; k < n; ++k) *o++ = v[k];
}

// Every function of the library on one element; the same code on both sides.
template <class T>
EB_HD void evaluate_element(const T* in, Lame<T> m, T rho, T* out) {
  T X[4][3], x[4][3];
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < 3; ++i) {
      X[a][i] = in[3 * a + i];
      x[a][i] = in[12 + 3 * a + i];
    }
  T* o = out;
  T* statuses = o;
  o += 5;
  Tet4Reference<T> ref;
  statuses[0] = T(int(tet4_reference(X, ref)));
  put(o, ref.Dm_inv, 9);
  put(o, &ref.volume, 1);
  T G[4][3], F[9];
  tet4_shape_gradients(ref.Dm_inv, G);
  put(o, &G[0][0], 12);
  tet4_deformation_gradient(x, ref.Dm_inv, F);
  put(o, F, 9);
  const T lumped = tet4_lumped_mass(rho, ref.volume);
  put(o, &lumped, 1);
  T M[16];
  tet4_consistent_mass(rho, ref.volume, M);
  put(o, M, 16);
  T K[144], KR[144];
  tet4_linear_stiffness(ref, m, K);
  put(o, K, 144);
  T R[9], Re[9], E0[9];
  statuses[1] = T(int(polar_rotation(F, R)));
  put(o, R, 9);
  edge_frame(X, E0);
  statuses[2] = T(int(edge_frame_rotation(x, E0, Re)));
  put(o, Re, 9);
  rotate_stiffness(R, K, KR);
  put(o, KR, 144);
  T f[12], d[12], y[12];
  corotated_force(R, K, x, X, f);
  put(o, f, 12);
  corotated_force(Re, K, x, X, f);
  put(o, f, 12);
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < 3; ++i) d[3 * a + i] = x[a][i] - X[a][i];
  corotated_stiffness_apply(R, K, d, y);
  put(o, y, 12);
  T U[9], S[3], V[9];
  signed_svd3(F, U, S, V);
  put(o, S, 3);
  NeoHookeanKinematics<T> k;
  statuses[3] = T(int(neo_hookean_kinematics(F, k)));
  const T W = statuses[3] == T(0) ? neo_hookean_energy_density(k, m) : T(0);
  put(o, &W, 1);
  T P[9], A[81], dF[9], dP[9];
  neo_hookean_pk1(k, m, P);
  put(o, P, 9);
  neo_hookean_dpdf(k, m, A);
  put(o, A, 81);
  for (int q = 0; q < 9; ++q) dF[q] = F[q] - (q % 4 == 0 ? T(1) : T(0));
  neo_hookean_dpdf_apply(k, m, dF, dP);
  put(o, dP, 9);
  neo_hookean_element_force(ref, x, m, f);
  put(o, f, 12);
  statuses[4] = T(int(neo_hookean_element_tangent(ref, x, m, K)));
  put(o, K, 144);
}

template <class T>
__global__ void evaluate_kernel(const T* in, int n, Lame<T> m, T rho, T* out) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e < n) evaluate_element(in + size_t(kIn) * e, m, rho, out + size_t(kOut) * e);
}

// Seeded random elements (sizes 0.5-1.5, strains up to 30%, any rotation), after planted cases.
template <class T>
std::vector<T> make_inputs(int n, std::vector<std::string>& labels) {
  std::mt19937_64 rng(61);
  std::vector<T> in(size_t(kIn) * n);
  const double unit[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};  // Dm = I: F = Ds exactly
  for (int e = 0; e < n; ++e) {
    double X[4][3], x[4][3], F[9];
    const double t[3] = {0.05, -0.1, 0.02};
    random_element(rng, X, 0.5 + double(e % 11) / 10.0);
    random_deformation(rng, 0.3, F);
    map_affine(F, t, X, x);
    std::string label = "random";
    switch (e) {
      case 0:
        std::copy(&X[0][0], &X[0][0] + 12, &x[0][0]);
        label = "rest";
        break;
      case 1: {
        double Q[9];
        random_rotation(rng, Q);
        map_affine(Q, t, X, x);
        label = "rigid rotation";
        break;
      }
      case 2:
        for (int a = 0; a < 4; ++a) x[a][2] = -x[a][2];  // mirrored: det F < 0
        label = "inverted";
        break;
      case 3:
        std::copy(&unit[0][0], &unit[0][0] + 12, &X[0][0]);
        for (auto& p : x) p[0] = p[1] = p[2] = 0.25;  // F = 0 exactly
        label = "collapsed to a point";
        break;
      case 4: {
        const double flat[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0.25, 0.25, 0}};
        std::copy(&flat[0][0], &flat[0][0] + 12, &X[0][0]);
        label = "degenerate reference";
        break;
      }
      case 5:
        std::copy(&unit[0][0], &unit[0][0] + 12, &X[0][0]);
        x[2][1] = std::numeric_limits<double>::quiet_NaN();
        label = "NaN position";
        break;
      case 6: {
        std::copy(&unit[0][0], &unit[0][0] + 12, &X[0][0]);
        const double line[4][3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 0, 1}};  // det F = 0 exactly
        std::copy(&line[0][0], &line[0][0] + 12, &x[0][0]);
        label = "nodes 0, 1, 2 collinear";
        break;
      }
      default:
        break;
    }
    labels.push_back(label);
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) {
        in[size_t(kIn) * e + 3 * a + i] = T(X[a][i]);
        in[size_t(kIn) * e + 12 + 3 * a + i] = T(x[a][i]);
      }
  }
  return in;
}

template <class T>
class TetCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << cuda_device_info(0).reason;
  }
};
TYPED_TEST_SUITE(TetCuda, Scalars);

TYPED_TEST(TetCuda, KernelMatchesHost) {
  using T = TypeParam;
  const int n = 1024;
  std::vector<std::string> labels;
  const std::vector<T> in = make_inputs<T>(n, labels);
  const Lame<T> m{T(2), T(5)};
  const T rho = T(1000);
  std::vector<T> host(size_t(kOut) * n);
  for (int e = 0; e < n; ++e) evaluate_element(in.data() + size_t(kIn) * e, m, rho, host.data() + size_t(kOut) * e);

  cuda::DeviceBuffer<T> din(in.size(), "tet inputs"), dout(host.size(), "tet outputs");
  din.upload(in);
  dout.fill_zero();
  evaluate_kernel<T><<<(n + 127) / 128, 128>>>(din.data(), n, m, rho, dout.data());
  EB_CUDA_CHECK_LAUNCH();
  const std::vector<T> dev = dout.to_host();

  // Per block: |device - host| <= tol * scale + propagated, scale = the block's largest magnitude
  // in that element, at least 1% of its largest over all elements (a rest state's forces are
  // rounding noise on both sides, to be compared with the forces' real scale). Non-finite values
  // must agree as non-finite; statuses exactly.
  // `propagated`: W, P and dP are functions of F, and F itself differs between the two sides by
  // rounding (contractions into FMA on the device). Where those outputs cancel (a rest state:
  // P = mu (F - F^-T) + lambda ln J F^-T with F ~ I), that difference, amplified by the material's
  // stiffness, dominates the rounding noise of the function itself. It is bounded to first order
  // by |dOut/dF| |F_dev - F_host|, with dW/dF = P and dP/dF = A (the host's own blocks), so the
  // function is tested for its own error only.
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  auto offset_of = [](const char* name) {
    int o = 0;
    for (const Block& b : kBlocks) {
      if (std::string(b.name) == name) return o;
      o += b.size;
    }
    return -1;
  };
  const int oF = offset_of("F"), oP = offset_of("neo-Hookean P"), oA = offset_of("neo-Hookean dP/dF");
  auto propagated = [&](const std::string& block, int e, int q) {
    const T* h = host.data() + size_t(kOut) * e;
    const T* g = dev.data() + size_t(kOut) * e;
    const T* d = block == "neo-Hookean W" ? h + oP : block == "neo-Hookean P" || block == "neo-Hookean dP" ? h + oA + 9 * q
                                                                                                           : nullptr;
    if (!d) return 0.0;
    double s = 0;
    for (int j = 0; j < 9; ++j) s += std::abs(double(d[j])) * std::abs(double(g[oF + j]) - double(h[oF + j]));
    // dP = A (F - I): its own F-dependence through A (second order) is covered by the factor 2.
    return std::isfinite(s) ? 2.0 * s : 0.0;
  };
  int offset = 0;
  for (const Block& b : kBlocks) {
    double global = 0;
    for (int e = 0; e < n; ++e)
      for (int q = 0; q < b.size; ++q) {
        const double v = double(host[size_t(kOut) * e + offset + q]);
        if (std::isfinite(v)) global = std::max(global, std::abs(v));
      }
    double worst = 0;
    int worst_e = -1;
    for (int e = 0; e < n; ++e) {
      const T* h = host.data() + size_t(kOut) * e + offset;
      const T* g = dev.data() + size_t(kOut) * e + offset;
      double scale = 0.01 * global;
      for (int q = 0; q < b.size; ++q)
        if (std::isfinite(double(h[q]))) scale = std::max(scale, std::abs(double(h[q])));
      for (int q = 0; q < b.size; ++q) {
        const bool hf = std::isfinite(double(h[q])), gf = std::isfinite(double(g[q]));
        ASSERT_EQ(hf, gf) << b.name << "[" << q << "] of element " << e << " (" << labels[e] << ")";
        if (!hf) continue;
        if (offset == 0) {
          ASSERT_EQ(h[q], g[q]) << "status " << q << " of element " << e << " (" << labels[e] << ")";
          continue;
        }
        const double diff = std::max(0.0, std::abs(double(g[q]) - double(h[q])) - propagated(b.name, e, q));
        const double err = scale > 0 ? diff / scale : diff;
        if (err > worst) {
          worst = err;
          worst_e = e;
        }
      }
    }
    EXPECT_LE(worst, tol) << b.name << ", worst in element " << worst_e << " ("
                          << (worst_e >= 0 ? labels[worst_e] : std::string("-")) << ")";
    std::printf("[ numbers  ] %-6s %-24s device vs host: %.2e\n", scalar_name<T>(), b.name, worst);
    offset += b.size;
  }
  // The planted cases report what they should (on the host; the device matched it above).
  auto status = [&](int e, int s) { return TetStatus(int(host[size_t(kOut) * e + s])); };
  EXPECT_EQ(status(2, 1), TetStatus::kInverted);
  EXPECT_EQ(status(2, 3), TetStatus::kInverted);
  EXPECT_EQ(status(3, 1), TetStatus::kInverted);
  EXPECT_EQ(status(4, 0), TetStatus::kDegenerate);
  EXPECT_EQ(status(5, 1), TetStatus::kNonFinite);
  EXPECT_EQ(status(5, 3), TetStatus::kNonFinite);
  EXPECT_EQ(status(6, 2), TetStatus::kDegenerate);
  EXPECT_EQ(status(6, 4), TetStatus::kInverted);
}

}  // namespace
}  // namespace eb::tet::test
