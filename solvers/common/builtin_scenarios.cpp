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


// ---- corot-cg (Campo 2015; SOFA's TetrahedronFEMForceField scenes) ----------------------------

const char* kCampoRaptor = R"(name = "campo2015-raptor"
description = """Campo 2015 Sec. 5 (Table 5.1): SOFA's raptor, raptorTetra_8418.vtu (8,418 tets; the thesis \
has 8,431), raptor8k1.obj bound as the render surface, feet fixed (SOFA raptor-cuda.scn's box), gravity \
-9.8 along y, the ground plane y = -0.2 (PlaneForceField, stiffness 100), every 200 frames a random force \
of 0..500 N on a random node; dt 0.04, 800 frames, Rayleigh 0.01 / 0.01, E = 1e6, nu = 0.4, 0.01 kg per \
vertex (SOFA's UniformMass vertexMass: the thesis's mass density 0.01), CG 25 iterations, tolerance 1e-3."""

[mesh]
source = "file"
file = "raptorTetra_8418.vtu"

[material]
youngs_modulus = 1.0e6
poisson_ratio = 0.4
density = 1.0

[boundary]
gravity = [0.0, -9.8, 0.0]
ground = { enabled = true, height = -0.2, normal = [0.0, 1.0, 0.0], stiffness = 100.0 }
random_impulses = { enabled = true, every = 200, min_force = 0.0, max_force = 500.0, seed = 2015 }

[[boundary.fixed]]
components = "xyz"
where = { kind = "box", min = [-2.2, -0.3, -9.2], max = [2.2, 0.110668, 2.88584] }

[time]
dt = 0.04
steps = 800
damping = 0.01
rayleigh_stiffness = 0.01

[output]
render_surface = "raptor8k1.obj"
probes = [ { name = "head", position = [0.0, 5.0, 6.5] } ]

[corot-cg]
cg_iterations = 25
cg_tolerance = 1.0e-3
preconditioner = "none"
vertex_mass = 0.01
)";

const char* kSofaBeam = R"(name = "sofa-beam"
description = """SOFA's CUDA benchmark TetrahedronFEMForceField_beam16x16x76_gpu.scn: a 76 x 16 x 16-node grid \
over (0,6,-2)-(19,10,2), each hexahedron split into SOFA's 6 tetrahedra (101,250 tets, 19,456 nodes), gravity \
(0,-9,0), dt 0.04, implicit Euler with Rayleigh 0.1 / 0.1, CG 10 iterations (tolerance 1e-6), total mass 50 \
lumped by volume (DiagonalMass), nodes with |x| <= 0.1 fixed, E = 1000, nu = 0.3, "large" co-rotation, ground \
plane y = 2 with stiffness 1e4. SOFA PR 2561: about 148 frames/s on its GPU, about 8 on its CPU."""

[mesh]
source = "box"
origin = [0.0, 6.0, -2.0]
size = [19.0, 4.0, 4.0]
divisions = [75, 15, 15]
tets_per_cube = 6
cube_split = "sofa"

[material]
youngs_modulus = 1000.0
poisson_ratio = 0.3
density = 0.16447368421052633

[boundary]
gravity = [0.0, -9.0, 0.0]
ground = { enabled = true, height = 2.0, normal = [0.0, 1.0, 0.0], stiffness = 1.0e4 }

[[boundary.fixed]]
components = "xyz"
where = { kind = "box", min = [-0.1, 5.0, -3.0], max = [0.1, 11.0, 3.0] }

[time]
dt = 0.04
steps = 300
damping = 0.1
rayleigh_stiffness = 0.1

[output]
probes = [ { name = "tip", position = [19.0, 8.0, 0.0] } ]

[corot-cg]
cg_iterations = 10
cg_tolerance = 1.0e-6
preconditioner = "none"
)";

const char* kSofaBeam40 = R"(name = "sofa-beam-40"
description = """SOFA's TetrahedronFEMForceField_beam10x10x40_gpu.scn: a 40 x 10 x 10-node grid over \
(0,6,-2)-(16,10,2) in SOFA's 6 tetrahedra per hexahedron (18,954 tets, 4,000 nodes), gravity (0,-9,0), \
dt 0.01, Rayleigh 0.1 / 0.1, CG 20 iterations (tolerance 1e-6), total mass 50 lumped by volume, nodes with \
|x| <= 0.1 fixed, E = 2000, nu = 0.3, no ground. SOFA PR 2561: about 158 frames/s GPU, 23.5 CPU."""

[mesh]
source = "box"
origin = [0.0, 6.0, -2.0]
size = [16.0, 4.0, 4.0]
divisions = [39, 9, 9]
tets_per_cube = 6
cube_split = "sofa"

[material]
youngs_modulus = 2000.0
poisson_ratio = 0.3
density = 0.1953125

[boundary]
gravity = [0.0, -9.0, 0.0]

[[boundary.fixed]]
components = "xyz"
where = { kind = "box", min = [-0.1, 5.0, -3.0], max = [0.1, 11.0, 3.0] }

[time]
dt = 0.01
steps = 300
damping = 0.1
rayleigh_stiffness = 0.1

[output]
probes = [ { name = "tip", position = [16.0, 8.0, 0.0] } ]

[corot-cg]
cg_iterations = 20
cg_tolerance = 1.0e-6
preconditioner = "none"
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

// ---- static equilibrium on real meshes (issue 24: the tet methods' static Newton iteration) ----

const char* kArmadilloStatic = R"(name = "armadillo-static"
description = """Armadillo13K.msh (13,230 nodes, 54,985 tets) scaled to 1.51 m tall, feet fixed (the nodes \
within 7.6 cm, 5% of the height, of the lowest point, as tests/linalg's armadillo), at static equilibrium \
under gravity along -y: E = 5e7, nu = 0.2, rho = 1000. The body leans on its thin ankles: at E = 5e6 the \
linear solution already moves 27 cm, a large-deflection problem that needs load steps."""

[mesh]
source = "file"
file = "Armadillo13K.msh"
scale = 0.01

[material]
youngs_modulus = 5.0e7
poisson_ratio = 0.2
density = 1000.0

[boundary]
gravity = [0.0, -9.81, 0.0]

[[boundary.fixed]]
components = "xyz"
where = { kind = "box", min = [-1.0, -1.0, -1.0], max = [1.0, -0.466, 1.0] }

[time]
mode = "static"
)";

const char* kRaptorStatic = R"(name = "raptor-static"
description = """raptorTetra_8418.vtu (2,993 nodes, 8,418 tets; 7.2 m tall) with campo2015-raptor's feet box \
fixed, at static equilibrium under gravity -9.8 along y: E = 1e6, nu = 0.4, rho = 1 (campo2015-raptor's \
material; the tail and head sag by up to 17 cm)."""

[mesh]
source = "file"
file = "raptorTetra_8418.vtu"

[material]
youngs_modulus = 1.0e6
poisson_ratio = 0.4
density = 1.0

[boundary]
gravity = [0.0, -9.8, 0.0]

[[boundary.fixed]]
components = "xyz"
where = { kind = "box", min = [-2.2, -0.3, -9.2], max = [2.2, 0.110668, 2.88584] }

[time]
mode = "static"

[output]
probes = [ { name = "head", position = [0.0, 5.0, 6.5] } ]
)";

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

std::vector<BuiltinScenario>& registry() {
  static std::vector<BuiltinScenario> list = {
      {"cantilever", "beam under gravity, clamped at one end, run to rest (tip deflection 14.7 mm)", kCantilever},
      {"cube-compression", "Strbac 2015 50 mm cube, 20% compression over 5 s", kCubeCompression},
      // corot-cg (Campo 2015; SOFA's scenes)
      {"campo2015-raptor", "Campo 2015: SOFA raptor (8,418 tets) on the ground, feet fixed, 800 frames", kCampoRaptor},
      {"sofa-beam", "SOFA GPU benchmark beam 76x16x16 nodes (101,250 tets), implicit Euler, CG 10", kSofaBeam},
      {"sofa-beam-40", "SOFA GPU benchmark beam 40x10x10 nodes (18,954 tets), implicit Euler, CG 20", kSofaBeam40},
      // nr-neohookean (Cecka, Lew & Darve 2011)
      {"cecka-sphere", "Cecka 2011 unit sphere (Table 16.1 sizes), paper parameters, unit gravity", kCeckaSphere},
      {"cecka-hand", "Cecka 2011 real-time hand (camile_hand substitute, unit length), dt 0.01", kCeckaHand},
      // static equilibrium on real meshes (issue 24)
      {"armadillo-static", "Armadillo (55K tets, 1.5 m) at static equilibrium under gravity, feet fixed", kArmadilloStatic},
      {"raptor-static", "SOFA raptor (8,418 tets) at static equilibrium under gravity, feet fixed", kRaptorStatic},
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
