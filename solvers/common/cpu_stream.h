#pragma once
// The CPU's own memory-bandwidth ceiling: STREAM triad a = b + s c with OpenMP, measured in the
// process that times the CPU rows, so that an experiment sets its CPU figures against the
// machine (and the load on it) that produced them rather than against a datasheet value.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace eb {

struct CpuTriadPoint {
  int threads = 0;
  double median_gbps = 0, min_gbps = 0, max_gbps = 0;  // over the timed repetitions
  int repetitions = 0;
};

struct CpuTriad {
  std::size_t array_bytes = 0;  // each of the three double arrays
  std::size_t llc_bytes = 0;    // last-level cache found (all instances together; 0 if unknown)
  bool verified = false;        // a[] holds b + s c after the last repetition
  std::vector<CpuTriadPoint> points;
  nlohmann::json to_json() const;
  // The experiments' cpu_triad.csv: threads, median/min/max GB/s, repetitions, array bytes.
  std::string csv() const;
};

// Last-level cache of the machine, all instances together (sysfs; 0 when unknown).
std::size_t cpu_last_level_cache_bytes();

// 1, 2, 4, ... up to max_threads, and max_threads itself.
std::vector<int> triad_thread_counts(int max_threads);

// Triad bandwidth at each thread count: the median of `repetitions` (at least 5) timed passes
// after one untimed pass. Bytes per pass = 3 x array_bytes (two reads, one write: STREAM's
// convention, write-allocate traffic not counted). array_bytes = 0 picks 4 x the last-level
// cache, at least 64 MiB and at most 1 GiB per array; arrays are first touched by the threads
// of the widest measurement (the same static split as the timed loop).
CpuTriad cpu_stream_triad(const std::vector<int>& thread_counts, std::size_t array_bytes = 0, int repetitions = 7);

}  // namespace eb
