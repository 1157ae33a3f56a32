#include "experiments/head_to_head/h2h_search.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

namespace eb::head_to_head {

const TrialOutcome& TrialCache::get(const TrialSetting& s) {
  auto it = done_.find(s);
  if (it == done_.end()) it = done_.emplace(s, run_(s)).first;
  return it->second;
}

bool passes(const TrialOutcome& o, double tolerance) {
  return o.valid && o.error < tolerance && o.settle_change < 0.1 * tolerance;
}

SearchResult search_cheapest(const SearchSpace& space, double tolerance, TrialCache& trials) {
  SearchResult r;
  constexpr double kNone = std::numeric_limits<double>::infinity();
  bool unaffordable = false;  // the cheapest trial of a level was over the budget
  for (int level = 0; level < space.levels && !unaffordable; ++level) {
    if (size_t(level) < space.level_floor.size() && space.level_floor[size_t(level)] > kFloorFactor * tolerance) {
      r.skipped_levels.push_back(level);
      continue;
    }
    double previous_dt_best = kNone;
    for (int dt = 0; dt < space.dts; ++dt) {
      double this_dt_best = kNone, previous_error = kNone;
      bool passed = false, cheapest_over = false;
      for (int effort = 0; effort < space.efforts; ++effort) {
        const TrialSetting s{level, dt, effort};
        r.tried.push_back(s);
        const TrialOutcome& o = trials.get(s);
        if (o.over_budget) {
          cheapest_over = effort == 0;
          break;
        }
        // An unsettled error is a snapshot of motion, not the setting's accuracy: it neither
        // passes nor stops the ladder.
        if (!o.valid || !(o.settle_change < 0.1 * tolerance)) continue;
        if (passes(o, tolerance)) {
          if (!r.found || o.wall_per_sim_s < r.best_outcome.wall_per_sim_s) {
            r.found = true;
            r.best = s;
            r.best_outcome = o;
          }
          passed = true;
          break;
        }
        this_dt_best = std::min(this_dt_best, o.error);
        if (o.error >= kStallFactor * previous_error) break;
        previous_error = o.error;
      }
      if (passed) break;
      if (cheapest_over) {
        unaffordable = dt == 0;
        break;
      }
      if (previous_dt_best < kNone && !(this_dt_best < kStallFactor * previous_dt_best)) break;
      if (this_dt_best < kNone) previous_dt_best = this_dt_best;
    }
    // A finer level has 8x the elements and at least as many steps: to win it would need 8x less
    // work per element-step, which neither a smaller effort nor a larger dt of these ladders
    // gives; searching it would cost a level's trials on the largest meshes for nothing.
    if (r.found) break;
  }
  return r;
}

void search_tolerances(const SearchSpace& space, std::vector<double> tolerances, TrialCache& trials,
                       const std::function<void(const ToleranceResult&)>& done) {
  std::sort(tolerances.begin(), tolerances.end(), std::greater<double>());
  bool looser_found = true;
  for (double tol : tolerances) {
    ToleranceResult t;
    t.tolerance = tol;
    t.searched = looser_found;
    if (t.searched) t.result = search_cheapest(space, tol, trials);
    looser_found = t.result.found;
    done(t);
  }
}

std::vector<double> fill_level_floors(std::vector<double> known) {
  double finer = std::numeric_limits<double>::quiet_NaN();
  for (size_t i = known.size(); i-- > 0;) {
    if (std::isnan(known[i])) known[i] = finer;
    else finer = known[i];
  }
  return known;
}

std::string search_description() {
  return "Per element-size level (coarsest first): dt from the ladder, largest first; at each dt the solver "
         "effort from the cheapest, doubled (the next entry of the variant's effort ladder) until the trial is "
         "valid with error below the tolerance and settled (probes moved less than a tenth of the tolerance x "
         "|u_ref| over the last 10% of T), which is the level's winner; finer levels are not searched once a level has a winner (8x the elements at no fewer steps). Effort stops rising at the top of "
         "its ladder or when a valid error is not below 0.9 x the previous valid one; the next (halved) dt is "
         "tried only when the current dt's best valid error fell below 0.9 x the previous dt's. The winner is "
         "the passing trial with the least wall time per simulated second over the searched levels. Invalid trials "
         "(inverted, non-finite, solver failure) and unsettled ones never pass and never stop the effort or dt "
         "ladder; a trial over the cost budget (element-steps or predicted wall time) ends the effort ladder, at "
         "the cheapest effort also the level's dt ladder, and at the largest dt and cheapest effort the search. "
         "Tolerances are searched loosest first, and a tighter one only when the looser found a passing setting. "
         "For the reference's own element (linear tetrahedra: bcsr-pcg, corot-cg, nr-neohookean), a level whose "
         "converged static solution is further than 1.25 x the tolerance from the reference (the difference of "
         "magnitudes, a lower bound; a level without one takes the next finer level's) is not searched.";
}

}  // namespace eb::head_to_head
