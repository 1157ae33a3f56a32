#include "solvers/common/cpu_stream.h"

#include <omp.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "meshes/errors.h"
#include "solvers/common/results.h"
#include "solvers/common/timers.h"

namespace eb {
namespace {

// "32768K" / "32M" as in /sys/devices/system/cpu/cpu*/cache/index*/size.
std::size_t parse_cache_size(const std::string& text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return 0;
  switch (*end) {
    case 'K': return std::size_t(v) << 10;
    case 'M': return std::size_t(v) << 20;
    case 'G': return std::size_t(v) << 30;
    default: return std::size_t(v);
  }
}

std::string read_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct FreeDeleter {
  void operator()(double* p) const { std::free(p); }
};
using Array = std::unique_ptr<double, FreeDeleter>;

Array allocate(std::size_t n) {
  // Page-aligned so that first touch places whole pages with the thread that owns them.
  void* p = std::aligned_alloc(4096, ((n * sizeof(double) + 4095) / 4096) * 4096);
  if (!p) throw RuntimeFailure("cpu_stream_triad: cannot allocate " + std::to_string(n * sizeof(double)) + " bytes");
  return Array(static_cast<double*>(p));
}

}  // namespace

std::size_t cpu_last_level_cache_bytes() {
  // Each cache instance once (its shared_cpu_list names it), at the highest level found.
  namespace fs = std::filesystem;
  int best_level = 0;
  std::size_t total = 0;
  std::set<std::string> seen;
  std::error_code ec;
  for (const auto& cpu : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    const std::string name = cpu.path().filename().string();
    if (name.rfind("cpu", 0) != 0 || name.size() < 4 || !std::isdigit(static_cast<unsigned char>(name[3]))) continue;
    for (const auto& idx : fs::directory_iterator(cpu.path() / "cache", ec)) {
      const std::string type = read_line(idx.path() / "type");
      if (type != "Unified" && type != "Data") continue;
      const int level = std::atoi(read_line(idx.path() / "level").c_str());
      const std::string shared = read_line(idx.path() / "shared_cpu_list");
      const std::size_t size = parse_cache_size(read_line(idx.path() / "size"));
      if (level > best_level) {
        best_level = level;
        total = 0;
        seen.clear();
      }
      if (level == best_level && seen.insert(shared).second) total += size;
    }
  }
  return total;
}

std::vector<int> triad_thread_counts(int max_threads) {
  std::vector<int> t;
  for (int k = 1; k < max_threads; k *= 2) t.push_back(k);
  t.push_back(std::max(1, max_threads));
  return t;
}

CpuTriad cpu_stream_triad(const std::vector<int>& thread_counts, std::size_t array_bytes, int repetitions) {
  if (thread_counts.empty()) throw std::invalid_argument("cpu_stream_triad: no thread counts");
  for (int t : thread_counts)
    if (t < 1) throw std::invalid_argument("cpu_stream_triad: thread counts must be >= 1");
  repetitions = std::max(repetitions, 5);
  CpuTriad r;
  r.llc_bytes = cpu_last_level_cache_bytes();
  if (array_bytes == 0)
    array_bytes = std::clamp<std::size_t>(4 * r.llc_bytes, std::size_t(64) << 20, std::size_t(1) << 30);
  const std::size_t n = std::max<std::size_t>(array_bytes / sizeof(double), 1);
  r.array_bytes = n * sizeof(double);
  Array a = allocate(n), b = allocate(n), c = allocate(n);
  double* A = a.get();
  const double* B = b.get();
  const double* C = c.get();
  const int widest = *std::max_element(thread_counts.begin(), thread_counts.end());
  {
    double* Bw = b.get();
    double* Cw = c.get();
#pragma omp parallel for schedule(static) num_threads(widest)
    for (std::size_t i = 0; i < n; ++i) {
      A[i] = 0.0;
      Bw[i] = 1.0 + double(i % 7);
      Cw[i] = 2.0 - double(i % 5);
    }
  }
  const double s = 3.0;
  const double bytes = 3.0 * double(r.array_bytes);
  for (int threads : thread_counts) {
    std::vector<double> gbps;
    for (int rep = 0; rep <= repetitions; ++rep) {
      Stopwatch clock;
#pragma omp parallel for schedule(static) num_threads(threads)
      for (std::size_t i = 0; i < n; ++i) A[i] = B[i] + s * C[i];
      const double ms = clock.elapsed_ms();
      if (rep > 0) gbps.push_back(bytes / (ms * 1e-3) / 1e9);  // the first pass warms up
    }
    r.points.push_back({threads, median(gbps), *std::min_element(gbps.begin(), gbps.end()),
                        *std::max_element(gbps.begin(), gbps.end()), int(gbps.size())});
  }
  r.verified = true;
  for (std::size_t i = 0; i < n; i += std::max<std::size_t>(1, n / 4099))
    if (A[i] != B[i] + s * C[i]) r.verified = false;
  if (A[n - 1] != B[n - 1] + s * C[n - 1]) r.verified = false;
  return r;
}

std::string CpuTriad::csv() const {
  CsvTable t({"threads", "median_gbps", "min_gbps", "max_gbps", "repetitions", "array_bytes"});
  for (const auto& p : points)
    t.add_row({std::to_string(p.threads), CsvTable::num(p.median_gbps), CsvTable::num(p.min_gbps),
               CsvTable::num(p.max_gbps), std::to_string(p.repetitions), std::to_string(array_bytes)});
  return t.str();
}

nlohmann::json CpuTriad::to_json() const {
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& p : points)
    pts.push_back({{"threads", p.threads}, {"median_gbps", p.median_gbps}, {"min_gbps", p.min_gbps},
                   {"max_gbps", p.max_gbps}, {"repetitions", p.repetitions}});
  return {{"kernel", "a[i] = b[i] + 3 c[i], double, OpenMP static schedule"},
          {"bytes_per_pass", "3 x array_bytes (STREAM convention: write-allocate traffic not counted)"},
          {"array_bytes", array_bytes},
          {"last_level_cache_bytes", llc_bytes},
          {"verified", verified},
          {"points", pts}};
}

}  // namespace eb
