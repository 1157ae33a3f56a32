#pragma once
// The scenario model shared by all methods: what is simulated (mesh, material, boundary
// conditions, time integration, solver parameters, output). Scenarios are read from TOML or
// JSON, validated strictly (unknown or ill-typed keys are errors naming the key) and can be
// overridden key by key from the command line.
#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "meshes/mesh.h"
#include "meshes/mesh_spec.h"
#include "solvers/common/load_curve.h"

namespace eb {

using mesh::Vec3;

// Picks nodes: "box" takes nodes inside [min, max] (inclusive, widened by tolerance), "plane"
// takes nodes within tolerance of the plane through `point` with `normal`, "all" takes every node.
struct NodeSelector {
  std::string kind = "box";
  Vec3 min{-1e300, -1e300, -1e300};
  Vec3 max{1e300, 1e300, 1e300};
  Vec3 point{0.0, 0.0, 0.0};
  Vec3 normal{1.0, 0.0, 0.0};
  double tolerance = 0.0;  // metres; 0 means 1e-6 of the mesh's bounding-box diagonal
};

// A smooth load factor in [0, 1] over [start, start + duration]: "smooth" is the quintic
// smooth step 10s^3 - 15s^4 + 6s^5 (zero velocity and acceleration at both ends), "linear" a
// ramp, "step" full load at once.
struct LoadCurve {
  std::string shape = "smooth";
  double start = 0.0;
  double duration = 1.0;
};
// The curve as both backends evaluate it (load_curve.h); the shape names are mapped here only.
CurveParams curve_params(const LoadCurve& curve);
double load_factor(const LoadCurve& curve, double t);  // curve_factor(curve_params(curve), t)

struct FixedBC {
  NodeSelector where;
  std::string components = "xyz";
};

struct PrescribedBC {
  NodeSelector where;
  std::string components = "xyz";  // which displacement components are prescribed
  Vec3 displacement{0.0, 0.0, 0.0};  // at full load
  LoadCurve curve;
};

struct PointForce {
  Vec3 position{0.0, 0.0, 0.0};  // applied at the nearest node
  Vec3 force{0.0, 0.0, 0.0};     // N at full load
  LoadCurve curve;
};

// Traction (Pa) on the boundary faces whose nodes are all selected, lumped to nodes by area.
struct SurfaceForce {
  NodeSelector where;
  Vec3 traction{0.0, 0.0, 0.0};
  LoadCurve curve;
};

// A rigid ground plane n . x = height (n = normal, normalized; by default (0, 0, 1): z = height):
// nodes may not go below it (methods that support contact). Penalty methods push a node that is
// below with the force stiffness x depth along n (SOFA's PlaneForceField; assembly/ground_plane.h).
struct GroundSpec {
  bool enabled = false;
  double height = 0.0;
  Vec3 normal{0.0, 0.0, 1.0};
  double stiffness = 0.0;  // N/m; penalty methods need it > 0 (corot-cg refuses 0)
};

// Every `every` frames (frames every, 2 every, ...) a force of magnitude uniform in
// [min_force, max_force] (N) and uniformly random direction on one node drawn uniformly among all
// nodes, for that frame only; the draws are a function of (seed, frame) alone
// (solvers/common/random_impulse.h), so every backend and every run applies the same forces.
struct RandomImpulseSpec {
  bool enabled = false;
  int every = 200;
  double min_force = 0.0;
  double max_force = 1.0;
  int seed = 1;
};

struct BoundarySpec {
  std::vector<FixedBC> fixed;
  std::vector<PrescribedBC> prescribed;
  Vec3 gravity{0.0, 0.0, 0.0};
  std::vector<PointForce> point_forces;
  std::vector<SurfaceForce> surface_forces;
  GroundSpec ground;
  RandomImpulseSpec random_impulses;  // corot-cg (Campo 2015)
};

// Strbac 2015 Eqs. 19-22: d = gamma (1 - exp(-beta / m)), beta = running max of (Psi - psi0).
struct DamageSpec {
  bool enabled = false;
  double gamma = 0.0;  // d_inf, the maximum damage
  double m = 1.0;      // damage saturation parameter (J/m^3)
  double psi0 = 0.0;   // energy threshold (J/m^3)
};

// Elements whose centroid lies in [min, max] (or whose mesh material id equals material_id,
// when material_id >= 0) take these values instead of the defaults.
struct MaterialOverride {
  Vec3 min{-1e300, -1e300, -1e300};
  Vec3 max{1e300, 1e300, 1e300};
  int material_id = -1;
  std::optional<double> youngs_modulus;
  std::optional<double> poisson_ratio;
  std::optional<double> density;
};

// Exactly one elastic pair is given: (youngs_modulus, poisson_ratio), (lame_lambda, lame_mu)
// or (shear_modulus, bulk_modulus).
struct MaterialSpec {
  std::optional<double> youngs_modulus;
  std::optional<double> poisson_ratio;
  std::optional<double> lame_lambda;
  std::optional<double> lame_mu;
  std::optional<double> shear_modulus;
  std::optional<double> bulk_modulus;
  double density = 1000.0;
  DamageSpec damage;
  std::vector<MaterialOverride> overrides;
};

// All four elastic constants, resolved and checked.
struct ElasticConstants {
  double youngs_modulus, poisson_ratio, lambda, mu, bulk;
};
ElasticConstants elastic_constants(const MaterialSpec& m);
ElasticConstants elastic_constants(double youngs_modulus, double poisson_ratio);

struct TimeSpec {
  // "dynamic": time stepping (the keys below); "static": equilibrium solves in load steps
  // (StaticSpec), for methods that declare static solves (solvers/common/registry.h).
  std::string mode = "dynamic";
  double dt = 0.0;         // 0: the method's choice (explicit methods: stable step x courant)
  int steps = 0;           // > 0 wins over end_time
  double end_time = 0.0;   // s
  double damping = 0.0;    // mass-proportional damping coefficient alpha (1/s), C = alpha M (+ beta K)
  double courant = 0.8;    // safety factor on the explicit stable step
  bool until_rest = false; // stop once max |v| < rest_velocity (after the loads are fully on)
  double rest_velocity = 1e-5;  // m/s
  int max_steps = 1000000;
  // Rayleigh damping's stiffness part beta (s): C = alpha M + beta K (solvers/common/rayleigh.h);
  // methods that do not implement it refuse beta > 0.
  double rayleigh_stiffness = 0.0;
};

// time.mode = "static": every load at its full value (load curves do not apply), reached in
// `load_steps` equal increments of the load factor; each increment is solved to equilibrium
// by the method's nonlinear iteration (Newton) to `tolerance`, relative to the residual at the
// start of the increment, in at most `max_iterations` iterations.
struct StaticSpec {
  int load_steps = 1;
  double tolerance = 1e-6;
  int max_iterations = 20;
};

// Shared solver choice. Everything else a method can be told lives in the method's own section
// of the scenario ([hexmg], [tled]; Scenario::method_options).
struct SolverSpec {
  std::string variant;  // a variant the method registers (elastobench list); empty: its default
};

struct ProbeSpec {
  std::string name;
  Vec3 position{0.0, 0.0, 0.0};
};

struct OutputSpec {
  int vtk_every = 0;    // 0: no VTK (the CLI's --vtk-every sets it); the last step is always written
  int probe_every = 0;  // probe/time-series sampling interval in steps; 0: about 200 samples per run
  std::vector<ProbeSpec> probes;
  std::string render_surface;  // optional high-resolution surface bound to the mesh for output
};

struct Scenario {
  std::string name;
  std::string description;
  mesh::MeshSpec mesh;
  MaterialSpec material;
  BoundarySpec boundary;
  TimeSpec time;
  StaticSpec static_solve;  // the [static] section
  SolverSpec solver;
  OutputSpec output;
  // Sections owned by methods, by method name ({"hexmg": {"cycles": 1}}), kept as written: a
  // section is read and validated by its method (solvers/common/method_options.h), and a
  // section of another method, or of none, is refused for a run (MethodRegistry::resolve).
  nlohmann::json method_options = nlohmann::json::object();
};

// Optional scenario features: a method that does not implement one refuses a scenario that
// uses it (MethodInfo::features). scenario_features() lists them by the key that turns each
// on: "boundary.ground" (ground.enabled), "material.damage" (damage.enabled),
// "material.overrides" (any override), "boundary.random_impulses" (random_impulses.enabled),
// "time.rayleigh_stiffness" (beta > 0); features_used() those a scenario uses.
const std::vector<std::string>& scenario_features();
std::vector<std::string> features_used(const Scenario& s);
inline bool is_static(const Scenario& s) { return s.time.mode == "static"; }

// --- reading, writing, overriding -------------------------------------------------------------

// Strictly converts a JSON document to a Scenario: throws InputError naming the dotted key of
// any unknown or ill-typed entry (`origin` names the file for messages), then validates values.
// A top-level table that is not a scenario section is kept as a method section
// (Scenario::method_options); the registry checks it against the methods it knows.
Scenario scenario_from_json(const nlohmann::json& doc, const std::string& origin);
nlohmann::json scenario_to_json(const Scenario& s);

// Parses TOML or JSON text (chosen by `format`: "toml" or "json") into a JSON document.
nlohmann::json parse_scenario_text(const std::string& text, const std::string& format, const std::string& origin);
std::string scenario_to_toml(const Scenario& s);

// Applies "a.b.c=value" (value is a JSON/TOML literal: number, true/false, [1,2,3], "text"; an
// unquoted word is a string). Arrays are indexed by number: "output.probes.0.position=[1,0,0]".
void apply_override(nlohmann::json& doc, const std::string& assignment);

// Loads a scenario by built-in name or file path, applies overrides, validates.
Scenario load_scenario(const std::string& name_or_path, const std::vector<std::string>& overrides);

// Semantic checks (positive moduli, Poisson ratio range, known enum strings...).
void validate_scenario(const Scenario& s);

// --- built-in scenarios -------------------------------------------------------------------------
struct BuiltinScenario {
  std::string name;
  std::string summary;
  std::string toml;  // the full text a user can start from
};
const std::vector<BuiltinScenario>& builtin_scenarios();
// Paper experiments add their own named scenarios (call before the CLI parses arguments).
void register_builtin_scenario(BuiltinScenario scenario);
const BuiltinScenario* find_builtin_scenario(const std::string& name);

}  // namespace eb
