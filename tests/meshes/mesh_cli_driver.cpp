// Test driver for `mesh` subcommands without the solver stack: the same error mapping as
// experiments/main.cpp (experiments/cli_exit.h).
#include <CLI/CLI.hpp>

#include "experiments/cli_common.h"
#include "experiments/cli_exit.h"

int main(int argc, char** argv) {
  CLI::App app{"mesh CLI test driver", "elastobench"};
  app.require_subcommand(1);
  eb::cli::add_mesh_command(app);
  return eb::cli::parse_and_run(app, argc, argv);
}
