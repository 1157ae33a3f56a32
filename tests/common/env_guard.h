#pragma once
// Sets an environment variable for the lifetime of the guard and restores the previous value:
// the CUDA backends read their test and A/B knobs (EB_HEXMG_*, EB_CG_SR_REDUCTION) when a
// simulation or solver is constructed.
#include <cstdlib>
#include <optional>
#include <string>

namespace eb::test {

class EnvGuard {
 public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = std::string(old);
    setenv(name, value, 1);
  }
  ~EnvGuard() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace eb::test
