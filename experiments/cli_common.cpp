#include "experiments/cli_common.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "meshes/errors.h"

namespace eb::cli {

std::filesystem::path source_dir() {
  if (const char* env = std::getenv("ELASTOBENCH_SOURCE_DIR"); env && *env) return env;
  return ELASTOBENCH_SOURCE_DIR;
}

std::string python_interpreter() {
  if (std::filesystem::exists("/usr/bin/python3")) return "/usr/bin/python3";
  return "python3";
}

int run_process(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw RuntimeFailure("fork failed while starting " + argv[0]);
  if (pid == 0) {
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) throw RuntimeFailure("waiting for " + argv[0] + " failed");
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

void build_report(const std::filesystem::path& results_dir, const std::filesystem::path& out_dir, bool quiet,
                  bool pdf) {
  const auto script = source_dir() / "analysis" / "make_report.py";
  if (!std::filesystem::exists(script))
    throw InputError("report script not found: " + script.string() + " (set ELASTOBENCH_SOURCE_DIR)");
  if (!std::filesystem::is_directory(results_dir))
    throw InputError("results directory not found: " + results_dir.string());
  std::vector<std::string> argv = {python_interpreter(), script.string(), results_dir.string(), out_dir.string()};
  if (quiet) argv.push_back("--quiet");
  if (!pdf) argv.push_back("--no-pdf");
  const int rc = run_process(argv);
  if (rc == 2) throw InputError("report: " + script.string() + " rejected its input (see above)");
  if (rc != 0) throw RuntimeFailure("report: " + script.string() + " failed with exit status " + std::to_string(rc));
}

}  // namespace eb::cli
