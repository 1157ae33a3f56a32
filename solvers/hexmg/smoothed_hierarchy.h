#pragma once
// hexmg's smoothed hierarchy as a solver of the time steps (variants smoothed-vcycle,
// smoothed-tolerance, smoothed-pcg), on both backends. The construction is the study's
// (algebraic_hierarchy.h: P = (I - omega B^-1 A) P0, one block-Jacobi step on the geometric P0 of
// the paper, exact Galerkin coarse operators), which does not stall on thin features where the
// paper's coarse grids do (the bunny's V-cycle factor 0.74-0.77 against 0.25-0.38).
//
// Following the co-rotated operator. The level-0 matrix changes every step (rotations); the
// prolongations do not: they are built once, in fp64 on the host, from the rest state (R = I), and
// both backends read the same values. That is valid because any full-rank P gives a convergent
// Galerkin V-cycle (the coarse correction is the A-orthogonal projection onto range(P) for every
// A), and its quality depends on range(P) holding the smooth, low-energy errors: a rotation
// R K R^T has K's spectrum element by element, so the rest-state shapes stay low-energy under the
// moderate rotations between neighbouring elements of a co-rotated solid. The coarse operators do
// follow: A_l = P_l^T A_{l-1} P_l is recomputed numerically every step (two products AP = A P,
// A_c = R (AP), R = P^T, each row of a product summed in a fixed order into a fixed pattern that
// the same loops built symbolically here), so every level is the exact Galerkin operator of the
// current step, deterministic on both backends. A_l is symmetric: the second product computes its
// upper triangle and mirror_row copies the transposed blocks below (half its block products).
//
// Lagged coarse operators (hexmg.galerkin_every = K): the products run on steps 0, K, 2K, ... and
// the steps between cycle with the last A_l (l >= 1) beside the current level-0 operator. This is
// still a convergent method, because nothing on level 0 is stale: the cycle is the error
// propagator (I - S)(I - P A_1^{-1} R A_0)(I - S) with the current A_0 in the smoothers and the
// residual, and a stale A_1 (SPD, as every Galerkin P^T A P of an SPD A) only replaces the exact
// coarse correction by an approximate one (the same as the coarsest CG's inexact solve). So
// smoothed-pcg and smoothed-tolerance, which stop on the true level-0 residual |b - A_0 u|, reach
// the same tolerance and only their iteration count can change (smoothed-pcg is flexible CG, which
// tolerates a preconditioner that is no exact inverse). smoothed-vcycle runs a fixed number of
// cycles, so its residual reduction per step changes instead (measured in PERF_NOTES.md: little,
// as the rotations of neighbouring steps move A_0 little). The GPU captures a second step graph
// without the Galerkin kernels for the steps between.
//
// Smoothers. Level 0 keeps the paper's 8-colour block Gauss-Seidel on the 27-point stencil. The
// coarse operators have wider stencils (up to 5^3 blocks per row on level 1), so each coarse level
// is coloured greedily once (rows in slot order, the smallest colour no earlier neighbour has),
// and a sweep relaxes the colours in order, a colour's rows at once (parallel on the GPU; the same
// order and the same row function on the CPU). The coarsest level is solved by the shared Jacobi-
// PCG (solvers/linalg/cg.h) to the model's coarse tolerance. A symmetric cycle (smoothed-pcg) runs
// the post-smoothing colours in reverse.
#include <cstdint>
#include <vector>

#include "solvers/hexmg/algebraic_hierarchy.h"
#include "solvers/hexmg/hexmg_model.h"
#include "solvers/hexmg/smoothed_plan.h"

namespace eb::hexmg {

// The plan of model m from its rest-state level-0 system A0 (export_system's numbering).
SmoothedPlan build_smoothed_plan(const Model& m, const SparseRows& A0);
// The rest-state (u = v = a = 0, R = I) level-0 system of m in fp64, assembled by the CPU backend
// (hexmg_cpu.cpp) with `threads` threads.
SparseRows rest_level0_system(const Model& m, int threads);

}  // namespace eb::hexmg
