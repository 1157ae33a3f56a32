// Patch test on an irregular patch of 48 tetrahedra around one interior node: a linear
// (affine) field gives the same F in every element (constant strain) and zero net internal
// force at the interior node, for the linear-elastic K, the polar co-rotational force and the
// neo-Hookean force, float and double. SOFA's edge frame is not the polar rotation, so it
// passes only up to second order in the strain: measured here as such.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "tests/tet/tet_test_util.h"

namespace eb::tet::test {
namespace {

// 2 x 2 x 2 unit cubes, each split into the six Kuhn tetrahedra along its main diagonal (a
// conforming mesh: every cube is split the same way); all 27 nodes moved randomly by up to
// 0.15. Node 13, (1, 1, 1) before the jitter, is the one interior node.
struct Patch {
  std::vector<std::array<double, 3>> nodes;
  std::vector<std::array<int, 4>> tets;
  static constexpr int kInterior = 13;
};

Patch make_patch(std::mt19937_64& rng) {
  Patch p;
  std::uniform_real_distribution<double> jitter(-0.15, 0.15);
  for (int k = 0; k < 3; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 3; ++i) p.nodes.push_back({i + jitter(rng), j + jitter(rng), k + jitter(rng)});
  const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (int ck = 0; ck < 2; ++ck)
    for (int cj = 0; cj < 2; ++cj)
      for (int ci = 0; ci < 2; ++ci)
        for (const auto& perm : perms) {
          int c[3] = {ci, cj, ck};
          std::array<int, 4> t;
          t[0] = c[0] + 3 * c[1] + 9 * c[2];
          for (int s = 0; s < 3; ++s) {
            ++c[perm[s]];
            t[s + 1] = c[0] + 3 * c[1] + 9 * c[2];
          }
          double X[4][3];
          for (int a = 0; a < 4; ++a)
            for (int i = 0; i < 3; ++i) X[a][i] = p.nodes[t[a]][i];
          if (tet4_signed_volume(X) < 0) std::swap(t[2], t[3]);
          p.tets.push_back(t);
        }
  return p;
}

enum class Model { kLinear, kPolar, kEdgeFrame, kNeoHookean };

struct PatchResult {
  double interior_force = 0;  // |net force at the interior node| / max element force
  double strain_error = 0;    // max over elements of |F_e - A| / |A|
};

// Assembles the chosen model's internal forces for x = A X + c and returns the interior node's
// net force relative to the largest element force entry.
template <class T>
PatchResult run_patch(const Patch& p, const double A[9], const double c[3], Model model) {
  PatchResult r;
  double net[3] = {0, 0, 0}, fmax = 0;
  const Lame<T> m{T(2), T(5)};
  for (const auto& t : p.tets) {
    double Xd[4][3], xd[4][3];
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) Xd[a][i] = p.nodes[t[a]][i];
    map_affine(A, c, Xd, xd);
    const Element<T> el(Xd, xd);
    EXPECT_EQ(el.status, TetStatus::kOk);
    const auto &X = el.X, &x = el.x;
    const Tet4Reference<T>& ref = el.ref;
    T F[9];
    tet4_deformation_gradient(x, ref.Dm_inv, F);
    r.strain_error = std::max(r.strain_error, max_abs_diff(F, A, 9) / max_abs(A, 9));
    T K[144], f[12];
    if (model != Model::kNeoHookean) tet4_linear_stiffness(ref, m, K);
    switch (model) {
      case Model::kLinear: {
        T u[12];
        for (int a = 0; a < 4; ++a)
          for (int i = 0; i < 3; ++i) u[3 * a + i] = x[a][i] - X[a][i];
        mul12_vec(K, u, f);
        break;
      }
      case Model::kPolar:
      case Model::kEdgeFrame: {
        T R[9];
        EXPECT_EQ(element_rotation(model == Model::kEdgeFrame, el, R), TetStatus::kOk);
        corotated_force(R, K, x, X, f);
        break;
      }
      case Model::kNeoHookean:
        EXPECT_EQ(neo_hookean_element_force(ref, x, m, f), TetStatus::kOk);
        break;
    }
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) {
        fmax = std::max(fmax, std::abs(double(f[3 * a + i])));
        if (t[a] == Patch::kInterior) net[i] += double(f[3 * a + i]);
      }
  }
  r.interior_force = std::max({std::abs(net[0]), std::abs(net[1]), std::abs(net[2])}) / fmax;
  return r;
}

template <class T>
class Patch4 : public ::testing::Test {};
TYPED_TEST_SUITE(Patch4, Scalars);

TYPED_TEST(Patch4, LinearFieldGivesConstantStrainAndNoInteriorForce) {
  using T = TypeParam;
  std::mt19937_64 rng(51);
  const Model models[] = {Model::kLinear, Model::kPolar, Model::kNeoHookean};
  const char* names[] = {"linear", "polar co-rotational", "neo-Hookean"};
  double worst_force[3] = {0, 0, 0}, worst_strain = 0;
  for (int trial = 0; trial < 10; ++trial) {
    const Patch p = make_patch(rng);
    ASSERT_EQ(p.tets.size(), 48u);
    double A[9];
    const double c[3] = {0.1, -0.2, 0.05};
    for (int k = 0; k < 3; ++k) {
      // The linear model is checked without rotation (it is not rotation invariant; its patch
      // test is about the strain), the others with any rotation.
      random_deformation(rng, 0.2, A, models[k] == Model::kLinear ? 0.0 : M_PI);
      const PatchResult r = run_patch<T>(p, A, c, models[k]);
      worst_force[k] = std::max(worst_force[k], r.interior_force);
      worst_strain = std::max(worst_strain, r.strain_error);
    }
  }
  const double tol = rounding_tol<T>();
  EXPECT_LT(worst_strain, 10 * tol);
  for (int k = 0; k < 3; ++k) {
    EXPECT_LT(worst_force[k], 10 * tol) << names[k];
    std::printf("[ numbers  ] %s %s: interior |f| / max element |f| = %.2e\n", scalar_name<T>(),
                names[k], worst_force[k]);
  }
  std::printf("[ numbers  ] %s: |F_e - A| / |A| = %.2e\n", scalar_name<T>(), worst_strain);
}

// The edge frame treats part of a strain as rotation; the error is second order: scaling the
// strain by 1/10 scales the interior residual (relative to the forces) by about 1/10. fp64.
TEST(Patch4, EdgeFrameIsConsistentToSecondOrder) {
  std::mt19937_64 rng(52);
  for (int trial = 0; trial < 5; ++trial) {
    const Patch p = make_patch(rng);
    double Q[9], H[9], A[9], B[9];
    random_rotation(rng, Q);
    std::uniform_real_distribution<double> u(-1, 1);
    for (double& h : H) h = u(rng);
    double rel[2];
    for (int s = 0; s < 2; ++s) {
      const double eps = s == 0 ? 1e-2 : 1e-3;
      for (int k = 0; k < 9; ++k) B[k] = (k % 4 == 0 ? 1.0 : 0.0) + eps * H[k];
      mul3(Q, B, A);
      const double c[3] = {0, 0, 0};
      rel[s] = run_patch<double>(p, A, c, Model::kEdgeFrame).interior_force;
    }
    EXPECT_GT(rel[0], 1e-4) << "the edge frame is not expected to pass the patch test exactly";
    EXPECT_GT(rel[0] / rel[1], 5.0);
    EXPECT_LT(rel[0] / rel[1], 20.0);
    std::printf("[ numbers  ] edge frame interior residual: strain 1e-2 %.2e, 1e-3 %.2e\n", rel[0], rel[1]);
  }
}

}  // namespace
}  // namespace eb::tet::test
