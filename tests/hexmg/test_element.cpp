// Element mathematics alone (host, float and double): the stiffness matrix, the polar
// decomposition and its inverted-element policy, and the fused Galerkin product (Eqs. 10-11)
// against an explicit sparse P^T A P on an irregular hierarchy.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "assembly/hexmg/hex_element.h"
#include "assembly/hexmg/hexmg_kernels.h"
#include "solvers/hexmg/hexmg_model.h"

namespace eb::hexmg {
namespace {

TEST(HexElement, StiffnessIsSymmetricWithRigidNullSpace) {
  const double h = 0.01, nu = 0.3;
  const auto K = unit_hex_stiffness(nu, h);
  double kmax = 0;
  for (double v : K) kmax = std::max(kmax, std::abs(v));
  for (int i = 0; i < 24; ++i)
    for (int j = 0; j < 24; ++j) EXPECT_NEAR(K[i * 24 + j], K[j * 24 + i], 1e-14 * kmax);
  // six rigid modes: 3 translations, 3 infinitesimal rotations
  for (int mode = 0; mode < 6; ++mode) {
    double u[24];
    for (int c = 0; c < 8; ++c) {
      const double x[3] = {h * corner_bit(c, 0), h * corner_bit(c, 1), h * corner_bit(c, 2)};
      for (int d = 0; d < 3; ++d) u[3 * c + d] = mode < 3 ? (d == mode ? 1.0 : 0.0) : 0.0;
      if (mode >= 3) {
        const int a = mode - 3;  // rotation about axis a: w x x
        const double w[3] = {a == 0 ? 1.0 : 0.0, a == 1 ? 1.0 : 0.0, a == 2 ? 1.0 : 0.0};
        u[3 * c + 0] = w[1] * x[2] - w[2] * x[1];
        u[3 * c + 1] = w[2] * x[0] - w[0] * x[2];
        u[3 * c + 2] = w[0] * x[1] - w[1] * x[0];
      }
    }
    for (int i = 0; i < 24; ++i) {
      double f = 0;
      for (int j = 0; j < 24; ++j) f += K[i * 24 + j] * u[j];
      EXPECT_NEAR(f, 0.0, 1e-12 * kmax) << "mode " << mode << " row " << i;
    }
  }
  // Positive on a stretch: energy of a uniaxial strain e equals E e^2 (1-nu)/((1+nu)(1-2nu)) V / 2
  double u[24], energy = 0;
  const double e = 1e-3;
  for (int c = 0; c < 8; ++c)
    for (int d = 0; d < 3; ++d) u[3 * c + d] = d == 0 ? e * h * corner_bit(c, 0) : 0.0;
  for (int i = 0; i < 24; ++i)
    for (int j = 0; j < 24; ++j) energy += 0.5 * u[i] * K[i * 24 + j] * u[j];
  const double expect = 0.5 * e * e * (1 - nu) / ((1 + nu) * (1 - 2 * nu)) * h * h * h;
  EXPECT_NEAR(energy, expect, 1e-12 * expect);
}

template <class T>
void rotation_about(T angle, const T* axis, T* R) {
  const T c = std::cos(angle), s = std::sin(angle), t = 1 - c;
  const T x = axis[0], y = axis[1], z = axis[2];
  const T m[9] = {t * x * x + c, t * x * y - s * z, t * x * z + s * y, t * x * y + s * z, t * y * y + c,
                  t * y * z - s * x, t * x * z - s * y, t * y * z + s * x, t * z * z + c};
  for (int i = 0; i < 9; ++i) R[i] = m[i];
}

template <class T>
class Polar : public ::testing::Test {};
using Scalars = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Polar, Scalars);

TYPED_TEST(Polar, RecoversRotationOfStretchedElement) {
  using T = TypeParam;
  const T tol = std::is_same<T, float>::value ? T(2e-5) : T(1e-12);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> U(-1, 1);
  const T I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  for (int trial = 0; trial < 50; ++trial) {
    T axis[3] = {T(U(rng)), T(U(rng)), T(U(rng))};
    const T n = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    for (T& a : axis) a /= n;
    T Q[9];
    rotation_about(T(3.0 * U(rng)), axis, Q);
    // symmetric positive stretch with ratios up to 1:4
    const T S[9] = {T(1.5 + 0.5 * U(rng)), T(0.3 * U(rng)), 0, 0, T(0.4 + 0.1 * U(rng)), T(0.2 * U(rng)), 0, 0,
                    T(1.0 + 0.5 * U(rng))};
    T Ssym[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) Ssym[3 * i + j] = S[3 * std::min(i, j) + std::max(i, j)];
    T F[9] = {};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 3; ++k) F[3 * i + j] += Q[3 * i + k] * Ssym[3 * k + j];
    if (det3(Ssym) <= T(0.2)) continue;
    T R[9];
    ASSERT_EQ(polar_rotation(F, I, R), kRotationOk);
    for (int i = 0; i < 9; ++i) EXPECT_NEAR(R[i], Q[i], tol) << "trial " << trial;
  }
}

TYPED_TEST(Polar, InvertedElementKeepsPreviousRotation) {
  using T = TypeParam;
  const T axis[3] = {0, 0, 1};
  T Rp[9], R[9];
  rotation_about(T(0.3), axis, Rp);
  const T F[9] = {1, 0, 0, 0, 1, 0, 0, 0, -0.5};  // reflected: det < 0
  EXPECT_EQ(polar_rotation(F, Rp, R), kRotationKeptPrevious);
  for (int i = 0; i < 9; ++i) EXPECT_EQ(R[i], Rp[i]);
  EXPECT_NEAR(det3(R), T(1), T(1e-5));
  const T Fz[9] = {1, 0, 0, 0, 1, 0, 0, 0, 0};  // flattened
  EXPECT_EQ(polar_rotation(Fz, Rp, R), kRotationKeptPrevious);
  const T Fn[9] = {1, 0, 0, 0, 1, 0, 0, 0, std::numeric_limits<T>::quiet_NaN()};
  EXPECT_EQ(polar_rotation(Fn, Rp, R), kRotationNonFinite);
}

// The fused matrix-free Galerkin product equals P^T A P with P the trilinear interpolation
// (Eq. 15) zeroed on dead components, on an irregular voxel shape with some dead components.
TEST(Galerkin, EqualsExplicitTripleProduct) {
  std::vector<std::array<int32_t, 3>> cells;
  for (int z = 0; z < 7; ++z)
    for (int y = 0; y < 6; ++y)
      for (int x = 0; x < 9; ++x)
        if ((x < 4 || y < 3 || z > 4) && !(x == 8 && y == 5)) cells.push_back({x, y, z});
  std::vector<Level> levels = build_hierarchy(cells, 40);
  ASSERT_GE(levels.size(), 2u);
  Level& F = levels[0];
  Level& C = levels[1];
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> U(-1, 1);
  F.dead.assign(F.n_padded, 0);
  for (int32_t s = 0; s < F.n_padded; ++s)
    if (F.coord[s][0] >= 0 && F.coord[s][2] == 0) F.dead[s] = (F.coord[s][0] % 2) ? 7 : 2;  // some rows/cols dead
  propagate_dead(levels);
  // Random fine stencil with zero rows and columns on dead components (as assembled).
  std::vector<double> Af(size_t(F.n_padded) * kCoeffs, 0.0), Ac(size_t(C.n_padded) * kCoeffs, -7.0);
  for (int32_t x = 0; x < F.n_padded; ++x)
    for (int l = 0; l < 27; ++l) {
      const int32_t y = F.nbr[x][l];
      if (y < 0) continue;
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          const bool dead = (F.dead[x] >> i & 1) || (F.dead[y] >> j & 1);
          Af[size_t(x) * kCoeffs + l * 9 + 3 * i + j] = dead ? ((x == y && i == j) ? 1.0 : 0.0) : U(rng);
        }
    }
  LevelView<double> vf, vc;
  vf.n = F.n_padded;
  vf.A = {Af.data(), kCoeffs, 1};
  vf.nbr = {F.nbr[0].data(), 27, 1};
  vf.dead = F.dead.data();
  vc.n = C.n_padded;
  vc.A = {Ac.data(), kCoeffs, 1};
  vc.nbr = {C.nbr[0].data(), 27, 1};
  vc.child = {C.child[0].data(), 27, 1};
  vc.dead = C.dead.data();
  for (int32_t x = 0; x < C.n_padded; ++x)
    if (C.nbr[x][kCentre] >= 0) galerkin_components<9>(x, 0, vf, vc);
  // Explicit: P (fine dof <- coarse dof) from the parent lists, masked.
  std::map<std::pair<int64_t, int64_t>, double> P;  // (fine dof, coarse dof)
  for (int32_t z = 0; z < F.n_padded; ++z) {
    if (F.coord[z][0] < 0) continue;
    int cnt = 0;
    for (int p = 0; p < 8; ++p) cnt += F.parent[z][p] >= 0;
    for (int p = 0; p < 8; ++p) {
      const int32_t c = F.parent[z][p];
      if (c < 0) continue;
      for (int d = 0; d < 3; ++d)
        if (!(F.dead[z] >> d & 1)) P[{3 * int64_t(z) + d, 3 * int64_t(c) + d}] = 1.0 / cnt;
    }
  }
  // AP[(fine dof, coarse dof)]
  std::map<std::pair<int64_t, int64_t>, double> AP;
  for (const auto& [key, w] : P) {
    const int64_t fz = key.first / 3;
    const int j = int(key.first % 3);
    // column (z, j) of A: entries A[x][l][i][j] with nbr[x][l] == z
    for (int l = 0; l < 27; ++l) {
      const int32_t x = F.nbr[fz][l];  // x is a neighbour of z; z = x + (-l offset)
      if (x < 0) continue;
      const int lback = 26 - l;  // offset from x to z
      for (int i = 0; i < 3; ++i)
        AP[{3 * int64_t(x) + i, key.second}] += Af[size_t(x) * kCoeffs + lback * 9 + 3 * i + j] * w;
    }
  }
  std::map<std::pair<int64_t, int64_t>, double> PtAP;
  std::map<int64_t, std::vector<std::pair<int64_t, double>>> Pt;  // fine dof -> (coarse, w)
  for (const auto& [key, w] : P) Pt[key.first].push_back({key.second, w});
  for (const auto& [key, v] : AP)
    for (const auto& [c, w] : Pt[key.first]) PtAP[{c, key.second}] += w * v;
  double worst = 0, scale = 0;
  for (int32_t x = 0; x < C.n_padded; ++x) {
    if (C.nbr[x][kCentre] < 0) continue;
    for (int l = 0; l < 27; ++l)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          const int32_t y = C.nbr[x][l];
          double want = 0;
          if (y >= 0) {
            auto it = PtAP.find({3 * int64_t(x) + i, 3 * int64_t(y) + j});
            if (it != PtAP.end()) want = it->second;
            if ((C.dead[x] >> i & 1) && x == y && i == j) want += 1.0;
          }
          const double got = Ac[size_t(x) * kCoeffs + l * 9 + 3 * i + j];
          worst = std::max(worst, std::abs(got - want));
          scale = std::max(scale, std::abs(want));
        }
  }
  EXPECT_GT(scale, 0.1);
  EXPECT_LT(worst, 1e-12 * scale);
}

}  // namespace
}  // namespace eb::hexmg
