// One libFuzzer target; EB_FUZZ_TARGET (a compile definition) names the parser it drives.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  eb::fuzz::run_target(EB_FUZZ_TARGET, data, size);
  return 0;
}
