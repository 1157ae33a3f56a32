#pragma once
// The static equilibrium iteration of the tet methods (time.mode = "static"; bcsr-pcg and
// corot-cg): inexact Newton on the co-rotational residual r(u) = f_ext - f_int(u), the linear
// systems J du = r solved by the method's Jacobi-PCG, with
//  - the forcing term of Eisenstat & Walker 1996 (choice 2: eta_k = 0.9 (|r_k| / |r_{k-1}|)^2,
//    safeguarded by 0.9 eta_{k-1}^2 while that exceeds 0.1, at most 0.1 (static_newton.cpp says
//    why not their 0.9), and never below what the
//    target static.tolerance needs, 0.5 tol |r_0| / |r_k|): early iterations, whose linearization is
//    poor, are solved loosely, late ones as tightly as the quadratic convergence can use;
//  - the CG's iteration cap following the problem (0: the number of unknowns, CG's finite bound,
//    so that the forcing term, not the cap, ends a solve);
//  - optionally, a line search on the energy's slope along the step (static_newton.cpp), so that
//    a load step too large for the linearization overshoots less; the full step is kept whenever
//    the energy still decreases at its end. A method's option (bcsr-pcg.static_line_search).
// The method supplies the three operations; the iteration, its stopping rule and its statistics
// are written once here.
#include <functional>
#include <string>
#include <vector>

#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"
#include "solvers/linalg/cg.h"

namespace eb::tet {

// How the inner solves are stopped (a method option, e.g. bcsr-pcg.static_forcing).
enum class Forcing {
  EisenstatWalker,  // "eisenstat-walker" (default): the adaptive forcing term above
  Fixed,            // "fixed": every solve to the method's static_cg_tolerance
};
Forcing parse_forcing(const std::string& text);  // InputError listing the choices
std::string to_string(Forcing f);

struct StaticNewtonOptions {
  StaticSpec spec;                 // tolerance (relative to |r_0|) and max_iterations of the scenario
  Forcing forcing = Forcing::EisenstatWalker;
  double cg_tolerance = 1e-10;     // Fixed: every solve's; EisenstatWalker: the forcing term's floor
  int cg_max_iterations = 0;       // 0: `unknowns`
  int64_t unknowns = 0;
  bool line_search = false;
  // The residual the precision can reach (tet::static_residual_floor): the iteration has
  // converged at max(spec.tolerance |r_0|, residual_floor).
  double residual_floor = 0;
};

struct StaticNewtonOps {
  // Assembles the residual and the tangent at the current state; returns |r|_2.
  std::function<double()> assemble;
  // Solves J du = r (du from 0) to |J du - r| <= tolerance |r|, in at most max_iterations.
  std::function<linalg::CgResult(double tolerance, int max_iterations)> solve;
  // u += alpha du (the last solve's du).
  std::function<void(double alpha)> move;
  // r . du of the last assembled residual and the last solve's du.
  std::function<double()> slope;
};

// What the iteration did beyond SolverStats: per outer iteration the forcing term asked of the
// CG, the step length taken and the residual reached.
struct StaticNewtonTrace {
  std::vector<double> forcing, step, residual;
  int backtracks = 0;
  double residual_floor = 0;  // the options' (a run's summary states it beside the residuals)
};

// Runs the iteration from the current state; the state ends at the last accepted iterate (the
// converged one, or the last when it fails). SolverStats: outer_* from the residuals (outer
// iterations = Newton steps taken), inner from the CG solves.
SolverStats static_newton(const StaticNewtonOptions& o, const StaticNewtonOps& ops, StaticNewtonTrace* trace = nullptr);

}  // namespace eb::tet
