// elastobench: the command-line entry point. Exit codes: 0 success, 1 runtime failure
// (divergence, out of GPU memory, a device error), 2 bad usage or bad input.
#include <csignal>

#include <CLI/CLI.hpp>

#include "experiments/cli_common.h"
#include "experiments/cli_exit.h"
#include "experiments/experiment.h"
#include "meshes/host_memory.h"
#include "solvers/common/cuda_info.h"

int main(int argc, char** argv) {
  // Past a file-size limit (ulimit -f) the kernel's default for SIGXFSZ kills the process in the
  // middle of a write; ignored, the write fails (EFBIG), the stream reports it, and the atomic
  // writers remove their temporaries and exit 1 naming the file (a full disk behaves the same).
  std::signal(SIGXFSZ, SIG_IGN);
  // A run larger than the host's memory then fails in an allocation, reported with exit 1, instead
  // of being killed without a message by the kernel's out-of-memory killer. Only where no GPU
  // will be used: how the CUDA driver's host mappings count against the data limit has not been
  // checked on the GPU machine, whose hosts hold 128 GB or more.
  if (eb::cuda_device_count() == 0) eb::mesh::limit_host_memory_to_available();
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
