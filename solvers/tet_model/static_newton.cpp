#include "solvers/tet_model/static_newton.h"

#include <algorithm>
#include <cmath>

#include "meshes/errors.h"

namespace eb::tet {

Forcing parse_forcing(const std::string& text) {
  if (text == "eisenstat-walker") return Forcing::EisenstatWalker;
  if (text == "fixed") return Forcing::Fixed;
  throw InputError("unknown forcing '" + text +
                   "' (eisenstat-walker: each Newton step's CG to an adaptive relative tolerance; fixed: every CG to "
                   "static_cg_tolerance)");
}

std::string to_string(Forcing f) { return f == Forcing::EisenstatWalker ? "eisenstat-walker" : "fixed"; }

namespace {

// Eisenstat & Walker 1996, choice 2 (gamma 0.9, alpha 2), with their safeguard, and the floor
// that avoids solving beyond the target (Kelley 1995, Sec. 6.3).
// eta_max 0.1 rather than their 0.9: the residual's 2-norm, which the CG's relative tolerance
// measures, first grows under Jacobi-PCG on these stiff systems (a solve to 0.9 takes hundreds of
// iterations and gives a step of little use), and the first Newton residual after the linear step
// is often far larger than |r_0| (the rotations' forces against a small load), which would pin
// eta at its maximum for several steps.
constexpr double kGamma = 0.9, kEtaMax = 0.1, kSafeguard = 0.1;

double next_forcing(double eta_prev, double r, double r_prev, double target) {
  double eta = kGamma * (r / r_prev) * (r / r_prev);
  const double guard = kGamma * eta_prev * eta_prev;
  if (guard > kSafeguard) eta = std::max(eta, guard);
  eta = std::min(eta, kEtaMax);
  return std::max(eta, 0.5 * target / r);
}

}  // namespace

SolverStats static_newton(const StaticNewtonOptions& o, const StaticNewtonOps& ops, StaticNewtonTrace* trace) {
  constexpr int kMaxSearch = 6;
  constexpr double kSlopeRatio = 0.8;
  const int cg_cap = o.cg_max_iterations > 0 ? o.cg_max_iterations : int(std::max<int64_t>(1, o.unknowns));
  SolverStats st;
  double r = ops.assemble();
  const double r0 = r;
  st.outer_initial_residual = st.outer_final_residual = r;
  const double target = std::max(o.spec.tolerance * r0, o.residual_floor);
  double eta = kEtaMax, r_prev = r;
  if (trace) trace->residual_floor = o.residual_floor;
  for (int it = 0;; ++it) {
    if (!std::isfinite(r)) {
      st.outer_converged = false;
      break;
    }
    if (r <= target || r == 0.0) {
      st.outer_converged = true;
      break;
    }
    if (it >= o.spec.max_iterations) {
      st.outer_converged = false;
      break;
    }
    double tol = o.cg_tolerance;
    if (o.forcing == Forcing::EisenstatWalker) {
      eta = it == 0 ? kEtaMax : next_forcing(eta, r, r_prev, target);
      tol = std::max(eta, o.cg_tolerance);
    }
    const linalg::CgResult cg = ops.solve(tol, cg_cap);
    st.iterations += cg.iterations;
    st.inner_per_outer.push_back(cg.iterations);
    st.initial_residual = cg.initial_residual();
    st.final_residual = cg.final_residual();
    st.converged = cg.converged();
    ++st.outer_iterations;
    // A tangent the CG cannot work with (not positive definite, non-finite) gives no direction.
    if (cg.status == linalg::CgStatus::Breakdown || cg.status == linalg::CgStatus::NonFinite) {
      st.outer_converged = false;
      break;
    }
    // Line search on the energy's slope along du, g(a) = -r(u + a du) . du (g(0) < 0 for a
    // descent direction): the residual's norm is no merit function here, since after a good
    // step it is often larger (stiff forces of the rotated elements against a small load). A step
    // is kept while the energy still decreases at its end, or rises no faster than 0.8 of the
    // initial descent (Crisfield's and FEAP's criterion); otherwise regula falsi (Illinois) on
    // [0, a] for a point with |g| <= 0.8 |g(0)|.
    const double g0 = o.line_search ? -ops.slope() : 0.0;
    double alpha = 1.0;
    ops.move(alpha);
    double r_new = ops.assemble();
    if (o.line_search && g0 < 0) {
      double lo = 0, g_lo = g0, hi = alpha, g_hi = -ops.slope();
      int side = 0;
      for (int h = 0; h < kMaxSearch && std::isfinite(g_hi) && g_hi > kSlopeRatio * -g0; ++h) {
        double next = lo - g_lo * (hi - lo) / (g_hi - g_lo);
        if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
        next = std::max(next, lo + 0.05 * (hi - lo));
        ops.move(next - alpha);
        alpha = next;
        r_new = ops.assemble();
        const double g = -ops.slope();
        if (trace) ++trace->backtracks;
        if (std::abs(g) <= kSlopeRatio * -g0) break;
        if (g < 0) {
          lo = alpha;
          g_lo = g;
          if (side == -1) g_hi *= 0.5;
          side = -1;
        } else {
          hi = alpha;
          g_hi = g;
          if (side == 1) g_lo *= 0.5;
          side = 1;
        }
      }
      if (!std::isfinite(g_hi)) {  // a step to a non-finite state: halve instead
        for (int h = 0; h < kMaxSearch && !std::isfinite(r_new); ++h) {
          ops.move(-0.5 * alpha);
          alpha *= 0.5;
          r_new = ops.assemble();
        }
      }
    }
    if (trace) {
      trace->forcing.push_back(tol);
      trace->step.push_back(alpha);
      trace->residual.push_back(r_new);
    }
    r_prev = r;
    r = r_new;
    st.outer_final_residual = r;
  }
  return st;
}

}  // namespace eb::tet
