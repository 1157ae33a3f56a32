// GlobalNZ (Cecka, Lew & Darve 2011, Sec. 16.3.1): assembly by non-zero through global memory.
//  1. Element kernel, one element per thread. Thread block k computes the elements
//     [k B, (k + 1) B) (elements are sorted by their lowest node, so a block's elements share
//     nodes); it first prefetches the positions of its node set N_k into shared memory, then each
//     thread reads its element's block node numbers E_k(e, a) and supplemental data S(e)
//     (entry-major arrays: coalesced, Fig. 16.2) and calls the one element routine
//     (assembly/tet/neo_hookean.h); it writes its 78 tangent values (upper triangle: K_e is
//     symmetric) and 12 force values to the element data array G, entry-major (coalesced).
//  2. Reduction kernel (Algorithm 2): every non-zero of the matrix (and every force row) has a
//     reduction list of source indices into G (+i + 1) closed by its target (-(j + 1)). Thread
//     block b owns the value positions [b Q, (b + 1) Q); its lists are packed onto its threads by
//     LPT (longest first, each to the least-loaded thread) into a column-major array read down in
//     coalesced rows; each thread sums its lists into shared memory, then the block writes its Q
//     positions coalesced (padding positions, e.g. HYB's, get 0: the paper's remark on DHYB).
// Summation order: a list holds its sources in element order, so the sums are deterministic.
#include <algorithm>
#include <numeric>
#include <queue>
#include <vector>

#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
#include "solvers/linalg/device_formats.cuh"
#include "solvers/nr_neohookean/assembly_strategy.h"

namespace eb::nr_neohookean {

namespace {

constexpr int kElemBlock = 128;   // elements per block of the element kernel
constexpr int kReduceThreads = 256;
constexpr int kReduceNz = 2048;   // value positions per reduction block (8 per thread)
constexpr int kSym = 78;          // upper triangle of the 12 x 12 element tangent
constexpr int kElemData = kSym + 12;

__host__ __device__ inline int sym_index(int r, int c) {  // r <= c
  return r * 12 - r * (r - 1) / 2 + (c - r);
}

// The reduction arrays of one target space (Fig. 16.3), packed per block.
struct ReductionPlan {
  std::vector<int64_t> base;  // per block: offset of its column-major array
  std::vector<int32_t> len;   // per block: rows (steps) of its array
  std::vector<int32_t> array; // +source + 1, -(target offset in the block) - 1, 0 padding
  int64_t targets = 0;        // positions covered
};

// Packs the lists of targets [0, targets): list t is gsrc[ptr[t] .. ptr[t + 1]) (G indices, in
// element order), per block of kReduceNz targets by LPT onto kReduceThreads threads.
ReductionPlan pack(const std::vector<int64_t>& ptr, const std::vector<int32_t>& gsrc, int64_t targets) {
  ReductionPlan p;
  p.targets = targets;
  const int64_t blocks = (targets + kReduceNz - 1) / kReduceNz;
  p.base.resize(size_t(blocks) + 1);
  p.len.resize(size_t(blocks));
  std::vector<std::vector<int32_t>> column(kReduceThreads);
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t t0 = b * kReduceNz, t1 = std::min(targets, t0 + kReduceNz);
    std::vector<int64_t> order;
    for (int64_t t = t0; t < t1; ++t)
      if (ptr[size_t(t) + 1] > ptr[size_t(t)]) order.push_back(t);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t c) {
      return ptr[size_t(a) + 1] - ptr[size_t(a)] > ptr[size_t(c) + 1] - ptr[size_t(c)];
    });
    for (auto& c : column) c.clear();
    using Load = std::pair<int64_t, int>;  // (entries so far, thread): the least loaded first
    std::priority_queue<Load, std::vector<Load>, std::greater<Load>> q;
    for (int t = 0; t < kReduceThreads; ++t) q.push({0, t});
    for (int64_t t : order) {
      const int th = q.top().second;
      q.pop();
      auto& col = column[size_t(th)];
      for (int64_t k = ptr[size_t(t)]; k < ptr[size_t(t) + 1]; ++k) col.push_back(gsrc[size_t(k)] + 1);
      col.push_back(-int32_t(t - t0) - 1);
      q.push({int64_t(col.size()), th});
    }
    size_t len = 0;
    for (const auto& c : column) len = std::max(len, c.size());
    p.base[size_t(b)] = int64_t(p.array.size());
    p.len[size_t(b)] = int32_t(len);
    const size_t at = p.array.size();
    p.array.resize(at + len * kReduceThreads, 0);
    for (int t = 0; t < kReduceThreads; ++t)
      for (size_t k = 0; k < column[size_t(t)].size(); ++k)
        p.array[at + k * kReduceThreads + size_t(t)] = column[size_t(t)][k];
  }
  p.base[size_t(blocks)] = int64_t(p.array.size());
  return p;
}

// Everything GlobalNZ precomputes on the host (the estimate builds it too, to count its bytes).
struct GlobalNzPlan {
  int64_t elements = 0, blocks = 0;
  int max_block_nodes = 0;
  std::vector<int32_t> node_ptr, node_list;  // per element block: its node set N_k
  std::vector<uint16_t> local;               // 4 per element, entry-major: E_k(e, a) at a * E + e
  ReductionPlan values, force;
};

template <class T>
GlobalNzPlan make_plan(const AssemblyProblem<T>& p) {
  GlobalNzPlan g;
  const int64_t E = p.elements;
  if (E * kElemData >= int64_t(0x7fffffff))
    throw InputError("globalnz: " + std::to_string(E) + " elements exceed the 32-bit element data indices");
  g.elements = E;
  g.blocks = (E + kElemBlock - 1) / kElemBlock;
  g.node_ptr.assign(size_t(g.blocks) + 1, 0);
  g.local.resize(size_t(4 * E));
  const auto& conn = *p.connectivity;
  for (int64_t b = 0; b < g.blocks; ++b) {
    const int64_t e0 = b * kElemBlock, e1 = std::min(E, e0 + kElemBlock);
    std::vector<int32_t> nodes(conn.begin() + 4 * e0, conn.begin() + 4 * e1);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    g.max_block_nodes = std::max(g.max_block_nodes, int(nodes.size()));
    for (int64_t e = e0; e < e1; ++e)
      for (int a = 0; a < 4; ++a)
        g.local[size_t(a * E + e)] =
            uint16_t(std::lower_bound(nodes.begin(), nodes.end(), conn[size_t(4 * e + a)]) - nodes.begin());
    g.node_list.insert(g.node_list.end(), nodes.begin(), nodes.end());
    g.node_ptr[size_t(b) + 1] = int32_t(g.node_list.size());
  }
  const linalg::ValueContributions inv = linalg::invert_element_value_map(*p.map);
  std::vector<int32_t> gsrc(inv.value_src.size());
  for (size_t k = 0; k < gsrc.size(); ++k) {
    const int64_t ee = inv.value_src[k], e = ee / 144;
    const int r = int(ee % 144) / 12, c = int(ee % 12);
    gsrc[k] = int32_t(int64_t(sym_index(std::min(r, c), std::max(r, c))) * E + e);
  }
  g.values = pack(inv.value_ptr, gsrc, p.map->value_count);
  gsrc.resize(inv.row_src.size());
  for (size_t k = 0; k < gsrc.size(); ++k) {
    const int64_t ee = inv.row_src[k], e = ee / 12;
    gsrc[k] = int32_t(int64_t(kSym + int(ee % 12)) * E + e);
  }
  g.force = pack(inv.row_ptr, gsrc, p.map->rows);
  return g;
}

template <class T>
std::size_t plan_bytes(const GlobalNzPlan& g, const AssemblyProblem<T>& p) {
  const std::size_t E = std::size_t(p.elements);
  return sizeof(int32_t) * (g.node_ptr.size() + g.node_list.size()) + sizeof(uint16_t) * g.local.size() +
         sizeof(T) * E * std::size_t(tet::supplemental_size(p.form)) + sizeof(T) * E * kElemData +
         sizeof(int64_t) * (g.values.base.size() + g.force.base.size()) +
         sizeof(int32_t) * (g.values.len.size() + g.force.len.size() + g.values.array.size() + g.force.array.size());
}

template <class T>
__global__ void __launch_bounds__(kElemBlock) k_elements(int64_t E, const int32_t* __restrict__ node_ptr,
                                                         const int32_t* __restrict__ node_list,
                                                         const uint16_t* __restrict__ local, const T* __restrict__ S,
                                                         tet::SupplementalForm form, tet::Lame<T> lame,
                                                         const T* __restrict__ x, T tangent_scale, T force_scale,
                                                         T* __restrict__ G, ElementCheckSlot* checks) {
  extern __shared__ unsigned char smem_raw[];
  T* xs = reinterpret_cast<T*>(smem_raw);
  const int64_t b = blockIdx.x;
  const int32_t n0 = node_ptr[b], nk = node_ptr[b + 1] - n0;
  for (int i = threadIdx.x; i < 3 * nk; i += blockDim.x) xs[i] = x[3 * int64_t(node_list[n0 + i / 3]) + i % 3];
  __syncthreads();
  const int64_t e = b * kElemBlock + threadIdx.x;
  if (e >= E) return;
  T xe[4][3];
  for (int a = 0; a < 4; ++a) {
    const int l = local[a * E + e];
    for (int i = 0; i < 3; ++i) xe[a][i] = xs[3 * l + i];
  }
  const int ns = tet::supplemental_size(form);
  T Se[9];
  for (int q = 0; q < ns; ++q) Se[q] = S[q * E + e];
  const tet::Tet4Reference<T> ref = tet::reference_from_supplemental(Se, form);
  T f[12], K[144], det_f;
  const tet::TetStatus st = tet::neo_hookean_element_force_tangent(ref, xe, lame, f, K, &det_f);
  record_element(checks, e, st, double(det_f));
  for (int r = 0; r < 12; ++r)
    for (int c = r; c < 12; ++c) G[sym_index(r, c) * E + e] = tangent_scale * K[12 * r + c];
  for (int r = 0; r < 12; ++r) G[(kSym + r) * E + e] = force_scale * f[r];
}

// Algorithm 2 with the block's targets buffered in shared memory and written coalesced.
template <class T>
__global__ void __launch_bounds__(kReduceThreads) k_reduce(int64_t targets, const int64_t* __restrict__ base,
                                                           const int32_t* __restrict__ len,
                                                           const int32_t* __restrict__ array, const T* __restrict__ G,
                                                           linalg::ValueSegments<T> out) {
  __shared__ T buf[kReduceNz];
  for (int i = threadIdx.x; i < kReduceNz; i += kReduceThreads) buf[i] = T(0);
  __syncthreads();
  const int64_t b = blockIdx.x;
  const int32_t* a = array + base[b];
  T acc = T(0);
  for (int s = 0; s < len[b]; ++s) {
    const int32_t i = a[int64_t(s) * kReduceThreads + threadIdx.x];
    if (i > 0) {
      acc += G[i - 1];
    } else if (i < 0) {
      buf[-i - 1] = acc;
      acc = T(0);
    }
  }
  __syncthreads();
  const int64_t t0 = b * kReduceNz;
  const int n = int(targets - t0 < kReduceNz ? targets - t0 : kReduceNz);
  for (int i = threadIdx.x; i < n; i += kReduceThreads) out.at(t0 + i) = buf[i];
}

struct DeviceReduction {
  int64_t targets = 0, blocks = 0;
  cuda::DeviceBuffer<int64_t> base;
  cuda::DeviceBuffer<int32_t> len, array;
  void upload(const ReductionPlan& p) {
    targets = p.targets;
    blocks = int64_t(p.len.size());
    base.upload(p.base);
    len.upload(p.len);
    array.upload(p.array);
  }
};

template <class T>
class GlobalNz final : public AssemblyStrategy<T> {
 public:
  explicit GlobalNz(const AssemblyProblem<T>& p) : p_(p) {
    const GlobalNzPlan g = make_plan(p);
    E_ = g.elements;
    blocks_ = g.blocks;
    max_nodes_ = g.max_block_nodes;
    bytes_ = plan_bytes(g, p);
    require_device_memory(double(bytes_ + p.device_reserve_bytes), strategy_memory_label<T>("globalnz"), p.device,
                          p.gpu_memory_limit);
    node_ptr_.upload(g.node_ptr);
    node_list_.upload(g.node_list);
    local_.upload(g.local);
    const int ns = tet::supplemental_size(p.form);
    std::vector<T> S(size_t(ns * E_));
    for (int64_t e = 0; e < E_; ++e)
      for (int q = 0; q < ns; ++q) S[size_t(q * E_ + e)] = (*p.supplemental)[size_t(ns * e + q)];
    S_.upload(S);
    G_.resize(size_t(kElemData * E_), "globalnz element data");
    values_.upload(g.values);
    force_.upload(g.force);
    index_bytes_ = double(g.values.array.size() + g.force.array.size()) * 4;
  }
  std::string name() const override { return "globalnz"; }
  linalg::Location location() const override { return linalg::Location::Device; }
  bool deterministic() const override { return true; }
  std::size_t device_bytes() const override { return bytes_; }
  AssemblyWork work() const override {
    // Beyond the compulsory bytes: the element data written and read back, the reduction arrays,
    // the block element lists.
    const double w = sizeof(T);
    return {compulsory_assembly_bytes(p_) + 2 * w * kElemData * double(E_) + index_bytes_ + 8.0 * double(E_),
            double(E_) * element_routine_flops() + double(p_.map->value_count)};
  }
  void assemble(const T* x, const AssemblyTargets<T>& out, linalg::StreamHandle stream) override {
    const cudaStream_t st = static_cast<cudaStream_t>(stream);
    if (E_ == 0) return;
    k_elements<T><<<unsigned(blocks_), kElemBlock, size_t(3 * max_nodes_) * sizeof(T), st>>>(
        E_, node_ptr_.data(), node_list_.data(), local_.data(), S_.data(), p_.form, p_.lame, x, out.tangent_scale,
        out.force_scale, G_.data(), out.checks);
    EB_CUDA_CHECK_LAUNCH();
    if (values_.blocks > 0) {
      k_reduce<T><<<unsigned(values_.blocks), kReduceThreads, 0, st>>>(values_.targets, values_.base.data(),
                                                                      values_.len.data(), values_.array.data(),
                                                                      G_.data(), out.values);
      EB_CUDA_CHECK_LAUNCH();
    }
    linalg::ValueSegments<T> f;
    f.push(out.force, force_.targets);
    if (force_.blocks > 0) {
      k_reduce<T><<<unsigned(force_.blocks), kReduceThreads, 0, st>>>(force_.targets, force_.base.data(),
                                                                     force_.len.data(), force_.array.data(), G_.data(), f);
      EB_CUDA_CHECK_LAUNCH();
    }
  }

 private:
  const AssemblyProblem<T>& p_;
  int64_t E_ = 0, blocks_ = 0;
  int max_nodes_ = 0;
  std::size_t bytes_ = 0;
  double index_bytes_ = 0;
  cuda::DeviceBuffer<int32_t> node_ptr_, node_list_;
  cuda::DeviceBuffer<uint16_t> local_;
  cuda::DeviceBuffer<T> S_, G_;
  DeviceReduction values_, force_;
};

}  // namespace

template <class T>
std::unique_ptr<AssemblyStrategy<T>> make_globalnz(const AssemblyProblem<T>& p) {
  return std::make_unique<GlobalNz<T>>(p);
}
template <class T>
std::size_t estimate_globalnz(const AssemblyProblem<T>& p) {
  return plan_bytes(make_plan(p), p);
}
template std::unique_ptr<AssemblyStrategy<float>> make_globalnz(const AssemblyProblem<float>&);
template std::unique_ptr<AssemblyStrategy<double>> make_globalnz(const AssemblyProblem<double>&);
template std::size_t estimate_globalnz(const AssemblyProblem<float>&);
template std::size_t estimate_globalnz(const AssemblyProblem<double>&);

}  // namespace eb::nr_neohookean
