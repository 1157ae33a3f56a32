#pragma once
// One-line progress on stderr for long runs, only when stderr is a terminal.
#include <string>

#include "solvers/common/timers.h"

namespace eb {

class Progress {
 public:
  Progress(std::string label, long total, bool quiet);
  ~Progress();
  void update(long done);  // redraws at most ~10 times a second
  void finish();

 private:
  std::string label_;
  long total_;
  bool enabled_;
  bool finished_ = false;
  Stopwatch clock_;
  double last_draw_ms_ = -1e9;
};

}  // namespace eb
