#pragma once
// corot-cg (Campo 2015; SOFA's TetrahedronFEMForceField "large" with EulerImplicitSolver and
// CGLinearSolver): what every backend shares, computed once in fp64 on the host: the tet model
// (solvers/tet_model), the node-to-element incidence the gathers walk, the lumped or uniform
// masses, the ground plane, the loads per node, the render surface's binding.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "meshes/render_binding.h"
#include "solvers/common/method_options.h"
#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"
#include "solvers/corot_cg/corot_cg_element.h"
#include "solvers/linalg/cg.h"
#include "solvers/tet_model/tet_model.h"

namespace eb::corot_cg {

Rotation parse_rotation(const std::string& variant);  // InputError listing the choices ("": edge)
std::string to_string(Rotation r);
std::vector<VariantInfo> corot_cg_variants();

// The [corot-cg] section: --set corot-cg.cg_iterations=10.
struct CorotCgOptions {
  // The defaults solve each step well (a general scene); the thesis's and SOFA's scenes set their
  // own capped, unpreconditioned CG (campo2015-raptor: 25 iterations, 1e-3, none).
  int cg_iterations = 200;       // the CG's maximum iteration count per step
  double cg_tolerance = 1e-6;    // ||r|| <= tol ||b|| stops it earlier; 0: always cg_iterations
  std::string preconditioner = "jacobi";  // "jacobi" or "none" (SOFA's CGLinearSolver, the thesis)
  // Uniform nodal mass (SOFA's UniformMass): vertex_mass kg per node, or total_mass kg shared
  // equally; both 0: lumped from material.density (rho V / 4 per element node).
  double vertex_mass = 0.0;
  double total_mass = 0.0;
  // The static Newton iteration (solvers/tet_model/static_newton.h) on the warped tangent
  // R K R^T: how its CGs stop ("eisenstat-walker": an adaptive relative tolerance per Newton step,
  // floored at static_cg_tolerance; "fixed": every CG to static_cg_tolerance) and their cap (0:
  // the number of unknowns).
  double static_cg_tolerance = 1e-10;
  int static_cg_max_iterations = 0;
  std::string static_forcing = "eisenstat-walker";
  bool graph = true;              // CUDA: each frame one CUDA graph; false: kernels timed per stage
  std::string node_order = "rcm";  // node numbering: rcm, metis, none (meshes/reorder.h)
};
template <class V> void visit(V& v, CorotCgOptions& o) {
  v("cg_iterations", o.cg_iterations);
  v("cg_tolerance", o.cg_tolerance);
  v("preconditioner", o.preconditioner);
  v("vertex_mass", o.vertex_mass);
  v("total_mass", o.total_mass);
  v("static_cg_tolerance", o.static_cg_tolerance);
  v("static_cg_max_iterations", o.static_cg_max_iterations);
  v("static_forcing", o.static_forcing);
  v("graph", o.graph);
  v("node_order", o.node_order);
}
void validate_corot_cg_options(const CorotCgOptions& o);  // InputError naming corot-cg.KEY

// The time step's CG (cg_iterations, cg_tolerance) or the static iterations' (static_*).
// unknowns: what static_cg_max_iterations = 0 stands for.
linalg::CgOptions cg_options(const CorotCgOptions& o, bool static_solve, int64_t unknowns);

struct CorotCgSetup : tet::TetModel {
  Rotation rotation = Rotation::EdgeFrame;
  CorotCgOptions options;
  double rayleigh_mass = 0, rayleigh_stiffness = 0;  // alpha (1/s), beta (s)
  std::vector<double> mass;  // per node
  // Node -> element incidence, entries 4 e + a in increasing e (the gathers' fixed order).
  std::vector<int32_t> node_ptr, incidence;
  std::vector<uint8_t> fixed_rows;  // 3 per node: 1 where the component is constrained
  // Loads per node: load_ptr (N + 1) into load_curve / load_force (3 per entry).
  std::vector<int32_t> load_ptr;
  std::vector<int> load_curve;
  std::vector<double> load_force;
  bool ground = false;
  double ground_normal[3] = {0, 0, 1}, ground_height = 0, ground_stiffness = 0;
  RandomImpulseSpec impulses;
  // The render surface (output.render_surface) bound to the model's elements; empty when none.
  mesh::SurfaceBinding binding;
  int64_t render_vertices = 0;

  nlohmann::json describe() const;
};

CorotCgSetup build_corot_cg_setup(const Scenario& scenario, const RunOptions& options);

// Element-major fp64 (k per element) to the backends' entry-major T (corot_cg_element.h).
template <class T>
std::vector<T> entry_major(const std::vector<double>& src, int64_t E, int k) {
  std::vector<T> out(src.size());
  for (int64_t e = 0; e < E; ++e)
    for (int j = 0; j < k; ++j) out[size_t(j * E + e)] = T(src[size_t(e * k + j)]);
  return out;
}

// A setup's element arrays in T, entry-major, R = I until a step sets it: the CPU backend's
// storage (and its tests'); view() is what the element functions take.
template <class T>
struct HostElementArrays {
  explicit HostElementArrays(const CorotCgSetup& s)
      : E(s.num_elements), conn(s.connectivity.data()), lame{T(s.lambda), T(s.mu)},
        Dm_inv(entry_major<T>(s.Dm_inv, E, 9)), Dm(entry_major<T>(s.Dm, E, 9)), volume(s.volume.begin(), s.volume.end()),
        R(9 * size_t(E), T(0)) {
    for (int64_t e = 0; e < E; ++e)
      for (int k = 0; k < 9; k += 4) R[size_t(k * E + e)] = T(1);
  }
  ElementArrays<T> view() const {
    ElementArrays<T> m;
    m.E = E;
    m.conn = conn;
    m.Dm_inv = Dm_inv.data();
    m.Dm = Dm.data();
    m.volume = volume.data();
    m.R = R.data();
    m.lame = lame;
    return m;
  }
  int64_t E;
  const int32_t* conn;
  tet::Lame<T> lame;
  std::vector<T> Dm_inv, Dm, volume, R;
};

// FLOPs and compulsory bytes per stage of a step (PERF_NOTES.md states the counts), and what one
// CG iteration must read; per backend, since the CPU stores the rotated blocks that the CUDA
// kernels rebuild.
struct StageWork {
  std::string stage;
  double flops = 0, bytes = 0;
};
std::vector<StageWork> corot_cg_stage_work(const CorotCgSetup& s, Backend b, Precision p, int cg_iterations);
double cg_iteration_compulsory_bytes(const CorotCgSetup& s, Backend b, Precision p);

}  // namespace eb::corot_cg
