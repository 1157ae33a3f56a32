// `elastobench mesh ...`: generate, voxelize, tetrahedralize, convert and inspect meshes.
// Bad input throws eb::InputError (exit 2 in main); every output is written atomically, so a
// failing command leaves no output file behind.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "experiments/cli_common.h"
#include "meshes/box.h"
#include "meshes/errors.h"
#include "meshes/gmsh_tet.h"
#include "meshes/mesh_info.h"
#include "meshes/mesh_io.h"
#include "meshes/mesh_spec.h"
#include "meshes/sphere.h"
#include "meshes/voxelize.h"

namespace eb::cli {
namespace {

struct MeshArgs {
  std::string data_dir;
  // generate
  std::string type = "hex";
  std::vector<double> size{1.0, 1.0, 1.0}, origin{0.0, 0.0, 0.0};
  int elements_per_edge = 0;
  std::vector<int> divisions;
  int tets_per_cube = 6;
  int refinement = 0;
  // voxelize / tetrahedralize
  std::string input, output;
  int resolution = 0;
  long long target_elements = 0;
  double spacing = 0.0, tet_size = 0.0, scale = 1.0;
  bool tets = false, keep_surface = false;
  // output
  bool no_compress = false;
  int msh_version = 4;
  bool json = false, no_check = false;
};

std::filesystem::path input_path(const MeshArgs& a) {
  const auto dir = a.data_dir.empty() ? mesh::default_data_dir() : std::filesystem::path(a.data_dir);
  return mesh::resolve_data_file(a.input, dir);
}

mesh::WriteOptions write_options(const MeshArgs& a) {
  mesh::WriteOptions o;
  o.compress = !a.no_compress;
  o.msh_version = a.msh_version == 2 ? mesh::MshVersion::V2 : mesh::MshVersion::V4;
  return o;
}

void check_output(const MeshArgs& a) {
  if (!mesh::is_supported_extension(a.output))
    throw InputError("output " + a.output + ": unknown format (supported: " + mesh::supported_extensions() + ")");
}

void report(const std::string& out, const mesh::MeshFile& m) {
  std::cout << "wrote " << out << ": " << m.nodes.size() << " nodes";
  if (!m.tets.empty()) std::cout << ", " << m.tets.size() << " tetrahedra";
  if (!m.hexes.empty()) std::cout << ", " << m.hexes.size() << " hexahedra";
  if (!m.tris.empty()) std::cout << ", " << m.tris.size() << " triangles";
  std::cout << "\n";
}

void write_and_report(const MeshArgs& a, const mesh::MeshFile& m) {
  mesh::write_mesh_file(a.output, m, write_options(a));
  report(a.output, m);
}

void add_output_options(CLI::App* cmd, MeshArgs& a) {
  cmd->add_option("-o,--output", a.output, "Output file; format from the extension")->required();
  cmd->add_flag("--no-compress", a.no_compress, ".vtu/.vtp: raw instead of zlib-compressed appended data");
  cmd->add_option("--msh-version", a.msh_version, ".msh output version (2 or 4)")->check(CLI::IsMember({2, 4}));
}

void run_generate(const MeshArgs& a) {
  check_output(a);
  mesh::MeshSpec spec;
  if (a.size.size() != 3 || a.origin.size() != 3) throw InputError("--size and --origin take 3 values");
  spec.size = {a.size[0], a.size[1], a.size[2]};
  spec.origin = {a.origin[0], a.origin[1], a.origin[2]};
  std::array<int, 3> n{};
  if (a.type != "sphere") {
    if (!a.divisions.empty()) {
      if (a.divisions.size() != 3) throw InputError("--divisions takes 3 values NX NY NZ");
      n = {a.divisions[0], a.divisions[1], a.divisions[2]};
    } else {
      spec.elements_per_edge = a.elements_per_edge;
      n = mesh::box_divisions(spec);
    }
  }
  mesh::MeshFile m;
  if (a.type == "hex") {
    m = mesh::to_mesh_file(mesh::make_box_hex(spec.origin, spec.size, n));
  } else if (a.type == "tet") {
    m = mesh::to_mesh_file(mesh::make_box_tet(spec.origin, spec.size, n, a.tets_per_cube));
  } else if (a.type == "sphere") {
    m = mesh::to_mesh_file(mesh::make_sphere_tet(a.refinement));
  } else {
    throw InputError("--type must be hex, tet or sphere, got '" + a.type + "'");
  }
  write_and_report(a, m);
}

void run_voxelize(const MeshArgs& a) {
  check_output(a);
  const int modes = (a.resolution > 0) + (a.target_elements > 0) + (a.spacing > 0);
  if (modes != 1) throw InputError("voxelize needs exactly one of --resolution R, --target-elements N, --spacing H");
  const auto path = input_path(a);
  mesh::TriSurface s = mesh::read_surface(path);
  mesh::transform_nodes(s.nodes, a.scale, {0, 0, 0});
  const std::string name = path.string();
  const mesh::VoxelMesh v = a.resolution > 0        ? mesh::voxelize_resolution(s, a.resolution, name)
                            : a.target_elements > 0 ? mesh::voxelize_target(s, size_t(a.target_elements), name)
                                                    : mesh::voxelize(s, a.spacing, name);
  const mesh::MeshFile m = a.tets ? mesh::to_mesh_file(mesh::voxel_to_tet(v, a.tets_per_cube))
                                  : mesh::to_mesh_file(mesh::voxel_to_hex(v));
  write_and_report(a, m);
  std::cout << "voxel spacing " << v.spacing << "\n";
}

void run_tetrahedralize(const MeshArgs& a) {
  check_output(a);
  const auto path = input_path(a);
  mesh::TriSurface s = mesh::read_surface(path);
  mesh::transform_nodes(s.nodes, a.scale, {0, 0, 0});
  mesh::TetrahedralizeOptions o;
  o.size = a.tet_size;
  o.keep_surface = a.keep_surface;
  write_and_report(a, mesh::to_mesh_file(mesh::tetrahedralize_surface(s, o, path.string())));
}

void run_convert(const MeshArgs& a) {
  check_output(a);
  mesh::ReadOptions r;
  r.check_elements = !a.no_check;
  mesh::MeshFile m = mesh::read_mesh_file(input_path(a), r);
  mesh::transform_nodes(m.nodes, a.scale, {0, 0, 0});
  write_and_report(a, m);
}

void run_info(const MeshArgs& a) {
  mesh::ReadOptions r;
  r.check_elements = false;  // info counts inverted/degenerate elements instead of failing
  const auto path = input_path(a);
  const mesh::MeshInfo info = mesh::compute_mesh_info(mesh::read_mesh_file(path, r));
  if (a.json) {
    auto j = mesh::to_json(info);
    j["file"] = path.string();
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "file:         " << path.string() << "\n" << mesh::to_text(info);
  }
}

}  // namespace

void add_mesh_command(CLI::App& app) {
  auto a = std::make_shared<MeshArgs>();
  CLI::App* mesh_cmd = app.add_subcommand("mesh", "Generate, voxelize, tetrahedralize, convert and inspect meshes");
  mesh_cmd->require_subcommand(1);
  mesh_cmd->add_option("--data-dir", a->data_dir,
                       "Folder with third-party meshes (default: $ELASTOBENCH_DATA or ../shared/data/meshes)");

  CLI::App* gen = mesh_cmd->add_subcommand("generate", "Box of hexahedra/tetrahedra or a Cecka 2011 unit sphere");
  gen->add_option("--type", a->type, "hex, tet or sphere")->check(CLI::IsMember({"hex", "tet", "sphere"}));
  gen->add_option("--size", a->size, "Box extent X Y Z")->expected(3);
  gen->add_option("--origin", a->origin, "Box corner X Y Z")->expected(3);
  auto* epe = gen->add_option("--elements-per-edge", a->elements_per_edge, "Elements along every axis");
  gen->add_option("--divisions", a->divisions, "Elements along x, y, z")->expected(3)->excludes(epe);
  gen->add_option("--tets-per-cube", a->tets_per_cube, "5 or 6")->check(CLI::IsMember({5, 6}));
  gen->add_option("--refinement", a->refinement, "Sphere level 0..3 (Cecka 2011 Table 16.1)")->check(CLI::Range(0, 3));
  add_output_options(gen, *a);
  gen->callback([a] { run_generate(*a); });

  CLI::App* vox = mesh_cmd->add_subcommand("voxelize", "Voxelize a closed surface into hexahedra (or tetrahedra)");
  vox->add_option("surface", a->input, "Closed surface (.obj .off .stl .ply .vtp)")->required();
  vox->add_option("--resolution", a->resolution, "Voxels along the longest bounding-box axis");
  vox->add_option("--target-elements", a->target_elements, "Aim for this many voxels");
  vox->add_option("--spacing", a->spacing, "Voxel edge length");
  vox->add_option("--scale", a->scale, "Scale the surface first (e.g. 0.001 for mm -> m)");
  vox->add_flag("--tets", a->tets, "Split voxels into tetrahedra (Verschoor 2012)");
  vox->add_option("--tets-per-cube", a->tets_per_cube, "With --tets: 6 (equal size) or 5")->check(CLI::IsMember({5, 6}));
  add_output_options(vox, *a);
  vox->callback([a] { run_voxelize(*a); });

  CLI::App* tet = mesh_cmd->add_subcommand("tetrahedralize", "Unstructured tetrahedralization of a closed surface (Gmsh)");
  tet->add_option("surface", a->input, "Closed surface")->required();
  tet->add_option("--size", a->tet_size, "Target edge length")->required();
  tet->add_option("--scale", a->scale, "Scale the surface first");
  tet->add_flag("--keep-surface", a->keep_surface, "Keep the input triangles as the boundary (no surface remeshing)");
  add_output_options(tet, *a);
  tet->callback([a] { run_tetrahedralize(*a); });

  CLI::App* conv = mesh_cmd->add_subcommand("convert", "Convert between mesh formats");
  conv->add_option("input", a->input, "Input mesh")->required();
  conv->add_option("output", a->output, "Output mesh; format from the extension")->required();
  conv->add_option("--scale", a->scale, "Scale coordinates");
  conv->add_flag("--no-check", a->no_check, "Do not reject inverted/zero-volume elements");
  conv->add_flag("--no-compress", a->no_compress, ".vtu/.vtp: raw appended data");
  conv->add_option("--msh-version", a->msh_version, ".msh output version (2 or 4)")->check(CLI::IsMember({2, 4}));
  conv->callback([a] { run_convert(*a); });

  CLI::App* info = mesh_cmd->add_subcommand("info", "Counts, bounding box, volume, quality, valence histogram");
  info->add_option("file", a->input, "Mesh file")->required();
  info->add_flag("--json", a->json, "Machine-readable output");
  info->callback([a] { run_info(*a); });
}

}  // namespace eb::cli
