#include "meshes/isolated_call.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include <poll.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "meshes/host_memory.h"

namespace eb::mesh {
namespace {

// Message kinds the child writes, each followed by a length (uint64) and that many bytes.
constexpr char kCheckpoint = 'C', kResult = 'R', kError = 'E';

// Gmsh 4.8 throws std::string as well as std::exception.
std::string exception_text() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (const std::string& e) {
    return e;
  } catch (...) {
    return "unknown error";
  }
}

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= size_t(w);
  }
  return true;
}

void send(int fd, char kind, const std::string& payload) {
  const uint64_t n = payload.size();
  write_all(fd, &kind, 1);
  write_all(fd, reinterpret_cast<const char*>(&n), sizeof n);
  write_all(fd, payload.data(), payload.size());
}

[[noreturn]] void child_main(int fd, const std::function<std::string(const std::function<void()>&)>& work) {
  try {
    const std::string result = work([fd] { send(fd, kCheckpoint, {}); });
    send(fd, kResult, result);
  } catch (...) {
    send(fd, kError, exception_text());
  }
  ::close(fd);
  ::_exit(0);  // no destructors or atexit handlers: they belong to the parent
}

// Reads from the child until it closes its end; returns false on deadline (before a checkpoint).
bool read_child(int fd, double first_stage_timeout_s, std::string& data) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                           std::chrono::duration<double>(first_stage_timeout_s));
  bool checkpoint_seen = false;
  char buf[1 << 16];
  for (;;) {
    int wait_ms = -1;
    if (!checkpoint_seen) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
      if (left <= 0) return false;
      wait_ms = int(std::min<long long>(left, 1000));
    }
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, wait_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) continue;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;
    data.append(buf, size_t(n));
    if (!checkpoint_seen && data.size() >= 1 + sizeof(uint64_t) && data[0] == kCheckpoint) checkpoint_seen = true;
  }
}

}  // namespace

bool process_is_single_threaded() { return process_status_number("Threads:") == 1; }

std::string run_isolated(const std::function<std::string(const std::function<void()>& checkpoint)>& work,
                         double first_stage_timeout_s, const std::string& what, const std::string& first_stage) {
  if (!process_is_single_threaded()) {
    try {
      return work([] {});
    } catch (...) {
      throw IsolatedCallFailure(exception_text());
    }
  }
  int fds[2];
  if (::pipe(fds) != 0) throw IsolatedCallFailure(what + ": pipe() failed: " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw IsolatedCallFailure(what + ": fork() failed: " + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], work);
  }
  ::close(fds[1]);
  std::string data;
  const bool finished = read_child(fds[0], first_stage_timeout_s, data);
  ::close(fds[0]);
  if (!finished) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!finished)
    throw IsolatedCallFailure(what + " did not finish " + first_stage + " within " +
                                  std::to_string(int(first_stage_timeout_s)) + " s and was stopped",
                              true);
  if (WIFSIGNALED(status))
    throw IsolatedCallFailure(what + " crashed (signal " + std::to_string(WTERMSIG(status)) + ", " +
                              strsignal(WTERMSIG(status)) + ")");
  // Messages: skip checkpoints, then a result or an error.
  size_t pos = 0;
  while (pos + 1 + sizeof(uint64_t) <= data.size()) {
    const char kind = data[pos];
    uint64_t n = 0;
    std::memcpy(&n, data.data() + pos + 1, sizeof n);
    pos += 1 + sizeof n;
    if (pos + n > data.size()) break;
    if (kind == kResult) return data.substr(pos, n);
    if (kind == kError) throw IsolatedCallFailure(data.substr(pos, n));
    pos += n;
  }
  throw IsolatedCallFailure(what + " ended without a result (exit status " +
                            std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
}

}  // namespace eb::mesh
