// Replays every saved fuzzer finding (tests/fuzz/regressions/<target>/*) through the entry the
// fuzz target uses. Each input must parse or be refused with InputError; a crash, another
// exception or (in the sanitizer build) a memory or UB report fails the test.
// Usage: replay_regressions REGRESSIONS_DIR [TARGET]
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_entries.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s REGRESSIONS_DIR [TARGET]\n", argv[0]);
    return 2;
  }
  const fs::path root = argv[1];
  const std::string only = argc > 2 ? argv[2] : "";
  size_t inputs = 0, failures = 0;
  for (const auto& target : eb::fuzz::target_names()) {
    if (!only.empty() && target != only) continue;
    const fs::path dir = root / target;
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      ++inputs;
      try {
        const bool parsed = eb::fuzz::run_target(target, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
        std::printf("%s %s: %s\n", target.c_str(), f.filename().c_str(), parsed ? "parsed" : "refused");
      } catch (const std::exception& e) {
        std::printf("FAIL %s %s: %s\n", target.c_str(), f.filename().c_str(), e.what());
        ++failures;
      }
    }
  }
  // A replay that found nothing to replay would pass without checking anything.
  if (inputs == 0) {
    std::fprintf(stderr, "no regression inputs under %s\n", root.c_str());
    return 1;
  }
  std::printf("%zu inputs, %zu failures\n", inputs, failures);
  return failures == 0 ? 0 : 1;
}
