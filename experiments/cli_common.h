#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace eb::cli {

// Where analysis/ and paper/ live: $ELASTOBENCH_SOURCE_DIR, else the source tree this binary was
// built from (binaries carried to another machine set the variable).
std::filesystem::path source_dir();
// The Python interpreter for analysis scripts: /usr/bin/python3 (Debian's, with its numpy and
// matplotlib) when present, else python3 on PATH.
std::string python_interpreter();
// Runs a command (argv) and returns its exit status; output goes to this process's streams.
int run_process(const std::vector<std::string>& argv);

void add_run_command(CLI::App& app);
void add_list_command(CLI::App& app);
void add_scenario_command(CLI::App& app);
void add_reproduce_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_mesh_command(CLI::App& app);  // experiments/cli_mesh.cpp

// Builds the report from a results directory: figures, Markdown and (unless !pdf) its PDF under out_dir.
void build_report(const std::filesystem::path& results_dir, const std::filesystem::path& out_dir, bool quiet,
                  bool pdf = true);

}  // namespace eb::cli
