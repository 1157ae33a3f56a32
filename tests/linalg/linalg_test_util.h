#pragma once
// Test matrices for linalg, independent of the element libraries under assembly/: a minimal
// linear-elastic tet stiffness (linear tets, isotropic Hooke) assembled straight into BCSR, base
// clamping by scaled identity rows, random SPD 3x3-block matrices, a planted-edge-case matrix, and
// conversions to Eigen for the fp64 references. Used by the tests and by bench_sparse.
#include <Eigen/Sparse>

#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "meshes/mesh.h"
#include "solvers/linalg/sparse_formats.h"

namespace eb::linalg::test {

// Third-party mesh folder (EB_MESH_DATA_DIR or $ELASTOBENCH_DATA); empty when absent.
std::filesystem::path data_dir();
// The mesh at data_dir()/name as a tet mesh; empty path -> empty mesh (callers GTEST_SKIP).
mesh::TetMesh load_data_mesh(const std::string& name);

struct Material {
  double youngs = 1.0e5;
  double poisson = 0.3;
};

// K = sum_e V_e B_e^T D B_e over the tets, one 3x3 block per pair of nodes sharing a tet, built
// row by row (one thread per node, which recomputes the gradients of its tets: no atomics, and no
// per-tet storage at 10^7 tets). Throws InputError for a tet of non-positive volume.
BcsrMatrix<double> tet_stiffness(const mesh::TetMesh& m, const Material& mat = {});

// The 12x12 stiffness of tet e (row-major, DOF 3a + i for node a, component i): the same blocks.
std::array<double, 144> tet_element_stiffness(const mesh::TetMesh& m, size_t e, const Material& mat = {});

// Nodes whose coordinate along `axis` lies in the lowest `fraction` of the mesh's extent.
std::vector<Index> base_nodes(const mesh::TetMesh& m, int axis, double fraction);

// Dirichlet clamp of whole nodes, keeping the pattern: rows and columns of their DOFs become 0
// except the diagonal, which becomes the mean diagonal of K (an identity scaled so that the clamped
// DOFs add no eigenvalue far outside the stiffness's spectrum).
void clamp_nodes(BcsrMatrix<double>& K, const std::vector<Index>& nodes);

// The clamped stiffness (base: lowest 5% along `axis`) and a load: a body force along -axis on the
// free DOFs.
struct ElasticProblem {
  AssembledMatrix<double> K;
  std::vector<double> b;
  std::string name;
};
ElasticProblem clamped_problem(const mesh::TetMesh& m, const std::string& name, int axis);

// A box cantilever (the benchmark's voxel-tetrahedralized beam): n x n/4 x n/4 cubes of 5 or 6 tets.
mesh::TetMesh box_cantilever(int n, int tets_per_cube);

// Random SPD matrix of 3x3 blocks: each block row links to `links` random others (then
// symmetrized), random entries in [-1, 1], diagonal blocks symmetric with the row's absolute sum
// plus 1 on the diagonal (strictly diagonally dominant, hence SPD).
AssembledMatrix<double> random_spd_blocks(Index block_rows, int links, uint32_t seed);

// Planted edge cases in an SPD block matrix: block row 0 couples to every other (a row far longer
// than the rest: HYB's COO part, the longest ELL row, CSR rows longer than a warp), block row 1 has
// only its diagonal block, and the size is not a multiple of 32 block rows (a partial BCSR slice).
AssembledMatrix<double> planted_blocks(Index block_rows, uint32_t seed);

std::vector<double> random_vector(size_t n, uint32_t seed);

Eigen::SparseMatrix<double, Eigen::RowMajor> to_eigen(const AssembledMatrix<double>& a);

// ||a - b||_2 / ||b||_2 (both in double).
template <class T>
double relative_error(const std::vector<T>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    num += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
    den += b[i] * b[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

template <class To, class From>
std::vector<To> cast_vector(const std::vector<From>& v) {
  return std::vector<To>(v.begin(), v.end());
}

}  // namespace eb::linalg::test
