#pragma once
// The converged fp64 reference of a head-to-head scene: its static equilibrium under the full
// load, solved by bcsr-pcg's static mode (co-rotational linear tetrahedra, the same element as
// corot-cg polar; Newton on the co-rotational forces with Jacobi-PCG inner solves) in fp64 on
// the scene's tetrahedra at a given resolution, to a relative Newton residual of 1e-8 with inner
// CG to 1e-10 (at most 100,000 iterations), and the probe displacements interpolated in it.
#include <string>
#include <vector>

#include "experiments/head_to_head/h2h_scenes.h"

namespace eb::head_to_head {

struct ReferenceSolution {
  double resolution = 0;
  long elements = 0, nodes = 0;
  bool converged = false;
  int newton_iterations = 0;
  long cg_iterations = 0;
  double seconds = 0;
  std::vector<std::string> probe_names;
  std::vector<Vec3> probes;          // displacement at each probe (m)
  std::vector<double> outside;       // parametric distance of each probe outside its element
  std::string backend;
};

ReferenceSolution solve_reference(const Scene& s, double resolution, Backend backend, int threads,
                                  const std::filesystem::path& data_dir);

}  // namespace eb::head_to_head
