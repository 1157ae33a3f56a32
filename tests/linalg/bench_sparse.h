#pragma once
// Shared pieces of bench_sparse (bench_sparse.cpp: matrices, CPU and Eigen benchmarks;
// bench_sparse_cuda.cu: device formats, CG and cuSPARSE). No CUDA types here.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "solvers/linalg/cg.h"
#include "solvers/linalg/sparse_formats.h"

namespace eb::linalg::bench {

// Keeps one object (the last one asked for), so that a benchmark that Google Benchmark runs
// several times builds its matrix once, and the next benchmark's replaces it (12M-DOF matrices
// take gigabytes).
class SlotCache {
 public:
  template <class V, class Make>
  V& get(const std::string& key, Make make) {
    if (key != key_ || !value_) {
      value_.reset();  // free the old one first
      value_ = std::make_shared<V>(make());
      key_ = key;
    }
    return *std::static_pointer_cast<V>(value_);
  }
  // For objects that cannot move (they own library handles): built in place.
  template <class V, class... Args>
  V& emplace(const std::string& key, Args&&... args) {
    if (key != key_ || !value_) {
      value_.reset();
      value_ = std::make_shared<V>(std::forward<Args>(args)...);
      key_ = key;
    }
    return *std::static_pointer_cast<V>(value_);
  }

 private:
  std::string key_;
  std::shared_ptr<void> value_;
};

// The benchmark matrices by name (box<n>, bunny<r>, armadillo, *_rcm: bench_sparse.cpp's header),
// in the precision asked for. Throws InputError for an unknown name or a missing mesh.
template <class T>
const AssembledMatrix<T>& bench_matrix(const std::string& name);

// That matrix in format f, converted once and kept until another matrix, format or precision is
// asked for: the CPU and the device benchmarks of a format share one conversion.
template <class T>
const AnyMatrix<T>& bench_format(const std::string& name, Format f);

// Random entries in [-1, 1] (linalg_test_util's), in precision T; defined in bench_sparse.cpp so
// that the CUDA half does not include Eigen.
template <class T>
std::vector<T> bench_vector(std::size_t n, uint32_t seed);

// Compulsory bytes of one SpMV: the format's arrays once, x read once, y written once.
template <class T>
double spmv_bytes(std::size_t format_bytes, Index rows) {
  return double(format_bytes) + 2.0 * double(rows) * sizeof(T);
}
// Compulsory bytes of one Jacobi-PCG iteration (cg_algorithm.h): the SpMV, then p.q (2 vectors),
// the fused update (reads x p r q d^-1, writes x r: 7) and the direction (reads r d^-1 p, writes p: 4).
// The single-reduction iteration: the SpMV (its dot reads nothing more) and one update pass
// (reads p s w x r d^-1, writes p s x r u: 11).
template <class T>
double pcg_iteration_bytes(std::size_t format_bytes, Index rows, bool single_reduction = false) {
  return spmv_bytes<T>(format_bytes, rows) + (single_reduction ? 11.0 : 13.0) * double(rows) * sizeof(T);
}
// FLOPs per row of the vector work of one iteration besides the SpMV (single reduction: the
// update's 14 and the dot's 2).
inline double pcg_vector_flops(bool single_reduction) { return single_reduction ? 16.0 : 13.0; }

// Sets the rate counters: GB/s by the given compulsory bytes, GFLOP/s by 2 nnz (+ extra flops),
// and the sizes.
void set_counters(benchmark::State& state, double bytes, double flops, Index rows, std::size_t nnz);

#if defined(EB_BENCH_CUDA)
// Device benchmarks (bench_sparse_cuda.cu), manual time from CUDA events.
// warps: BCSR's warps per slice (0: the device's choice, choose_warps_per_slice).
template <class T>
void cuda_spmv(benchmark::State& state, const std::string& matrix, Format f, int warps = 0);
template <class T>
void cuda_pcg_iteration(benchmark::State& state, const std::string& matrix, Format f, bool single_reduction = false);
// The marginal time of an iteration: solves of 50 and 150 iterations, their difference per added one.
template <class T>
void cuda_pcg_marginal(benchmark::State& state, const std::string& matrix, Format f, bool single_reduction,
                       bool l2 = false);
template <class T>
void cusparse_spmv(benchmark::State& state, const std::string& matrix, bool bsr);
// Our Jacobi-PCG with cuSPARSE's CSR or BSR SpMV as its operator (the whole solve head to head).
template <class T>
void cusparse_pcg_iteration(benchmark::State& state, const std::string& matrix, bool bsr);
#endif

}  // namespace eb::linalg::bench
