#pragma once
// The converged fp64 reference of a head-to-head scene: its static equilibrium under the full
// load, solved by bcsr-pcg's static mode (co-rotational linear tetrahedra, the same element as
// corot-cg polar; Newton on the co-rotational forces with Jacobi-PCG inner solves) in fp64 on
// the scene's tetrahedra at a given resolution, to a relative Newton residual of 1e-8 with inner
// CG to 1e-10 (at most 100,000 iterations), and the probe displacements interpolated in it.
#include <cmath>
#include <filesystem>
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

inline Vec3 sub3(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline double norm3(const Vec3& a) { return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

// Richardson extrapolation of probe displacements solved at h, 2h and 4h. The order is observed,
// p = log2(sum_i |u_2h - u_4h| / sum_i |u_h - u_2h|), clamped to [1, 3] (a ratio that does not
// shrink gives 1, the cautious end); u*_h = u_h + (u_h - u_2h) / (2^p - 1). The error estimate
// is what two extrapolations disagree by: max_i |u*_h - u*_2h| / |u*_h|, u*_2h from (2h, 4h).
struct RichardsonReference {
  double order = 2;
  std::vector<Vec3> probes;
  double error_estimate = 0;
  // |u| at each probe of the converged static solutions at h, 2h and 4h ([0], [1], [2]): how far
  // each of these levels itself is from the extrapolation (the search's level floors).
  std::vector<std::vector<double>> level_magnitudes;
};
RichardsonReference richardson(const std::vector<Vec3>& h, const std::vector<Vec3>& h2, const std::vector<Vec3>& h4);

// The extrapolated reference of `scene` read back from a corot_reference_<scene>.csv that an
// earlier run wrote (option corot_reference_from: a reference of millions of tetrahedra is
// solved once, not by every process or call that searches the scene). The file must hold the
// scene at `resolution` with every level converged and the probes in `probe_names`' order;
// otherwise an InputError names the file and what differs. `text` receives the file's contents.
RichardsonReference read_reference_csv(const std::filesystem::path& path, const std::string& scene, double resolution,
                                       const std::vector<std::string>& probe_names, std::string* text);

}  // namespace eb::head_to_head
