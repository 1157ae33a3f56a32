#include "solvers/common/timers.h"

#include <algorithm>
#include <numeric>

namespace eb {

void PhaseTimes::add(const std::string& phase, double ms, int steps) {
  if (steps <= 0) return;
  auto it = std::find_if(phases_.begin(), phases_.end(), [&](const Phase& p) { return p.name == phase; });
  if (it == phases_.end()) {
    phases_.push_back({phase, {}});
    it = std::prev(phases_.end());
  }
  it->samples.push_back({ms, steps});
}

std::vector<PhaseStats> PhaseTimes::stats(long warmup_steps) const {
  std::vector<PhaseStats> out;
  for (const auto& p : phases_) {
    PhaseStats s;
    s.name = p.name;
    std::vector<double> per_step;
    long covered = 0;
    for (const auto& sample : p.samples) {
      const long first = covered;
      covered += sample.steps;
      if (first < warmup_steps) continue;  // a sample that touches the warm-up is dropped whole
      per_step.push_back(sample.ms / sample.steps);
      s.total_ms += sample.ms;
      s.steps += sample.steps;
    }
    if (!per_step.empty()) {
      std::vector<double> sorted = per_step;
      std::sort(sorted.begin(), sorted.end());
      const size_t n = sorted.size();
      s.median_ms = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
      s.min_ms = sorted.front();
      s.max_ms = sorted.back();
      s.mean_ms = s.total_ms / double(s.steps);
    }
    out.push_back(s);
  }
  return out;
}

nlohmann::json PhaseTimes::to_json(long warmup_steps) const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& s : stats(warmup_steps)) {
    if (s.steps == 0) continue;
    j[s.name] = {{"median_ms", s.median_ms}, {"min_ms", s.min_ms},     {"max_ms", s.max_ms},
                 {"mean_ms", s.mean_ms},     {"total_ms", s.total_ms}, {"steps", s.steps}};
  }
  return j;
}

}  // namespace eb
