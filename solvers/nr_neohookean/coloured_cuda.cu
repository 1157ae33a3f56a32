// Coloured assembly on CUDA (coloured_plan.h): one launch per colour, one thread per element, in a
// fixed colour order on one stream; deterministic without atomics. (An `atomic` variant, the same
// plan in one launch adding with atomicAdd, lost to sharednz everywhere and was deleted: PERF_NOTES.)
#include <algorithm>
#include <memory>
#include <vector>
#include <string>

#include "meshes/errors.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/cuda_utils.cuh"
#include "solvers/nr_neohookean/coloured_plan.h"

namespace eb::nr_neohookean {
namespace {

// Small blocks: a colour of the hand holds at most 3.5K elements, and 64-thread blocks spread
// them over 55 SMs where 128 would use 28.
constexpr int kColouredThreads = 64;

template <class T>
__global__ void __launch_bounds__(kColouredThreads) k_coloured(ColouredArgs<T> a, int64_t begin, int64_t end) {
  const int64_t s = begin + int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s < end) coloured_element<T>(a, s);
}

template <class T>
__global__ void k_zero_rows(const int32_t* __restrict__ rows, int64_t n, T* __restrict__ force) {
  const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) force[rows[i]] = T(0);
}

template <class T>
class ColouredCuda final : public AssemblyStrategy<T> {
 public:
  explicit ColouredCuda(const AssemblyProblem<T>& p) : flops_per_element_(element_routine_flops()) {
    if (!p.connectivity || !p.supplemental || !p.map) throw InputError("coloured: incomplete assembly problem");
    EB_CUDA_CHECK(cudaSetDevice(p.device));
    plan_ = make_coloured_plan(p.nodes, *p.connectivity, *p.map);
    value_count_ = p.map->value_count;
    const std::size_t ints = plan_.conn.size() + plan_.entry.size() + plan_.force.size() + plan_.slot_element.size() +
                             plan_.zero_rows.size();
    require_device_memory(double(sizeof(int32_t) * ints +
                                 sizeof(T) * plan_.slot_element.size() * std::size_t(tet::supplemental_size(p.form)) +
                                 p.device_reserve_bytes),
                          strategy_memory_label<T>("coloured"), p.device, p.gpu_memory_limit);
    conn_.upload(plan_.conn);
    entry_.upload(plan_.entry);
    force_.upload(plan_.force);
    element_.upload(plan_.slot_element);
    zero_rows_.upload(plan_.zero_rows);
    supp_.upload(slot_supplemental(plan_.slot_element, *p.supplemental, p.form));
    args_ = coloured_args(plan_, conn_, entry_, force_, element_, supp_, p.form, p.lame);
  }

  std::string name() const override { return "coloured"; }
  linalg::Location location() const override { return linalg::Location::Device; }
  bool deterministic() const override { return true; }

  void assemble(const T* x, const AssemblyTargets<T>& out, linalg::StreamHandle stream) override {
    const auto st = static_cast<cudaStream_t>(stream);
    ColouredArgs<T> a = args_;
    a.x = x;
    a.out = out;
    const int64_t zeros = int64_t(plan_.zero_rows.size());
    if (zeros > 0) {
      k_zero_rows<T><<<cuda::blocks_for(zeros, 256), 256, 0, st>>>(zero_rows_.data(), zeros, out.force);
      EB_CUDA_CHECK_LAUNCH();
    }
    for (int c = 0; c < plan_.colours(); ++c) {
      const int64_t begin = plan_.colour_ptr[std::size_t(c)], end = plan_.colour_ptr[std::size_t(c) + 1];
      k_coloured<T><<<cuda::blocks_for(end - begin, kColouredThreads), kColouredThreads, 0, st>>>(a, begin, end);
      EB_CUDA_CHECK_LAUNCH();
    }
  }

  std::size_t device_bytes() const override {
    return conn_.bytes() + entry_.bytes() + force_.bytes() + element_.bytes() + zero_rows_.bytes() + supp_.bytes();
  }

  // Read once: positions (one gather per element corner, counted once per node), S(e), the plan's
  // index arrays; written once: every value and force entry.
  AssemblyWork work() const override {
    AssemblyWork w;
    w.bytes = double(sizeof(T)) * double(plan_.rows + value_count_ + plan_.rows) + double(device_bytes());
    w.flops = double(plan_.slots()) * (flops_per_element_ + 156.0);
    return w;
  }

 private:
  double flops_per_element_;
  ColouredPlan plan_;
  int64_t value_count_ = 0;
  ColouredArgs<T> args_;
  cuda::DeviceBuffer<int32_t> conn_, entry_, force_, element_, zero_rows_;
  cuda::DeviceBuffer<T> supp_;
};

}  // namespace

// The plan's sizes counted from the map without building it: per element 4 nodes, 144 + 12
// positions, its id and S(e); the force rows no element writes.
template <class T>
std::size_t estimate_coloured(const AssemblyProblem<T>& p) {
  if (!p.map) throw InputError("coloured: incomplete assembly problem");
  const std::size_t E = std::size_t(p.elements);
  std::vector<char> row_seen(std::size_t(3 * p.nodes), 0);
  for (int32_t d : p.map->dof)
    if (d >= 0) row_seen[std::size_t(d)] = 1;
  std::size_t ints = E * (4 + 144 + 12 + 1) + std::size_t(std::count(row_seen.begin(), row_seen.end(), 0));
  return sizeof(int32_t) * ints + sizeof(T) * E * std::size_t(tet::supplemental_size(p.form));
}

template std::size_t estimate_coloured(const AssemblyProblem<float>&);
template std::size_t estimate_coloured(const AssemblyProblem<double>&);

template <class T>
std::unique_ptr<AssemblyStrategy<T>> make_coloured(const AssemblyProblem<T>& p) {
  return std::make_unique<ColouredCuda<T>>(p);
}

template std::unique_ptr<AssemblyStrategy<float>> make_coloured(const AssemblyProblem<float>&);
template std::unique_ptr<AssemblyStrategy<double>> make_coloured(const AssemblyProblem<double>&);

}  // namespace eb::nr_neohookean
