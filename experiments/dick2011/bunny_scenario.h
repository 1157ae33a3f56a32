#pragma once
// The Stanford bunny scenario of Dick, Georgii & Westermann 2011 (Sec. 6, Figs. 11-12). The paper
// states only the material and time step (Fig. 11 caption: E = 1e6 Pa, nu = 0.3, rho = 1e5 kg/m^3,
// dt = 50 ms) and shows the bunny deforming (Fig. 12); its boundary conditions are not given. We
// fix the base (every vertex within 10 mm of the lowest point) and apply 1/100 of gravity along -y
// (the bunny's up axis): on the Fig. 11 density that is the weight of a water-dense bunny, while
// full gravity inverts elements from step 7 and collapses it. Light mass damping alpha = 2 1/s. The model is voxelized to
// mesh.target_elements hexahedra (default 11.9K, the paper's smallest model).
#include <string>

namespace eb::dick2011 {

constexpr const char* kBunnyScenario = "dick2011-bunny";
std::string bunny_scenario_toml();
// Registers the built-in scenario (idempotent).
void register_bunny_scenario();
// The paper's four model sizes (Tables 1-2: hexahedra).
constexpr int kPaperSizes[4] = {11900, 33300, 94300, 269000};

}  // namespace eb::dick2011
