#include "experiments/dick2011/mg_shapes.h"

#include <Eigen/SparseCholesky>
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>

#include "meshes/errors.h"
#include "solvers/common/timers.h"
#include "solvers/hexmg/hexmg_simulation.h"

namespace eb::dick2011 {
namespace {

mesh::VoxelMesh cells_where(double h, int nx, int ny, int nz, const std::function<bool(int, int, int)>& inside) {
  mesh::VoxelMesh v;
  v.spacing = h;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
        if (inside(x, y, z)) v.cells.push_back({x, y, z});
  return v;
}

}  // namespace

std::vector<MgShape> mg_shapes(double h) {
  std::vector<MgShape> s;
  s.push_back({"cube", "solid cube, 16 voxels per edge", cells_where(h, 16, 16, 16, [](int, int, int) { return true; })});
  s.push_back({"sphere", "solid ball, radius 12 voxels", cells_where(h, 24, 24, 24, [](int x, int y, int z) {
                 const double dx = x + 0.5 - 12, dy = y + 0.5 - 12, dz = z + 0.5 - 12;
                 return dx * dx + dy * dy + dz * dz <= 144.0;
               })});
  s.push_back({"l_shape", "L-shaped prism, legs 16 x 8 voxels, 8 thick (16 tall)",
               cells_where(h, 16, 16, 16, [](int x, int y, int) { return x < 8 || y < 8; })});
  for (int t : {1, 2, 4, 8})
    s.push_back({"plate_" + std::to_string(t), "upright plate " + std::to_string(t) + " voxel(s) thick, 32 wide, 32 tall",
                 cells_where(h, t, 32, 32, [](int, int, int) { return true; })});
  s.push_back({"blocks_bar", "two 8^3 blocks, the upper one held only by a 1 x 1 x 4-voxel bar",
               cells_where(h, 8, 8, 20, [](int x, int y, int z) { return z < 8 || z >= 12 || (x == 3 && y == 3); })});
  return s;
}

std::vector<std::string> mg_shape_overrides(const std::string& mesh_file) {
  return {"mesh.source=file", "mesh.file=" + mesh_file, "boundary.gravity=[-0.0981,0,0]",
          R"(boundary.fixed.0.where={"kind":"plane","point":[0,0,0],"normal":[0,0,1]})", "output.probes=[]"};
}

std::vector<FactorVariant> factor_variants() {
  hexmg::AlgebraicOptions v;
  v.prolongation_smoothing = 1;
  v.block_jacobi = true;
  hexmg::AlgebraicOptions p = v;
  p.pre_smooth = p.post_smooth = 2;
  p.symmetric = true;
  return {{"smoothed_p", v, false}, {"smoothed_p_pcg", p, true}};
}

std::string to_string(FactorReference r) { return r == FactorReference::Direct ? "direct" : "mg_pcg"; }

namespace {

// Whether two option sets build the same levels (they may differ in the cycle only).
bool same_construction(const hexmg::AlgebraicOptions& a, const hexmg::AlgebraicOptions& b) {
  return a.prolongation_smoothing == b.prolongation_smoothing && a.omega_scale == b.omega_scale &&
         a.block_jacobi == b.block_jacobi && a.max_levels == b.max_levels;
}

}  // namespace

FactorStudy measure_factors(const Scenario& scenario, const FactorStudyOptions& opt) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  Stopwatch total;
  FactorStudy st;
  RunOptions ro;
  ro.backend = Backend::Cpu;
  ro.precision = Precision::Fp64;
  ro.threads = opt.threads;
  ro.data_dir = opt.data_dir;
  auto sim = hexmg::make_hexmg(scenario, ro);
  sim->begin_step();
  Eigen::VectorXd bb;
  hexmg::SparseRows Ar;
  std::vector<double> u_start;
  {
    std::vector<hexmg::HexmgSimulation::Triplet> trip;
    std::vector<double> b;
    sim->export_system(trip, b, u_start);
    const Eigen::Index n = Eigen::Index(b.size());
    std::vector<Eigen::Triplet<double>> et;
    et.reserve(trip.size());
    for (const auto& e : trip) et.emplace_back(e.row, e.col, e.value);
    std::vector<hexmg::HexmgSimulation::Triplet>().swap(trip);
    Ar.resize(n, n);
    Ar.setFromTriplets(et.begin(), et.end());
    bb = Eigen::Map<const Eigen::VectorXd>(b.data(), n);
  }
  const Eigen::Index n = bb.size();
  for (double x : u_start)
    if (x != 0) throw std::logic_error("measure_factors: the first step's initial guess is not zero");
  st.elements = sim->model().n_elems();
  FactorReference reference = opt.reference;
  bool cross_check = opt.cross_check && reference == FactorReference::Direct;
  if (opt.direct_max_elements > 0) {
    reference = st.elements <= opt.direct_max_elements ? FactorReference::Direct : FactorReference::MgPcg;
    cross_check = reference == FactorReference::Direct;
  }
  st.reference = reference;
  st.levels = sim->model().n_levels();
  st.system_size = n;
  const double b_norm = bb.norm();
  auto rel_residual = [&](const Eigen::VectorXd& x) { return b_norm > 0 ? (bb - Ar * x).norm() / b_norm : 0.0; };

  // The paper construction's cost figures, from the unsmoothed Galerkin hierarchy (freed at once).
  double paper_oc = 0, paper_work = 0;
  {
    hexmg::AlgebraicOptions po;
    po.prolongation_smoothing = 0;
    const hexmg::AlgebraicHierarchy paper(sim->model(), Ar, po);
    paper_oc = paper.operator_complexity();
    paper_work = paper.work_per_cycle();
  }

  // One smoothed hierarchy serves every variant that builds the same levels, and the MG-PCG
  // reference (the symmetric cycle of the PCG variant).
  const std::vector<FactorVariant> variants = factor_variants();
  const FactorVariant* pcg_variant = nullptr;
  for (const auto& v : variants)
    if (v.pcg) pcg_variant = &v;
  if (!pcg_variant) throw std::logic_error("measure_factors: no MG-PCG variant");
  std::unique_ptr<hexmg::AlgebraicHierarchy> shared;
  auto hierarchy_for = [&](const hexmg::AlgebraicOptions& o) -> hexmg::AlgebraicHierarchy& {
    if (!shared || !same_construction(shared->options(), o)) {
      shared.reset();
      shared = std::make_unique<hexmg::AlgebraicHierarchy>(sim->model(), Ar, o);
    }
    shared->set_cycle(o.pre_smooth, o.post_smooth, o.symmetric);
    return *shared;
  };

  // References.
  Stopwatch ref_clock;
  Eigen::VectorXd x, x_check;
  if (reference == FactorReference::Direct) {
    const Eigen::SparseMatrix<double> A = Ar;
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(A);
    if (ldlt.info() != Eigen::Success) throw RuntimeFailure("measure_factors: the direct solve failed");
    x = ldlt.solve(bb);
    // One step of iterative refinement: the plain solve is off by ~1e-13 of ||x||_A on the
    // shapes, which the last rows' energy errors (~1e-12) would see; refined, it agrees with the
    // MG-PCG reference to ~3e-14.
    x += ldlt.solve(bb - Ar * x);
  }
  if (reference == FactorReference::MgPcg || cross_check) {
    Eigen::VectorXd y = Eigen::VectorXd::Zero(n);
    st.pcg_iterations = hexmg::mg_pcg(hierarchy_for(pcg_variant->options), Ar, bb, y, opt.pcg_max_iterations,
                                      opt.pcg_tolerance, [](int, const Eigen::VectorXd&) { return true; });
    st.pcg_residual = rel_residual(y);
    // Far above the fp64 floor (a few 1e-13), the reference would limit the energy factors.
    if (!(st.pcg_residual <= 100 * opt.energy_floor))
      throw RuntimeFailure("measure_factors: the MG-PCG reference reached only |b - Ax|/|b| = " + std::to_string(st.pcg_residual) +
                           " in " + std::to_string(st.pcg_iterations) + " iterations");
    if (reference == FactorReference::MgPcg) x = std::move(y);
    else x_check = std::move(y);
  }
  st.reference_residual = rel_residual(x);
  st.reference_seconds = ref_clock.elapsed_ms() / 1000.0;
  auto energy_vs = [&](const Eigen::VectorXd& ref, const Eigen::VectorXd& u) {
    const Eigen::VectorXd e = u - ref;
    return std::sqrt(std::max(0.0, e.dot(Ar * e)));
  };
  const bool check = x_check.size() == n;

  // One construction's iterations: `iterate(record)` calls record(k, u_k) after iteration k, which
  // returns whether to go on.
  auto run = [&](const std::string& name, double oc, double work, auto&& iterate) {
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
    const double e0 = energy_vs(x, zero), c0 = check ? energy_vs(x_check, zero) : 0.0;
    double e = e0, c = c0, r = b_norm;
    iterate([&](int k, const Eigen::VectorXd& u) {
      FactorRow row;
      row.variant = name;
      row.iteration = k;
      const double en = energy_vs(x, u), rn = (bb - Ar * u).norm();
      row.residual_factor = r > 0 ? rn / r : 0.0;
      row.energy_error = e0 > 0 ? en / e0 : 0.0;
      row.relative_residual = b_norm > 0 ? rn / b_norm : 0.0;
      const bool measurable = en > opt.energy_floor * e0;
      row.energy_factor = !measurable ? kNaN : e > 0 ? en / e : 0.0;
      if (check) {
        const double cn = energy_vs(x_check, u);
        if (measurable) {
          row.energy_factor_check = c > 0 ? cn / c : 0.0;
          st.max_check_difference = std::max(st.max_check_difference, std::abs(row.energy_factor - row.energy_factor_check));
        }
        c = cn;
      }
      row.operator_complexity = oc;
      row.work_per_cycle = work;
      st.rows.push_back(row);
      e = en;
      r = rn;
      return k < opt.max_iterations && rn > opt.residual_stop * b_norm;
    });
  };

  // The paper's V-cycle: the simulation itself (its increment, read as u_k).
  run("paper", paper_oc, paper_work, [&](auto&& record) {
    const std::vector<double> base = sim->slot_displacement();  // u_old + the zero initial increment
    for (int k = 1;; ++k) {
      sim->vcycle();
      const std::vector<double> s = sim->slot_displacement();
      Eigen::VectorXd u(n);
      for (Eigen::Index i = 0; i < n; ++i) u[i] = s[size_t(i)] - base[size_t(i)];
      if (!record(k, u)) break;
    }
  });
  for (const FactorVariant& v : variants) {
    const hexmg::AlgebraicHierarchy& h = hierarchy_for(v.options);
    // A CG iteration reads A_0 once more than the V-cycle it applies.
    const double work = h.work_per_cycle() + (v.pcg ? 1.0 : 0.0);
    run(v.name, h.operator_complexity(), work, [&](auto&& record) {
      Eigen::VectorXd u = Eigen::VectorXd::Zero(n);
      if (v.pcg) {
        hexmg::mg_pcg(h, Ar, bb, u, opt.max_iterations, 0.0, record);
      } else {
        for (int k = 1;; ++k) {
          h.vcycle(bb, u);
          if (!record(k, u)) break;
        }
      }
    });
  }
  st.seconds = total.elapsed_ms() / 1000.0;
  return st;
}

}  // namespace eb::dick2011
