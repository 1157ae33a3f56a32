// elastobench: the command-line entry point. Exit codes: 0 success, 1 runtime failure
// (divergence, out of GPU memory, a device error), 2 bad usage or bad input.
#include <CLI/CLI.hpp>

#include "experiments/cli_common.h"
#include "experiments/cli_exit.h"
#include "experiments/experiment.h"

int main(int argc, char** argv) {
  // Experiments register their built-in scenarios; do it before `run`/`scenario` look them up.
  eb::experiments();
  CLI::App app{"ElastoBench: reproducible GPU finite-element elasticity benchmarks", "elastobench"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "elastobench 0.1.0");
  eb::cli::add_list_command(app);
  eb::cli::add_run_command(app);
  eb::cli::add_scenario_command(app);
#if ELASTOBENCH_HAVE_MESH_CLI
  eb::cli::add_mesh_command(app);
#endif
  eb::cli::add_reproduce_command(app);
  eb::cli::add_report_command(app);
  return eb::cli::parse_and_run(app, argc, argv);
}
