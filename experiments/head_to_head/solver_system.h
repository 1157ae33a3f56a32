#pragma once
// The linear systems of the head-to-head solver comparison (issue 24, part `solvers`): one
// implicit step's system of a method, with everything every solver of the comparison needs, so
// that all of them solve the same matrix and right-hand side:
//   hex  hexmg's level-0 system (HexmgSimulation::export_system, the first step from rest), with
//        the simulation kept open so that its own V-cycle and stencil PCG solve it in place;
//   tet  bcsr-pcg's global BCSR matrix and right-hand side of a time step (after `warm_steps`
//        steps, so that the rotations are not the identity), with the element matrices for the
//        element-wise (matrix-free) product of the same matrix.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "solvers/common/scenario.h"
#include "solvers/common/simulation.h"
#include "solvers/linalg/sparse_formats.h"

namespace eb::hexmg {
class HexmgSimulation;
}

namespace eb::head_to_head {

struct SolverSystem {
  std::string scene;   // the scenario's name
  std::string family;  // "hex" or "tet"
  int64_t elements = 0;
  linalg::AssembledMatrix<double> A;  // fp64, symmetric positive definite
  linalg::CsrMatrix<double> csr;      // the same, for products
  std::vector<double> b;
  // tet: y = A x as a sum over the elements' 12 x 12 matrices (with the assembled matrix's
  // Dirichlet masking), and diag(A); empty for hex.
  std::function<void(const double* x, double* y)> element_product;
  // hex: the simulation whose open step this system is (CPU fp64; restart_solve() resets its
  // increment to 0, the start every solver uses); null for tet.
  std::shared_ptr<hexmg::HexmgSimulation> hex;
  double setup_seconds = 0;  // building the method's model and assembling the system (not a solver cost)
};

SolverSystem hex_system(const Scenario& scenario, const RunOptions& ro);
SolverSystem tet_system(const Scenario& scenario, const RunOptions& ro, int warm_steps);

// Element matrices (element-major, L = 3 npe, L * L per element) with linalg::gather_matrix's
// Dirichlet rule applied: an entry whose row or column component is constrained becomes 0, except
// a constrained component's own diagonal. Their sum over the elements is the assembled matrix.
std::vector<double> mask_element_matrices(int64_t elements, int npe, const std::vector<int32_t>& connectivity,
                                          const std::vector<uint8_t>& constrained, std::vector<double> local);
// y = sum_e K_e x_e over masked element matrices. With several OpenMP threads each sums its
// contiguous range of elements into a private vector, and those are added in thread order
// (deterministic for a fixed thread count, no atomics).
void element_matrix_product(int64_t elements, int npe, const std::vector<int32_t>& connectivity,
                            const std::vector<double>& masked, const double* x, double* y, std::size_t n,
                            std::vector<std::vector<double>>& scratch);

// ||b - A x|| / ||b|| with the assembled matrix.
double true_relative_residual(const linalg::CsrMatrix<double>& A, const std::vector<double>& b, const double* x);

}  // namespace eb::head_to_head
