// `elastobench mesh ...`: generate, voxelize, tetrahedralize, convert and inspect meshes.
// Bad input throws eb::InputError (exit 2 in main); every output is written atomically, so a
// failing command leaves no output file behind. A tetrahedralization whose quality is below the
// threshold throws eb::RuntimeFailure (exit 1) before anything is written.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>

#include "experiments/cli_common.h"
#include "meshes/box.h"
#include "meshes/errors.h"
#include "meshes/geometry.h"
#include "meshes/gmsh_tet.h"
#include "meshes/mesh_info.h"
#include "meshes/mesh_io.h"
#include "meshes/mesh_spec.h"
#include "meshes/reorder.h"
#include "meshes/sphere.h"
#include "meshes/voxel_tets.h"
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
  int merge_levels = -1;  // voxelize --tets: merge interior tetrahedra (voxel_tets.h); -1: no
  int refinement = 0;
  // voxelize / tetrahedralize
  std::string input, output;
  int resolution = 0;
  long long target_elements = 0;
  double spacing = 0.0, tet_size = 0.0, scale = 1.0;
  bool tets = false, keep_surface = false;
  std::vector<std::string> optimizers = mesh::default_tet_optimizers();
  std::vector<double> feature_angles = mesh::TetrahedralizeOptions().feature_angles_deg;
  double remesh_timeout = mesh::TetrahedralizeOptions().remesh_timeout_s;
  int optimizer_iterations = 1;
  double min_dihedral = mesh::kPoorMinDihedralDeg;
  double peel_below = mesh::kPoorMinDihedralDeg;
  bool allow_poor_quality = false;
  // output
  bool no_compress = false;
  int msh_version = 4;
  std::string reorder = "none";
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

// Renumbers the nodes (--reorder) and writes; the bandwidth before and after is printed.
void write_and_report(const MeshArgs& a, mesh::MeshFile m) {
  const mesh::NodeOrdering ordering = mesh::parse_node_ordering(a.reorder);
  std::string reorder_note;
  if (ordering != mesh::NodeOrdering::None) {
    const mesh::NodeGraph g = mesh::node_graph(m);
    const auto order = mesh::node_order(g, ordering);
    const auto before = mesh::ordering_stats(g), after = mesh::ordering_stats(g, order);
    mesh::apply_node_order(m, order);
    std::ostringstream o;
    o << std::setprecision(4) << "nodes renumbered (" << a.reorder << "): bandwidth " << before.bandwidth << " -> "
      << after.bandwidth << ", mean neighbour distance " << before.mean_distance << " -> " << after.mean_distance << "\n";
    reorder_note = o.str();
  }
  mesh::write_mesh_file(a.output, m, write_options(a));
  report(a.output, m);
  std::cout << reorder_note;
}

void add_reorder_option(CLI::App* cmd, MeshArgs& a) {
  cmd->add_option("--reorder", a.reorder,
                  "Renumber nodes for locality: rcm (reverse Cuthill-McKee), metis (nested dissection, where "
                  "compiled in) or none")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "rcm", "metis"}));
}

void add_output_options(CLI::App* cmd, MeshArgs& a) {
  cmd->add_option("-o,--output", a.output, "Output file; format from the extension")->required();
  cmd->add_flag("--no-compress", a.no_compress, ".vtu/.vtp: raw instead of zlib-compressed appended data");
  cmd->add_option("--msh-version", a.msh_version, ".msh output version (2 or 4)")->check(CLI::IsMember({2, 4}));
  add_reorder_option(cmd, a);
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
  if (a.merge_levels >= 0 && (!a.tets || a.tets_per_cube != 6))
    throw InputError("--merge-levels needs --tets with 6 tetrahedra per voxel");
  mesh::VoxelMergeStats merged;
  const mesh::MeshFile m = !a.tets ? mesh::to_mesh_file(mesh::voxel_to_hex(v))
                           : a.merge_levels >= 0
                               ? mesh::to_mesh_file(mesh::voxel_to_tet_merged(v, a.merge_levels, &merged))
                               : mesh::to_mesh_file(mesh::voxel_to_tet(v, a.tets_per_cube));
  write_and_report(a, m);
  std::cout << "voxel spacing " << v.spacing << "\n";
  if (a.merge_levels >= 0) std::cout << mesh::to_text(merged);
}

void run_tetrahedralize(const MeshArgs& a) {
  check_output(a);
  const auto path = input_path(a);
  mesh::TriSurface s = mesh::read_surface(path);
  mesh::transform_nodes(s.nodes, a.scale, {0, 0, 0});
  mesh::TetrahedralizeOptions o;
  o.size = a.tet_size;
  o.keep_surface = a.keep_surface;
  o.optimizers = a.optimizers;
  if (std::find(o.optimizers.begin(), o.optimizers.end(), "none") != o.optimizers.end()) {
    if (o.optimizers.size() > 1) throw InputError("--optimize: 'none' cannot be combined with other passes");
    o.optimizers.clear();
  }
  o.optimizer_iterations = a.optimizer_iterations;
  o.feature_angles_deg = a.feature_angles;
  o.remesh_timeout_s = a.remesh_timeout;
  o.peel_below_deg = a.peel_below;
  mesh::TetrahedralizeReport r;
  const mesh::TetMesh m = mesh::tetrahedralize_surface(s, o, path.string(), &r);
  const mesh::TetQualitySummary q = mesh::summarize_tet_quality(m.nodes, m.elems, a.min_dihedral);
  if (r.surface_remeshed)
    std::cout << "surface remeshed (feature angle " << r.feature_angle_deg << " deg)"
              << (r.remesh_error.empty() ? "" : "; earlier attempts failed: " + r.remesh_error) << "\n";
  else
    std::cout << "input triangles kept as the boundary"
              << (r.remesh_error.empty() ? "" : " (Gmsh could not remesh the surface: " + r.remesh_error + ")") << "\n";
  std::cout << std::setprecision(3) << std::fixed;
  std::cout << "meshed in " << r.mesh_seconds << " s: " << r.generated.tets << " tetrahedra, "
            << mesh::quality_line(r.generated) << "\n";
  for (const auto& p : r.passes)
    std::cout << "optimizer " << p.optimizer << " in " << p.seconds << " s: " << p.after.tets << " tetrahedra, "
              << mesh::quality_line(p.after) << "\n";
  if (o.peel_below_deg > 0)
    std::cout << "boundary slivers removed (below " << o.peel_below_deg << " deg, two or three faces on the surface): "
              << r.peeled.removed << ", volume " << std::scientific << r.peeled.volume_removed << std::fixed << "\n";
  std::cout.unsetf(std::ios::floatfield);
  double volume = 0;
  for (const auto& t : m.elems) {
    const auto x = mesh::gather(m.nodes, t);
    volume += mesh::tet_signed_volume(x[0], x[1], x[2], x[3]);
  }
  const double enclosed = mesh::surface_volume(s);
  std::cout << std::setprecision(6) << "volume " << volume << " (the input surface encloses " << enclosed << ": "
            << std::showpos << std::setprecision(3) << 100.0 * (volume - enclosed) / enclosed << std::noshowpos
            << "%)\n";
  std::cout << std::setprecision(6) << mesh::to_text(q);
  if (q.min_dihedral_deg < a.min_dihedral) {
    std::ostringstream msg;
    msg << path.string() << ": the tetrahedralization has " << q.poor << " tetrahedra with a dihedral angle below "
        << a.min_dihedral << " deg (smallest " << std::setprecision(3) << q.min_dihedral_deg << " deg, element "
        << q.worst_element + 1 << "); such slivers slow CG and shrink explicit time steps";
    if (!a.allow_poor_quality)
      throw RuntimeFailure(msg.str() + ". Nothing was written: try another --size, --optimize passes, or "
                           "--allow-poor-quality to write it anyway");
    std::cerr << "elastobench: warning: " << msg.str() << " (written anyway: --allow-poor-quality)\n";
  }
  write_and_report(a, mesh::to_mesh_file(m));
}

void run_convert(const MeshArgs& a) {
  check_output(a);
  mesh::ReadOptions r;
  r.check_elements = !a.no_check;
  mesh::MeshFile m = mesh::read_mesh_file(input_path(a), r);
  mesh::transform_nodes(m.nodes, a.scale, {0, 0, 0});
  write_and_report(a, std::move(m));
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
  vox->add_option("--merge-levels", a->merge_levels,
                  "With --tets: merge interior tetrahedra into coarse ones of up to 2^L voxels per edge (Verschoor 2012 "
                  "Sec. 5.5; 0: none)")
      ->check(CLI::Range(0, mesh::kMaxMergeLevels));
  add_output_options(vox, *a);
  vox->callback([a] { run_voxelize(*a); });

  CLI::App* tet = mesh_cmd->add_subcommand("tetrahedralize", "Unstructured tetrahedralization of a closed surface (Gmsh)");
  tet->add_option("surface", a->input, "Closed surface")->required();
  tet->add_option("--size", a->tet_size, "Target edge length")->required();
  tet->add_option("--scale", a->scale, "Scale the surface first");
  tet->add_flag("--keep-surface", a->keep_surface, "Keep the input triangles as the boundary (no surface remeshing)");
  tet->add_option("--optimize", a->optimizers,
                  "Gmsh optimizer passes in order, comma-separated: gmsh, netgen, relocate3d, or none")
      ->delimiter(',')
      ->default_str("gmsh")
      ->check(CLI::IsMember({"none", "gmsh", "netgen", "relocate3d"}));
  tet->add_option("--feature-angles", a->feature_angles,
                  "Remeshing: feature angles (deg) tried in turn until Gmsh can reparametrize the surface")
      ->delimiter(',')
      ->default_str("40,60,90")
      ->check(CLI::Range(1.0, 180.0));
  tet->add_option("--remesh-timeout", a->remesh_timeout,
                  "Seconds Gmsh's surface classification may take before that attempt is stopped")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  tet->add_option("--peel-below", a->peel_below,
                  "Remove boundary slivers (two or three faces on the surface) whose min dihedral angle is below this (deg; 0: "
                  "keep them)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 70.0));
  tet->add_option("--optimize-iterations", a->optimizer_iterations, "Iterations of each optimizer pass")
      ->check(CLI::Range(1, 100));
  tet->add_option("--min-dihedral", a->min_dihedral,
                  "Quality threshold (deg): a smaller dihedral angle fails the command (exit 1)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 70.0));
  tet->add_flag("--allow-poor-quality", a->allow_poor_quality,
                "Write the mesh even when a dihedral angle is below --min-dihedral (a warning instead)");
  add_output_options(tet, *a);
  tet->callback([a] { run_tetrahedralize(*a); });

  CLI::App* conv = mesh_cmd->add_subcommand("convert", "Convert between mesh formats");
  conv->add_option("input", a->input, "Input mesh")->required();
  conv->add_option("output", a->output, "Output mesh; format from the extension")->required();
  conv->add_option("--scale", a->scale, "Scale coordinates");
  conv->add_flag("--no-check", a->no_check, "Do not reject inverted/zero-volume elements");
  conv->add_flag("--no-compress", a->no_compress, ".vtu/.vtp: raw appended data");
  conv->add_option("--msh-version", a->msh_version, ".msh output version (2 or 4)")->check(CLI::IsMember({2, 4}));
  add_reorder_option(conv, *a);
  conv->callback([a] { run_convert(*a); });

  CLI::App* info = mesh_cmd->add_subcommand("info", "Counts, bounding box, volume, quality histograms, node bandwidth, valence histogram");
  info->add_option("file", a->input, "Mesh file")->required();
  info->add_flag("--json", a->json, "Machine-readable output");
  info->callback([a] { run_info(*a); });
}

}  // namespace eb::cli
