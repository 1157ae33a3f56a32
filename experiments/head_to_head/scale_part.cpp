// SCAFFOLD (branch h2h-base only): replaced by the helper that owns this part; must not reach main.
#include <stdexcept>

#include "experiments/head_to_head/parts.h"

namespace eb::head_to_head {

void run_scale_part(const ExperimentContext&) { throw std::logic_error("head-to-head part scale: not built yet"); }

}  // namespace eb::head_to_head
