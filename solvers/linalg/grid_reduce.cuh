#pragma once
// Grid-wide sums of a few doubles inside one kernel, without a second launch, and deterministic:
// each block writes its partial sums, and the last block to take a ticket adds all partials in
// block order (the same order every run, so two runs give identical bits, graph or not). Used by
// the CG engine's reductions (cg_kernels.cuh) and by SpMV kernels that fuse a dot product into the
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
// ticket null: each block only writes its partial sums and false is returned everywhere; a later
// kernel adds them (sum_partials), which takes the serial last-block tail (fence, ticket, a
// second read of the partials) off this kernel's critical path.
template <int N, int Threads>
__device__ bool grid_sum(const Sums<N>& mine, double* partials, unsigned* ticket, Sums<N>& total) {
  using Reduce = cub::BlockReduce<Sums<N>, Threads>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ bool last;
  const Sums<N> block = Reduce(tmp).Reduce(mine, AddSums<N>());
  if (threadIdx.x == 0) {
    for (int j = 0; j < N; ++j) partials[size_t(blockIdx.x) * N + j] = block.v[j];
    if (ticket) {
      __threadfence();  // the partials are visible before the ticket says so
      last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
  }
  if (!ticket) return false;
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

// The total of `count` partial sums (N doubles each) that an earlier kernel on the stream left
// with a null ticket, returned to every thread of the calling block. The same order as the last
// block of grid_sum (thread t adds entries t, t + Threads, ..., then the block reduction), so the
// bits are those grid_sum would give with Threads threads, and every block gets the same ones.
// All threads of the block must call it.
template <int N, int Threads>
__device__ Sums<N> sum_partials(const double* partials, unsigned count) {
  using Reduce = cub::BlockReduce<Sums<N>, Threads>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ Sums<N> all;
  Sums<N> acc;
  for (int j = 0; j < N; ++j) acc.v[j] = 0;
  for (unsigned b = threadIdx.x; b < count; b += Threads)
    for (int j = 0; j < N; ++j) acc.v[j] += __ldcg(partials + size_t(b) * N + j);
  const Sums<N> total = Reduce(tmp).Reduce(acc, AddSums<N>());
  if (threadIdx.x == 0) all = total;
  __syncthreads();
  return all;
}

// Two sets of partial sums added in one pass and one block reduction (components 0..N1-1 from
// p1, N1.. from p2): each component's bits are those of sum_partials on its own set, since the
// per-thread order is the same and the block reduction pairs whole Sums the same way.
template <int N1, int N2, int Threads>
__device__ Sums<N1 + N2> sum_partials(const double* p1, unsigned c1, const double* p2, unsigned c2) {
  using Reduce = cub::BlockReduce<Sums<N1 + N2>, Threads>;
  __shared__ typename Reduce::TempStorage tmp;
  __shared__ Sums<N1 + N2> all;
  Sums<N1 + N2> acc;
  for (int j = 0; j < N1 + N2; ++j) acc.v[j] = 0;
  for (unsigned b = threadIdx.x; b < c1; b += Threads)
    for (int j = 0; j < N1; ++j) acc.v[j] += __ldcg(p1 + size_t(b) * N1 + j);
  for (unsigned b = threadIdx.x; b < c2; b += Threads)
    for (int j = 0; j < N2; ++j) acc.v[N1 + j] += __ldcg(p2 + size_t(b) * N2 + j);
  const Sums<N1 + N2> total = Reduce(tmp).Reduce(acc, AddSums<N1 + N2>());
  if (threadIdx.x == 0) all = total;
  __syncthreads();
  return all;
}

}  // namespace eb::linalg
