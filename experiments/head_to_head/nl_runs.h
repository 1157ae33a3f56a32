#pragma once
// The scenes and single runs of head-to-head's nonlinear part (nonlinear_part.cpp): nr-neohookean
// (implicit Newton, tetrahedra, static load steps) against tled (explicit, one-point hexahedra,
// the 5 s quasi-static loading) on one box geometry, each evaluated at probe points
// (nl_probes.h) in its own mesh.
#include <string>
#include <vector>

#include "meshes/mesh.h"
#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"

namespace eb::head_to_head {

// A scene of the nonlinear part: the built-in cube-compression with overrides, the probe points
// and, for the cube, the exact homogeneous solution at them.
struct NlScene {
  std::string name;         // "cube" or "block"
  std::string description;
  std::vector<std::string> overrides;  // applied to the built-in cube-compression
  std::vector<mesh::Vec3> probes;
  bool exact = false;                  // the exact solution is known (exact_probes)
  // The end state is static equilibrium under loads applied at once (gravity): tled reaches it by
  // dynamic relaxation (mass damping time.damping) within relax_time; the cube's end state is
  // instead the state at the end of its 5 s loading.
  bool relax = false;
  double relax_time = 0;
};
NlScene cube_scene();   // Strbac 2015's cube: 20% compression, laterally free (homogeneous)
NlScene block_scene();  // the same quarter block sagging under 200 m/s^2 of gravity, laterally free
// The exact homogeneous solution at the cube's probes (scene.exact only) for the strain energy of
// `method`: tled's decoupled neo-Hookean (Strbac Eq. 16: mu/2 (I1bar - 3) + kappa/2 (J - 1)^2)
// or nr-neohookean's (Cecka Eq. 6: mu/2 (I1 - 3) - mu ln J + lambda/2 ln^2 J). The two agree to
// first order only: at 20% compression their lateral stretches differ by about 1%.
std::vector<mesh::Vec3> exact_probes(const NlScene& scene, const std::string& method);
// The lateral stretch l of Cecka's energy under F = diag(l, l, axial): P_xx = mu l + (lambda ln J
// - mu) / l = 0 with J = l^2 axial, by bisection (P_xx grows with l).
double cecka_lateral_stretch(double mu, double lambda, double axial);

// One discretisation of a scene for one method: `per_edge` elements along each edge; nr-neohookean
// solves static equilibrium in `load_steps` increments to the relative Newton `tolerance`; tled
// runs the 5 s loading at its stable step (its dt follows from per_edge).
struct NlSetting {
  std::string method;  // "tled" or "nr-neohookean"
  int per_edge = 4;
  int load_steps = 0;     // nr-neohookean
  double tolerance = 0;   // nr-neohookean
  long steps = 0;         // tled: time steps to run; 0: to the scene's end (end_time or relax_time)
  std::string label() const;
};

struct NlRun {
  bool valid = false;
  std::string validity;  // "valid" or "invalid: <reason>"
  long elements = 0;
  long steps = 0;            // time steps (tled) or load steps (nr-neohookean)
  long newton_iterations = 0, cg_iterations = 0;
  double dt = 0;             // tled
  double wall_s = 0;         // the solve alone (advance / solve_static), not the set-up
  double setup_s = 0;        // mesh, set-up and upload (the factory)
  bool stopped = false;      // stopped at the time limit (run_nl's stop_after_s) before its end
  std::vector<mesh::Vec3> probes;  // displacement at the scene's probes
};

// tled's dynamic relaxation (scene.relax): the probe error against `ref` after every chunk of
// steps up to the scene's relax_time, and the first step count after which it stays below each
// target (0: never). Its wall time includes the probe downloads, so the time to accuracy comes
// from a run of exactly that many steps (run_nl with setting.steps).
struct RelaxHistory {
  NlRun run;  // the whole relax_time; probes at its end
  std::vector<long> steps;
  std::vector<double> error;
  long steps_to(double target) const;
};
RelaxHistory relax_history(const NlScene& scene, const NlSetting& setting, const std::vector<mesh::Vec3>& ref,
                           const std::filesystem::path& data_dir, int threads);

// Builds and runs one setting (the variant: the method's default, except nr-neohookean on CUDA,
// which runs GlobalNZ: assembly and CG both on the device). stop_after_s > 0: the run goes in
// 20 pieces (tled) or load increments (nr-neohookean) and stops after the piece that passes that
// many seconds (NlRun::stopped; its state is then not the end state).
NlRun run_nl(const NlScene& scene, const NlSetting& setting, Backend backend, Precision precision, int threads,
             const std::filesystem::path& data_dir, double stop_after_s = 0);
std::string nl_variant(const std::string& method, Backend backend);

}  // namespace eb::head_to_head

#include "experiments/experiment.h"

namespace eb::head_to_head {
// The nonlinear part's options (`reproduce head-to-head --option KEY=VALUE`), for the
// experiment's registration (head_to_head.cpp).
std::vector<ExperimentOption> nonlinear_part_options();
}  // namespace eb::head_to_head
