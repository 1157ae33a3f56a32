#include "solvers/tled/exact_solution.h"

#include <cmath>
#include <stdexcept>

namespace eb::tled {
namespace {

// S_xx of F = diag(l, l, lam) (Eq. 18 evaluated for a diagonal C).
double lateral_pk2(double mu, double kappa, double lam, double l) {
  const double J = lam * l * l;
  const double I1 = 2 * l * l + lam * lam;
  return mu * std::pow(J, -2.0 / 3.0) * (1.0 - I1 / (3.0 * l * l)) + kappa * J * (J - 1.0) / (l * l);
}

}  // namespace

UniaxialSolution uniaxial_neo_hookean(double mu, double kappa, double lam) {
  if (!(mu > 0 && kappa > 0 && lam > 0)) throw std::invalid_argument("uniaxial_neo_hookean: bad arguments");
  // S_xx grows with l (lateral stretching against both terms); bracket around the volume-
  // preserving guess lam^{-1/2}.
  double lo = 0.25 / std::sqrt(lam), hi = 4.0 / std::sqrt(lam);
  if (!(lateral_pk2(mu, kappa, lam, lo) < 0 && lateral_pk2(mu, kappa, lam, hi) > 0))
    throw std::invalid_argument("uniaxial_neo_hookean: root not bracketed");
  for (int it = 0; it < 200 && hi - lo > 1e-16 * hi; ++it) {
    const double mid = 0.5 * (lo + hi);
    (lateral_pk2(mu, kappa, lam, mid) < 0 ? lo : hi) = mid;
  }
  UniaxialSolution s;
  const double l = 0.5 * (lo + hi);
  s.axial_stretch = lam;
  s.lateral_stretch = l;
  s.J = lam * l * l;
  const double I1 = 2 * l * l + lam * lam;
  const double j23 = std::pow(s.J, -2.0 / 3.0);
  s.psi_dev = 0.5 * mu * (j23 * I1 - 3.0);
  s.psi_vol = 0.5 * kappa * (s.J - 1) * (s.J - 1);
  s.S_zz = mu * j23 * (1.0 - I1 / (3.0 * lam * lam)) + kappa * s.J * (s.J - 1.0) / (lam * lam);
  s.P_zz = lam * s.S_zz;
  return s;
}

std::array<double, 3> uniaxial_displacement(const UniaxialSolution& s, const std::array<double, 3>& X,
                                            const std::array<double, 3>& fixed) {
  return {(s.lateral_stretch - 1) * (X[0] - fixed[0]), (s.lateral_stretch - 1) * (X[1] - fixed[1]),
          (s.axial_stretch - 1) * (X[2] - fixed[2])};
}

}  // namespace eb::tled
