#include "solvers/common/progress.h"

#include <unistd.h>

#include <cstdio>

namespace eb {

Progress::Progress(std::string label, long total, bool quiet)
    : label_(std::move(label)), total_(total), enabled_(!quiet && isatty(STDERR_FILENO)) {}

Progress::~Progress() { finish(); }

void Progress::update(long done) {
  if (!enabled_) return;
  const double ms = clock_.elapsed_ms();
  if (ms - last_draw_ms_ < 100 && done < total_) return;
  last_draw_ms_ = ms;
  const double rate = ms > 0 ? done / (ms / 1000.0) : 0.0;
  const double eta = rate > 0 && total_ > done ? (total_ - done) / rate : 0.0;
  std::fprintf(stderr, "\r\033[K%s: step %ld/%ld (%.1f%%) %.0f steps/s, ETA %.1f s", label_.c_str(), done, total_,
               total_ > 0 ? 100.0 * done / total_ : 100.0, rate, eta);
  std::fflush(stderr);
}

void Progress::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace eb
