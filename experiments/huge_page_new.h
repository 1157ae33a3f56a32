#pragma once
// Allocation in transparent huge pages for large blocks: huge_page_new.cpp replaces the global
// operator new of the executables it is compiled into (elastobench) with huge_page_allocate.
#include <cstddef>

namespace eb {

constexpr std::size_t kHugePage = std::size_t(2) << 20;    // x86-64's 2 MiB page
constexpr std::size_t kHugeBlock = std::size_t(8) << 20;   // from here on: huge pages

// Whether huge_page_new.cpp replaces operator new in this build (not under AddressSanitizer,
// which must see every new and delete itself).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kHugePageNew = false;
#else
constexpr bool kHugePageNew = true;
#endif

// bytes >= kHugeBlock: 2 MiB-aligned memory advised MADV_HUGEPAGE, the size rounded up to whole
// huge pages; smaller: malloc. Either is released with free. Throws std::bad_alloc.
void* huge_page_allocate(std::size_t bytes);

}  // namespace eb
