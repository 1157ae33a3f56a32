// `elastobench reproduce head-to-head`: the parts in parts.h, in that order; each writes its own
// files under ctx.out_dir, and analysis/head_to_head.py draws them.
#include <sstream>

#include "experiments/head_to_head/nl_runs.h"
#include "experiments/head_to_head/parts.h"
#include "experiments/head_to_head/scale_fit.h"
#include "meshes/errors.h"

namespace eb {
namespace {

// Each item of a comma list must parse as a positive number.
void check_numbers(const std::string& key, const std::string& value, bool allow_none) {
  if (allow_none && value == "none") return;
  std::stringstream ss(value);
  int count = 0;
  for (std::string item; std::getline(ss, item, ',');) {
    size_t used = 0;
    double x = 0;
    try {
      x = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || !(x > 0)) throw InputError("head-to-head option " + key + ": '" + item + "' is not a positive number");
    ++count;
  }
  if (!count) throw InputError("head-to-head option " + key + ": no value given");
}

std::vector<ExperimentOption> corot_part_options() {
  return {{"corot_sizes",
           "corot part: target element counts of the steps/s sweep, comma-separated (default 1e4,1e5,1e6; --quick "
           "3000; without --quick, CPU rows are the cantilever's up to 1e4), or none",
           [](const std::string& v) { check_numbers("corot_sizes", v, true); }},
          {"corot_scenes", "corot part: scenes to run, comma-separated among cantilever, bunny, sofa-beam (default all; --quick cantilever)",
           [](const std::string& v) {
             std::stringstream ss(v);
             for (std::string s; std::getline(ss, s, ',');)
               if (s != "cantilever" && s != "bunny" && s != "sofa-beam")
                 throw InputError("head-to-head option corot_scenes: '" + s + "' is not cantilever, bunny or sofa-beam");
           }},
          {"corot_methods", "corot part: methods or method/variant entries to run, comma-separated, in this order (default all, in the table's order)"},
          {"corot_accuracy",
           "corot part: configurations of the time-to-accuracy search, comma-separated BACKEND-PRECISION[-tTHREADS] "
           "(default cuda-fp32,cuda-fp64 with a GPU, else cpu-fp64 on all threads; --quick cpu-fp64-t1), or none"},
          {"corot_max_element_steps",
           "corot part: a search trial whose elements x steps exceed this is not run (default 5e9; --quick 2e7)",
           [](const std::string& v) { check_numbers("corot_max_element_steps", v, false); }},
          {"corot_trial_seconds",
           "corot part: a search trial whose wall time, extrapolated from its first tenths, would exceed this many "
           "seconds is stopped and counted invalid (default 60)",
           [](const std::string& v) { check_numbers("corot_trial_seconds", v, false); }},
          {"corot_tolerances",
           "corot part: relative errors the time-to-accuracy search is run for, comma-separated, each in (0, 1) "
           "(default 0.1,0.01,0.001; a tolerance under twice the reference's error estimate is not searched)",
           [](const std::string& v) {
             check_numbers("corot_tolerances", v, false);
             std::stringstream ss(v);
             for (std::string s; std::getline(ss, s, ',');)
               if (!(std::stod(s) < 1))
                 throw InputError("head-to-head option corot_tolerances: '" + s + "' is not a relative error below 1");
           }},
          {"corot_reference_from",
           "corot part: a folder holding an earlier run's corot_reference_<scene>.csv, read (scene, resolution and "
           "probes checked) instead of solving the reference again"}};
}

}  // namespace

void register_experiment_head_to_head(ExperimentRegistry& r) {
  std::vector<ExperimentOption> options = corot_part_options();
  for (ExperimentOption& o : head_to_head::nonlinear_part_options()) options.push_back(std::move(o));
  for (ExperimentOption& o : head_to_head::scale_part_options()) options.push_back(std::move(o));
  r.add({"head-to-head",
         "All methods on the same scenes by time to accuracy, and the solvers on the same linear systems",
         [](const ExperimentContext& ctx) {
           if (ctx.wants("corot")) head_to_head::run_corot_part(ctx);
           if (ctx.wants("nonlinear")) head_to_head::run_nonlinear_part(ctx);
           if (ctx.wants("scale")) head_to_head::run_scale_part(ctx);
           if (ctx.wants("solvers")) head_to_head::run_solvers_part(ctx);
         },
         {"corot", "nonlinear", "scale", "solvers"},
         options});
}

}  // namespace eb
