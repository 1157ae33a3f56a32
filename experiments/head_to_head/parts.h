#pragma once
// The parts of `elastobench reproduce head-to-head`, one source file each:
//   corot      corotational linear elasticity (hexmg, bcsr-pcg, corot-cg; tled and nr-neohookean
//              at small strain): cantilever, bunny, sofa-beam; steps/s, bytes per element, time to
//              accuracy by a documented search                                  (corot_part.cpp)
//   nonlinear  nr-neohookean implicit against tled explicit at large strain      (nonlinear_part.cpp)
//   scale      the largest model each method fits in the device's memory      (scale_part.cpp)
//   solvers    the solvers on the same linear systems, against Eigen, a direct
//              solver, hypre BoomerAMG, cuSPARSE and CuPy                       (solvers_part.cpp)
#include "experiments/experiment.h"

namespace eb::head_to_head {

void run_corot_part(const ExperimentContext& ctx);
void run_nonlinear_part(const ExperimentContext& ctx);
void run_scale_part(const ExperimentContext& ctx);
void run_solvers_part(const ExperimentContext& ctx);

}  // namespace eb::head_to_head
