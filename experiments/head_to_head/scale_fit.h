#pragma once
// The scale part's arithmetic (scale_part.cpp), apart from any device: device bytes and host
// set-up time measured at small sizes, extrapolated linearly in the element count, and the
// largest size that fits a share of the free device memory and a host set-up time limit.
#include <cmath>
#include <string>
#include <vector>

#include "experiments/experiment.h"

namespace eb::head_to_head {

struct ScaleSample {
  double elements = 0;
  double bytes = 0;    // device bytes at this size (the larger of the estimate and the measured)
  double setup_s = 0;  // host mesh generation + set-up + upload (the factory)
  double step_s = 0;   // one time step (the first, warm-up included: an upper bound)
  double host_bytes = 0;  // peak host memory of the build above the process's before (0: not measured)
};

struct LinearFit {
  double intercept = 0, slope = 0;  // y = intercept + slope x
  double at(double x) const { return intercept + slope * x; }
};
// Least squares over the points (x, y); throws std::invalid_argument with fewer than two
// distinct x.
LinearFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

struct ScalePlan {
  double elements = 0;     // the largest element count within both limits
  std::string limited_by;  // "memory", "setup time" or "step time"
  LinearFit bytes, setup, step;  // the fits it came from
  double memory_elements = 0, time_elements = 0, step_elements = 0;  // each limit's own element count
  LinearFit host;                        // host bytes (cap_scale_host)
  double host_elements = INFINITY;       // the element count the host memory holds (cap_scale_host)
};
// The largest element count whose extrapolated bytes fit `fraction` x free_bytes, whose
// extrapolated set-up time fits setup_limit_s and whose time step fits step_limit_s. A
// non-positive slope (no growth seen) gives no limit of that kind; throws std::invalid_argument
// when no limit bounds the size.
ScalePlan plan_scale(const std::vector<ScaleSample>& samples, double free_bytes, double fraction,
                     double setup_limit_s, double step_limit_s);
// A method's own limit on the element count (0: none), e.g. 32-bit indices: where it is below the
// plan's, the plan takes it and names `why` as its bound.
void cap_scale(ScalePlan& plan, double max_elements, const std::string& why);
// The host's bound: the samples' peak host bytes fitted like the device bytes, and the plan capped
// ("host memory") at the element count whose bytes fit `fraction` x available_bytes. A model's
// host set-up (mesh, the method's host arrays, staging) can need more of the host's memory than
// of the device's (tled: experiments/head_to_head/PERF_NOTES.md). No-op when available_bytes <= 0
// or fewer than two samples carry host bytes.
void cap_scale_host(ScalePlan& plan, const std::vector<ScaleSample>& samples, double available_bytes, double fraction);

// Box divisions {10 m, m, m} (the cantilever's 10:1:1 proportions) with at most `elements`
// cells, `cells_per_cube` elements per grid cell (1 hexahedra, 6 tetrahedra); m >= 1.
std::vector<int> beam_divisions(double elements, int cells_per_cube);

// The methods named by the option scale_methods (comma-separated, in that order, each once);
// InputError naming an unknown one.
std::vector<std::string> scale_method_list(const std::string& value);

// The scale part's options (`reproduce head-to-head --option KEY=VALUE`), for the experiment's
// registration (head_to_head.cpp).
std::vector<ExperimentOption> scale_part_options();

}  // namespace eb::head_to_head
