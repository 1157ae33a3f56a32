#pragma once
// Runs a piece of third-party code in a child process so that its failures cannot take this
// process with them. Gmsh 4.8 (Debian 12) needs this: on some surfaces its surface classification
// never returns (METIS_PartGraphKway loops inside classifySurfaces on Dragon_50k.obj, and the
// process ignores SIGTERM), and an error raised while it meshes surfaces inside an OpenMP region
// aborts the whole process instead of reaching our catch.
//
// The child is a fork() of this process. fork() is only safe while the process has one thread:
// a child forked after libgomp (OpenMP) started its worker threads deadlocks in its first
// parallel region, which Gmsh enters. So `work` runs in a child only when this process is
// single-threaded (the `mesh` CLI commands are); otherwise it runs here, unguarded.
#include <functional>
#include <stdexcept>
#include <string>

namespace eb::mesh {

// The child failed: an exception (its message), a crash (the signal) or the stage deadline.
class IsolatedCallFailure : public std::runtime_error {
 public:
  explicit IsolatedCallFailure(const std::string& message, bool timed_out = false)
      : std::runtime_error(message), timed_out_(timed_out) {}
  bool timed_out() const { return timed_out_; }  // stopped at the first-stage deadline

 private:
  bool timed_out_;
};

// `work(checkpoint)` returns its result as bytes. Until it calls checkpoint() the child has
// `first_stage_timeout_s` seconds; after that it may run as long as it needs. Exceptions thrown
// by `work` arrive as IsolatedCallFailure with their message (also when run in-process).
// `what` names the job and `first_stage` its first stage in messages.
std::string run_isolated(const std::function<std::string(const std::function<void()>& checkpoint)>& work,
                         double first_stage_timeout_s, const std::string& what, const std::string& first_stage);

// True when the calling process has exactly one thread (read from /proc/self/status).
bool process_is_single_threaded();

}  // namespace eb::mesh
