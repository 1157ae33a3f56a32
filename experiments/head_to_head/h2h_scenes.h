#pragma once
// The scenes and method variants of the head-to-head corot part (experiments/head_to_head/
// corot_part.cpp), as tables: a variant compiled out of this build is skipped with a note, so
// variants added later (hexmg smoothed-vcycle / smoothed-pcg, tled hourglass) join by existing.
#include <functional>
#include <string>
#include <vector>

#include "solvers/common/registry.h"

namespace eb::head_to_head {

struct Scene {
  std::string name;      // as in the tables: cantilever, bunny, sofa-beam
  std::string scenario;  // the built-in scenario it starts from (method sections dropped)
  std::string summary;
  bool voxel = false;    // resolution = voxels (mesh.target_elements); else the element edge length (m)
  Vec3 box{0, 0, 0};     // box scenes: the extent divided into cubes
  double settle_time = 1.0;        // T (s): every run goes from rest to T; the error is read at T
  std::vector<double> dt_ladder;   // implicit methods, largest first (each the previous halved)
  std::vector<double> levels;      // element-size levels of the search, coarsest first
  std::vector<double> quick_levels;
  // The reference's finest resolution. The finest level may equal it: the reference is the
  // Richardson extrapolation over (h, 2h, 4h), not the solution at h, so linear tetrahedra at h
  // still carry their discretization error against it (the cantilever's: ~0.5%).
  double reference = 0, quick_reference = 0;
  double throughput_dt = 0;        // implicit methods' dt in the steps/s sweep
  std::function<void(nlohmann::json&)> edit;  // the scene's changes to the scenario document
  // Voxel scenes: the voxel counts of the base voxelizations (full run, --quick). A resolution of
  // base x n^3 voxels is that base with every voxel split into n^3 (mesh.voxel_subdivision), so the
  // levels and the reference share one voxel geometry and Richardson extrapolation applies; any
  // other count (the steps/s sweep's sizes) is voxelized afresh.
  std::vector<double> voxel_bases;
};

// The three scenes (their scenarios registered on first call).
const std::vector<Scene>& corot_scenes();
// The scene's scenario with `overrides` (KEY=VALUE) applied, validated.
Scenario scene_scenario(const Scene& s, const std::vector<std::string>& overrides);
// Scenario overrides that set a scene's mesh to `resolution` (element size or voxels).
std::vector<std::string> mesh_overrides(const Scene& s, double resolution);
// The resolution at which the scene's mesh has about `elements` elements of the given kind
// (tetrahedra: 6 per cube or voxel).
double resolution_for_elements(const Scene& s, double elements, mesh::CellType cell);
// The next coarser resolution (edge doubled, or voxels / 8).
double coarser(const Scene& s, double resolution);

struct VariantSpec {
  std::string method, variant;
  std::string effort_key;                  // the method-section key the search varies ("" none)
  std::vector<std::string> effort_ladder;  // its values, cheapest first, each about double the work
  std::vector<std::string> fixed;          // overrides every run of the variant takes
  bool small_strain_only = false;          // tled and nr-neohookean: other constitutive models
  bool explicit_dt = false;                // dt from the method's stable step; the ladder is time.courant
  std::vector<Backend> backends;           // empty: every backend it registers
  // Linear tetrahedra on the scene's tet mesh, the reference's own element: the reference's
  // static solutions bound its error per level (SearchSpace::level_floor).
  bool reference_element = false;
};

const std::vector<VariantSpec>& corot_variants();
constexpr double kCourantLadder[] = {0.8, 0.4};

// Why a variant cannot run on a backend/precision in this build ("" when it can).
std::string variant_unavailable(const VariantSpec& v, Backend b, Precision p);

}  // namespace eb::head_to_head
