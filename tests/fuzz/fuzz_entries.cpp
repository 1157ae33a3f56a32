#include "tests/fuzz/fuzz_entries.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <utility>
#include <unistd.h>

#include "meshes/errors.h"
#include "meshes/mesh_info.h"
#include "meshes/mesh_io.h"
#include "solvers/common/results.h"
#include "solvers/common/scenario.h"

namespace eb::fuzz {
namespace {

std::string as_text(const uint8_t* data, size_t size) { return std::string(reinterpret_cast<const char*>(data), size); }

// `mesh info` reads without the element check and summarizes whatever is there (degenerate and
// inverted elements included); a simulation reads with it. Both paths are fuzzed.
void read_mesh(const std::string& file_name, const std::string& text) {
  mesh::ReadOptions unchecked;
  unchecked.check_elements = false;
  const mesh::MeshFile raw = mesh::read_mesh_text(file_name, text, unchecked);
  (void)mesh::to_text(mesh::compute_mesh_info(raw));
  const mesh::MeshFile m = mesh::read_mesh_text(file_name, text);
  if (!m.tets.empty()) (void)mesh::to_tet_mesh(m, file_name);
  if (!m.hexes.empty()) (void)mesh::to_hex_mesh(m, file_name);
  if (!m.tris.empty()) (void)mesh::to_surface(m, file_name);
}

void read_scenario(const std::string& text, const std::string& format) {
  const nlohmann::json doc = parse_scenario_text(text, format, "fuzz." + format);
  const Scenario s = scenario_from_json(doc, "fuzz." + format);
  // What `scenario show` prints must read back.
  (void)scenario_from_json(parse_scenario_text(scenario_to_toml(s), "toml", "round trip"), "round trip");
}

// One `--set` assignment per line, applied to the built-in cantilever as `run --set` does.
void apply_overrides(const std::string& text) {
  const auto* builtin = find_builtin_scenario("cantilever");
  if (!builtin) throw std::logic_error("the built-in cantilever scenario is missing");
  nlohmann::json doc = parse_scenario_text(builtin->toml, "toml", "cantilever");
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    apply_override(doc, text.substr(start, end - start));
    start = end + 1;
  }
  (void)scenario_from_json(doc, "cantilever with --set overrides");
}

// TetGen's mesh is two files; the input holds both, the .node part first, split at the
// first line "---". They go through files of this process's own, as the format needs paths.
void read_tetgen(const std::string& text) {
  const size_t split = text.find("\n---\n");
  const std::string node = text.substr(0, split), ele = split == std::string::npos ? "" : text.substr(split + 5);
  static const std::filesystem::path base =
      std::filesystem::temp_directory_path() / ("eb_fuzz_tetgen_" + std::to_string(getpid()));
  for (const auto& [ext, part] : {std::pair{".node", &node}, std::pair{".ele", &ele}}) {
    std::ofstream out(base.string() + ext, std::ios::binary | std::ios::trunc);
    out.write(part->data(), std::streamsize(part->size()));
  }
  mesh::ReadOptions unchecked;
  unchecked.check_elements = false;
  (void)mesh::compute_mesh_info(mesh::read_mesh_file(base.string() + ".node", unchecked));
  (void)mesh::read_mesh_file(base.string() + ".ele");
}

// read_json_file reads from a path, so the input goes through a file of this process's own.
void read_results_json(const std::string& text) {
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("eb_fuzz_results_" + std::to_string(getpid()) + ".json");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), std::streamsize(text.size()));
  }
  (void)read_json_file(path);
}

struct Target {
  const char* name;
  const char* file_name;  // the extension picks the mesh reader; empty for the other parsers
};

const Target kTargets[] = {
    {"mesh_off", "fuzz.off"},   {"mesh_obj", "fuzz.obj"},   {"mesh_ply", "fuzz.ply"},
    {"mesh_stl", "fuzz.stl"},   {"mesh_msh", "fuzz.msh"},   {"mesh_medit", "fuzz.mesh"},
    {"mesh_vtk", "fuzz.vtk"},   {"mesh_vtu", "fuzz.vtu"},   {"mesh_vtp", "fuzz.vtp"},
    {"mesh_tetgen", ""},
    {"scenario_toml", ""},      {"scenario_json", ""},      {"scenario_set", ""},
    {"results_json", ""},
};

}  // namespace

const std::vector<std::string>& target_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& t : kTargets) out.push_back(t.name);
    return out;
  }();
  return names;
}

bool run_target(const std::string& name, const uint8_t* data, size_t size) {
  const auto* t = std::find_if(std::begin(kTargets), std::end(kTargets), [&](const Target& x) { return name == x.name; });
  if (t == std::end(kTargets)) throw std::invalid_argument("unknown fuzz target '" + name + "'");
  const std::string text = as_text(data, size);
  try {
    if (*t->file_name) read_mesh(t->file_name, text);
    else if (name == "mesh_tetgen") read_tetgen(text);
    else if (name == "scenario_toml") read_scenario(text, "toml");
    else if (name == "scenario_json") read_scenario(text, "json");
    else if (name == "scenario_set") apply_overrides(text);
    else read_results_json(text);
  } catch (const InputError&) {
    return false;
  }
  return true;
}

}  // namespace eb::fuzz
