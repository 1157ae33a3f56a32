#pragma once
// A corrected coarse-grid construction for hexmg, next to the paper's (Dick et al. 2011, Sec. 3.2),
// CPU fp64 only (a convergence variant, measured by experiments/dick2011 run_shapes).
//
// Why: the paper's coarse functions are the trilinear functions of 2x2x2 blocks, masked to the
// voxels. A feature one voxel thick (the bunny's ear tips, a thin plate) bends, and no combination
// of coarse trilinear functions represents that bending with low energy; the Gauss-Seidel smoother
// cannot remove those smooth errors either, so the V-cycle factor settles at 0.7-0.9 on the bunny.
// Smoothing the prolongation, P = (I - omega D^-1 A)^k P0 (smoothed aggregation's prolongator
// smoother applied to the geometric P0), lets each coarse function relax to the low-energy shape
// that the fine operator prefers, thin sheets included, at the price of wider coarse stencils.
// The coarse operators are then the exact Galerkin products P^T A P on every level.
//
// Numbering. Level 0 is the simulation's exported system (HexmgSimulation::export_system: slot-
// component index 3 slot + d, padding and Dirichlet components as identity rows with zero columns).
// Its slot order groups the 8 Gauss-Seidel colours, so a forward block Gauss-Seidel sweep in index
// order is the paper's 8-colour sweep. Coarse levels keep only components whose column of P is not
// zero (components that no unconstrained fine component reaches have no equation), in slot order.
#include <cstdint>
#include <vector>

#include <Eigen/Dense>
#include <Eigen/Sparse>

#include "solvers/hexmg/hexmg_model.h"

namespace eb::hexmg {

using SparseRows = Eigen::SparseMatrix<double, Eigen::RowMajor>;

// The paper's trilinear interpolation from level `level` + 1 to level `level` of a model, in slot-
// component numbering of both levels (3 n_padded each): weight 1/count from each of the (1, 2, 4
// or 8) parents, as interpolate_correct_vertex. Rows of padding slots and of components dead on
// `level` are zero (the prolongation never moves constrained values).
SparseRows geometric_prolongation(const Model& m, int level);

struct AlgebraicOptions {
  int prolongation_smoothing = 1;   // Jacobi steps on P0; 0 gives the paper's Galerkin hierarchy
  double omega_scale = 4.0 / 3.0;   // omega = omega_scale / lambda_max(D^-1 A) (smoothed aggregation's choice)
  bool block_jacobi = false;        // D = the 3x3 vertex blocks of A instead of its diagonal
  int pre_smooth = 2, post_smooth = 1;  // block Gauss-Seidel sweeps per level
  int max_levels = 0;      // 0: the model's levels; fewer solves a finer level directly (diagnostics)
  bool symmetric = false;  // post-smoothing runs backward: with pre == post the V-cycle is a symmetric
                           // operator, as CG preconditioning needs
};

class AlgebraicHierarchy {
 public:
  // A0: the level-0 system of `m` (3 n_padded rows, export_system's numbering).
  AlgebraicHierarchy(const Model& m, const SparseRows& A0, const AlgebraicOptions& o);

  int n_levels() const { return int(levels_.size()); }
  const SparseRows& A(int l) const { return levels_[l].A; }
  // Prolongation from level l + 1 to level l (l < n_levels() - 1).
  const SparseRows& P(int l) const { return levels_[l].P; }
  // Slot-component index (3 slot + d of the model's level l) of each level-l unknown.
  const std::vector<int64_t>& dofs(int l) const { return levels_[l].dof; }
  const AlgebraicOptions& options() const { return opt_; }
  // Changes the cycle of a built hierarchy (pre_smooth, post_smooth, symmetric): the levels do
  // not depend on it, so one construction serves a stationary V-cycle and MG-PCG alike.
  void set_cycle(int pre_smooth, int post_smooth, bool symmetric) {
    opt_.pre_smooth = pre_smooth;
    opt_.post_smooth = post_smooth;
    opt_.symmetric = symmetric;
  }
  // The omega used to smooth P of level l (0 when unsmoothed).
  double omega(int l) const { return levels_[l].omega; }

  // One V-cycle on level 0 for A0 u = b, u updated in place.
  void vcycle(const Eigen::VectorXd& b, Eigen::VectorXd& u) const;

  // sum over levels of nnz(A_l) / nnz(A_0).
  double operator_complexity() const;
  // Matrix entries read per V-cycle (smoothing sweeps, the residual, restriction and
  // interpolation on every level; the coarsest solve as its dense factor's entries), divided by
  // nnz(A_0): a precision- and machine-independent cost that compares constructions fairly.
  double work_per_cycle() const;
  // Unknowns on the coarsest level whose pivot was treated as zero (linearly dependent coarse
  // functions: A_c is singular but the restricted right-hand side lies in its range).
  int coarsest_null_pivots() const { return null_pivots_; }

 private:
  struct Level {
    SparseRows A;                 // this level's operator
    SparseRows P;                 // from the next coarser level (empty on the coarsest)
    SparseRows R;                 // P^T, stored for the restriction
    std::vector<int64_t> dof;     // slot-component index per unknown
    std::vector<int64_t> block;   // first unknown of each vertex block, plus the end
    std::vector<Eigen::Matrix3d> block_inverse;  // inverse of each vertex's diagonal block
    double omega = 0;
  };
  void set_blocks(Level& L) const;
  void gauss_seidel(const Level& L, const Eigen::VectorXd& b, Eigen::VectorXd& u, bool backward) const;
  void cycle(int l, const Eigen::VectorXd& b, Eigen::VectorXd& u) const;
  void coarsest_solve(const Eigen::VectorXd& b, Eigen::VectorXd& u) const;

  AlgebraicOptions opt_;
  std::vector<Level> levels_;
  // Coarsest level: A = Q^T L D L^T Q (symmetric pivoting); zero pivots give a pseudo-solve.
  Eigen::LDLT<Eigen::MatrixXd> coarse_ldlt_;
  Eigen::VectorXd coarse_dinv_;
  int null_pivots_ = 0;
};

// CG preconditioned by V-cycles (MG-PCG) on A0 u = b from u, at most `iterations` iterations or
// until |r| <= rel_tolerance |r0|. `after_iteration(k, u)` is called after each iteration (k from 1)
// and may return false to stop. Returns the iterations done. The hierarchy should be symmetric
// (options().symmetric with pre_smooth == post_smooth) for CG's theory to hold.
template <class Callback>
int mg_pcg(const AlgebraicHierarchy& h, const SparseRows& A0, const Eigen::VectorXd& b, Eigen::VectorXd& u, int iterations,
           double rel_tolerance, Callback&& after_iteration) {
  Eigen::VectorXd r = b - A0 * u, z = Eigen::VectorXd::Zero(b.size());
  h.vcycle(r, z);
  Eigen::VectorXd p = z, q(b.size());
  double rz = r.dot(z);
  const double r0 = r.norm();
  int k = 0;
  while (k < iterations && r.norm() > rel_tolerance * r0 && rz > 0) {
    q.noalias() = A0 * p;
    const double pq = p.dot(q);
    if (!(pq > 0)) break;
    const double a = rz / pq;
    u += a * p;
    r -= a * q;
    ++k;
    if (!after_iteration(k, u)) break;
    z.setZero();
    h.vcycle(r, z);
    const double rz_new = r.dot(z);
    p = z + (rz_new / rz) * p;
    rz = rz_new;
  }
  return k;
}

}  // namespace eb::hexmg
