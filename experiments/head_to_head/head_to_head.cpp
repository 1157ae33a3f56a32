// `elastobench reproduce head-to-head`: the parts in parts.h, in that order; each writes its own
// files under ctx.out_dir, and analysis/head_to_head.py draws them.
#include "experiments/head_to_head/parts.h"

namespace eb {

void register_experiment_head_to_head(ExperimentRegistry& r) {
  r.add({"head-to-head",
         "All methods on the same scenes by time to accuracy, and the solvers on the same linear systems",
         [](const ExperimentContext& ctx) {
           if (ctx.wants("corot")) head_to_head::run_corot_part(ctx);
           if (ctx.wants("nonlinear")) head_to_head::run_nonlinear_part(ctx);
           if (ctx.wants("scale")) head_to_head::run_scale_part(ctx);
           if (ctx.wants("solvers")) head_to_head::run_solvers_part(ctx);
         },
         {"corot", "nonlinear", "scale", "solvers"}});
}

}  // namespace eb
