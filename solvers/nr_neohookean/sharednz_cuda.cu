// SharedNZ on CUDA (sharednz_plan.h): one kernel, one block per node partition, the element data
// of the partition staged in dynamic shared memory. Variants of the same code: `sharednz` sizes
// the partitions to the device's opt-in maximum per block (227 KB on an H100, one such block per
// SM), `sharednz-48k` to Fermi's 48 KB (the paper's GTX 480), so that the effect of the larger
// shared memory is measured rather than assumed; `sharednz-block` is `sharednz` with node-block
// reduction lists (Sec. 16.5), one source index per element and node pair; `sharednz-2sm` runs
// two 128-thread blocks of half an SM's shared memory each per SM.
#include <algorithm>
#include <array>
#include <memory>
#include <string>

#include "meshes/errors.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
#include "solvers/common/timers.h"
#include "solvers/nr_neohookean/sharednz_phases.h"

namespace eb::nr_neohookean {
namespace {

template <class T, bool kBlockLists>
__global__ void __launch_bounds__(kSharedNzThreads) k_sharednz(SharedNzArgs<T> a) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sm = reinterpret_cast<T*>(smem_raw);
  const int64_t k = blockIdx.x;
  sharednz_scatter(a, k, int(threadIdx.x), int(blockDim.x), sm);
  __syncthreads();
  const int64_t S = a.slot_ptr[k + 1] - a.slot_ptr[k];
  for (int64_t j = threadIdx.x; j < S; j += blockDim.x) sharednz_element(a, k, j, sm);
  __syncthreads();
  if constexpr (kBlockLists)
    sharednz_reduce_blocks(a, k, int(threadIdx.x), int(blockDim.x), sm);
  else
    sharednz_reduce(a, k, int(threadIdx.x), int(blockDim.x), sm);
}

std::vector<std::array<int32_t, 4>> tets_of(const std::vector<int32_t>& conn) {
  std::vector<std::array<int32_t, 4>> t(conn.size() / 4);
  for (std::size_t e = 0; e < t.size(); ++e)
    for (int a = 0; a < 4; ++a) t[e][std::size_t(a)] = conn[4 * e + std::size_t(a)];
  return t;
}

// The shared memory a block may opt into on `device`; without a usable device (an estimate made
// where there is none) the H100's 227 KB.
std::size_t optin_bytes(int device) {
  int optin = 0;
  if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
    cudaGetLastError();  // clear the error: nothing was launched
    return 227 * 1024;
  }
  return std::size_t(optin);
}

// budget_bytes 0: the device's opt-in maximum.
std::size_t block_budget(int device, std::size_t budget_bytes) {
  const std::size_t optin = optin_bytes(device);
  return budget_bytes ? std::min(budget_bytes, optin) : optin;
}

// The shared memory of each of two blocks on one SM (the SM's, less the 1 KB the hardware reserves
// per block, halved); without a usable device the H100's 228 KB per SM.
std::size_t half_sm_budget(int device) {
  int per_sm = 0;
  if (cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device) != cudaSuccess) {
    cudaGetLastError();
    per_sm = 228 * 1024;
  }
  return std::size_t(per_sm) / 2 - 1024;
}

// The variants: shared memory per block (0: the opt-in maximum), lists, threads per block.
struct Variant {
  std::size_t budget = 0;
  bool block_lists = false;
  int threads = kSharedNzThreads;
};

template <class T>
SharedNzPlan build_plan(const AssemblyProblem<T>& p, const Variant& v, const std::string& name, SetupLaps* laps = nullptr) {
  if (!p.connectivity || !p.supplemental || !p.map) throw InputError(name + ": incomplete assembly problem");
  const mesh::NodePartition partition =
      mesh::partition_nodes(std::size_t(p.nodes), tets_of(*p.connectivity),
                            sharednz_budget(block_budget(p.device, v.budget), sizeof(T)), p.partitioner);
  if (laps) laps->lap("partition");
  SharedNzPlan plan = make_sharednz_plan(p.nodes, *p.connectivity, *p.map, partition, v.block_lists, v.threads);
  if (laps) laps->lap("plan");
  return plan;
}

template <class T>
std::size_t plan_estimate(const AssemblyProblem<T>& p, const Variant& v, const std::string& name) {
  return build_plan(p, v, name).device_bytes(sizeof(T), tet::supplemental_size(p.form));
}

template <class T>
class SharedNzCuda final : public AssemblyStrategy<T> {
 public:
  SharedNzCuda(const AssemblyProblem<T>& p, const Variant& v, std::string name)
      : name_(std::move(name)), flops_per_element_(element_routine_flops()) {
    EB_CUDA_CHECK(cudaSetDevice(p.device));
    int optin = 0;
    EB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, p.device));
    SetupLaps laps;
    plan_ = build_plan(p, v, name_, &laps);
    require_device_memory(double(plan_.device_bytes(sizeof(T), tet::supplemental_size(p.form)) + p.device_reserve_bytes),
                          strategy_memory_label<T>(name_), p.device, p.gpu_memory_limit);
    shared_bytes_ = plan_.shared_bytes(sizeof(T));
    // The attribute is the function's, shared by every instance: set to the device maximum so that
    // a variant with a smaller budget does not lower it under a larger one.
    EB_CUDA_CHECK(cudaFuncSetAttribute(kernel(), cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    // All of the unified L1/shared storage as shared memory, so that two half-SM blocks
    // (sharednz-2sm) fit one SM rather than the driver picking a carveout that holds one.
    EB_CUDA_CHECK(cudaFuncSetAttribute(kernel(), cudaFuncAttributePreferredSharedMemoryCarveout,
                                       int(cudaSharedmemCarveoutMaxShared)));
    slot_ptr_.upload(plan_.slot_ptr);
    slot_record_.upload(plan_.slot_record);
    supp_.upload(slot_supplemental(plan_.slot_element, *p.supplemental, p.form));
    scatter_ptr_.upload(plan_.scatter_ptr);
    scatter_.upload(plan_.scatter);
    reduce_ptr_.upload(plan_.reduce_ptr);
    reduce_.upload(plan_.reduce);
    args_ = sharednz_args(plan_, slot_ptr_, slot_record_, supp_, scatter_ptr_, scatter_, reduce_ptr_, reduce_, p.form,
                          p.lame);
    supp_values_ = tet::supplemental_size(p.form);
    laps.lap("upload");
    laps_ = laps.laps();
  }
  std::vector<std::pair<std::string, double>> setup_seconds() const override { return laps_; }

  std::string name() const override { return name_; }
  linalg::Location location() const override { return linalg::Location::Device; }
  bool deterministic() const override { return true; }

  void assemble(const T* x, const AssemblyTargets<T>& out, linalg::StreamHandle stream) override {
    if (plan_.blocks() == 0) return;
    SharedNzArgs<T> a = args_;
    a.x = x;
    a.out = out;
    kernel()<<<unsigned(plan_.blocks()), unsigned(plan_.threads), shared_bytes_, static_cast<cudaStream_t>(stream)>>>(a);
    EB_CUDA_CHECK_LAUNCH();
  }

  std::size_t device_bytes() const override {
    return slot_ptr_.bytes() + slot_record_.bytes() + supp_.bytes() + scatter_ptr_.bytes() + scatter_.bytes() +
           reduce_ptr_.bytes() + reduce_.bytes();
  }

  // Read once: the nodal data of every N̄_k, the slots' S(e) and record flags, both packed arrays
  // (padding included); written once: every value and force entry.
  AssemblyWork work() const override {
    AssemblyWork w;
    w.bytes = double(sizeof(T)) * double(3 * plan_.node_loads + supp_values_ * plan_.slots() + plan_.value_count +
                                         plan_.rows) +
              double(device_bytes() - supp_.bytes());
    w.flops = double(plan_.slots()) * flops_per_element_ + double(plan_.reduce_sources);
    return w;
  }

 private:
  void (*kernel() const)(SharedNzArgs<T>) { return plan_.block_lists ? k_sharednz<T, true> : k_sharednz<T, false>; }

  std::string name_;
  double flops_per_element_;
  std::size_t shared_bytes_ = 0;
  int64_t supp_values_ = 9;
  SharedNzPlan plan_;
  std::vector<std::pair<std::string, double>> laps_;
  SharedNzArgs<T> args_;
  cuda::DeviceBuffer<int64_t> slot_ptr_, scatter_ptr_, reduce_ptr_;
  cuda::DeviceBuffer<int32_t> slot_record_, scatter_, reduce_;
  cuda::DeviceBuffer<T> supp_;
};

Variant plain() { return {}; }
Variant block_lists() { return {0, true, kSharedNzThreads}; }
Variant fermi() { return {kFermiSharedBytes, false, kSharedNzThreads}; }
// Two 128-thread blocks per SM: the element routine's 255 registers allow 8 warps per SM either
// way, but two blocks interleave their phases (one computing elements while the other reduces).
Variant two_per_sm(int device) { return {half_sm_budget(device), false, kSharedNzThreads / 2}; }

}  // namespace

template <class T>
std::unique_ptr<AssemblyStrategy<T>> make_sharednz(const AssemblyProblem<T>& p) {
  return std::make_unique<SharedNzCuda<T>>(p, plain(), "sharednz");
}

template <class T>
std::unique_ptr<AssemblyStrategy<T>> make_sharednz_block(const AssemblyProblem<T>& p) {
  return std::make_unique<SharedNzCuda<T>>(p, block_lists(), "sharednz-block");
}

template <class T>
std::unique_ptr<AssemblyStrategy<T>> make_sharednz_48k(const AssemblyProblem<T>& p) {
  return std::make_unique<SharedNzCuda<T>>(p, fermi(), "sharednz-48k");
}

template <class T>
std::unique_ptr<AssemblyStrategy<T>> make_sharednz_2sm(const AssemblyProblem<T>& p) {
  return std::make_unique<SharedNzCuda<T>>(p, two_per_sm(p.device), "sharednz-2sm");
}

// The plan is built on the host to know its size exactly (the same work as the constructor's, a
// few seconds on camile_hand).
template <class T>
std::size_t estimate_sharednz(const AssemblyProblem<T>& p) {
  return plan_estimate(p, plain(), "sharednz");
}

template <class T>
std::size_t estimate_sharednz_block(const AssemblyProblem<T>& p) {
  return plan_estimate(p, block_lists(), "sharednz-block");
}

template <class T>
std::size_t estimate_sharednz_48k(const AssemblyProblem<T>& p) {
  return plan_estimate(p, fermi(), "sharednz-48k");
}

template <class T>
std::size_t estimate_sharednz_2sm(const AssemblyProblem<T>& p) {
  return plan_estimate(p, two_per_sm(p.device), "sharednz-2sm");
}

template std::size_t estimate_sharednz_2sm(const AssemblyProblem<float>&);
template std::size_t estimate_sharednz_2sm(const AssemblyProblem<double>&);
template std::unique_ptr<AssemblyStrategy<float>> make_sharednz_2sm(const AssemblyProblem<float>&);
template std::unique_ptr<AssemblyStrategy<double>> make_sharednz_2sm(const AssemblyProblem<double>&);
template std::size_t estimate_sharednz(const AssemblyProblem<float>&);
template std::size_t estimate_sharednz(const AssemblyProblem<double>&);
template std::size_t estimate_sharednz_48k(const AssemblyProblem<float>&);
template std::size_t estimate_sharednz_48k(const AssemblyProblem<double>&);
template std::size_t estimate_sharednz_block(const AssemblyProblem<float>&);
template std::size_t estimate_sharednz_block(const AssemblyProblem<double>&);
template std::unique_ptr<AssemblyStrategy<float>> make_sharednz_block(const AssemblyProblem<float>&);
template std::unique_ptr<AssemblyStrategy<double>> make_sharednz_block(const AssemblyProblem<double>&);
template std::unique_ptr<AssemblyStrategy<float>> make_sharednz(const AssemblyProblem<float>&);
template std::unique_ptr<AssemblyStrategy<double>> make_sharednz(const AssemblyProblem<double>&);
template std::unique_ptr<AssemblyStrategy<float>> make_sharednz_48k(const AssemblyProblem<float>&);
template std::unique_ptr<AssemblyStrategy<double>> make_sharednz_48k(const AssemblyProblem<double>&);

}  // namespace eb::nr_neohookean
