// The corrected (smoothed-prolongation) hierarchy of solvers/hexmg/algebraic_hierarchy.h, CPU fp64:
// (1) P never moves a constrained or padding component; (2) every coarse operator is P^T A P;
// (3) unsmoothed, it reproduces the paper's geometric Galerkin operators of the CPU backend and
// the paper's V-cycle; (4) its V-cycle converges on the clamped cube to 1e-10; (5) on a plate one
// voxel thick, where the paper's coarse functions cannot bend, its energy-norm factor per cycle
// is far below the paper construction's; (6) the shapes study (dick2011::measure_factors) gives
// the same per-iteration factors with its MG-PCG reference as with the direct solve.
#include <Eigen/SparseCholesky>
#include <cstdio>
#include <filesystem>

#include "experiments/dick2011/bunny_scenario.h"
#include "experiments/dick2011/mg_shapes.h"
#include "meshes/box.h"
#include "meshes/vtk_io.h"
#include "solvers/hexmg/algebraic_hierarchy.h"
#include "tests/hexmg/hexmg_test_util.h"
#include "tests/hexmg/shape_scenario.h"

namespace eb::hexmg::test {
namespace {

const Regime kCpu64{Backend::Cpu, Precision::Fp64};

struct System {
  std::unique_ptr<HexmgSimulation> sim;
  SparseRows A;
  Eigen::VectorXd b;
};

// The first step's level-0 system of a scenario (from rest: the right-hand side is the load).
System first_step(const Scenario& sc) {
  System s;
  s.sim = make(sc, kCpu64);
  s.sim->begin_step();
  std::vector<HexmgSimulation::Triplet> trip;
  std::vector<double> b, u;
  s.sim->export_system(trip, b, u);
  const Eigen::Index n = Eigen::Index(b.size());
  std::vector<Eigen::Triplet<double>> t;
  for (const auto& e : trip) t.emplace_back(e.row, e.col, e.value);
  s.A.resize(n, n);
  s.A.setFromTriplets(t.begin(), t.end());
  s.b = Eigen::Map<const Eigen::VectorXd>(b.data(), n);
  return s;
}


// As experiments/dick2011 runs it.
AlgebraicOptions smoothed() {
  AlgebraicOptions o;
  o.prolongation_smoothing = 1;
  o.block_jacobi = true;
  return o;
}

AlgebraicOptions unsmoothed() {
  AlgebraicOptions o;
  o.prolongation_smoothing = 0;
  return o;
}

TEST(AlgebraicHierarchy, ProlongationNeverMovesConstrainedComponents) {
  System s = first_step(clamped_cube(16));
  const Level& L0 = s.sim->model().levels[0];
  for (int steps : {1, 2}) {
    AlgebraicOptions o = smoothed();
    o.prolongation_smoothing = steps;
    o.block_jacobi = steps == 1;
    const AlgebraicHierarchy h(s.sim->model(), s.A, o);
    ASSERT_EQ(h.n_levels(), 3);
    const SparseRows& P = h.P(0);
    int64_t constrained = 0;
    for (int32_t x = 0; x < L0.n_padded; ++x)
      for (int d = 0; d < 3; ++d) {
        const bool fixed = L0.nbr[x][13] < 0 || (L0.dead[x] & (1u << d));
        if (!fixed) continue;
        ++constrained;
        const Eigen::Index row = 3 * Eigen::Index(x) + d;
        EXPECT_EQ(P.outerIndexPtr()[row + 1] - P.outerIndexPtr()[row], 0) << "slot " << x << " component " << d;
      }
    EXPECT_GT(constrained, 3 * 17 * 17);  // the clamped face z = 0 at least
  }
}

TEST(AlgebraicHierarchy, CoarseOperatorsAreGalerkinProducts) {
  System s = first_step(shape_scenario("l_shape"));
  const AlgebraicHierarchy h(s.sim->model(), s.A, smoothed());
  ASSERT_GE(h.n_levels(), 2);
  for (int l = 0; l + 1 < h.n_levels(); ++l) {
    // An independent product: column-major operands, in the other association order.
    const Eigen::SparseMatrix<double> A(h.A(l)), P(h.P(l));
    const Eigen::SparseMatrix<double> Pt = P.transpose();
    const Eigen::SparseMatrix<double> want = Eigen::SparseMatrix<double>(Pt * A) * P;
    const Eigen::SparseMatrix<double> got(h.A(l + 1));
    const double diff = (got - want).norm(), scale = want.norm();
    std::printf("level %d: |A_c - P^T A P| / |A_c| = %.2e, %lld unknowns\n", l + 1, diff / scale, (long long)got.rows());
    EXPECT_LE(diff, 1e-12 * scale) << "level " << l + 1;
  }
}

TEST(AlgebraicHierarchy, UnsmoothedEqualsGeometricGalerkinOperators) {
  System s = first_step(clamped_cube(16));
  const Model& m = s.sim->model();
  const AlgebraicHierarchy h(m, s.A, unsmoothed());
  ASSERT_EQ(h.n_levels(), m.n_levels());
  for (int l = 1; l < h.n_levels(); ++l) {
    const Level& L = m.levels[l];
    const std::vector<double> stencil = s.sim->get_array(PhaseArray::A, l);
    std::vector<int64_t> index(3 * size_t(L.n_padded), -1);
    for (size_t i = 0; i < h.dofs(l).size(); ++i) index[size_t(h.dofs(l)[i])] = int64_t(i);
    const SparseRows& A = h.A(l);
    double worst = 0, scale = 0, total = 0;
    int64_t compared = 0;
    for (int32_t x = 0; x < L.n_padded; ++x) {
      if (L.nbr[x][13] < 0) continue;
      for (int k = 0; k < 27; ++k) {
        const int32_t y = L.nbr[x][k];
        if (y < 0) continue;
        for (int a = 0; a < 3; ++a)
          for (int c = 0; c < 3; ++c) {
            const double want = stencil[size_t(x) * 243 + 9 * k + 3 * a + c];
            const int64_t i = index[3 * size_t(x) + a], j = index[3 * size_t(y) + c];
            // Dead components (identity rows in the backend) are not unknowns here.
            if (i < 0 || j < 0) continue;
            worst = std::max(worst, std::abs(A.coeff(i, j) - want));
            scale = std::max(scale, std::abs(want));
            ++compared;
          }
      }
    }
    for (Eigen::Index i = 0; i < A.outerSize(); ++i)
      for (SparseRows::InnerIterator it(A, i); it; ++it) total += 1;
    std::printf("level %d: %lld entries compared, max |difference| %.2e of max |entry| %.2e\n", l, (long long)compared, worst,
                scale);
    EXPECT_LE(worst, 1e-12 * scale);
    EXPECT_LE(total, double(compared));  // nothing outside the 27-point stencil
  }
}

TEST(AlgebraicHierarchy, UnsmoothedVcycleIsThePapersVcycle) {
  System s = first_step(clamped_cube(16));
  const AlgebraicHierarchy h(s.sim->model(), s.A, unsmoothed());
  Eigen::VectorXd u = Eigen::VectorXd::Zero(s.b.size());
  std::vector<HexmgSimulation::Triplet> trip;
  std::vector<double> b, su;
  for (int c = 1; c <= 4; ++c) {
    h.vcycle(s.b, u);
    s.sim->vcycle();
    s.sim->export_system(trip, b, su);
    const double diff = (u - Eigen::Map<const Eigen::VectorXd>(su.data(), u.size())).norm() / u.norm();
    std::printf("cycle %d: |u - u_paper| / |u| = %.2e\n", c, diff);
    // The paper solves the coarsest level by Jacobi-PCG to 1e-10, here directly.
    EXPECT_LE(diff, 1e-8);
  }
}

TEST(AlgebraicHierarchy, VcycleConvergesOnCube) {
  System s = first_step(clamped_cube(16));
  const AlgebraicHierarchy h(s.sim->model(), s.A, smoothed());
  Eigen::VectorXd u = Eigen::VectorXd::Zero(s.b.size());
  const double r0 = s.b.norm();
  double r = r0;
  int cycles = 0;
  while (r > 1e-10 * r0 && cycles < 20) {
    h.vcycle(s.b, u);
    const double rn = (s.b - s.A * u).norm();
    std::printf("cycle %d: |r|/|r0| = %.2e (factor %.3f)\n", ++cycles, rn / r0, rn / r);
    r = rn;
  }
  EXPECT_LE(r, 1e-10 * r0);
  EXPECT_LE(cycles, 14);
}

// Energy-norm error factors of `cycles` iterations of `step` against a direct solve; returns the
// geometric mean over the last half (the asymptotic factor).
template <class Step>
double asymptotic_energy_factor(const System& s, int cycles, Step&& step) {
  const Eigen::SparseMatrix<double> A(s.A);
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(A);
  const Eigen::VectorXd x = ldlt.solve(s.b);
  auto energy = [&](const Eigen::VectorXd& u) {
    const Eigen::VectorXd e = u - x;
    return std::sqrt(e.dot(A * e));
  };
  Eigen::VectorXd u = Eigen::VectorXd::Zero(s.b.size());
  std::vector<double> e = {energy(u)};
  for (int c = 0; c < cycles; ++c) {
    step(u);
    e.push_back(energy(u));
  }
  const int half = cycles / 2;
  return std::pow(e[cycles] / e[cycles - half], 1.0 / half);
}

TEST(AlgebraicHierarchy, FarFasterThanPaperOnThinPlate) {
  System s = first_step(shape_scenario("plate_1"));
  std::vector<HexmgSimulation::Triplet> trip;
  std::vector<double> b, su;
  const double paper = asymptotic_energy_factor(s, 10, [&](Eigen::VectorXd& u) {
    s.sim->vcycle();
    s.sim->export_system(trip, b, su);
    u = Eigen::Map<const Eigen::VectorXd>(su.data(), u.size());
  });
  const AlgebraicHierarchy h(s.sim->model(), s.A, smoothed());
  const double corrected = asymptotic_energy_factor(s, 10, [&](Eigen::VectorXd& u) { h.vcycle(s.b, u); });
  std::printf("plate_1 energy factor per V-cycle: paper %.3f, smoothed prolongation %.3f\n", paper, corrected);
  EXPECT_GE(paper, 0.6);  // the stall this construction exists to remove
  EXPECT_LE(corrected, 0.5 * paper);
}

// run_shapes measures the larger bunnies against an MG-PCG solve to 1e-13 instead of a direct
// solve (infeasible there): on a model small enough for both, the two paths must give the same
// rows, residual factors identically (the iterations do not depend on the reference) and energy
// factors to 1e-3; the direct path's cross-check (every row against both references) agrees too.
TEST(AlgebraicHierarchy, PcgReferenceGivesTheDirectFactors) {
  const Scenario sc = shape_scenario("plate_2");
  dick2011::FactorStudyOptions o;
  o.threads = 1;
  o.reference = dick2011::FactorReference::Direct;
  o.cross_check = true;
  const dick2011::FactorStudy direct = dick2011::measure_factors(sc, o);
  o.reference = dick2011::FactorReference::MgPcg;
  o.cross_check = false;
  const dick2011::FactorStudy pcg = dick2011::measure_factors(sc, o);
  EXPECT_EQ(direct.reference, dick2011::FactorReference::Direct);
  EXPECT_EQ(pcg.reference, dick2011::FactorReference::MgPcg);
  EXPECT_LE(pcg.reference_residual, 1e-12);  // the recurrence residual reached 1e-13; the true one stops at a few 1e-13
  EXPECT_GT(pcg.pcg_iterations, 0);
  ASSERT_EQ(direct.rows.size(), pcg.rows.size());
  double worst = 0;
  size_t compared = 0;
  for (size_t i = 0; i < direct.rows.size(); ++i) {
    const auto &a = direct.rows[i], &b = pcg.rows[i];
    ASSERT_EQ(a.variant, b.variant);
    ASSERT_EQ(a.iteration, b.iteration);
    EXPECT_EQ(a.residual_factor, b.residual_factor) << a.variant << " " << a.iteration;
    EXPECT_EQ(a.relative_residual, b.relative_residual);
    EXPECT_TRUE(std::isnan(b.energy_factor_check));
    // Energy factors are measured down to an energy error of 1e-11 (both paths decide alike).
    EXPECT_EQ(std::isnan(a.energy_factor), a.energy_error <= o.energy_floor);
    EXPECT_EQ(std::isnan(b.energy_factor), b.energy_error <= o.energy_floor);
    if (a.energy_error > 1.01 * o.energy_floor && b.energy_error > 1.01 * o.energy_floor) {
      ++compared;
      EXPECT_NEAR(a.energy_factor, b.energy_factor, 1e-3) << a.variant << " " << a.iteration << " error " << a.energy_error;
      EXPECT_NEAR(a.energy_factor, a.energy_factor_check, 1e-3) << a.variant << " " << a.iteration;
      worst = std::max(worst, std::abs(a.energy_factor - b.energy_factor));
    }
    std::printf("%-15s %2d  residual %.3e  energy error %.3e  factor direct %.6f  MG-PCG %.6f  (check %.6f)\n", a.variant.c_str(),
                a.iteration, a.relative_residual, a.energy_error, a.energy_factor, b.energy_factor, a.energy_factor_check);
  }
  std::printf("plate_2: %zu rows (%zu energy factors compared), max |energy factor difference| %.2e; MG-PCG reference %d "
              "iterations, |r|/|b| %.2e; direct (refined) |r|/|b| %.2e\n",
              direct.rows.size(), compared, worst, pcg.pcg_iterations, pcg.reference_residual, direct.reference_residual);
  // Only the last row or two of a construction fall below the floor (its last iterations pass 1e-11).
  EXPECT_GE(compared + 6, direct.rows.size());
  EXPECT_LE(direct.max_check_difference, 1e-3);
  // Every construction ran until the residual fell 1e-10 or 30 iterations.
  for (size_t i = 0; i < direct.rows.size(); ++i)
    if (i + 1 == direct.rows.size() || direct.rows[i + 1].variant != direct.rows[i].variant)
      EXPECT_TRUE(direct.rows[i].relative_residual <= 1e-10 || direct.rows[i].iteration == 30) << direct.rows[i].variant;
}

}  // namespace
}  // namespace eb::hexmg::test
