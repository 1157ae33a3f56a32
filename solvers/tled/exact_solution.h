#pragma once
// Closed-form reference for the paper's test problem: a neo-Hookean block (Eq. 16) under
// homogeneous uniaxial compression with free lateral faces has F = diag(l, l, lambda) with the
// lateral stretch l fixed by S_xx = S_yy = 0. Damage (Eq. 22) scales the whole stress by
// (1 - d), so it leaves l unchanged.
#include <array>

namespace eb::tled {

struct UniaxialSolution {
  double axial_stretch = 1;    // lambda (0.8 at 20% compression)
  double lateral_stretch = 1;  // l
  double J = 1;
  double psi_dev = 0;          // mu/2 (I1bar - 3)
  double psi_vol = 0;          // kappa/2 (J - 1)^2
  double S_zz = 0;             // second Piola-Kirchhoff axial stress (undamaged)
  double P_zz = 0;             // nominal (first Piola-Kirchhoff) axial stress = lambda S_zz
};

// Solves S_xx(l) = 0 by bisection to machine precision. Throws std::invalid_argument for
// non-positive moduli or stretch.
UniaxialSolution uniaxial_neo_hookean(double mu, double kappa, double axial_stretch);

// Displacement of the point X under the homogeneous solution with the point `fixed` held
// (the pinned bottom corner of the cube).
std::array<double, 3> uniaxial_displacement(const UniaxialSolution& s, const std::array<double, 3>& X,
                                            const std::array<double, 3>& fixed);

}  // namespace eb::tled
