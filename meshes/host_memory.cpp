#include "meshes/host_memory.h"

#include <cstdio>
#include <fstream>
#include <sstream>

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

}  // namespace

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
  return available;
}

void require_host_memory(double bytes, const std::string& what) {
  const uint64_t limit = available_host_memory();
  if (limit == 0 || bytes <= double(limit)) return;
  throw RuntimeFailure(what + " needs at least " + gigabytes(bytes) + " of host memory; " + gigabytes(double(limit)) +
                       " are available");
}

}  // namespace eb::mesh
