#pragma once
// Pre-computation phase of TLED (Strbac 2015 Sec. 2.1, steps 1-4), in double precision and
// shared by every backend: mesh, reference geometry (G, V0), lumped masses, the stable time
// step (Eq. 15), the central-difference coefficients (Eqs. 3-5), the boundary conditions and
// the node -> element-slot lists used to sum element contributions without atomics (Eq. 12).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "assembly/hd.h"

#include "meshes/mesh.h"
#include "solvers/common/boundary.h"
#include "solvers/common/method_options.h"
#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"

namespace eb::tled {

// How element contributions reach the nodes: the variants (solver.variant).
enum class Assembly {
  Gather,  // "gather" (default, the paper's): element forces stored per element slot, summed per node
  Atomic,  // "atomic": element forces added to nodal forces with atomic adds
  // "hourglass": gather plus the hourglass forces of Joldes, Wittek & Miller 2008 (not the
  // paper's: its Sec. 4 names hourglass control as future work). The forces of all 8 nodes are
  // stored (the hourglass forces break the antipodal symmetry f_abar = -f_a).
  Hourglass,
};
// Whether the assembly sums per-element force slots per node (gather and hourglass), and the
// slots each element writes (4 with the antipodal symmetry, 8 with hourglass forces).
EB_HD constexpr bool gathers(Assembly a) { return a != Assembly::Atomic; }
EB_HD constexpr int slots_per_element(Assembly a) { return a == Assembly::Hourglass ? 8 : 4; }
Assembly parse_assembly(const std::string& variant);  // InputError listing the choices ("": gather)
std::string to_string(Assembly a);
std::vector<VariantInfo> tled_variants();  // the default first

// The [tled] section of a scenario (solvers/common/method_options.h): --set tled.texture=true.
struct TledOptions {
  bool texture = false;           // CUDA: read displacements through the texture path
  double convergence_rate = 0.0;  // Cr of the mass-damped central difference (Eq. 5); 0: q from time.damping
  // kappa of the hourglass stiffness k = kappa (lambda + 2 mu) V |grad N|^2 / 8 (hourglass
  // variant only; assembly/tled/hex8_tled.h).
  double hourglass_kappa = 0.05;
};
template <class V> void visit(V& v, TledOptions& o) {
  v("texture", o.texture);
  v("convergence_rate", o.convergence_rate);
  v("hourglass_kappa", o.hourglass_kappa);
}
void validate_tled_options(const TledOptions& o);  // InputError naming the tled.KEY

struct PrescribedEntry {
  int32_t node;
  uint8_t mask;
  double displacement[3];
  int curve;
};

struct ForceEntry {
  int32_t node;
  double force[3];
  int curve;
};

struct TledSetup {
  std::string scenario_name;
  std::vector<mesh::Vec3> nodes;
  std::vector<int32_t> connectivity;  // 8 per element, VTK order
  std::vector<int32_t> material_id;   // per element (output only)
  int64_t num_nodes = 0, num_elements = 0;

  // Reference geometry: G (9 per element, see assembly/tled/hex8_tled.h) and V0 = 8 det J0.
  std::vector<double> G;
  std::vector<double> volume;
  std::vector<double> mass;  // lumped nodal mass
  // Hourglass variant: the packed 8 x 8 hourglass matrix of each element (kHourglassEntries per
  // element, assembly/tled/hex8_tled.h), and its coefficient.
  std::vector<double> hourglass;
  double hourglass_kappa = 0;

  // Gather assembly: element e stores the forces of its nodes 0..3 at slot k*E + e (k = 0..3);
  // node n sums the slots slot_index[slot_offset[n] .. slot_offset[n+1]) where an entry
  // 2*slot + neg means "slot, negated" (nodes 4..7 are the antipodes of 0..3: f = -f). The
  // hourglass variant stores all 8 nodes (slot a*E + e, a = 0..7, never negated).
  std::vector<int32_t> slot_offset;
  std::vector<int32_t> slot_index;

  // Boundary conditions.
  std::vector<uint8_t> constrained;  // per node: bit d = component d fixed or prescribed
  std::vector<uint8_t> fixed_any;    // per node: 1 where any component is constrained
  std::vector<PrescribedEntry> prescribed;
  std::vector<ForceEntry> forces;
  std::vector<CurveParams> curves;
  double gravity[3] = {0, 0, 0};

  // Material (Eq. 16) and damage (Eqs. 19-22).
  double youngs = 0, poisson = 0, mu = 0, kappa = 0, lambda = 0, density = 0;
  DamageSpec damage;

  // Time integration (Eqs. 3-5, 15).
  double wave_speed = 0;       // sqrt((lambda + 2 mu) / rho)
  double char_length = 0;      // min over elements of V / (largest face area)
  double stable_dt = 0;        // char_length / wave_speed
  double courant = 0.8;
  double dt = 0;               // the step used
  bool dt_from_scenario = false;
  double convergence_rate = 0; // Cr (0 when q came from time.damping)
  double q = 0;                // mass damping coefficient (1/s)
  double b = 0, c = 0;         // central-difference coefficients; a_n = a_factor / M_n
  double a_factor = 0;         // 2 dt^2 / (2 + q dt)
  std::vector<double> a;       // per node: a_factor / M_n (0 for massless nodes)
  int64_t steps_to_end = 0;    // steps to reach time.end_time (or time.steps)

  Assembly assembly = Assembly::Gather;
  bool texture = false;
  bool damage_enabled = false;

  nlohmann::json describe() const;  // facts for details()
};

// The most hexahedra the gather's int32 slot lists address: an entry is 2 * slot + sign with a slot
// below 8 E (the hourglass variant's 8 slots per element), so 16 E must stay below 2^31.
constexpr int64_t tled_max_elements() { return (int64_t(1) << 27) - 1; }

// InputError for a mesh of more than tled_max_elements() hexahedra, among the others.
TledSetup build_tled_setup(const Scenario& scenario, const RunOptions& options);

// Per-element fields (von Mises, energy density, damage, material id) evaluated in precision T
// with the same element functions as the time loop, from nodal displacements and the damage
// history beta.
template <class T>
void tled_cell_fields(const TledSetup& s, const std::vector<T>& u, const std::vector<T>& beta,
                      std::vector<mesh::Field>& out);

// FLOPs and bytes of one step, counted from the kernels (solvers/tled/PERF_NOTES.md).
WorkCounts tled_work_per_step(const TledSetup& s, Precision p);

}  // namespace eb::tled
