#pragma once
// The parsers under fuzzing, one entry per target. A libFuzzer target (fuzz_target.cpp) and the
// regression replay that runs in the normal test suite (replay_regressions.cpp) call the same
// entry, so an input that once crashed a fuzzer is checked by every ordinary build.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace eb::fuzz {

// Feeds `data` to target `name`'s parser. Returns true when it parsed, false when it was refused
// with InputError (bad input, the expected outcome for most inputs). Any other exception, a
// crash or a sanitizer report is a finding.
bool run_target(const std::string& name, const uint8_t* data, size_t size);

// Every target, in the order the README lists them.
const std::vector<std::string>& target_names();

}  // namespace eb::fuzz
