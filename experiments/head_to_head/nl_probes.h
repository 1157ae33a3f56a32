#pragma once
// Probe points of the nonlinear part of head-to-head: a displacement field given at the nodes of
// a tetrahedral or hexahedral mesh, evaluated at points by the mesh's own shape functions (linear
// tetrahedra: barycentric; trilinear hexahedra: the isoparametric map inverted by Newton), so that
// a hexahedral and a tetrahedral model of one body are compared at the same material points.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "meshes/mesh.h"

namespace eb::head_to_head {

class ProbeInterpolator {
 public:
  // Locates every point in the reference mesh (connectivity flat, VTK node order: 4 or 8 nodes
  // per cell). A point on a shared face or edge takes the first cell that holds it (a continuous
  // field has the same value in each). Throws InputError naming the point when no cell holds it
  // within `tolerance` x the mesh's bounding-box diagonal.
  ProbeInterpolator(const std::vector<mesh::Vec3>& nodes, mesh::CellType type, const std::vector<int32_t>& connectivity,
                    const std::vector<mesh::Vec3>& points, double tolerance = 1e-9);

  std::size_t size() const { return weights_.size(); }
  // The field at every point; `u` holds 3 values per node (x, y, z interleaved).
  std::vector<mesh::Vec3> interpolate(const std::vector<double>& u) const;
  // The cell that holds point k (in the order of the connectivity).
  int64_t cell(std::size_t k) const { return cells_[k]; }

 private:
  struct Weights {
    std::array<int32_t, 8> node{};
    std::array<double, 8> w{};
    int count = 0;
  };
  std::vector<Weights> weights_;
  std::vector<int64_t> cells_;
};

// Largest probe error relative to the largest reference displacement:
// max_k |u_k - ref_k| / max_k |ref_k| (the measure of the nonlinear part's accuracy).
double max_relative_error(const std::vector<mesh::Vec3>& u, const std::vector<mesh::Vec3>& ref);

}  // namespace eb::head_to_head
