#include "solvers/nr_neohookean/coloured_plan.h"

#include <algorithm>
#include <string>

#include "meshes/errors.h"
#include "meshes/node_partition.h"

namespace eb::nr_neohookean {

std::vector<int32_t> element_colouring(int64_t nodes, const std::vector<int32_t>& conn) {
  const std::size_t E = conn.size() / 4;
  std::vector<std::array<int32_t, 4>> tets(E);
  for (std::size_t e = 0; e < E; ++e)
    for (std::size_t a = 0; a < 4; ++a) tets[e][a] = conn[4 * e + a];
  const mesh::NodeElements inc = mesh::node_elements(std::size_t(nodes), tets);
  std::vector<int32_t> colour(E, -1);
  std::vector<int64_t> taken;  // taken[c] == e: colour c is used by a neighbour of e
  for (std::size_t e = 0; e < E; ++e) {
    for (int32_t v : tets[e])
      for (int64_t i = inc.offsets[std::size_t(v)]; i < inc.offsets[std::size_t(v) + 1]; ++i)
        if (const int32_t c = colour[std::size_t(inc.elements[std::size_t(i)])]; c >= 0) taken[std::size_t(c)] = int64_t(e);
    int32_t c = 0;
    while (std::size_t(c) < taken.size() && taken[std::size_t(c)] == int64_t(e)) ++c;
    if (std::size_t(c) == taken.size()) taken.push_back(-1);
    colour[e] = c;
  }
  return colour;
}

ColouredPlan make_coloured_plan(int64_t nodes, const std::vector<int32_t>& conn, const linalg::ElementValueMap& map) {
  const int64_t E = int64_t(conn.size() / 4);
  if (conn.size() % 4 != 0 || map.nodes_per_element != 4 || map.elements != E ||
      int64_t(map.entry.size()) != E * 144 || int64_t(map.dof.size()) != E * 12)
    throw InputError("coloured assembly: the value map is not a 4-node map of this mesh (" +
                     std::to_string(map.elements) + " elements, " + std::to_string(E) + " in the mesh)");
  const std::vector<int32_t> colour = element_colouring(nodes, conn);
  const int colours = E ? *std::max_element(colour.begin(), colour.end()) + 1 : 0;
  ColouredPlan plan;
  plan.rows = 3 * nodes;
  plan.colour_ptr.assign(std::size_t(colours) + 1, 0);
  for (int32_t c : colour) ++plan.colour_ptr[std::size_t(c) + 1];
  for (int c = 0; c < colours; ++c) plan.colour_ptr[std::size_t(c) + 1] += plan.colour_ptr[std::size_t(c)];
  plan.slot_element.resize(std::size_t(E));
  std::vector<int64_t> fill(plan.colour_ptr.begin(), plan.colour_ptr.end() - 1);
  for (int64_t e = 0; e < E; ++e) plan.slot_element[std::size_t(fill[std::size_t(colour[std::size_t(e)])]++)] = int32_t(e);

  const std::size_t slots = std::size_t(E);
  plan.conn.resize(4 * slots);
  plan.entry.assign(144 * slots, 0);
  plan.force.assign(12 * slots, 0);
  std::vector<char> value_seen(std::size_t(map.value_count), 0), row_seen(std::size_t(plan.rows), 0);
  for (std::size_t s = 0; s < slots; ++s) {
    const std::size_t e = std::size_t(plan.slot_element[s]);
    for (std::size_t a = 0; a < 4; ++a) plan.conn[a * slots + s] = conn[4 * e + a];
    for (std::size_t r = 0; r < 12; ++r) {
      if (const int32_t d = map.dof[e * 12 + r]; d >= 0) {
        plan.force[r * slots + s] = row_seen[std::size_t(d)] ? d + 1 : -(d + 1);
        row_seen[std::size_t(d)] = 1;
      }
      for (std::size_t c = 0; c < 12; ++c)
        if (const int32_t p = map.entry[(e * 12 + r) * 12 + c]; p >= 0) {
          plan.entry[(r * 12 + c) * slots + s] = value_seen[std::size_t(p)] ? p + 1 : -(p + 1);
          value_seen[std::size_t(p)] = 1;
        }
    }
  }
  for (int64_t row = 0; row < plan.rows; ++row)
    if (!row_seen[std::size_t(row)]) plan.zero_rows.push_back(int32_t(row));
  return plan;
}

template <class T>
void coloured_reference(const ColouredPlan& plan, const std::vector<T>& slot_supp, tet::SupplementalForm form,
                        tet::Lame<T> lame, const T* x, const AssemblyTargets<T>& out) {
  ColouredArgs<T> a =
      coloured_args(plan, plan.conn, plan.entry, plan.force, plan.slot_element, slot_supp, form, lame);
  a.x = x;
  a.out = out;
  for (int32_t row : plan.zero_rows) out.force[row] = T(0);
  for (int64_t s = 0; s < plan.slots(); ++s) coloured_element(a, s);
}

template void coloured_reference(const ColouredPlan&, const std::vector<float>&, tet::SupplementalForm,
                                 tet::Lame<float>, const float*, const AssemblyTargets<float>&);
template void coloured_reference(const ColouredPlan&, const std::vector<double>&, tet::SupplementalForm,
                                 tet::Lame<double>, const double*, const AssemblyTargets<double>&);

}  // namespace eb::nr_neohookean
