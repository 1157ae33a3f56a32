#pragma once
// The time-to-accuracy search of the head-to-head corot part: the cheapest setting (element size,
// time step, solver effort) at which a method's settled displacement stays within a tolerance of
// the reference. Pure logic over a callback that runs one trial, so that the order of the trials
// and the choice of the winner are tested on synthetic tables (tests/head_to_head).
//
// The search, per element-size level (coarsest first):
//   for dt on the ladder, largest first:
//     for effort = cheapest, doubled each time (an index into the variant's effort ladder):
//       run the trial; a valid trial whose error is below the tolerance and that has settled
//       (its probes moved by less than tolerance / 10 x |u_ref| over the last 10% of T) is the
//       level's winner, and the level ends;
//       effort stops rising at the top of its ladder or when the error no longer falls (a valid
//       error >= kStallFactor x the previous valid one): more effort cannot help this dt/mesh;
//     the next (halved) dt is tried only when this dt did better than the previous one (its best
//     valid error < kStallFactor x the previous dt's, or the previous dt had no valid trial):
//     otherwise the remaining error is the mesh's and smaller steps cannot help.
//   the first level with a passing trial is the last level searched (a finer one has 8x the
//   elements at no fewer steps).
// A trial over the cost budget ends its effort ladder (more effort costs more); at the cheapest
// effort it also ends the level's dt ladder (a smaller dt takes more steps), and at the largest dt
// the search (finer levels cost more still).
// The winner is the passing trial with the least wall time per simulated second.
// Invalid trials (inverted, non-finite, solver failure, over the budget) and unsettled ones
// never pass and never count as "the error no longer falls" (an unsettled error is a snapshot
// of the motion: it may rise with effort while the settled error falls). Trials are memoized by setting, so a second tolerance reruns
// nothing the first one ran.
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace eb::head_to_head {

constexpr double kStallFactor = 0.9;
// A level whose own converged static solution is further than this x the tolerance from the
// reference is not searched (SearchSpace::level_floor).
constexpr double kFloorFactor = 1.25;

struct TrialSetting {
  int level = 0;   // element-size level, 0 = coarsest
  int dt = 0;      // index into the dt ladder, 0 = largest
  int effort = 0;  // index into the effort ladder, 0 = cheapest
  bool operator<(const TrialSetting& o) const {
    return std::tie(level, dt, effort) < std::tie(o.level, o.dt, o.effort);
  }
};

struct TrialOutcome {
  bool valid = false;
  std::string why;                // invalid: the reason
  double error = 0.0;             // max over probes |u(T) - u_ref| / |u_ref|
  double settle_change = 0.0;     // max over probes |u(T) - u(0.9 T)| / |u_ref|
  double wall_per_sim_s = 0.0;    // wall seconds per simulated second
  bool over_budget = false;       // invalid because it would exceed the trial's cost budget
};

struct SearchSpace {
  int levels = 1;
  int dts = 1;
  int efforts = 1;  // 1: the method has no effort to vary (explicit)
  // Per level, a lower bound of the error any settled trial there can reach (empty or NaN: none):
  // for the reference's own element, the distance of that level's converged static solution
  // from the reference. A settled, converged trial sits at its mesh's equilibrium, so a level
  // whose floor exceeds kFloorFactor x the tolerance could pass only by an error cancelling most
  // of its discretization error; it is skipped, which on the cantilever spares the tetrahedral
  // methods the coarse levels (6.5% and 1.8% off) before the 1.97M-tet one they need.
  std::vector<double> level_floor;
};

struct SearchResult {
  bool found = false;
  TrialSetting best;
  TrialOutcome best_outcome;
  std::vector<TrialSetting> tried;  // in the order this search asked for them (memoized ones too)
  std::vector<int> skipped_levels;  // not searched: their floor is above kFloorFactor x the tolerance
};

using TrialRunner = std::function<TrialOutcome(const TrialSetting&)>;

// Memoizes trials across searches of one method on one scene and configuration.
class TrialCache {
 public:
  explicit TrialCache(TrialRunner run) : run_(std::move(run)) {}
  const TrialOutcome& get(const TrialSetting& s);
  const std::map<TrialSetting, TrialOutcome>& all() const { return done_; }

 private:
  TrialRunner run_;
  std::map<TrialSetting, TrialOutcome> done_;
};

// Whether a trial meets `tolerance`: valid, error below it, settled to a tenth of it.
bool passes(const TrialOutcome& o, double tolerance);
SearchResult search_cheapest(const SearchSpace& space, double tolerance, TrialCache& trials);

// The searches for several tolerances, loosest first. A tolerance is searched only while the
// looser one found a passing setting: a trial that meets the tighter tolerance meets the looser
// one, so where the looser search found none the tighter would run the same ladders for nothing
// (result.searched = false, result.found = false).
struct ToleranceResult {
  double tolerance = 0;
  bool searched = false;
  SearchResult result;
};
// `done` is called after each tolerance (so that a caller cut short keeps the finished rows).
void search_tolerances(const SearchSpace& space, std::vector<double> tolerances, TrialCache& trials,
                       const std::function<void(const ToleranceResult&)>& done);

// The floor of every level from the static solutions known at some of them (`known`: NaN where
// none): a level without one takes the nearest finer level's (on a mesh family converging
// monotonically, as the references' observed orders of 1.7-2.2 show, a coarser mesh is no
// closer); levels finer than every known one get none.
std::vector<double> fill_level_floors(std::vector<double> known);

// The search's rule in one paragraph, for meta files and the report.
std::string search_description();

}  // namespace eb::head_to_head
