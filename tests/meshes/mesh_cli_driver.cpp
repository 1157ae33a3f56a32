// Test driver for `mesh` subcommands: same error mapping as experiments/main.cpp.
#include <iostream>

#include <CLI/CLI.hpp>

#include "experiments/cli_common.h"
#include "meshes/errors.h"

int main(int argc, char** argv) {
  CLI::App app{"mesh CLI test driver", "elastobench"};
  app.require_subcommand(1);
  eb::cli::add_mesh_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  } catch (const eb::InputError& e) {
    std::cerr << "elastobench: error: " << e.what() << "\n";
    return 2;
  } catch (const eb::RuntimeFailure& e) {
    std::cerr << "elastobench: failed: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "elastobench: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
