#include "solvers/common/results.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "meshes/atomic_file.h"
#include "meshes/errors.h"
#include "solvers/common/build_info.h"
#include "solvers/common/cuda_info.h"

namespace eb {

void write_file_atomic(const std::filesystem::path& path, const std::string& text) {
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) throw RuntimeFailure("cannot create directory " + path.parent_path().string() + ": " + ec.message());
  }
  mesh::write_atomically(path, [&](std::ostream& out) { out.write(text.data(), std::streamsize(text.size())); });
}

void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& j) {
  write_file_atomic(path, j.dump(2) + "\n");
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError("cannot open " + path.string());
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and out_of_range for a number beyond double's range (1e400).
    throw InputError(path.string() + ": not valid JSON (" + e.what() + ")");
  }
}

namespace {
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  return "unknown";
}

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}
}  // namespace

// The processors this process may run on (taskset, cgroup cpusets): a run pinned to part of a
// shared host (scripts/device_parallel.sh) says so, where hardware_concurrency counts the host's.
int usable_cpu_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return int(std::thread::hardware_concurrency());
  return CPU_COUNT(&set);
}

nlohmann::json machine_info(int cuda_device) {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  nlohmann::json m = {{"hostname", host},
                      {"cpu_model", cpu_model()},
                      {"cpu_threads", int(std::thread::hardware_concurrency())},
                      {"cpu_threads_usable", usable_cpu_threads()},
                      {"date", now_iso8601()}};
  const GpuInfo g = cuda_device_info(cuda_device);
  if (g.usable) {
    m["gpu"] = {{"name", g.name},
                {"compute_capability", std::to_string(g.compute_major) + "." + std::to_string(g.compute_minor)},
                {"memory_bytes", g.total_memory},
                {"multiprocessors", g.multiprocessors},
                {"l2_bytes", g.l2_bytes},
                {"driver_version", g.driver_version},
                {"runtime_version", g.runtime_version}};
  } else {
    m["gpu"] = nullptr;
    m["gpu_unavailable_reason"] = g.reason;
  }
  return m;
}

nlohmann::json build_json() {
  const auto& b = build_info();
  return {{"git_commit", b.git_commit},
          {"build_type", b.build_type},
          {"cxx_compiler", b.cxx_compiler},
          {"cuda_compiler", b.cuda_compiler.empty() ? nlohmann::json(nullptr) : nlohmann::json(b.cuda_compiler)},
          {"cuda_backends", cuda_compiled()}};
}

std::size_t peak_host_memory_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return std::size_t(u.ru_maxrss) * 1024;  // Linux reports kilobytes
}

void CsvTable::add_row(std::vector<std::string> cells) {
  if (cells.size() != columns_.size())
    throw std::logic_error("CSV row has " + std::to_string(cells.size()) + " cells, header has " +
                           std::to_string(columns_.size()));
  rows_.push_back(std::move(cells));
}

std::string CsvTable::num(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;
  return std::string(buf, end);
}

std::string CsvTable::str() const {
  std::ostringstream out;
  auto emit = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) {
      const bool quote = cells[i].find_first_of(",\"\n") != std::string::npos;
      if (i) out << ',';
      if (quote) {
        out << '"';
        for (char c : cells[i]) out << (c == '"' ? "\"\"" : std::string(1, c));
        out << '"';
      } else {
        out << cells[i];
      }
    }
    out << '\n';
  };
  emit(columns_);
  for (const auto& r : rows_) emit(r);
  return out.str();
}

}  // namespace eb
