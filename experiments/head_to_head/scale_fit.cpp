#include "experiments/head_to_head/scale_fit.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "meshes/errors.h"

namespace eb::head_to_head {

LinearFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) throw std::invalid_argument("fit_line: needs two or more points");
  double mx = 0, my = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    mx += x[k];
    my += y[k];
  }
  mx /= double(x.size());
  my /= double(x.size());
  double sxx = 0, sxy = 0;
  for (size_t k = 0; k < x.size(); ++k) {
    sxx += (x[k] - mx) * (x[k] - mx);
    sxy += (x[k] - mx) * (y[k] - my);
  }
  if (!(sxx > 0)) throw std::invalid_argument("fit_line: the points need two distinct x");
  LinearFit f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  return f;
}

namespace {
double bound(const LinearFit& f, double limit) { return f.slope > 0 ? (limit - f.intercept) / f.slope : INFINITY; }
}  // namespace

ScalePlan plan_scale(const std::vector<ScaleSample>& samples, double free_bytes, double fraction,
                     double setup_limit_s, double step_limit_s) {
  std::vector<double> e, b, t, st;
  for (const ScaleSample& s : samples) {
    e.push_back(s.elements);
    b.push_back(s.bytes);
    t.push_back(s.setup_s);
    st.push_back(s.step_s);
  }
  ScalePlan p;
  p.bytes = fit_line(e, b);
  p.setup = fit_line(e, t);
  p.step = fit_line(e, st);
  p.memory_elements = bound(p.bytes, fraction * free_bytes);
  p.time_elements = bound(p.setup, setup_limit_s);
  p.step_elements = bound(p.step, step_limit_s);
  if (!std::isfinite(p.memory_elements) && !std::isfinite(p.time_elements) && !std::isfinite(p.step_elements))
    throw std::invalid_argument("plan_scale: neither the bytes nor the set-up or step time grow with the size");
  p.elements = std::min({p.memory_elements, p.time_elements, p.step_elements});
  p.limited_by = p.elements == p.memory_elements ? "memory" : (p.elements == p.time_elements ? "setup time" : "step time");
  p.elements = std::max(0.0, p.elements);
  return p;
}

std::vector<int> beam_divisions(double elements, int cells_per_cube) {
  const double m = std::cbrt(std::max(0.0, elements) / (10.0 * cells_per_cube));
  const int mi = std::max(1, int(std::floor(m + 1e-9)));
  return {10 * mi, mi, mi};
}

namespace {
void check_fraction(const std::string& key, const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(x > 0 && x <= 0.95))
    throw InputError("head-to-head option " + key + "='" + v + "' must be in (0, 0.95]");
}
void check_seconds(const std::string& key, const std::string& v) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(x > 0))
    throw InputError("head-to-head option " + key + "='" + v + "' must be a positive number");
}
}  // namespace

void cap_scale(ScalePlan& plan, double max_elements, const std::string& why) {
  if (max_elements > 0 && plan.elements > max_elements) {
    plan.elements = max_elements;
    plan.limited_by = why;
  }
}

void cap_scale_host(ScalePlan& plan, const std::vector<ScaleSample>& samples, double available_bytes, double fraction) {
  std::vector<double> e, h;
  for (const ScaleSample& s : samples)
    if (s.host_bytes > 0) {
      e.push_back(s.elements);
      h.push_back(s.host_bytes);
    }
  if (!(available_bytes > 0) || e.size() < 2) return;
  plan.host = fit_line(e, h);
  plan.host_elements = std::max(0.0, bound(plan.host, fraction * available_bytes));
  cap_scale(plan, plan.host_elements, "host memory");
}

std::vector<std::string> scale_method_list(const std::string& v) {
  static const std::vector<std::string> known = {"hexmg", "tled", "bcsr-pcg", "nr-neohookean", "corot-cg"};
  std::vector<std::string> out;
  std::stringstream in(v);
  for (std::string item; std::getline(in, item, ',');) {
    if (std::find(known.begin(), known.end(), item) == known.end())
      throw InputError("head-to-head option scale_methods: unknown method '" + item +
                       "' (one of hexmg, tled, bcsr-pcg, nr-neohookean, corot-cg)");
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
  }
  if (out.empty()) throw InputError("head-to-head option scale_methods='" + v + "' names no method");
  return out;
}

std::vector<ExperimentOption> scale_part_options() {
  return {{"scale_memory_fraction", "scale part: share of the free device memory the largest model may take (default 0.8)",
           [](const std::string& v) { check_fraction("scale_memory_fraction", v); }},
          {"scale_host_fraction",
           "scale part: share of the host's available memory (MemAvailable, or what `ulimit -d` leaves) the largest "
           "model's set-up may take (default 0.8); jobs sharing one host, one per GPU, each take their share",
           [](const std::string& v) { check_fraction("scale_host_fraction", v); }},
          {"scale_setup_s",
           "scale part: the most seconds of host set-up (mesh generation, method set-up, upload) extrapolated for "
           "one method's largest model (default 20)",
           [](const std::string& v) { check_seconds("scale_setup_s", v); }},
          {"scale_steps", "scale part: timed steps at the largest size (default 5, after 1 warm-up step)",
           [](const std::string& v) { check_seconds("scale_steps", v); }},
          {"scale_methods",
           "scale part: methods to run, comma-separated (default all five: hexmg, tled, bcsr-pcg, nr-neohookean, "
           "corot-cg), e.g. one per GPU of a several-GPU machine, each in its own process",
           [](const std::string& v) { scale_method_list(v); }},
          {"scale_run_s",
           "scale part: seconds of timed steps per method at the largest size (default 10): the size is also bounded "
           "by a step of at most scale_run_s / scale_steps (extrapolated), and fewer than scale_steps steps are timed "
           "when the warm-up step says they would take longer (at least 1)",
           [](const std::string& v) { check_seconds("scale_run_s", v); }}};
}

}  // namespace eb::head_to_head
