#pragma once
#include <string>

namespace eb {

struct BuildInfo {
  std::string git_commit;  // "-dirty" appended when tracked files differed from HEAD at build time
  std::string build_type;
  std::string cxx_compiler;
  std::string cuda_compiler;  // empty when built without CUDA
};

const BuildInfo& build_info();

}  // namespace eb
