// The elastobench executable's global operator new: blocks of kHugeBlock bytes or more are
// aligned to 2 MiB and advised as transparent huge pages (madvise MADV_HUGEPAGE). Host set-up of
// a large model is mostly first touches of fresh arrays; with 4 KiB pages each touch is a page
// fault (the kernel's fault handling and zeroing were about half of tled's set-up samples), with
// huge pages one fault covers 512 pages. Where THP is "madvise" (Debian's default) only advised
// memory gets them; where it is "never" the advice is ignored. Measured in
// experiments/head_to_head/PERF_NOTES.md (scale). Smaller blocks go to malloc unchanged.
// Not under AddressSanitizer, which must see every new and delete itself.
#include "experiments/huge_page_new.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace eb {

void* huge_page_allocate(std::size_t bytes) {
  if (bytes >= kHugeBlock) {
    const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (!p) throw std::bad_alloc();
    madvise(p, rounded, MADV_HUGEPAGE);  // advice: a kernel without THP leaves 4 KiB pages
    return p;
  }
  void* p = std::malloc(bytes ? bytes : 1);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace eb

#if !defined(__SANITIZE_ADDRESS__)  // kHugePageNew
void* operator new(std::size_t n) { return eb::huge_page_allocate(n); }
void* operator new[](std::size_t n) { return eb::huge_page_allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return eb::huge_page_allocate(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return eb::huge_page_allocate(n);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
// Both kinds of block come from malloc or aligned_alloc: free releases either.
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#endif
