// Subcommands list, run, scenario, reproduce and report.
#include <omp.h>

#include <cctype>
#include <cstddef>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "experiments/cli_common.h"
#include "experiments/experiment.h"
#include "meshes/errors.h"
#include "meshes/mesh_spec.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/registry.h"
#include "solvers/common/results.h"
#include "solvers/common/runner.h"
#include "solvers/common/validity.h"

namespace eb::cli {

namespace {
// Per method: its summary, run modes, options ([section] key = default), optional scenario
// features, then one line per variant with its backends x precisions.
void print_methods(const nlohmann::json& info) {
  std::cout << "Methods (method, variants x backend precision; * the default variant):\n";
  if (info.empty()) std::cout << "  (none compiled in)\n";
  for (auto m = info.begin(); m != info.end(); ++m) {
    const auto& d = m.value();
    std::cout << "  " << m.key() << " - " << d["summary"].get<std::string>() << "\n    modes:";
    for (const auto& x : d["modes"]) std::cout << " " << x.get<std::string>();
    std::cout << "; options [" << m.key() << "]:";
    if (d["options"].empty()) std::cout << " none";
    for (auto o = d["options"].begin(); o != d["options"].end(); ++o) std::cout << " " << o.key() << "=" << o.value().dump();
    if (!d["features"].empty()) {
      std::cout << "; scenario features:";
      for (const auto& f : d["features"]) std::cout << " " << f.get<std::string>();
    }
    std::cout << "\n";
    for (const auto& v : d["variants"]) {
      std::string impl;
      for (const auto& i : v["implementations"]) impl += (impl.empty() ? "" : ", ") + i.get<std::string>();
      std::cout << "    " << v["name"].get<std::string>() << (v["default"].get<bool>() ? "*" : "") << ": " << impl
                << " - " << v["summary"].get<std::string>() << "\n";
    }
  }
}
}  // namespace

void add_list_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List the methods x variants x backends x precisions compiled in and the CUDA device");
  auto json_flag = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json_flag, "Machine-readable output");
  cmd->callback([json_flag] {
    const GpuInfo gpu = cuda_device_info(0);
    nlohmann::json j;
    j["methods"] = nlohmann::json::array();
    for (const auto& e : methods().entries()) {
      const MethodInfo& m = methods().info(e.method);
      j["methods"].push_back({{"method", e.method}, {"variant", e.variant},
                              {"default_variant", e.variant == m.variants.front().name},
                              {"backend", to_string(e.backend)}, {"precision", to_string(e.precision)},
                              {"summary", m.summary}});
    }
    j["method_info"] = methods().describe();
    j["cuda"] = {{"compiled", cuda_compiled()}, {"device_count", cuda_device_count()}, {"usable", gpu.usable}};
    if (gpu.usable)
      j["cuda"]["device"] = {{"name", gpu.name},
                             {"compute_capability", std::to_string(gpu.compute_major) + "." + std::to_string(gpu.compute_minor)},
                             {"memory_bytes", gpu.total_memory}};
    else
      j["cuda"]["reason"] = gpu.reason;
    j["experiments"] = nlohmann::json::array();
    for (const auto& e : experiments().entries())
    {
      nlohmann::json options = nlohmann::json::object();
      for (const auto& o : e.options) options[o.key] = o.help;
      j["experiments"].push_back({{"name", e.name}, {"title", e.title}, {"parts", e.parts}, {"options", options}});
    }
    j["scenarios"] = nlohmann::json::array();
    for (const auto& s : builtin_scenarios()) j["scenarios"].push_back(s.name);
    j["build"] = build_json();
    if (*json_flag) {
      std::cout << j.dump(2) << "\n";
      return;
    }
    print_methods(j["method_info"]);
    std::cout << "CUDA: " << (cuda_compiled() ? "compiled in" : "not compiled in") << "; ";
    if (gpu.usable)
      std::cout << "device 0: " << gpu.name << " (sm_" << gpu.compute_major << gpu.compute_minor << ", "
                << gpu.total_memory / (1 << 20) << " MiB)\n";
    else
      std::cout << "not usable: " << gpu.reason << "\n";
    std::cout << "Experiments:";
    for (const auto& e : experiments().entries()) {
      std::cout << " " << e.name;
      if (!e.parts.empty()) {
        std::cout << " (parts:";
        for (const auto& p : e.parts) std::cout << " " << p;
        std::cout << ")";
      }
      if (!e.options.empty()) {
        std::cout << " (options:";
        for (const auto& o : e.options) std::cout << " " << o.key;
        std::cout << ")";
      }
    }
    std::cout << "\nScenarios:";
    for (const auto& s : builtin_scenarios()) std::cout << " " << s.name;
    std::cout << "\n";
  });
}

namespace {
struct RunArgs {
  std::string method, variant, backend = "cpu", precision = "fp64", scenario, out;
  std::vector<std::string> sets;
  int threads = 0, steps = -1, vtk_every = -1, device = 0, warmup = -1;
  std::string data_dir, gpu_memory_limit;
  bool quiet = false, allow_invalid = false;
};

// A count given on the command line that is out of its range is an input error naming the flag
// (the RunArgs defaults are "not given" sentinels that a user could otherwise type by accident).
void check_count(const CLI::Option* opt, int value, int min, const char* meaning) {
  if (opt->count() > 0 && value < min)
    throw InputError(opt->get_name() + " must be >= " + std::to_string(min) + " (" + meaning + "), got " +
                     std::to_string(value));
}

// A size in bytes as typed on the command line: a number (a fraction allowed) and an optional
// unit, case ignored: B; K, M, G, T (powers of 1000, with or without B, as the GB of the
// messages); KiB, MiB, GiB, TiB (powers of 1024). Anything else is an input error naming the flag.
std::size_t parse_byte_size(const std::string& text, const std::string& flag) {
  auto bad = [&](const std::string& why) {
    return InputError(flag + " must be a size in bytes such as 1500000000, 512M, 2G or 1.5GiB (" + why + "), got '" +
                      text + "'");
  };
  std::size_t digits = 0, points = 0, i = 0;
  for (; i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'); ++i)
    (text[i] == '.' ? points : digits) += 1;
  if (digits == 0 || points > 1) throw bad("not a number");
  std::string unit = text.substr(i);
  for (char& c : unit) c = char(std::tolower(static_cast<unsigned char>(c)));
  constexpr double Ki = 1024.0;
  static const std::map<std::string, double> scale = {
      {"", 1.0},     {"b", 1.0},     {"k", 1e3},           {"kb", 1e3},           {"m", 1e6},
      {"mb", 1e6},   {"g", 1e9},     {"gb", 1e9},          {"t", 1e12},           {"tb", 1e12},
      {"ki", Ki},    {"kib", Ki},    {"mi", Ki * Ki},      {"mib", Ki * Ki},      {"gi", Ki * Ki * Ki},
      {"gib", Ki * Ki * Ki},         {"ti", Ki * Ki * Ki * Ki},                   {"tib", Ki * Ki * Ki * Ki}};
  const auto it = scale.find(unit);
  if (it == scale.end()) throw bad("unknown unit '" + text.substr(i) + "'");
  const double bytes = std::stod(text.substr(0, i)) * it->second;
  if (!(bytes >= 1.0)) throw bad("at least 1 byte");
  if (!(bytes < 9e18)) throw bad("too large");
  return std::size_t(bytes);
}
}  // namespace

void add_run_command(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  auto* cmd = app.add_subcommand("run", "Run one scenario with one method, backend and precision");
  cmd->add_option("--method,-m", a->method, "Method name (see `elastobench list`)")->required();
  cmd->add_option("--variant", a->variant, "Variant of the method (default: the scenario's solver.variant, else the method's default)");
  cmd->add_option("--backend,-b", a->backend, "cpu or cuda")->capture_default_str();
  cmd->add_option("--precision,-p", a->precision, "fp32 or fp64")->capture_default_str();
  auto* threads = cmd->add_option("--threads,-t", a->threads, "CPU threads (0 = all; 1 = the papers' one core)")
                      ->capture_default_str();
  auto* device = cmd->add_option("--device", a->device, "CUDA device ordinal")->capture_default_str();
  auto* gpu_limit = cmd->add_option(
      "--gpu-memory-limit", a->gpu_memory_limit,
      "CUDA: the most GPU memory this run may take, e.g. 512M, 2G (powers of 1000) or 1.5GiB (of 1024); on a "
      "shared GPU it leaves room for other jobs. A run whose estimate exceeds it, or the device's free memory, is "
      "refused before allocating (exit 1, naming both)");
  cmd->add_option("--scenario,-s", a->scenario, "Built-in scenario name or a .toml/.json file")->required();
  cmd->add_option("--set", a->sets, "Override a scenario key: KEY=VALUE (repeatable)");
  auto* steps = cmd->add_option("--steps", a->steps, "Run exactly this many steps (> 0; overrides the scenario's stopping rule)");
  auto* vtk_every = cmd->add_option("--vtk-every", a->vtk_every,
                                    "Write every K-th step (and the last) as VTK under OUT/vtk/ (0: none)");
  auto* warmup = cmd->add_option("--warmup", a->warmup, "Steps excluded from timing statistics (default: min(10, steps/10))");
  cmd->add_option("--out,-o", a->out, "Output directory (summary.json, timeseries.csv, vtk/)")->required();
  cmd->add_option("--data-dir", a->data_dir, "Folder with third-party meshes (default: $ELASTOBENCH_DATA or ../shared/data/meshes)");
  cmd->add_flag("--quiet,-q", a->quiet, "No progress line");
  cmd->add_flag("--allow-invalid", a->allow_invalid,
                "Exit 0 from a run that completes in an invalid state (summary.json still says valid: false)");
  cmd->callback([=] {
    check_count(steps, a->steps, 1, "a step count");
    check_count(threads, a->threads, 0, "0 = all");
    check_count(vtk_every, a->vtk_every, 0, "0 = no VTK");
    check_count(warmup, a->warmup, 0, "a step count");
    check_count(device, a->device, 0, "a device ordinal");
    RunRequest req;
    req.method = a->method;
    req.variant = a->variant;
    req.options.backend = parse_backend(a->backend);
    req.options.precision = parse_precision(a->precision);
    req.options.threads = a->threads;
    req.options.device = a->device;
    if (gpu_limit->count() > 0) req.options.gpu_memory_limit = parse_byte_size(a->gpu_memory_limit, "--gpu-memory-limit");
    req.options.data_dir = a->data_dir.empty() ? mesh::default_data_dir() : std::filesystem::path(a->data_dir);
    // Check the method (and a variant given here) before the scenario so that a wrong name is
    // reported first; the runner resolves the rest with the scenario (MethodRegistry::resolve).
    if (req.variant.empty())
      methods().info(req.method);
    else
      methods().find(req.method, req.variant, req.options.backend, req.options.precision);
    req.scenario = load_scenario(a->scenario, a->sets);
    req.scenario_origin = a->scenario;
    req.out_dir = a->out;
    req.steps = a->steps;
    req.vtk_every = a->vtk_every;
    req.warmup_steps = a->warmup;
    req.quiet = a->quiet;
    const auto s = run_simulation(req);
    std::string why;
    if (!run_is_valid(s, &why)) {
      // A run that diverged has no final state to accept; one that completed invalid may be
      // accepted on request (e.g. to study the failure), and says so in its summary either way.
      const bool diverged = s["time"]["stopped_by"] == "non-finite state";
      if (diverged || !a->allow_invalid)
        throw RuntimeFailure(a->method + " " + a->backend + " " + a->precision + ": " +
                             (diverged ? "diverged at step " + s["time"]["steps"].dump() + ", " : std::string()) + why + "; " +
                             a->out + "/summary.json records it (validity)" +
                             (diverged ? "" : "; --allow-invalid accepts an invalid run"));
    }
    if (!a->quiet) {
      std::cerr << a->method << " " << s["variant"].get<std::string>() << " " << a->backend << " " << a->precision << ": ";
      if (s["time"]["mode"] == "static")
        std::cerr << s["time"]["steps"] << " load steps, " << s["timing"]["solve_ms"].get<double>() << " ms solving";
      else
        std::cerr << s["time"]["steps"] << " steps, " << s["timing"]["steps_per_second"].get<double>() << " steps/s";
      std::cerr << "; results in " << a->out << "/summary.json\n";
    }
  });
}

void add_scenario_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("scenario", "Built-in scenarios: list them, print one as a file to start from, check a file");
  cmd->require_subcommand(1);
  cmd->add_subcommand("list", "List the built-in scenarios")->callback([] {
    for (const auto& s : builtin_scenarios()) std::cout << s.name << "\t" << s.summary << "\n";
  });
  auto name = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("toml");
  auto sets = std::make_shared<std::vector<std::string>>();
  auto* show = cmd->add_subcommand("show", "Print a scenario (built-in or file) with every key, after overrides");
  show->add_option("NAME", *name, "Built-in name or file")->required();
  show->add_option("--format", *format, "toml or json")->check(CLI::IsMember({"toml", "json"}))->capture_default_str();
  show->add_option("--set", *sets, "Override a key: KEY=VALUE");
  show->callback([name, format, sets] {
    const Scenario s = load_scenario(*name, *sets);
    methods().check_sections(s);
    if (*format == "json")
      std::cout << scenario_to_json(s).dump(2) << "\n";
    else
      std::cout << scenario_to_toml(s);
  });
  auto check_name = std::make_shared<std::string>();
  auto* check = cmd->add_subcommand("check", "Validate a scenario file; exit 2 naming the first bad key");
  check->add_option("FILE", *check_name, "Scenario file or built-in name")->required();
  check->callback([check_name] {
    methods().check_sections(load_scenario(*check_name, {}));
    std::cout << *check_name << ": ok\n";
  });
}

namespace {
// The manifest of one experiment folder. A run of all parts replaces it; a run of some parts
// (--parts) keeps the earlier manifest's top level (the run that made the other files) and
// records, per part, the machine and build that made that part's files, so a folder that
// combines a GPU machine's timings with CPU-only parts run elsewhere says which is which.
nlohmann::json experiment_manifest(const ExperimentContext& ctx, const Experiment& e, const nlohmann::json& run) {
  nlohmann::json out = run;
  const std::filesystem::path path = ctx.out_dir / "manifest.json";
  if (!ctx.parts.empty() && std::filesystem::exists(path)) {
    const nlohmann::json old = read_json_file(path);
    if (old.is_object() && old.contains("machine")) {
      out = old;
      out["experiments"] = run["experiments"];
    }
  }
  if (!out.contains("parts") || !out["parts"].is_object()) out["parts"] = nlohmann::json::object();
  const nlohmann::json who = {{"machine", run["machine"]}, {"build", run["build"]}, {"quick", run["quick"]}};
  for (const auto& p : e.parts)
    if (ctx.wants(p)) out["parts"][p] = who;
  return out;
}
}  // namespace

void add_reproduce_command(CLI::App& app) {
  auto name = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>("out");
  auto quick = std::make_shared<bool>(false);
  auto full = std::make_shared<bool>(false);
  auto no_report = std::make_shared<bool>(false);
  auto no_pdf = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  auto data_dir = std::make_shared<std::string>();
  auto parts = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand("reproduce", "Regenerate a paper's tables and figures (or all of them)");
  cmd->add_option("EXPERIMENT", *name, "Experiment name or `all` (see `elastobench list`)")->required();
  cmd->add_option("--out,-o", *out, "Output directory: OUT/<experiment>/ data, OUT/report/ figures and report")->capture_default_str();
  auto* quick_flag = cmd->add_flag("--quick", *quick,
                                   "Reduced sizes on the CPU, a few minutes in all (the default of `reproduce all` "
                                   "without a usable GPU)");
  cmd->add_flag("--full", *full,
                "The papers' sizes (the default for one experiment, and for `all` with a usable GPU); on the CPU "
                "alone `all --full` takes hours")
      ->excludes(quick_flag);
  cmd->add_flag("--no-report", *no_report, "Only write the data, skip figures and the report");
  cmd->add_flag("--no-pdf", *no_pdf, "Write the report without its PDF (which needs pandoc and LaTeX)");
  cmd->add_option("--data-dir", *data_dir, "Folder with third-party meshes");
  cmd->add_flag("--quiet,-q", *quiet, "No progress output");
  cmd->add_option("--parts", *parts,
                  "Only these parts of one experiment (comma-separated; `elastobench list` names them); the "
                  "experiment's other files in OUT are kept")
      ->delimiter(',');
  auto options = std::make_shared<std::vector<std::string>>();
  std::string option_help = "An option of one experiment, KEY=VALUE (repeatable):";
  for (const auto& e : experiments().entries())
    for (const auto& o : e.options) option_help += "\n  " + e.name + ": " + o.key + " - " + o.help;
  cmd->add_option("--option", *options, option_help);
  cmd->callback([=] {
    std::vector<const Experiment*> todo;
    // `reproduce all` is the one-command path of the README: quick where only the CPU can run it
    // (the full sizes take hours there), full beside a GPU. One experiment keeps full as its
    // default, as the device scripts and the CPU head-to-head runs expect.
    if (*name == "all" && !*quick && !*full && !cuda_device_info(0).usable) {
      *quick = true;
      if (!*quiet) std::cerr << "reproduce all: no usable CUDA device: quick sizes (--full for the papers' sizes)\n";
    }
    if (*name == "all") {
      for (const auto& e : experiments().entries()) todo.push_back(&e);
      if (todo.empty()) throw InputError("no experiments are compiled into this build");
    } else {
      todo.push_back(&experiments().find(*name));
    }
    if (!parts->empty()) {
      if (todo.size() != 1) throw InputError("--parts: name one experiment, not `all`");
      const Experiment& e = *todo.front();
      std::string known;
      for (const auto& p : e.parts) known += (known.empty() ? "" : ", ") + p;
      if (e.parts.empty()) throw InputError("--parts: experiment '" + e.name + "' has no parts; it runs only as a whole");
      for (const auto& p : *parts)
        if (std::find(e.parts.begin(), e.parts.end(), p) == e.parts.end())
          throw InputError("--parts: experiment '" + e.name + "' has no part '" + p + "' (parts: " + known + ")");
    }
    std::map<std::string, std::string> experiment_options;
    if (!options->empty()) {
      if (todo.size() != 1) throw InputError("--option: name one experiment, not `all`");
      const Experiment& e = *todo.front();
      std::string known;
      for (const auto& o : e.options) known += (known.empty() ? "" : ", ") + o.key;
      for (const auto& kv : *options) {
        const auto eq = kv.find('=');
        const std::string key = kv.substr(0, eq);
        if (eq == std::string::npos || key.empty())
          throw InputError("--option: '" + kv + "' is not KEY=VALUE");
        const auto declared =
            std::find_if(e.options.begin(), e.options.end(), [&](const ExperimentOption& o) { return o.key == key; });
        if (declared == e.options.end())
          throw InputError("--option: experiment '" + e.name + "' has no option '" + key + "'" +
                           (known.empty() ? std::string(" (it has none)") : " (options: " + known + ")"));
        if (declared->check) declared->check(kv.substr(eq + 1));
        if (!experiment_options.emplace(key, kv.substr(eq + 1)).second)
          throw InputError("--option: '" + key + "' given twice");
      }
    }
    const std::filesystem::path out_dir(*out);
    // manifest.json is written when an experiment has finished: a whole rerun into an earlier
    // run's folder removes the earlier manifests first, so that a run killed on the way leaves no
    // manifest vouching for data it only partly replaced. (A --parts run keeps them: they hold the
    // other parts' provenance.)
    if (parts->empty()) {
      std::error_code ec;
      std::filesystem::remove(out_dir / "manifest.json", ec);
      for (const Experiment* e : todo) std::filesystem::remove(out_dir / e->name / "manifest.json", ec);
    }
    nlohmann::json manifest = {{"machine", machine_info(0)}, {"build", build_json()}, {"quick", *quick},
                               {"experiments", nlohmann::json::array()}};
    for (const Experiment* e : todo) {
      ExperimentContext ctx;
      ctx.out_dir = out_dir / e->name;
      ctx.quick = *quick;
      ctx.cuda_available = cuda_device_info(0).usable;
      ctx.max_threads = omp_get_num_procs();
      ctx.data_dir = data_dir->empty() ? mesh::default_data_dir() : std::filesystem::path(*data_dir);
      ctx.quiet = *quiet;
      ctx.parts = *parts;
      ctx.options = experiment_options;
      std::filesystem::create_directories(ctx.out_dir);
      if (!*quiet) std::cerr << "== reproduce " << e->name << " (" << e->title << ")" << (*quick ? " [quick]" : "") << "\n";
      Stopwatch clock;
      e->run(ctx);
      const nlohmann::json entry = {{"name", e->name}, {"title", e->title}, {"seconds", clock.elapsed_ms() / 1000.0}};
      manifest["experiments"].push_back(entry);
      // The experiment's own provenance travels with its folder: a results directory may later
      // combine experiments from different runs (the report shows each one's).
      nlohmann::json own = manifest;
      own["experiments"] = nlohmann::json::array({entry});
      write_json_atomic(ctx.out_dir / "manifest.json", experiment_manifest(ctx, *e, own));
    }
    // A run of some parts adds to a folder made by an earlier run, whose top-level manifest it
    // leaves alone (the experiment's own manifest.json records the parts' provenance).
    if (parts->empty() || !std::filesystem::exists(out_dir / "manifest.json"))
      write_json_atomic(out_dir / "manifest.json", manifest);
    if (!*no_report) build_report(out_dir, out_dir / "report", *quiet, !*no_pdf);
  });
}

void add_report_command(CLI::App& app) {
  auto results = std::make_shared<std::string>("out");
  auto out = std::make_shared<std::string>();
  auto quiet = std::make_shared<bool>(false);
  auto no_pdf = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("report", "Draw the figures and write the report from a results directory");
  cmd->add_option("--results,-r", *results, "Directory written by `reproduce` (one folder per experiment)")->capture_default_str();
  cmd->add_option("--out,-o", *out, "Where figures, report.md and report.pdf go (default: RESULTS/report)");
  cmd->add_flag("--quiet,-q", *quiet, "Less output");
  cmd->add_flag("--no-pdf", *no_pdf, "Skip report.pdf (pandoc with lualatex: scripts/install_deps.sh installs them)");
  cmd->callback([=] {
    const std::filesystem::path r(*results);
    build_report(r, out->empty() ? r / "report" : std::filesystem::path(*out), *quiet, !*no_pdf);
  });
}

}  // namespace eb::cli
