#pragma once
// Error categories shared by every layer. They live in meshes/ because it is the lowest layer
// and everything above may throw them; the CLI maps them to exit codes.
#include <stdexcept>
#include <string>

namespace eb {

// Bad usage or bad input (file, key, element): exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The input was fine but the computation failed (divergence, out of GPU memory): exit code 1.
class RuntimeFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace eb
