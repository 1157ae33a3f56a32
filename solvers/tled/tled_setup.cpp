#include "solvers/tled/tled_setup.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "assembly/tled/hex8_tled.h"
#include "meshes/errors.h"
#include "meshes/mesh_spec.h"
#include "meshes/vtk_io.h"

namespace eb::tled {
namespace {

// The six faces of a VTK hexahedron.
constexpr int kHexFaces[6][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 5, 4},
                                 {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};

double face_area(const mesh::Vec3* x, const int (&f)[4]) {
  // Half the norm of the cross product of the diagonals: exact for planar quadrilaterals, the
  // usual estimate for warped ones.
  double d1[3], d2[3];
  for (int k = 0; k < 3; ++k) {
    d1[k] = x[f[2]][k] - x[f[0]][k];
    d2[k] = x[f[3]][k] - x[f[1]][k];
  }
  const double cx = d1[1] * d2[2] - d1[2] * d2[1];
  const double cy = d1[2] * d2[0] - d1[0] * d2[2];
  const double cz = d1[0] * d2[1] - d1[1] * d2[0];
  return 0.5 * std::sqrt(cx * cx + cy * cy + cz * cz);
}

}  // namespace

Assembly parse_assembly(const std::string& variant) {
  if (variant.empty() || variant == "gather") return Assembly::Gather;
  if (variant == "atomic") return Assembly::Atomic;
  if (variant == "hourglass") return Assembly::Hourglass;
  throw InputError("tled: unknown solver.variant '" + variant +
                   "' (gather: per-element force slots summed per node, as the paper; atomic: atomic adds; "
                   "hourglass: gather plus hourglass control)");
}

std::string to_string(Assembly a) {
  switch (a) {
    case Assembly::Gather: return "gather";
    case Assembly::Atomic: return "atomic";
    case Assembly::Hourglass: return "hourglass";
  }
  return "?";
}

std::vector<VariantInfo> tled_variants() {
  // tled.hourglass_kappa belongs to the hourglass variant: set for another, it is an error.
  const std::vector<std::string> plain = {"texture", "convergence_rate"};
  return {{to_string(Assembly::Gather), "element forces in per-element slots, summed per node without atomics (the paper's)", plain},
          {to_string(Assembly::Atomic), "element forces added to the nodal forces with atomic adds", plain},
          {to_string(Assembly::Hourglass),
           "gather plus the hourglass control of Joldes, Wittek & Miller 2008 (tled.hourglass_kappa); for bending",
           {}}};
}

void validate_tled_options(const TledOptions& o) {
  if (o.convergence_rate < 0 || o.convergence_rate >= 1)
    throw InputError("scenario key 'tled.convergence_rate' must lie in [0, 1)");
  // Flanagan & Belytschko's range: above ~0.15 the control stiffens bending and lowers the
  // stable step noticeably.
  if (!(o.hourglass_kappa > 0 && o.hourglass_kappa <= 0.15))
    throw InputError("scenario key 'tled.hourglass_kappa' must lie in (0, 0.15]");
}

TledSetup build_tled_setup(const Scenario& sc, const RunOptions& options) {
  TledSetup s;
  s.scenario_name = sc.name;
  if (!sc.material.overrides.empty())
    throw InputError("tled: material.overrides are not supported (the method uses one neo-Hookean material, as the paper)");
  if (sc.boundary.ground.enabled) throw InputError("tled: boundary.ground (contact) is not supported");
  const TledOptions tled_options = read_method_options<TledOptions>(sc, "tled", validate_tled_options);
  s.assembly = parse_assembly(sc.solver.variant);
  s.texture = tled_options.texture;
  s.hourglass_kappa = s.assembly == Assembly::Hourglass ? tled_options.hourglass_kappa : 0.0;
  s.damage = sc.material.damage;
  s.damage_enabled = sc.material.damage.enabled;
  if (s.damage_enabled && !(s.damage.gamma > 0))
    throw InputError("tled: material.damage.enabled needs material.damage.gamma in (0, 1] (Eq. 20)");

  const mesh::HexMesh hex = mesh::build_hex_mesh(sc.mesh, options.data_dir);
  if (hex.elems.empty()) throw InputError("tled: the mesh has no hexahedra");
  s.nodes = hex.nodes;
  s.num_nodes = int64_t(hex.nodes.size());
  s.num_elements = int64_t(hex.elems.size());
  if (s.num_elements > tled_max_elements())
    throw InputError("tled: " + std::to_string(s.num_elements) + " hexahedra pass the " +
                     std::to_string(tled_max_elements()) + " that the 32-bit element slot indices address");
  s.connectivity.resize(8 * hex.elems.size());
  for (size_t e = 0; e < hex.elems.size(); ++e)
    for (int a = 0; a < 8; ++a) s.connectivity[8 * e + a] = hex.elems[e][a];
  s.material_id = hex.material.empty() ? std::vector<int32_t>(hex.elems.size(), 0) : hex.material;

  const ElasticConstants ec = elastic_constants(sc.material);
  s.youngs = ec.youngs_modulus;
  s.poisson = ec.poisson_ratio;
  s.mu = ec.mu;
  s.kappa = ec.bulk;
  s.lambda = ec.lambda;
  s.density = sc.material.density;
  if (!(s.density > 0)) throw InputError("tled: material.density must be positive");

  // Steps 1-3: reference geometry, volumes, lumped masses; Eq. 15 characteristic length.
  const int64_t E = s.num_elements;
  s.G.resize(9 * E);
  s.volume.resize(E);
  if (s.assembly == Assembly::Hourglass) s.hourglass.resize(kHourglassEntries * E);
  s.mass.assign(s.num_nodes, 0.0);
  double min_len = 1e300;
  for (int64_t e = 0; e < E; ++e) {
    mesh::Vec3 xv[8];
    double x[8][3];
    for (int a = 0; a < 8; ++a) {
      xv[a] = s.nodes[s.connectivity[8 * e + a]];
      for (int k = 0; k < 3; ++k) x[a][k] = xv[a][k];
    }
    double V = 0;
    const double det = hex8_reference_geometry(x, &s.G[9 * e], V);
    if (!(det > 0)) {
      std::ostringstream msg;
      msg << "tled: element " << e << " is inverted or degenerate in the reference configuration (det J0 = " << det
          << "); expected VTK hexahedron node order";
      throw InputError(msg.str());
    }
    s.volume[e] = V;
    if (s.assembly == Assembly::Hourglass)
      hex8_hourglass_matrix(x, &s.G[9 * e], V, s.lambda + 2.0 * s.mu, s.hourglass_kappa,
                            &s.hourglass[kHourglassEntries * e]);
    double amax = 0;
    for (const auto& f : kHexFaces) amax = std::max(amax, face_area(xv, f));
    min_len = std::min(min_len, V / amax);
    for (int a = 0; a < 8; ++a) s.mass[s.connectivity[8 * e + a]] += s.density * V / 8.0;
  }
  s.char_length = min_len;
  s.wave_speed = std::sqrt((s.lambda + 2.0 * s.mu) / s.density);
  s.stable_dt = s.char_length / s.wave_speed;
  s.courant = sc.time.courant;
  if (sc.time.dt > 0) {
    s.dt = sc.time.dt;
    s.dt_from_scenario = true;
  } else {
    if (!(s.courant > 0 && s.courant <= 1)) throw InputError("tled: time.courant must lie in (0, 1]");
    s.dt = s.courant * s.stable_dt;
  }

  // Step 4: mass damping q and central-difference coefficients (Eqs. 4-5).
  s.convergence_rate = tled_options.convergence_rate;
  if (s.convergence_rate > 0) {
    const double cr2 = s.convergence_rate * s.convergence_rate;
    s.q = 2.0 * (1.0 - cr2) / (s.dt * (1.0 + cr2));
  } else {
    s.q = sc.time.damping;
  }
  const double qdt = s.q * s.dt;
  s.a_factor = 2.0 * s.dt * s.dt / (2.0 + qdt);
  s.b = 1.0 + (2.0 - qdt) / (2.0 + qdt);
  s.c = (2.0 - qdt) / (2.0 + qdt);
  s.a.resize(s.num_nodes);
  for (int64_t n = 0; n < s.num_nodes; ++n) s.a[n] = s.mass[n] > 0 ? s.a_factor / s.mass[n] : 0.0;
  if (sc.time.steps > 0) {
    s.steps_to_end = sc.time.steps;
  } else {
    s.steps_to_end = int64_t(std::ceil(sc.time.end_time / s.dt - 1e-9));
  }

  // Node -> element slot lists (Eq. 12 without atomics).
  std::vector<int32_t> count(s.num_nodes + 1, 0);
  for (int64_t i = 0; i < 8 * E; ++i) ++count[s.connectivity[i] + 1];
  s.slot_offset.resize(s.num_nodes + 1);
  s.slot_offset[0] = 0;
  for (int64_t n = 0; n < s.num_nodes; ++n) s.slot_offset[n + 1] = s.slot_offset[n] + count[n + 1];
  s.slot_index.resize(8 * E);
  std::vector<int32_t> fill(s.slot_offset.begin(), s.slot_offset.end() - 1);
  const bool all_nodes = slots_per_element(s.assembly) == 8;
  for (int64_t e = 0; e < E; ++e)
    for (int a = 0; a < 8; ++a) {
      const int k = a < 4 || all_nodes ? a : hex_antipode(a);
      const int32_t slot = int32_t(k * E + e);
      s.slot_index[fill[s.connectivity[8 * e + a]]++] = 2 * slot + (a < 4 || all_nodes ? 0 : 1);
    }
  for (int64_t n = 0; n < s.num_nodes; ++n)
    std::sort(s.slot_index.begin() + s.slot_offset[n], s.slot_index.begin() + s.slot_offset[n + 1]);

  // Boundary conditions (shared resolution: every method constrains the same nodes).
  const ResolvedBoundary rb = resolve_boundary(sc.boundary, s.nodes, hex);
  s.constrained = rb.constrained;
  s.fixed_any.resize(s.num_nodes);
  for (int64_t n = 0; n < s.num_nodes; ++n) s.fixed_any[n] = s.constrained[n] ? 1 : 0;
  for (const auto& c : rb.curves) s.curves.push_back(curve_params(c));
  for (const auto& p : rb.prescribed)
    s.prescribed.push_back({p.node, p.mask, {p.displacement[0], p.displacement[1], p.displacement[2]}, p.curve});
  for (const auto& f : rb.forces) s.forces.push_back({f.node, {f.force[0], f.force[1], f.force[2]}, f.curve});
  for (int d = 0; d < 3; ++d) s.gravity[d] = rb.gravity[d];
  return s;
}

nlohmann::json TledSetup::describe() const {
  nlohmann::json j;
  j["algorithm"] =
      "TLED: one-point hexahedra, neo-Hookean (Eq. 18), mass-damped central difference (Eqs. 3-5), Strbac 2015";
  if (assembly == Assembly::Hourglass)
    j["hourglass_control"] = {{"method", "Joldes, Wittek & Miller 2008 (Flanagan-Belytschko shape vectors, reference configuration)"},
                              {"kappa", hourglass_kappa}};
  else
    j["hourglass_control"] = "none (as the paper; homogeneous compression does not excite hourglass modes)";
  j["elements"] = num_elements;
  j["nodes"] = num_nodes;
  j["assembly"] = to_string(assembly);
  j["texture"] = texture;
  j["damage"] = damage_enabled;
  j["material"] = {{"youngs_modulus", youngs}, {"poisson_ratio", poisson}, {"mu", mu},
                   {"kappa", kappa},           {"density", density}};
  if (damage_enabled) j["damage_parameters"] = {{"gamma", damage.gamma}, {"m", damage.m}, {"psi0", damage.psi0}};
  j["time"] = {{"dt", dt},
               {"dt_from_scenario", dt_from_scenario},
               {"stable_dt", stable_dt},
               {"courant", courant},
               {"wave_speed", wave_speed},
               {"characteristic_length", char_length},
               {"convergence_rate", convergence_rate},
               {"q", q},
               {"a_factor", a_factor},
               {"b", b},
               {"c", c},
               {"steps_to_end", steps_to_end}};
  return j;
}

template <class T>
void tled_cell_fields(const TledSetup& s, const std::vector<T>& u, const std::vector<T>& beta,
                      std::vector<mesh::Field>& out) {
  const int64_t E = s.num_elements;
  mesh::Field vm{mesh::field::kVonMises, 1, std::vector<double>(E)};
  mesh::Field psi{mesh::field::kEnergyDensity, 1, std::vector<double>(E)};
  mesh::Field dmg{mesh::field::kDamage, 1, std::vector<double>(E)};
  mesh::Field mat{mesh::field::kMaterialId, 1, std::vector<double>(E)};
  for (int64_t e = 0; e < E; ++e) {
    T ue[8][3], G[9], F[9];
    for (int a = 0; a < 8; ++a)
      for (int d = 0; d < 3; ++d) ue[a][d] = u[3 * size_t(s.connectivity[8 * e + a]) + d];
    for (int k = 0; k < 9; ++k) G[k] = T(s.G[9 * e + k]);
    deformation_gradient(ue, G, F);
    const NeoHookeanState<T> st = neo_hookean_pk2(F, T(s.mu), T(s.kappa));
    T d = 0;
    if (s.damage_enabled) d = T(s.damage.gamma) * (T(1) - tled_exp(-beta[e] / T(s.damage.m)));
    T S[6];
    for (int k = 0; k < 6; ++k) S[k] = (T(1) - d) * st.S[k];
    vm.values[e] = st.J > 0 ? double(von_mises_from_pk2(F, S, st.J)) : std::nan("");
    // Energy consistent with S_dam = (1 - d) S (Eq. 22 scales the whole stress).
    psi.values[e] = double((T(1) - d) * (st.psi_dev + st.psi_vol));
    dmg.values[e] = double(d);
    mat.values[e] = double(s.material_id[e]);
  }
  out.push_back(std::move(vm));
  out.push_back(std::move(psi));
  out.push_back(std::move(dmg));
  out.push_back(std::move(mat));
}

template void tled_cell_fields<float>(const TledSetup&, const std::vector<float>&, const std::vector<float>&,
                                      std::vector<mesh::Field>&);
template void tled_cell_fields<double>(const TledSetup&, const std::vector<double>&, const std::vector<double>&,
                                       std::vector<mesh::Field>&);

WorkCounts tled_work_per_step(const TledSetup& s, Precision p) {
  // Counts per PERF_NOTES.md: the DRAM-minimum byte model (every array touched once per step;
  // a node's displacement is read once although 8 elements use it).
  const double w = p == Precision::Fp32 ? 4.0 : 8.0;
  const double E = double(s.num_elements), N = double(s.num_nodes);
  const double slots = double(s.slot_index.size());
  const bool dmg = s.damage_enabled;
  double flops = E * (336.0 + (dmg ? 12.0 : 0.0)) + N * 15.0;
  double bytes = E * (32.0 + 10.0 * w + (dmg ? 2.0 * w : 0.0)) + N * (3.0 * w) /* u gathered */ +
                 N * (3.0 * w /*u*/ + 3.0 * w /*u_prev*/ + 3.0 * w /*write*/ + w /*a*/ + 1.0 /*mask*/);
  if (gathers(s.assembly)) {
    const double stored = 3.0 * slots_per_element(s.assembly);  // forces stored per element
    flops += slots * 3.0;
    bytes += E * stored * w                 // element writes forces of nodes 0..3 (hourglass: 0..7)
             + E * stored * w               // node kernel reads them (gather: each twice; once from DRAM)
             + N * 4.0 + slots * 4.0;       // slot lists
    if (s.assembly == Assembly::Hourglass) {
      flops += E * (2.0 * 64.0 * 3.0);       // f += K u, the full 8 x 8 product per component
      bytes += E * double(kHourglassEntries) * w;  // the packed hourglass matrix
    }
  } else {
    flops += E * 24.0;
    bytes += E * 24.0 * w                   // atomic adds (resolved in L2)
             + N * 6.0 * w;                 // nodal forces read and reset
  }
  bytes += double(s.prescribed.size()) * (4.0 + 1.0 + 3.0 * w);
  // The gather variant's count is compulsory; the atomic variant's adds are resolved in L2 and
  // are counted as requested, which makes the whole figure no longer a DRAM minimum.
  return {flops, bytes, gathers(s.assembly) ? BytesConvention::Compulsory : BytesConvention::Requested};
}

}  // namespace eb::tled
