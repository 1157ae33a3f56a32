#pragma once
// The plan of hexmg's smoothed hierarchy (smoothed_hierarchy.h says what it is and why) as plain
// arrays: the block patterns, prolongation values and colourings that both backends read. Kept
// apart from the construction (Eigen, algebraic_hierarchy.h) so that the CUDA translation unit
// (hexmg_cuda.cu) includes no Eigen: nvcc warns on Eigen's host-only functions (warning 20015).
#include <cstdint>
#include <vector>

namespace eb::hexmg {

struct BlockPattern {
  int32_t rows = 0;
  std::vector<int32_t> ptr{0}, col;  // columns sorted within each row
  int64_t nnz() const { return int64_t(col.size()); }
};

// Level l >= 1 of the smoothed hierarchy: rows and columns are slots of the model's level l
// (padding slots included, as empty rows), 3 components each.
struct SmoothedLevel {
  int32_t n = 0;
  BlockPattern A;                 // A_l
  BlockPattern P;                 // P_l: level l -> level l - 1 (rows: slots of level l - 1)
  std::vector<double> P_val;      // 9 per entry of P, row-major blocks
  BlockPattern R;                 // P_l^T (rows: slots of level l)
  std::vector<double> R_val;
  BlockPattern AP;                // A_{l-1} P_l (rows: slots of level l - 1)
  std::vector<int32_t> A_mirror;  // per entry (i, j) of A: the entry (j, i) (mirror_row)
  std::vector<uint8_t> dead;      // per slot, bit d: component without a coarse function
  // Greedy colouring of A_l's graph (not on the coarsest level): rows of colour c are
  // colour_order[colour_begin[c] .. colour_begin[c + 1]).
  std::vector<int32_t> colour_order, colour_begin;
  double omega = 0;               // the prolongation smoother's damping on level l - 1
  int colours() const { return colour_begin.empty() ? 0 : int(colour_begin.size()) - 1; }
};

struct SmoothedPlan {
  // The simulation level's 27-point stencil as block rows: entry p of row x is stencil offset
  // A0_offset[p] (real slots only; padding rows are empty).
  BlockPattern A0;
  std::vector<int32_t> A0_offset;
  std::vector<SmoothedLevel> levels;  // [l] for l >= 1; [0] is empty
  int n_levels() const { return int(levels.size()); }
  // sum over levels of block entries / level-0 block entries.
  double operator_complexity() const;
  // Block products (3x3 times 3x3) of level l's Galerkin step: of A P and of R (A P)'s upper triangle.
  struct GalerkinWork {
    double ap = 0, rap = 0;
  };
  GalerkinWork galerkin_work(int l) const;
};

}  // namespace eb::hexmg
