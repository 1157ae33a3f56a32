#pragma once
// Per-phase timing. The CPU side measures with std::chrono::steady_clock; device work is timed
// with CUDA events (solvers/common/cuda_timer.h) and fed in here once the events have completed.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace eb {

struct PhaseStats {
  std::string name;
  double median_ms = 0, min_ms = 0, max_ms = 0, mean_ms = 0;  // per step
  double total_ms = 0;                                        // over the measured steps
  long steps = 0;                                              // steps measured (warm-up excluded)
};

class PhaseTimes {
 public:
  // A sample covering `steps` consecutive steps that took `ms` in total. Steps are counted per
  // phase, so phases that run every step stay aligned with the step counter.
  void add(const std::string& phase, double ms, int steps = 1);
  // Statistics of the per-step time, skipping the samples that cover the first `warmup_steps`.
  std::vector<PhaseStats> stats(long warmup_steps) const;
  nlohmann::json to_json(long warmup_steps) const;
  bool empty() const { return phases_.empty(); }
  void clear() { phases_.clear(); }

 private:
  struct Sample {
    double ms;
    int steps;
  };
  struct Phase {
    std::string name;
    std::vector<Sample> samples;
  };
  std::vector<Phase> phases_;
};

// Scoped steady-clock timer for host work: records on destruction.
class CpuPhase {
 public:
  CpuPhase(PhaseTimes& times, const char* phase, int steps = 1)
      : times_(times), phase_(phase), steps_(steps), start_(std::chrono::steady_clock::now()) {}
  ~CpuPhase() {
    const auto end = std::chrono::steady_clock::now();
    times_.add(phase_, std::chrono::duration<double, std::milli>(end - start_).count(), steps_);
  }
  CpuPhase(const CpuPhase&) = delete;
  CpuPhase& operator=(const CpuPhase&) = delete;

 private:
  PhaseTimes& times_;
  const char* phase_;
  int steps_;
  std::chrono::steady_clock::time_point start_;
};

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double elapsed_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  }
  void reset() { start_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Seconds per named stage of a set-up, in the order they ran: lap(name) closes the stage that
// began at the previous lap (or at construction). Set-ups that take minutes at scale report these
// in details() so that the slow stage is named by the run itself.
class SetupLaps {
 public:
  void lap(const std::string& name) {
    laps_.push_back({name, watch_.elapsed_ms() / 1e3});
    watch_.reset();
  }
  void append(const std::vector<std::pair<std::string, double>>& more) { laps_.insert(laps_.end(), more.begin(), more.end()); }
  const std::vector<std::pair<std::string, double>>& laps() const { return laps_; }

 private:
  Stopwatch watch_;
  std::vector<std::pair<std::string, double>> laps_;
};

}  // namespace eb
