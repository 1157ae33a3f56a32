// elastobench's global operator new (experiments/huge_page_new.cpp, compiled into this test too):
// a large block is 2 MiB-aligned and, where the kernel offers transparent huge pages, backed by
// them once touched; small blocks, arrays and nothrow forms behave as the standard ones.
#include <cstdint>
#include <fstream>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "experiments/huge_page_new.h"

namespace {

// AnonHugePages (kB) of the mapping of /proc/self/smaps that holds `p`; -1 when not found.
long huge_kb_at(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto addr = reinterpret_cast<std::uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= addr && addr < hi;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) return std::stol(line.substr(14));
  }
  return -1;
}

bool thp_offered() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  return !s.empty() && s.find("[never]") == std::string::npos;
}

}  // namespace

TEST(HugePageNew, LargeBlocksAreHugePageAlignedAndBacked) {
  if (!eb::kHugePageNew) GTEST_SKIP() << "AddressSanitizer keeps its own operator new";
  std::vector<double> v(eb::kHugeBlock / sizeof(double) * 4, 1.0);  // 32 MiB, every page touched
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % eb::kHugePage, 0u);
  const long kb = huge_kb_at(v.data());
  ASSERT_GE(kb, 0) << "the block's mapping is not in /proc/self/smaps";
  if (!thp_offered()) GTEST_SKIP() << "transparent huge pages are off on this kernel";
  // The kernel may fall back to small pages for some ranges (fragmentation): most must be huge.
  EXPECT_GT(kb * 1024, long(v.size() * sizeof(double) / 2)) << kb << " kB in huge pages";
}

TEST(HugePageNew, SmallAndNothrowFormsAreOrdinary) {
  auto small = std::make_unique<int[]>(10);
  small[9] = 7;
  EXPECT_EQ(small[9], 7);
  int* n = new (std::nothrow) int(3);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(*n, 3);
  delete n;
  // A request no machine can hold: nothrow gives null, the throwing form std::bad_alloc
  // (AddressSanitizer reports such a request as an error instead).
  if (!eb::kHugePageNew) return;
  const std::size_t absurd = std::size_t(1) << 62;
  char* none = new (std::nothrow) char[absurd];
  EXPECT_EQ(none, nullptr);
  delete[] none;
  EXPECT_THROW(static_cast<void>(eb::huge_page_allocate(absurd)), std::bad_alloc);
}
