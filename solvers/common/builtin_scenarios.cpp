#include <algorithm>
#include <mutex>

#include "meshes/errors.h"
#include "solvers/common/scenario.h"

namespace eb {
namespace {

// The two foundation scenarios. Paper experiments register more through
// register_builtin_scenario().
const char* kCantilever = R"(name = "cantilever"
description = """Beam 1 m along x with a 0.1 m x 0.1 m cross-section, clamped at x = 0, sagging under \
gravity until it comes to rest. Euler-Bernoulli: tip deflection q L^4 / (8 E I) = 14.7 mm, \
q = rho g A."""

[mesh]
source = "box"
origin = [0.0, 0.0, 0.0]
size = [1.0, 0.1, 0.1]
element_size = 0.02

[material]
youngs_modulus = 1.0e8
poisson_ratio = 0.3
density = 1000.0

[boundary]
gravity = [0.0, 0.0, -9.81]

[[boundary.fixed]]
components = "xyz"
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }

[time]
dt = 0.005
end_time = 10.0
damping = 40.0
until_rest = true
rest_velocity = 1.0e-5

[output]
probes = [ { name = "tip", position = [1.0, 0.05, 0.05] } ]
)";

const char* kCubeCompression = R"(name = "cube-compression"
description = """Strbac, Vander Sloten & Famaey 2015: a 50 mm neo-Hookean cube compressed to 20% \
strain over 5 s with a smooth loading curve. Bottom face fixed in z, top face prescribed in z; \
u_x = 0 on x = 0 and u_y = 0 on y = 0 remove the in-plane rigid motion without restraining the \
lateral expansion (the homogeneous solution satisfies both). rho = 1000 kg/m^3, E = 30 kPa, \
nu = 0.45 (mu ~ 10.3 kPa, kappa = 100 kPa)."""

[mesh]
source = "box"
origin = [0.0, 0.0, 0.0]
size = [0.05, 0.05, 0.05]
elements_per_edge = 10

[material]
youngs_modulus = 30000.0
poisson_ratio = 0.45
density = 1000.0

[[boundary.fixed]]
components = "z"
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] }

# Symmetry planes rather than two pinned corner nodes: a single pinned node is attached to the
# body through one element, and one-point hexahedra without hourglass control (TLED, as in the
# paper) let the body slide past it through zero-energy modes (2.7 mm off at 5 per edge).
[[boundary.fixed]]
components = "x"
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }

[[boundary.fixed]]
components = "y"
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [0.0, 1.0, 0.0] }

[[boundary.prescribed]]
components = "z"
displacement = [0.0, 0.0, -0.01]
where = { kind = "plane", point = [0.0, 0.0, 0.05], normal = [0.0, 0.0, 1.0] }
curve = { shape = "smooth", start = 0.0, duration = 5.0 }

[time]
dt = 0.0
end_time = 5.0

[output]
probes = [ { name = "corner", position = [0.05, 0.05, 0.05] } ]
)";

// ---- nr-neohookean (Cecka, Lew & Darve 2011) ----
// The paper's parameters are dimensionless (mu = 5, lambda = 2, rho = 1, dt, and absolute Newton
// tolerances 1e-5 / 2e-5 on the momentum residual, whose size grows with the body's size to the
// fourth power). Its unit sphere is reproduced as it is; the hand is scaled to unit length, the
// size at which fp32 positions resolve Newton updates (in the mesh's own units, ~197, the updates
// fall below the positions' rounding). The paper's loads are not stated (the hand is dragged with
// the mouse); here gravity pulls each body, held at one cap / the wrist.
const char* kCeckaSphere = R"(name = "cecka-sphere"
description = """Cecka, Lew & Darve 2011 (Table 16.1, Sec. 16.4.4): tetrahedral unit sphere \
(mesh.refinement 0..3: 64/135, 343/1080, 1728/6655, 4096/16875 nodes/tets), mu = 5, lambda = 2, \
rho = 1, dt = 0.2, Newton |p - h| < 1e-5, CG 1e-6 relative; the cap z > 0.8 held, unit gravity \
along -z (dimensionless units)."""

[mesh]
source = "sphere"
refinement = 3

[material]
lame_lambda = 2.0
lame_mu = 5.0
density = 1.0

[boundary]
gravity = [0.0, 0.0, -1.0]

[[boundary.fixed]]
components = "xyz"
where = { kind = "box", min = [-2.0, -2.0, 0.8], max = [2.0, 2.0, 2.0] }

[time]
dt = 0.2
steps = 10

[nr-neohookean]
nr_tolerance = 1.0e-5
nr_min_iterations = 1
cg_tolerance = 1.0e-6
)";

const char* kCeckaHand = R"(name = "cecka-hand"
description = """Cecka, Lew & Darve 2011 Sec. 16.4.4 real-time setting on a substitute hand: \
camile_hand.mesh (23,641 nodes, 91,907 tets; the paper's 28,796/125,127 aim@shape hand is not \
available) scaled to unit length (fp32 positions keep ~1e-7 of it), moved to the positive \
octant; mu = 5, lambda = 2, rho = 1, dt = 0.01, Newton |p - h| < 2e-5, CG 1e-4 relative; the \
wrist end (y < 0.03) held, gravity 5 along -z. The second substitute, hand_olivier.mesh (20,541 \
nodes, 78,233 tets): --set mesh.file=hand_olivier.mesh --set mesh.scale=1.2254503 \
--set mesh.translate=[0,0,0] (unit length along y, already in the positive octant)."""

[mesh]
source = "file"
file = "camile_hand.mesh"
scale = 0.005079077515336298
translate = [0.6185229623, 1.41214072, 4.401615561]

[material]
lame_lambda = 2.0
lame_mu = 5.0
density = 1.0

[boundary]
gravity = [0.0, 0.0, -5.0]

[[boundary.fixed]]
components = "xyz"
where = { kind = "box", min = [-1.0, -1.0, -1.0], max = [2.0, 0.03, 2.0] }

[time]
dt = 0.01
steps = 20

[nr-neohookean]
nr_tolerance = 2.0e-5
nr_min_iterations = 1
cg_tolerance = 1.0e-4
)";

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::vector<BuiltinScenario>& registry() {
  static std::vector<BuiltinScenario> list = {
      {"cantilever", "beam under gravity, clamped at one end, run to rest (tip deflection 14.7 mm)", kCantilever},
      {"cube-compression", "Strbac 2015 50 mm cube, 20% compression over 5 s", kCubeCompression},
      // nr-neohookean (Cecka, Lew & Darve 2011)
      {"cecka-sphere", "Cecka 2011 unit sphere (Table 16.1 sizes), paper parameters, unit gravity", kCeckaSphere},
      {"cecka-hand", "Cecka 2011 real-time hand (camile_hand substitute, unit length), dt 0.01", kCeckaHand},
  };
  return list;
}

}  // namespace

const std::vector<BuiltinScenario>& builtin_scenarios() { return registry(); }

void register_builtin_scenario(BuiltinScenario scenario) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& list = registry();
  for (const auto& s : list)
    if (s.name == scenario.name) throw std::logic_error("built-in scenario registered twice: " + s.name);
  list.push_back(std::move(scenario));
}

const BuiltinScenario* find_builtin_scenario(const std::string& name) {
  for (const auto& s : registry())
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace eb
