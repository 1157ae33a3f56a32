#include "experiments/dick2011/bunny_scenario.h"

#include "solvers/common/scenario.h"

namespace eb::dick2011 {

std::string bunny_scenario_toml() {
  return R"(name = "dick2011-bunny"
description = """Dick, Georgii & Westermann 2011: the Stanford bunny voxelized to ~11.9K hexahedra \
(mesh.target_elements: 11900, 33300, 94300, 269000 in Tables 1-2), material and time step of the \
Fig. 11 caption (E = 1 MPa, nu = 0.3, rho = 1e5 kg/m^3, dt = 50 ms). The paper gives no boundary \
conditions: the base (y within 10 mm of the lowest point) is fixed and a body load of 0.0981 m/s^2 \
acts along -y, the weight of a rho = 1000 kg/m^3 bunny under gravity (static sag 1.37 mm). Full \
gravity on the Fig. 11 density inverts elements from step 7 and collapses the bunny."""

[mesh]
source = "file"
file = "bunny.off"
target_elements = 11900

[material]
youngs_modulus = 1.0e6
poisson_ratio = 0.3
density = 1.0e5

[boundary]
gravity = [0.0, -0.0981, 0.0]

[[boundary.fixed]]
components = "xyz"
where = { kind = "box", min = [-1.0, -1.0, -1.0], max = [1.0, 0.0429874, 1.0] }

[time]
dt = 0.05
end_time = 5.0
damping = 2.0

[hexmg]
cycles = 2
pre_smooth = 2
post_smooth = 1

[output]
probes = [ { name = "ear", position = [-0.0915, 0.1552, 0.0232] }, { name = "tail", position = [0.0587, 0.0914, -0.0105] } ]
)";
}

void register_bunny_scenario() {
  if (find_builtin_scenario(kBunnyScenario)) return;
  register_builtin_scenario({kBunnyScenario, "Dick 2011: Stanford bunny hexahedra, base fixed, 1/100 gravity on the Fig. 11 material",
                             bunny_scenario_toml()});
}

}  // namespace eb::dick2011
