#include "meshes/host_memory.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include <malloc.h>
#include <sys/resource.h>

#include "meshes/errors.h"

namespace eb::mesh {
namespace {

bool read_number(const char* path, uint64_t& out) {
  std::ifstream in(path);
  return bool(in >> out);  // "max" (no limit) fails to parse
}

std::string gigabytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g GB", bytes / 1e9);
  return buf;
}

// VmData of /proc/self/status in bytes (0: unknown).
uint64_t data_bytes() { return process_status_number("VmData:") * 1024; }

uint64_t g_limit = 0;

}  // namespace

uint64_t process_status_number(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string k;
  while (status >> k) {
    if (k == key) {
      uint64_t n = 0;
      status >> n;
      return n;
    }
    status.ignore(1 << 20, '\n');
  }
  return 0;
}

uint64_t resident_bytes() { return process_status_number("VmRSS:") * 1024; }
uint64_t peak_resident_bytes() { return process_status_number("VmHWM:") * 1024; }

bool reset_peak_resident() {
  malloc_trim(0);
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";  // resets VmHWM to the resident size (Linux 4.0 and later)
  clear.flush();
  return bool(clear);
}

uint64_t available_host_memory() {
  uint64_t available = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kb = 0;
  std::string unit;
  while (meminfo >> key >> kb) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:") {
      available = kb * 1024;
      break;
    }
  }
  uint64_t max = 0, current = 0;
  if (read_number("/sys/fs/cgroup/memory.max", max) && read_number("/sys/fs/cgroup/memory.current", current)) {
    const uint64_t left = max > current ? max - current : 0;
    if (available == 0 || left < available) available = left;
  }
  rlimit data{};
  if (getrlimit(RLIMIT_DATA, &data) == 0 && data.rlim_cur != RLIM_INFINITY) {
    const uint64_t used = data_bytes();
    const uint64_t left = data.rlim_cur > used ? data.rlim_cur - used : 0;
    if (available == 0 || left < available) available = left;
  }
  return available;
}

uint64_t limit_host_memory_to_available() {
  if (!kHostMemoryLimit) return 0;
  rlimit data{};
  if (getrlimit(RLIMIT_DATA, &data) != 0) return 0;
  const uint64_t available = available_host_memory(), used = data_bytes();
  if (available == 0 || used == 0) return data.rlim_cur == RLIM_INFINITY ? 0 : uint64_t(data.rlim_cur);
  const uint64_t limit = used + available;
  if (data.rlim_cur == RLIM_INFINITY || limit < data.rlim_cur) {
    data.rlim_cur = rlim_t(limit);
    if (setrlimit(RLIMIT_DATA, &data) != 0) return 0;
  }
  g_limit = uint64_t(data.rlim_cur);
  return g_limit;
}

uint64_t host_memory_limit() { return g_limit; }

std::string out_of_host_memory_text() {
  std::string text = "out of host memory: an allocation failed";
  if (g_limit > 0)
    text += " at the process's limit of " + std::to_string(g_limit / 1000000) +
            " MB (its data at start-up plus the memory then available)";
  return text;
}

void require_host_memory(double bytes, const std::string& what) {
  const uint64_t limit = available_host_memory();
  if (limit == 0 || bytes <= double(limit)) return;
  throw RuntimeFailure(what + " needs at least " + gigabytes(bytes) + " of host memory; " + gigabytes(double(limit)) +
                       " are available");
}

}  // namespace eb::mesh
