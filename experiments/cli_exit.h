#pragma once
// The one mapping from errors to exit codes, shared by elastobench and the test drivers:
// 0 success (help and version included), 1 runtime failure, 2 bad usage or bad input.
#include <iostream>
#include <new>

#include <CLI/CLI.hpp>

#include "meshes/errors.h"
#include "meshes/host_memory.h"

namespace eb::cli {

inline int parse_and_run(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);  // prints help/version or the parse error
    return rc == 0 ? 0 : 2;
  } catch (const InputError& e) {
    std::cerr << "elastobench: error: " << e.what() << "\n";
    return 2;
  } catch (const RuntimeFailure& e) {
    std::cerr << "elastobench: failed: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    // The data-size limit set at start-up (mesh::limit_host_memory_to_available) makes a run
    // larger than the host's memory end here rather than in the out-of-memory killer.
    std::cerr << "elastobench: failed: " << mesh::out_of_host_memory_text() << "; use a coarser mesh or run less at once\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "elastobench: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace eb::cli
