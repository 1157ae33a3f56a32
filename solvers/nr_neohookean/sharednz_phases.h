#pragma once
// The three phases of a SharedNZ block (sharednz_plan.h), EB_HD so that the CUDA kernel
// (sharednz_cuda.cu) and the host reference (sharednz_plan.cpp) run the same code. Between the
// phases the block synchronizes; within a phase no two threads write one location.
#include "solvers/nr_neohookean/sharednz_plan.h"

namespace eb::nr_neohookean {

// Device (or host) pointers of a plan, passed by value to the kernel.
template <class T>
struct SharedNzArgs {
  const int64_t* slot_ptr = nullptr;
  const int32_t* slot_record = nullptr;
  const T* supp = nullptr;  // slot_supplemental
  int64_t slots = 0;
  const int64_t* scatter_ptr = nullptr;
  const int32_t* scatter = nullptr;
  const int64_t* reduce_ptr = nullptr;
  const int32_t* reduce = nullptr;
  int64_t value_count = 0;
  int64_t rows = 0;  // force entries (block lists' zero-write targets follow them)
  tet::SupplementalForm form = tet::SupplementalForm::Full9;
  tet::Lame<T> lame{};
  const T* x = nullptr;
  AssemblyTargets<T> out{};
};

// The arguments over the plan's arrays as `A` holds them (std::vector on the host, DeviceBuffer on
// the device: anything with data()); x and out are set per assembly.
template <class T, class A64, class A32, class AT>
SharedNzArgs<T> sharednz_args(const SharedNzPlan& plan, const A64& slot_ptr, const A32& slot_record, const AT& supp,
                              const A64& scatter_ptr, const A32& scatter, const A64& reduce_ptr, const A32& reduce,
                              tet::SupplementalForm form, tet::Lame<T> lame) {
  SharedNzArgs<T> a;
  a.slot_ptr = slot_ptr.data();
  a.slot_record = slot_record.data();
  a.supp = supp.data();
  a.slots = plan.slots();
  a.scatter_ptr = scatter_ptr.data();
  a.scatter = scatter.data();
  a.reduce_ptr = reduce_ptr.data();
  a.reduce = reduce.data();
  a.value_count = plan.value_count;
  a.rows = plan.rows;
  a.form = form;
  a.lame = lame;
  return a;
}

// Thread tid's row of a packed array (entries begin + tid, + threads, ...), handed to `step` in
// order. kAhead entries are loaded before any is used, so that as many independent index loads
// are in flight per thread: with one block of 8 warps per SM (the shared memory and the element
// routine's registers allow no more) the walk is latency-bound otherwise.
template <int kAhead, class Step>
EB_HD void walk_row(const int32_t* arr, int64_t begin, int64_t end, int tid, int threads, Step step) {
  int64_t i = begin + tid;
  const int64_t stride = int64_t(threads) * kAhead;
  for (; i + stride - threads < end; i += stride) {
    int32_t v[kAhead];
    for (int u = 0; u < kAhead; ++u) v[u] = load_index(arr + i + int64_t(u) * threads);
    for (int u = 0; u < kAhead; ++u) step(v[u]);
  }
  for (; i < end; i += threads) step(load_index(arr + i));
}

// Phase 1: thread `tid` of `threads` walks its row of block k's scatter array.
template <class T>
EB_HD void sharednz_scatter(const SharedNzArgs<T>& a, int64_t k, int tid, int threads, T* sm) {
  const int64_t S = a.slot_ptr[k + 1] - a.slot_ptr[k];
  T x0 = T(0), x1 = T(0), x2 = T(0);
  walk_row<4>(a.scatter, a.scatter_ptr[k], a.scatter_ptr[k + 1], tid, threads, [&](int32_t v) {
    if (v < 0) {
      const int64_t m = -int64_t(v) - 1;
      x0 = a.x[3 * m];
      x1 = a.x[3 * m + 1];
      x2 = a.x[3 * m + 2];
    } else if (v > 0) {
      const int64_t t = int64_t(v) - 1;
      sm[t] = x0;
      sm[t + S] = x1;
      sm[t + 2 * S] = x2;
    }
  });
}

// Phase 2: slot j of block k, from its staged positions to its element data.
template <class T>
EB_HD void sharednz_element(const SharedNzArgs<T>& a, int64_t k, int64_t j, T* sm) {
  const int64_t S = a.slot_ptr[k + 1] - a.slot_ptr[k];
  const int64_t s = a.slot_ptr[k] + j;
  T xe[4][3];
  for (int q = 0; q < 12; ++q) xe[q / 3][q % 3] = sm[q * S + j];
  T f[12], K[144];
  slot_element_routine(xe, a.supp, a.slots, s, a.form, a.lame, f, K, a.out.checks, a.slot_record[s]);
  for (int q = 0; q < 12; ++q) sm[q * S + j] = f[q];
  int q = 12;
  for (int r = 0; r < 12; ++r)
    for (int c = r; c < 12; ++c) sm[(q++) * S + j] = K[r * 12 + c];
}

// Phase 3: thread `tid` walks its row of block k's reduction array (Alg. 2).
template <class T>
EB_HD void sharednz_reduce(const SharedNzArgs<T>& a, int64_t k, int tid, int threads, const T* sm) {
  T sum = T(0);
  walk_row<8>(a.reduce, a.reduce_ptr[k], a.reduce_ptr[k + 1], tid, threads, [&](int32_t v) {
    if (v > 0) {
      sum += sm[v - 1];
    } else if (v < 0) {
      const int64_t p = -int64_t(v) - 1;
      if (p < a.value_count)
        a.out.values.at(p) = a.out.tangent_scale * sum;
      else
        a.out.force[p - a.value_count] = a.out.force_scale * sum;
      sum = T(0);
    }
  });
}

// Phase 3 with node-block lists (SharedNzPlan::block_lists): a thread sums the 3 x 3 block of a
// node pair (or the 3 force entries of a node) at once, then writes them to the list's targets.
template <class T>
EB_HD void sharednz_reduce_blocks(const SharedNzArgs<T>& a, int64_t k, int tid, int threads, const T* sm) {
  const int64_t S = a.slot_ptr[k + 1] - a.slot_ptr[k];
  T sum[9];
  for (int u = 0; u < 9; ++u) sum[u] = T(0);
  int written = 0;  // targets of the current list done
  walk_row<8>(a.reduce, a.reduce_ptr[k], a.reduce_ptr[k + 1], tid, threads, [&](int32_t v) {
    if (v > 0) {
      const int32_t code = v - 1;
      const int64_t j = code >> 5;
      const int ra = 3 * ((code >> 2) & 3), cb = 3 * (code & 3);
      if (code & 16) {
        for (int i = 0; i < 3; ++i) sum[i] += sm[(ra + i) * S + j];
      } else {
        for (int i = 0; i < 3; ++i)
          for (int c = 0; c < 3; ++c) sum[3 * i + c] += sm[staged_tangent(ra + i, cb + c, j, S)];
      }
      return;
    }
    if (v == 0) return;
    // The sum of this target, selected without indexing the array by a variable (which would put
    // it in local memory on the device).
    T value = sum[0];
    for (int u = 1; u < 9; ++u)
      if (u == written) value = sum[u];
    int expected = 9;
    if (v != INT32_MIN) {
      const int64_t t = -int64_t(v) - 1;
      if (t < a.value_count) {
        a.out.values.at(t) = a.out.tangent_scale * value;
      } else {
        expected = 3;
        if (t < a.value_count + a.rows)
          a.out.force[t - a.value_count] = a.out.force_scale * value;
        else
          a.out.force[t - a.value_count - a.rows] = T(0);
      }
    }
    if (++written == expected) {
      written = 0;
      for (int u = 0; u < 9; ++u) sum[u] = T(0);
    }
  });
}

}  // namespace eb::nr_neohookean
