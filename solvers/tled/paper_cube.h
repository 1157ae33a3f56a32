#pragma once
// The cube of Strbac 2015 as TLED's tests, benchmark and experiment run it: the built-in
// `cube-compression` scenario (whose symmetry-plane constraints were chosen because one-point
// hexahedra without hourglass control slide past a single pinned node) at a given resolution.
#include <string>
#include <vector>

namespace eb::tled {

inline std::vector<std::string> paper_cube_overrides(int elements_per_edge) {
  return {"mesh.elements_per_edge=" + std::to_string(elements_per_edge)};
}

}  // namespace eb::tled
