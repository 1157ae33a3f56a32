#pragma once
// Grid-wide sums of a few doubles inside one kernel, without a second launch, and deterministic:
// each block writes its partial sums, and the last block to take a ticket adds all partials in
// block order (the same order every run, so two runs give identical bits, graph or not). Used by
// the CG engine's reductions (cg_cuda.cu) and by SpMV kernels that fuse a dot product into the
// product (spmv_cuda.cu), so the same pattern is written once.
#include <cub/block/block_reduce.cuh>

#include <cstddef>

namespace eb::linalg {

template <int N>
struct Sums {
  double v[N];
};
template <int N>
struct AddSums {
  __device__ Sums<N> operator()(const Sums<N>& a, const Sums<N>& b) const {
    Sums<N> r;
    for (int j = 0; j < N; ++j) r.v[j] = a.v[j] + b.v[j];
    return r;
  }
};

// Every thread of the block calls it with its own contribution. Returns true in thread 0 of the
// last block only, with the grid's totals. partials: gridDim.x * N doubles; the ticket is 0 on
// entry and left 0 (kernels on one stream run one after another, so one ticket serves them all).
template <int N, int Threads>
__device__ bool grid_sum(const Sums<N>& mine, double* partials, unsigned* ticket, Sums<N>& total) {
  using Reduce = cub::BlockReduce<Sums<N>, Threads>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ bool last;
  const Sums<N> block = Reduce(tmp).Reduce(mine, AddSums<N>());
  if (threadIdx.x == 0) {
    for (int j = 0; j < N; ++j) partials[size_t(blockIdx.x) * N + j] = block.v[j];
    __threadfence();  // the partials are visible before the ticket says so
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return false;
  __threadfence();
  Sums<N> acc;
  for (int j = 0; j < N; ++j) acc.v[j] = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x)
    for (int j = 0; j < N; ++j) acc.v[j] += __ldcg(partials + size_t(b) * N + j);
  __syncthreads();  // tmp is reused
  const Sums<N> all = Reduce(tmp).Reduce(acc, AddSums<N>());
  if (threadIdx.x != 0) return false;
  *ticket = 0;
  total = all;
  return true;
}

}  // namespace eb::linalg
