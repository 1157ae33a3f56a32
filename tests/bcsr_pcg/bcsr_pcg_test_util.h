#pragma once
// Shared helpers for the bcsr-pcg tests. Every test source is compiled twice: into test_bcsr_pcg
// with the CPU instances and into test_bcsr_pcg_gpu (EB_BCSR_PCG_TEST_CUDA defined, ctest label
// `gpu`) with the CUDA instances, which skip themselves when no CUDA device is usable.
//
// Models. test_box(): a 12 x 4 x 3 box of 1 cm cubes, 6 tetrahedra each (864 elements, 260
// nodes), clamped at x = 0, on a roller (z only) at z = 0, with gravity, a point force and a
// surface traction on load curves, and damping: every term of the step's system is non-zero.
// single_element(): one tetrahedron read from a .vtu file, node 0 fixed in x and y only.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "assembly/tet/tet4.h"
#include "meshes/mesh_io.h"
#include "solvers/bcsr_pcg/bcsr_pcg_simulation.h"
#include "solvers/common/cuda_info.h"
#include "solvers/common/registry.h"
#include "solvers/common/scenario.h"

namespace eb::bcsr_pcg::test {

struct Regime {
  Backend backend;
  Precision precision;
};

inline std::vector<Regime> regimes() {
#if defined(EB_BCSR_PCG_TEST_CUDA)
  return {{Backend::Cuda, Precision::Fp32}, {Backend::Cuda, Precision::Fp64}};
#else
  return {{Backend::Cpu, Precision::Fp32}, {Backend::Cpu, Precision::Fp64}};
#endif
}
// The fp64 regimes only (static solves: see test_static.cpp for why fp32 is left out).
inline std::vector<Regime> fp64_regimes() {
#if defined(EB_BCSR_PCG_TEST_CUDA)
  return {{Backend::Cuda, Precision::Fp64}};
#else
  return {{Backend::Cpu, Precision::Fp64}};
#endif
}

inline std::string regime_label(const Regime& r) { return to_string(r.backend) + "_" + to_string(r.precision); }
inline std::string regime_name(const ::testing::TestParamInfo<Regime>& info) { return regime_label(info.param); }

// Skips CUDA instances without a device; call first in every test body.
#define EB_BCSR_PCG_SKIP_WITHOUT_DEVICE(regime)                                       \
  do {                                                                                 \
    if ((regime).backend == ::eb::Backend::Cuda && ::eb::cuda_device_count() == 0)     \
      GTEST_SKIP() << "no usable CUDA device: " << ::eb::cuda_device_info(0).reason; \
  } while (0)

// Third-party meshes: EB_MESH_DATA_DIR (../shared/data/meshes), or $ELASTOBENCH_DATA; empty
// when the folder is absent (callers GTEST_SKIP).
inline std::filesystem::path data_dir() {
  std::filesystem::path d = EB_MESH_DATA_DIR;
  if (const char* env = std::getenv("ELASTOBENCH_DATA"); env && *env) d = env;
  return std::filesystem::is_directory(d) ? d : std::filesystem::path();
}

// A scenario from TOML text with `overrides` (key=value) applied, validated.
inline Scenario scenario_from_toml(const std::string& toml, const std::vector<std::string>& overrides = {}) {
  nlohmann::json doc = parse_scenario_text(toml, "toml", "bcsr-pcg test");
  for (const auto& o : overrides) apply_override(doc, o);
  Scenario s = scenario_from_json(doc, "bcsr-pcg test");
  validate_scenario(s);
  return s;
}

// TOML of a solid under gravity: name, the [mesh] lines, [material] (density 1000 kg/m^3) and
// [boundary] with the gravity (a TOML array); the caller appends supports, loads, [time]...
inline std::string solid_toml(const std::string& name, const std::string& mesh_lines, double youngs, double poisson,
                              const std::string& gravity) {
  return "name = \"" + name + "\"\n[mesh]\n" + mesh_lines + "\n[material]\nyoungs_modulus = " + std::to_string(youngs) +
         "\npoisson_ratio = " + std::to_string(poisson) + "\ndensity = 1000.0\n[boundary]\ngravity = " + gravity + "\n";
}
// Every component fixed on the plane x = 0.
inline const char* kClampedAtX0 = R"([[boundary.fixed]]
components = "xyz"
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }
)";
inline std::string time_toml(double dt, double damping) {
  return "[time]\ndt = " + std::to_string(dt) + "\nend_time = 1.0\ndamping = " + std::to_string(damping) + "\n";
}

// The loaded box (header comment). dt = 1 ms (the paper's); the curves are inside (0, 1) over
// the first steps.
inline Scenario test_box(const std::vector<std::string>& overrides = {}) {
  return scenario_from_toml(solid_toml("bcsr-pcg-test-box",
                                       "source = \"box\"\nsize = [0.12, 0.04, 0.03]\nelement_size = 0.01\ntets_per_cube = 6",
                                       1.0e5, 0.35, "[0.0, -9.81, -3.0]") +
                                kClampedAtX0 + R"([[boundary.fixed]]
components = "z"
where = { kind = "plane", point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] }
[[boundary.point_forces]]
position = [0.12, 0.04, 0.03]
force = [0.002, -0.01, 0.005]
curve = { shape = "smooth", start = 0.0, duration = 0.05 }
[[boundary.surface_forces]]
traction = [0.0, 20.0, -8.0]
where = { kind = "plane", point = [0.12, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }
curve = { shape = "linear", start = 0.0, duration = 0.04 }
)" + time_toml(1.0e-3, 2.0),
                            overrides);
}

// A mesh file of tetrahedra, written (atomically) to a fresh temporary folder that is removed
// with the object.
class TempMesh {
 public:
  TempMesh(const std::vector<mesh::Vec3>& nodes, const std::vector<std::array<int32_t, 4>>& tets,
           const std::string& name = "mesh.vtu") {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() /
           ("eb_bcsr_pcg_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            std::to_string(rd()));
    std::filesystem::create_directories(dir_);
    mesh::MeshFile f;
    f.nodes = nodes;
    f.tets = tets;
    mesh::write_mesh_file(dir_ / name, f);
    path_ = dir_ / name;
  }
  ~TempMesh() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempMesh(const TempMesh&) = delete;
  TempMesh& operator=(const TempMesh&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path dir_, path_;
};

// One tetrahedron with 2 cm legs along the axes, read from `file` (TempMesh), node 0 fixed in x
// and y (so the constraint rule meets a partly constrained node), gravity and a point force.
inline std::vector<mesh::Vec3> single_element_nodes() {
  return {{0.0, 0.0, 0.0}, {0.02, 0.0, 0.0}, {0.0, 0.02, 0.0}, {0.0, 0.0, 0.02}};
}
inline Scenario single_element(const std::filesystem::path& file, const std::vector<std::string>& overrides = {}) {
  std::vector<std::string> all = {"mesh.file=\"" + file.string() + "\""};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return scenario_from_toml(solid_toml("bcsr-pcg-single-element", "source = \"file\"\nfile = \"set below\"", 1.0e5, 0.3,
                                       "[0.0, 0.0, -9.81]") +
                                R"([[boundary.fixed]]
components = "xy"
where = { kind = "box", min = [-0.001, -0.001, -0.001], max = [0.001, 0.001, 0.001] }
[[boundary.point_forces]]
position = [0.0, 0.0, 0.02]
force = [0.001, 0.0, -0.002]
curve = { shape = "linear", start = 0.0, duration = 0.05 }
)" + time_toml(1.0e-3, 1.0),
                            all);
}

inline RunOptions run_options(Backend b, Precision p, int threads = 1) {
  RunOptions o;
  o.backend = b;
  o.precision = p;
  o.threads = threads;
  o.data_dir = data_dir();
  return o;
}

// The concrete simulation (phase interface); variant "" keeps the scenario's.
inline std::unique_ptr<BcsrPcgSimulation> make(Scenario s, Backend b, Precision p, int threads = 1,
                                               const std::string& variant = "") {
  if (!variant.empty()) s.solver.variant = variant;
  return make_bcsr_pcg(s, run_options(b, p, threads));
}
inline std::unique_ptr<BcsrPcgSimulation> make(const Scenario& s, const Regime& r, int threads = 1,
                                               const std::string& variant = "") {
  return make(s, r.backend, r.precision, threads, variant);
}

// ---- states --------------------------------------------------------------------------------

// Values rounded to fp32, so that an fp32 subject starts from exactly the oracle's inputs.
inline std::vector<double> on_fp32_grid(std::vector<double> v) {
  for (double& x : v) x = double(float(x));
  return v;
}

inline std::vector<double> random_values(size_t n, double amplitude, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-amplitude, amplitude);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return on_fp32_grid(v);
}

inline Eigen::Matrix3d random_rotation(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  Eigen::Vector4d q(n(rng), n(rng), n(rng), n(rng));
  return Eigen::Quaterniond(q.normalized()).toRotationMatrix();
}

// u = (A - I) X for the matrix A at every node (a homogeneous deformation x = A X).
inline std::vector<double> affine_displacement(const std::vector<mesh::Vec3>& nodes, const Eigen::Matrix3d& A) {
  std::vector<double> u(3 * nodes.size());
  for (size_t n = 0; n < nodes.size(); ++n) {
    const Eigen::Vector3d X(nodes[n][0], nodes[n][1], nodes[n][2]);
    const Eigen::Vector3d d = A * X - X;
    for (int i = 0; i < 3; ++i) u[3 * n + size_t(i)] = d[i];
  }
  return u;
}

// F = I + grad u of element e of the setup, in fp64.
inline Eigen::Matrix3d deformation_gradient(const BcsrPcgSetup& s, int64_t e, const std::vector<double>& u) {
  Eigen::Matrix3d Ds, Dinv;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) Dinv(i, j) = s.Dm_inv[size_t(9 * e + 3 * i + j)];
  const int32_t* c = &s.connectivity[size_t(4 * e)];
  for (int a = 1; a < 4; ++a)
    for (int i = 0; i < 3; ++i) Ds(i, a - 1) = u[3 * size_t(c[a]) + size_t(i)] - u[3 * size_t(c[0]) + size_t(i)];
  return Eigen::Matrix3d::Identity() + Ds * Dinv;
}

inline std::vector<double> determinants(const BcsrPcgSetup& s, const std::vector<double>& u) {
  std::vector<double> d(size_t(s.num_elements));
  for (int64_t e = 0; e < s.num_elements; ++e) d[size_t(e)] = deformation_gradient(s, e, u).determinant();
  return d;
}

// ---- independent assembly ------------------------------------------------------------------

using SparseMatrix = Eigen::SparseMatrix<double>;

// The element matrices (144 per element, element-major) added into a sparse matrix by triplets,
// with the constraint rule of solvers/linalg/element_gather.h: an entry whose row or column
// component is constrained is dropped, except a constrained component's own diagonal entry.
inline SparseMatrix assemble_with_triplets(const BcsrPcgSetup& s, const std::vector<double>& local) {
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(local.size());
  for (int64_t e = 0; e < s.num_elements; ++e)
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) {
            const int32_t na = s.connectivity[size_t(4 * e + a)], nb = s.connectivity[size_t(4 * e + b)];
            const int row = 3 * na + i, col = 3 * nb + j;
            const bool ci = s.constrained[size_t(na)] >> i & 1, cj = s.constrained[size_t(nb)] >> j & 1;
            if ((ci || cj) && row != col) continue;
            t.emplace_back(row, col, local[size_t(144 * e + (3 * a + i) * 12 + 3 * b + j)]);
          }
  SparseMatrix m(3 * s.num_nodes, 3 * s.num_nodes);
  m.setFromTriplets(t.begin(), t.end());
  return m;
}

// BCSR values (9 per block of the plan's pattern) as a sparse matrix.
inline SparseMatrix bcsr_to_sparse(const linalg::BlockGatherPlan& p, const std::vector<double>& val) {
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(val.size());
  for (linalg::Index n = 0; n < p.nodes; ++n)
    for (linalg::Offset b = p.row_ptr[size_t(n)]; b < p.row_ptr[size_t(n) + 1]; ++b)
      for (int c = 0; c < 9; ++c)
        t.emplace_back(3 * n + c / 3, 3 * p.col[size_t(b)] + c % 3, val[size_t(9 * b + c)]);
  SparseMatrix m(3 * p.nodes, 3 * p.nodes);
  m.setFromTriplets(t.begin(), t.end());
  return m;
}

// Per BCSR value: the sum of the absolute values of the element entries it gathers (0 where the
// constraint rule drops them): the scale of its summation's rounding.
inline std::vector<double> gather_magnitudes(const linalg::BlockGatherPlan& p, const std::vector<double>& local) {
  std::vector<double> m(9 * size_t(p.blocks()), 0.0);
  const int npe = p.nodes_per_element;
  for (linalg::Offset b = 0; b < p.blocks(); ++b)
    for (linalg::Offset k = p.contrib_ptr[size_t(b)]; k < p.contrib_ptr[size_t(b) + 1]; ++k) {
      const int64_t id = p.contrib[size_t(k)], e = id / (npe * npe);
      const int a = int(id % (npe * npe)) / npe, bb = int(id % (npe * npe)) % npe;
      for (int c = 0; c < 9; ++c)
        if (p.keep[size_t(b)] >> c & 1)
          m[size_t(9 * b + c)] += std::abs(local[size_t(144 * e + (3 * a + c / 3) * 12 + 3 * bb + c % 3)]);
    }
  return m;
}

// Direct solve (Eigen SimplicialLDLT) of the linear elastic system K u = f on a tet mesh, built
// independently of the method: K from assembly/tet (tet4_reference, tet4_linear_stiffness) by
// triplets, f = rho g V / 4 on each node of each element, every DOF of a node with fixed(X)
// removed (those stay 0). Returns 3 values per node; empty if the factorization fails.
template <class Fixed>
std::vector<double> linear_elastic_solve(const std::vector<mesh::Vec3>& nodes, const std::vector<int32_t>& conn,
                                         double youngs, double poisson, double rho, const std::array<double, 3>& g,
                                         Fixed fixed) {
  std::vector<int> dof(3 * nodes.size(), -1);
  int free = 0;
  for (size_t n = 0; n < nodes.size(); ++n)
    if (!fixed(nodes[n]))
      for (int i = 0; i < 3; ++i) dof[3 * n + size_t(i)] = free++;
  const tet::Lame<double> lame = tet::lame_from_young_poisson(youngs, poisson);
  std::vector<Eigen::Triplet<double>> t;
  Eigen::VectorXd f = Eigen::VectorXd::Zero(free);
  for (size_t e = 0; e < conn.size() / 4; ++e) {
    double X[4][3];
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) X[a][i] = nodes[size_t(conn[4 * e + size_t(a)])][size_t(i)];
    tet::Tet4Reference<double> ref;
    if (tet::tet4_reference(X, ref) != tet::TetStatus::kOk) return {};
    double K[144];
    tet::tet4_linear_stiffness(ref, lame, K);
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) {
        const int row = dof[3 * size_t(conn[4 * e + size_t(a)]) + size_t(i)];
        if (row < 0) continue;
        f[row] += rho * g[size_t(i)] * ref.volume / 4;
        for (int b = 0; b < 4; ++b)
          for (int j = 0; j < 3; ++j)
            if (const int col = dof[3 * size_t(conn[4 * e + size_t(b)]) + size_t(j)]; col >= 0)
              t.emplace_back(row, col, K[(3 * a + i) * 12 + 3 * b + j]);
      }
  }
  Eigen::SparseMatrix<double> K(free, free);
  K.setFromTriplets(t.begin(), t.end());
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(K);
  if (ldlt.info() != Eigen::Success) return {};
  const Eigen::VectorXd x = ldlt.solve(f);
  std::vector<double> u(3 * nodes.size(), 0.0);
  for (size_t k = 0; k < dof.size(); ++k)
    if (dof[k] >= 0) u[k] = x[dof[k]];
  return u;
}

inline double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}
inline double max_abs(const SparseMatrix& m) {
  double x = 0;
  for (int k = 0; k < m.outerSize(); ++k)
    for (SparseMatrix::InnerIterator it(m, k); it; ++it) x = std::max(x, std::abs(it.value()));
  return x;
}
inline double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double m = a.size() == b.size() ? 0.0 : std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}
inline double max_relative_difference(const std::vector<double>& a, const std::vector<double>& reference) {
  const double scale = max_abs(reference);
  return scale > 0 ? max_abs_difference(a, reference) / scale : max_abs_difference(a, reference);
}

// "" when a and b are equal bit for bit, else where they first differ.
inline std::string first_bitwise_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return "sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size());
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0)
      return "entry " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
  return "";
}

}  // namespace eb::bcsr_pcg::test
