// The CG engines' plan (choose_cg_plan): which iteration, which reductions and whether the
// operator's values are kept in the L2, decided once per solver from the problem's size and
// precision. A pure function, so that its rules are tested without a device and a method can state
// its solver's choices before it builds one. The thresholds come from the H100 measurements in
// PERF_NOTES.md.
#include <algorithm>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "meshes/errors.h"
#include "solvers/linalg/cg.h"
#include "solvers/linalg/cg_algorithm.h"

namespace eb::linalg {

namespace {

// Threads per block of the device's vector kernels (cg_kernels.cuh kCgThreads), and its resident
// blocks per SM (2,048 threads): the grid is one resident wave at most.
constexpr long long kThreadsPerBlock = 256;
constexpr long long kBlocksPerSm = 8;
// The next-kernel reductions while the partial sums each update block reads stay within this (per
// iteration, over all blocks: L2 reads that grow with the square of the block count). At ~0.1M
// unknowns they are ~5 MB and the next kernel wins; at ~1M they would be ~40 MB.
constexpr double kMaxNextKernelPartialBytes = 8e6;

std::string megabytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", bytes * 1e-6);
  return buf;
}

unsigned vector_blocks(Index rows, long long entries_per_thread, int multiprocessors) {
  const long long per_block = kThreadsPerBlock * entries_per_thread;
  return unsigned(std::clamp<long long>((static_cast<long long>(rows) + per_block - 1) / per_block, 1,
                                        kBlocksPerSm * std::max(1, multiprocessors)));
}

template <class E>
E parse_choice(const std::string& text, const char* what, std::initializer_list<E> values) {
  std::string accepted;
  for (E v : values) {
    if (to_string(v) == text) return v;
    accepted += (accepted.empty() ? "" : ", ") + to_string(v);
  }
  throw InputError(std::string(what) + " '" + text + "': expected one of " + accepted);
}

const char* on_off(int v) { return v == 0 ? "auto" : v == 1 ? "on" : "off"; }

// The L2 residency of the device plan p (its reason and window).
void plan_l2(const CgProblem& pr, const CgOptions& o, CgPlan& p) {
  const CgDeviceProperties& d = pr.device;
  if (o.l2_resident_operator == L2Residency::Off) {
    p.l2_reason = "off by option";
    return;
  }
  if (o.l2_resident_operator == L2Residency::Auto && pr.value_bytes != sizeof(double)) {
    p.l2_reason = "auto: fp32 gains nothing, and the set-aside slows the process's other kernels";
    return;
  }
  if (pr.hot_bytes == 0) {
    p.l2_reason = "the operator offers no values to keep";
    return;
  }
  if (d.max_persisting_l2_bytes == 0 || d.max_access_policy_window_bytes == 0) {
    p.l2_reason = "the device keeps no persisting L2 lines";
    return;
  }
  // Values larger than the whole L2 stream through it whatever is marked: there the window only costs.
  if (pr.hot_bytes > d.l2_bytes) {
    p.l2_reason = "the values (" + megabytes(double(pr.hot_bytes)) + ") exceed the L2 (" +
                  megabytes(double(d.l2_bytes)) + ")";
    return;
  }
  p.l2_resident = true;
  // The window covers the values; the share marked persisting is what a set-aside of half the
  // device's largest holds (a larger one slows the rest of the process's DRAM streaming), and the
  // rest of the window streams, so that values the set-aside cannot hold do not evict the vectors.
  p.l2_window_bytes = std::min(pr.hot_bytes, d.max_access_policy_window_bytes);
  p.l2_set_aside_bytes = std::min(p.l2_window_bytes, d.max_persisting_l2_bytes / 2);
  p.l2_reason = std::string(o.l2_resident_operator == L2Residency::On ? "on by option" : "auto: fp64") +
                ", the values (" + megabytes(double(pr.hot_bytes)) + ") fit in the L2 (" +
                megabytes(double(d.l2_bytes)) + ")";
}

// What DeviceCgEngine allocates (cg_cuda.cu allocate(), in its order).
std::size_t device_bytes(const CgProblem& pr, const CgOptions& o, const CgPlan& p) {
  const std::size_t n = std::size_t(std::max<Index>(pr.rows, 0)), v = pr.value_bytes;
  const bool jacobi = o.preconditioner == Preconditioner::Jacobi && n > 0;
  std::size_t b = 4 * n * v;            // x r p q
  if (jacobi) b += 2 * n * v;           // the diagonal and its inverse
  if (p.single_reduction) b += (jacobi ? 3 : 2) * n * v;  // s w [u]
  const bool fused = p.single_reduction && pr.fused_dot_blocks > 0;
  if (p.single_reduction && p.reduction == SrReduction::NextKernel)
    b += 2 * sizeof(CgScalars) + (std::size_t(p.vector_blocks) * 2 * 2 + p.product_dot_partials) * sizeof(double);
  b += std::max(std::size_t(p.vector_blocks) * 3, fused ? pr.fused_dot_blocks : std::size_t(0)) * sizeof(double);
  b += sizeof(unsigned) + sizeof(CgScalars) + (std::size_t(std::max(o.max_iterations, 0)) + 1) * sizeof(double);
  return b;
}

}  // namespace

std::string to_string(SingleReduction v) { return on_off(int(v)); }
std::string to_string(L2Residency v) { return on_off(int(v)); }
std::string to_string(SrReduction v) {
  switch (v) {
    case SrReduction::Auto: return "auto";
    case SrReduction::LastBlock: return "last-block";
    case SrReduction::NextKernel: return "next-kernel";
  }
  return "unknown";
}
SingleReduction parse_single_reduction(const std::string& text) {
  return parse_choice(text, "single_reduction", {SingleReduction::Auto, SingleReduction::On, SingleReduction::Off});
}
L2Residency parse_l2_residency(const std::string& text) {
  return parse_choice(text, "l2_resident_operator", {L2Residency::Auto, L2Residency::On, L2Residency::Off});
}
SrReduction parse_sr_reduction(const std::string& text) {
  return parse_choice(text, "sr_reduction", {SrReduction::Auto, SrReduction::LastBlock, SrReduction::NextKernel});
}

CgPlan choose_cg_plan(const CgProblem& pr, const CgOptions& o) {
  if (o.sr_reduction != SrReduction::Auto && o.single_reduction != SingleReduction::On)
    throw InputError("CG: sr_reduction = " + to_string(o.sr_reduction) +
                     " applies to the single-reduction iteration only (single_reduction = on), got single_reduction = " +
                     to_string(o.single_reduction));
  CgPlan p;
  p.location = pr.location;
  p.max_iterations = o.max_iterations;
  if (pr.location == Location::Host) {
    p.single_reduction = o.single_reduction == SingleReduction::On;
    p.iteration_reason = p.single_reduction ? "on by option"
                         : o.single_reduction == SingleReduction::Off
                             ? "off by option"
                             : "auto: the host engine runs the standard iteration (the oracle's results)";
    p.reduction_reason = "host: OpenMP reductions";
    p.l2_reason = "host";
    return p;
  }
  const int sms = std::max(1, pr.device.multiprocessors);
  // The next-kernel rule, at one entry per thread (the last-block grid).
  const unsigned one_per_thread = vector_blocks(pr.rows, 1, sms);
  const double product_partials_at_one = pr.fused_dot_blocks > 0 ? double(pr.fused_dot_blocks) : double(one_per_thread);
  p.next_kernel_partial_bytes =
      double(one_per_thread) * (2.0 * one_per_thread + product_partials_at_one) * sizeof(double);
  const bool next_kernel_fits = p.next_kernel_partial_bytes <= kMaxNextKernelPartialBytes;
  const std::string rule = megabytes(p.next_kernel_partial_bytes) + " of partial sums per iteration " +
                           (next_kernel_fits ? "<= " : "> ") + megabytes(kMaxNextKernelPartialBytes);

  switch (o.single_reduction) {
    case SingleReduction::On: p.single_reduction = true, p.iteration_reason = "on by option"; break;
    case SingleReduction::Off: p.single_reduction = false, p.iteration_reason = "off by option"; break;
    case SingleReduction::Auto:
      p.single_reduction = next_kernel_fits;
      p.iteration_reason = next_kernel_fits
                               ? "auto: the next-kernel reduction applies (" + rule + ")"
                               : "auto: the standard iteration is faster at this size (" + rule + ")";
      break;
  }
  if (!p.single_reduction) {
    p.reduction = SrReduction::LastBlock;
    p.reduction_reason = "standard iteration: each reduction finishes in its kernel's last block";
  } else if (o.sr_reduction != SrReduction::Auto) {
    p.reduction = o.sr_reduction;
    p.reduction_reason = "by option";
  } else {
    p.reduction = next_kernel_fits ? SrReduction::NextKernel : SrReduction::LastBlock;
    p.reduction_reason = "auto: " + rule;
  }
  const bool next_kernel = p.single_reduction && p.reduction == SrReduction::NextKernel;
  // Grid-stride vector kernels: one entry per thread, at most one resident wave; the next-kernel
  // update takes two entries per thread, which halves both its blocks and the partial sums each of
  // them reads (one entry: more partial-sum reads; four or eight: too little parallelism in the pass).
  p.vector_blocks = vector_blocks(pr.rows, next_kernel ? 2 : 1, sms);
  if (p.single_reduction)
    p.product_dot_partials = pr.fused_dot_blocks > 0 ? unsigned(pr.fused_dot_blocks) : p.vector_blocks;
  // Programmatic launch pays in fp32 only: in fp64 the product's blocks (more registers) would wait
  // beside the update's and its first wave would be smaller.
  p.programmatic_launch = next_kernel && pr.value_bytes == sizeof(float);
  plan_l2(pr, o, p);
  p.device_bytes = device_bytes(pr, o, p);
  return p;
}

nlohmann::json describe(const CgPlan& p) {
  nlohmann::json j = {{"location", to_string(p.location)},
                      {"iteration", p.single_reduction ? "single-reduction" : "standard"},
                      {"iteration_reason", p.iteration_reason},
                      {"reduction", p.location == Location::Host ? "host" : to_string(p.reduction)},
                      {"reduction_reason", p.reduction_reason},
                      {"l2_resident", p.l2_resident},
                      {"l2_reason", p.l2_reason}};
  if (p.location == Location::Device) {
    j["programmatic_launch"] = p.programmatic_launch;
    j["vector_blocks"] = p.vector_blocks;
    if (p.single_reduction) j["product_dot_partials"] = p.product_dot_partials;
    if (p.l2_resident) {
      j["l2_window_bytes"] = p.l2_window_bytes;
      j["l2_set_aside_bytes"] = p.l2_set_aside_bytes;
    }
    j["device_bytes"] = p.device_bytes;
  }
  return j;
}

template <class T>
CgProblem cg_problem(const LinearOperator<T>& A) {
  CgProblem p;
  p.location = A.location();
  p.rows = A.rows();
  p.value_bytes = sizeof(T);
  p.fused_dot_blocks = A.fused_dot_blocks();
  const auto hot = A.hot_storage();
  p.hot_bytes = hot.data ? hot.bytes : 0;
  if (p.location == Location::Device) p.device = cg_device_properties();
  return p;
}

template CgProblem cg_problem(const LinearOperator<float>&);
template CgProblem cg_problem(const LinearOperator<double>&);

}  // namespace eb::linalg
