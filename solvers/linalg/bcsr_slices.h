#pragma once
// The GPU layout of BCSR (Verschoor & Jalba 2012, Fig. 2c): block rows are grouped into slices of
// kSliceRows = 32 (one warp, one block row per lane); the blocks of a slice are stored step by step
// (step k holds the k-th block of each of the 32 rows), padded to the slice's longest row, and
// within a step component-major (component c of lane l at c * 32 + l). A warp then reads each of
// the 9 components of its 32 blocks as one contiguous, fully coalesced 32-value load, and the 32
// column indices of a step as another. To keep the padding small, block rows are sorted by length
// (longest first) inside windows of a few slices; windows keep the mesh order's locality of x.
//
// This header is host-only: the CUDA mirror (device_formats.cuh) uploads these arrays unchanged,
// and the CPU function spmv(SlicedBcsr) below is the readable reference of the kernel's layout.
#include <vector>

#include "solvers/linalg/sparse_formats.h"

namespace eb::linalg {

template <class T>
struct SlicedBcsr {
  using value_type = T;
  static constexpr int kSliceRows = 32;
  Index block_rows = 0, block_cols = 0;
  int sort_window = 0;           // slices per sorting window (<= 1: natural order)
  std::vector<Index> perm;       // slices * 32: the block row of (slice, lane), -1 for none
  std::vector<Offset> slice_ptr; // slices + 1: first step of each slice
  std::vector<Index> col;        // steps * 32, -1 = padding
  std::vector<T> val;            // steps * 9 * 32: component c of lane l at step k: k*288 + c*32 + l
  // Warps sharing a slice: warp w takes steps w, w + W, ... and the partial sums are added in warp
  // order (spmv_rows.h). A small matrix has too few slices to keep the GPU's SMs busy with one warp
  // each (the raptor: 188 slices for 132 SMs); 0 = chosen at upload from the device's SM count
  // (choose_warps_per_slice), which the CPU reference reads as 1.
  int warps_per_slice = 0;
  Index slices() const { return Index(slice_ptr.size()) - 1; }
  Offset steps() const { return slice_ptr.empty() ? 0 : slice_ptr.back(); }
};

// sort_window: slices per window sorted by row length (32 = 1,024 block rows); <= 1 keeps the
// order. A wider window pads less on irregular meshes (the padding is read like real blocks),
// and 1,024 RCM-ordered rows still keep x's locality; 32 beat 8 on the bunny (PERF_NOTES.md).
inline constexpr int kDefaultSortWindow = 32;
template <class T>
SlicedBcsr<T> make_sliced_bcsr(const BcsrMatrix<T>& m, int sort_window = kDefaultSortWindow);
// Warps per slice for a device of `multiprocessors` SMs: 8 below 6 slices per SM, else 4, halved
// while the mean steps per slice are fewer than the warps.
int choose_warps_per_slice(Index slices, Offset steps, int multiprocessors);

// Warps per thread block of the device product: with one warp per slice, kBcsrWarps slices per
// block; split among W = 2, 4 or 8 warps, kBcsrSplitWarps / W slices per block.
inline constexpr int kBcsrWarps = 4;
inline constexpr int kBcsrSplitWarps = 8;
// Thread blocks of the device product of `slices` slices at `warps_per_slice` (at least 1): the
// partial sums its fused dot writes (LinearOperator::fused_dot_blocks), so that a method can plan
// its CG (CgProblem) before the operator exists.
std::size_t sliced_bcsr_product_blocks(Index slices, int warps_per_slice);

// Back to BCSR (exact: the layout only moves values).
template <class T>
BcsrMatrix<T> to_bcsr(const SlicedBcsr<T>& s);

// Bytes the layout holds (padding included), and the stored padding blocks.
template <class T>
std::size_t storage_bytes(const SlicedBcsr<T>& s);
template <class T>
Offset padding_blocks(const SlicedBcsr<T>& s);

}  // namespace eb::linalg
