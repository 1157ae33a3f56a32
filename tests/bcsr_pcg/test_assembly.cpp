// The global matrix of a step equals an independent assembly of the same element matrices: the
// subject runs Rotation, Matrix and Update on a random state (nodal displacements of half an
// element edge, so that every element has its own rotation R and some are inverted), and its
// matrix (get_array(matrix)) is compared with the element matrices it computed (get_array(local))
// added into an Eigen sparse matrix by triplets under the constraint rule of
// solvers/linalg/element_gather.h (tests/bcsr_pcg/bcsr_pcg_test_util.h: assemble_with_triplets);
// the right-hand side likewise (loads off: load scale 0). Both variants (gather, scatter), on the
// loaded box of bcsr_pcg_test_util.h (clamped face, roller face: partly constrained nodes) and on
// a real mesh (raptorTetra_8418.vtu, skipped without the data folder). The CUDA instance also
// compares its matrix with the CPU backend's from the same element matrices.
//
// The CPU instance adds the shared layer's own checks (fp64 and fp32): the sliced device layout's
// reference (linalg::gather_sliced through make_sliced_gather_index, from block-major local
// matrices, on make_sliced_bcsr's and make_gather_layout's layouts) and linalg::scatter_matrix
// against linalg::gather_matrix, the gather's indices against the block-major offsets on two
// tetrahedra, and that the matrix is symmetric positive definite (Eigen
// SimplicialLLT, and the smallest eigenvalue of the dense matrix) for the static coefficients
// (pure stiffness sum R K R^T, random rotations, the box's supports) and the dynamic ones.
//
// Tolerances. Each matrix value is a sum of n element entries (n <= 24 in the box: the diagonal
// block of a node inside the 6-tet lattice; a few dozen at most on the raptor); summed in some
// order in precision u it differs from the exact sum of the same entries by at most (n - 1) u
// sum|entries|. The comparison is per value against that scale (gather_magnitudes): tol 1e-12 in
// fp64 (bound 2.6e-15 for n = 24) and 1e-5 in fp32 (bound 1.4e-6); measured at most 1.1e-15 and
// 4.6e-7 (CPU and CUDA, both meshes). The independent fp64 sum of the same (fp32 or fp64)
// entries is the reference in both precisions. A value outside the pattern, a dropped or doubled
// element entry, a wrong constraint mask (one entry of size |entries|) fail by orders of
// magnitude. Gather against gather (the same summands in the same order, no products) must be
// equal bit for bit: the sliced reference, and the CUDA gather against the CPU gather.
#include <Eigen/Eigenvalues>
#include <Eigen/SparseCholesky>

#include <cstdio>

#include "solvers/linalg/bcsr_slices.h"
#include "solvers/linalg/element_gather.h"
#include "tests/bcsr_pcg/bcsr_pcg_test_util.h"

namespace eb::bcsr_pcg::test {
namespace {

double tolerance(Precision p) { return p == Precision::Fp32 ? 1e-5 : 1e-12; }

// The raptor with its lowest tenth (in z) clamped and its highest tenth on a roller (x only).
struct RealMesh {
  bool available = false;
  Scenario scenario;
};
RealMesh raptor() {
  RealMesh r;
  const auto dir = data_dir();
  const char* file = "raptorTetra_8418.vtu";
  if (dir.empty() || !std::filesystem::exists(dir / file)) return r;
  const mesh::TetMesh m = mesh::read_tet_mesh(dir / file);
  double lo = 1e300, hi = -1e300;
  for (const auto& x : m.nodes) {
    lo = std::min(lo, x[2]);
    hi = std::max(hi, x[2]);
  }
  const double cut = 0.1 * (hi - lo);
  auto slab = [](double a, double b) {
    return "{ kind = \"box\", min = [-1e30, -1e30, " + std::to_string(a) + "], max = [1e30, 1e30, " +
           std::to_string(b) + "] }";
  };
  r.scenario = scenario_from_toml("name = \"raptor\"\n[mesh]\nsource = \"file\"\nfile = \"" + std::string(file) +
                                  "\"\n[material]\nyoungs_modulus = 1.0e5\npoisson_ratio = 0.4\ndensity = 1000.0\n"
                                  "[boundary]\ngravity = [0.0, 0.0, -9.81]\n[[boundary.fixed]]\ncomponents = \"xyz\"\n"
                                  "where = " + slab(lo - 1, lo + cut) + "\n[[boundary.fixed]]\ncomponents = \"x\"\n"
                                  "where = " + slab(hi - cut, hi + 1) + "\n[time]\ndt = 1.0e-3\nend_time = 1.0\n");
  r.available = true;
  return r;
}

// Random u (half an element edge: random rotations, some elements inverted) and v.
void set_random_state(BcsrPcgSimulation& sim, uint32_t seed) {
  const BcsrPcgSetup& s = sim.setup();
  const double edge = std::cbrt(6.0 * std::sqrt(2.0) * s.max_volume);  // a regular tet of that volume
  sim.set_array(PhaseArray::u, random_values(3 * size_t(s.num_nodes), 0.5 * edge, seed));
  sim.set_array(PhaseArray::v, random_values(3 * size_t(s.num_nodes), 0.1, seed + 1));
}

struct Assembled {
  std::vector<double> local, local_rhs, matrix, rhs;
};
Assembled assemble(BcsrPcgSimulation& sim, const ElementCoefficients<double>& k) {
  sim.set_coefficients(k);
  sim.set_load_time(0.0, 0.0);  // loads off: the right-hand side is the element vectors alone
  sim.run_phase(Phase::Rotation);
  sim.run_phase(Phase::Matrix);
  sim.run_phase(Phase::Update);
  return {sim.get_array(PhaseArray::local), sim.get_array(PhaseArray::local_rhs), sim.get_array(PhaseArray::matrix),
          sim.get_array(PhaseArray::rhs)};
}

// Largest |a - b| over the scale of each value (0 scale: a and b must both be 0); the matrices
// are compared entry by entry over the union of their patterns.
double worst_scaled_difference(const SparseMatrix& a, const SparseMatrix& b, const SparseMatrix& scale) {
  const SparseMatrix d = a - b;
  double worst = 0;
  for (int k = 0; k < d.outerSize(); ++k)
    for (SparseMatrix::InnerIterator it(d, k); it; ++it) {
      const double s = scale.coeff(it.row(), it.col());
      worst = std::max(worst, s > 0 ? std::abs(it.value()) / s : (it.value() != 0 ? 1e300 : 0.0));
    }
  return worst;
}

// Per BCSR value: the sum over the element blocks adding to its block of their largest |entry|.
std::vector<double> block_magnitudes(const linalg::BlockGatherPlan& p, const std::vector<double>& local) {
  std::vector<double> m(9 * size_t(p.blocks()), 0.0);
  for (linalg::Offset b = 0; b < p.blocks(); ++b) {
    double sum = 0;
    for (linalg::Offset k = p.contrib_ptr[size_t(b)]; k < p.contrib_ptr[size_t(b) + 1]; ++k) {
      const int64_t id = p.contrib[size_t(k)], e = id / 16;
      const int a = int(id % 16) / 4, bb = int(id % 16) % 4;
      double largest = 0;
      for (int c = 0; c < 9; ++c)
        largest = std::max(largest, std::abs(local[size_t(144 * e + (3 * a + c / 3) * 12 + 3 * bb + c % 3)]));
      sum += largest;
    }
    for (int c = 0; c < 9; ++c) m[9 * size_t(b) + size_t(c)] = sum;
  }
  return m;
}

// The right-hand side by scatter: element vectors added per node, constrained components 0;
// and the per-entry sum of magnitudes.
void scatter_rhs(const BcsrPcgSetup& s, const std::vector<double>& local_rhs, std::vector<double>& rhs,
                 std::vector<double>& magnitude) {
  rhs.assign(3 * size_t(s.num_nodes), 0.0);
  magnitude.assign(rhs.size(), 0.0);
  for (int64_t e = 0; e < s.num_elements; ++e)
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) {
        const int32_t n = s.connectivity[size_t(4 * e + a)];
        if (s.constrained[size_t(n)] >> i & 1) continue;
        rhs[3 * size_t(n) + size_t(i)] += local_rhs[size_t(12 * e + 3 * a + i)];
        magnitude[3 * size_t(n) + size_t(i)] += std::abs(local_rhs[size_t(12 * e + 3 * a + i)]);
      }
}

double worst_scaled_difference(const std::vector<double>& a, const std::vector<double>& b,
                               const std::vector<double>& scale) {
  double worst = a.size() == b.size() ? 0.0 : 1e300;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const double d = std::abs(a[i] - b[i]);
    worst = std::max(worst, scale[i] > 0 ? d / scale[i] : (d != 0 ? 1e300 : 0.0));
  }
  return worst;
}

struct AssemblyCase {
  Regime regime;
  std::string variant;
  bool real_mesh;
};
std::string case_name(const ::testing::TestParamInfo<AssemblyCase>& i) {
  return regime_label(i.param.regime) + "_" + i.param.variant + (i.param.real_mesh ? "_raptor" : "_box");
}
std::vector<AssemblyCase> cases() {
  std::vector<AssemblyCase> out;
  for (bool real : {false, true})
    for (const Regime& r : regimes())
      for (const char* v : {"gather", "scatter"}) out.push_back({r, v, real});
  return out;
}

class Assembly : public ::testing::TestWithParam<AssemblyCase> {};

TEST_P(Assembly, GlobalMatrixEqualsTripletAssemblyOfTheElementMatrices) {
  const AssemblyCase c = GetParam();
  EB_BCSR_PCG_SKIP_WITHOUT_DEVICE(c.regime);
  Scenario sc = test_box();
  if (c.real_mesh) {
    const RealMesh m = raptor();
    if (!m.available) GTEST_SKIP() << "raptorTetra_8418.vtu not found in the data folder (third-party data)";
    sc = m.scenario;
  }
  auto sim = make(sc, c.regime, 2, c.variant);
  const BcsrPcgSetup& s = sim->setup();
  set_random_state(*sim, 11);
  const Assembled a = assemble(*sim, sim->dynamic_coefficients());
  const double tol = tolerance(c.regime.precision);

  // Every element has its own rotation: the element matrices are not the reference ones.
  int64_t inverted = 0;
  for (double d : determinants(s, sim->get_array(PhaseArray::u))) inverted += d <= 0;
  EXPECT_GT(inverted, 0) << "the random state should invert some elements (rotations of every kind)";

  const SparseMatrix reference = assemble_with_triplets(s, a.local);
  const SparseMatrix got = bcsr_to_sparse(s.plan, a.matrix);
  const SparseMatrix scale = bcsr_to_sparse(s.plan, gather_magnitudes(s.plan, a.local));
  const double worst = worst_scaled_difference(got, reference, scale);
  const double normwise = max_abs(SparseMatrix(got - reference)) / max_abs(reference);
  std::printf("%s: %lld nodes, %lld elements (%lld inverted); matrix against triplets: %.2e of the summands' "
              "magnitude per value, %.2e of the largest value\n",
              case_name({c, 0}).c_str(), (long long)s.num_nodes, (long long)s.num_elements, (long long)inverted, worst,
              normwise);
  EXPECT_LE(worst, tol);
  EXPECT_LE(normwise, c.regime.precision == Precision::Fp64 ? 1e-12 : 1e-6);
  // Symmetric to rounding: R K_ab R^T and (R K_ba R^T)^T are the same products rounded in another
  // order, at eps x the size of the element blocks (not of their sum, which may cancel).
  const SparseMatrix block_scale = bcsr_to_sparse(s.plan, block_magnitudes(s.plan, a.local));
  const double asym = worst_scaled_difference(got, SparseMatrix(got.transpose()), block_scale);
  std::printf("  asymmetry: %.2e of the element blocks' magnitude\n", asym);
  EXPECT_LE(asym, tol);

  std::vector<double> rhs, magnitude;
  scatter_rhs(s, a.local_rhs, rhs, magnitude);
  const double worst_rhs = worst_scaled_difference(a.rhs, rhs, magnitude);
  std::printf("  right-hand side against scatter: %.2e of the summands' magnitude\n", worst_rhs);
  EXPECT_LE(worst_rhs, tol);

  if (c.regime.backend == Backend::Cuda) {
    // The CPU backend (same precision, same variant) updating from the same element matrices.
    auto cpu = make(sc, Backend::Cpu, c.regime.precision, 2, c.variant);
    cpu->set_array(PhaseArray::local, a.local);
    cpu->set_array(PhaseArray::local_rhs, a.local_rhs);
    cpu->set_load_time(0.0, 0.0);
    cpu->run_phase(Phase::Update);
    const std::vector<double> m = cpu->get_array(PhaseArray::matrix);
    if (c.variant == "gather") {
      EXPECT_EQ(first_bitwise_difference(a.matrix, m), "") << "the gathers sum the same values in the same order";
      EXPECT_EQ(first_bitwise_difference(a.rhs, cpu->get_array(PhaseArray::rhs)), "");
    } else {
      EXPECT_LE(worst_scaled_difference(got, bcsr_to_sparse(s.plan, m), scale), 2 * tol);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BcsrPcg, Assembly, ::testing::ValuesIn(cases()), case_name);

#if !defined(EB_BCSR_PCG_TEST_CUDA)

// The device's block-major copy (element_gather.h) of element-major local matrices.
template <class T>
std::vector<T> block_major(const linalg::BlockGatherPlan& p, const std::vector<T>& element_major) {
  const int npe = p.nodes_per_element, L = 3 * npe;
  std::vector<T> out(element_major.size());
  for (int64_t e = 0; e < p.elements; ++e)
    for (int ab = 0; ab < npe * npe; ++ab)
      for (int c = 0; c < 9; ++c)
        out[size_t(linalg::block_major_offset(p.elements, e, ab, c))] =
            element_major[size_t(e * L * L + (3 * (ab / npe) + c / 3) * L + 3 * (ab % npe) + c % 3)];
  return out;
}

// The sliced device layout `sliced` (zero values) filled by the reference of the device gather
// from the block-major local matrices must equal gather_matrix bit for bit.
template <class T>
void check_sliced_gather(const linalg::BlockGatherPlan& p, const linalg::BcsrMatrix<T>& gathered,
                         const std::vector<T>& local_block_major, linalg::SlicedBcsr<T> sliced) {
  const linalg::SlicedGatherIndex g = linalg::make_sliced_gather_index(p, sliced);
  std::fill(sliced.val.begin(), sliced.val.end(), std::numeric_limits<T>::quiet_NaN());  // every value written?
  linalg::gather_sliced(g, local_block_major.data(), sliced);
  // back in the plan's column order (make_gather_layout reorders a row's blocks)
  linalg::BcsrMatrix<T> back = linalg::pattern_matrix<T>(p);
  for (linalg::Offset b = 0; b < p.blocks(); ++b) {
    const linalg::Offset pos = g.block_position[size_t(b)];
    ASSERT_EQ(sliced.col[size_t(pos)], p.col[size_t(b)]) << "block " << b;
    for (int comp = 0; comp < 9; ++comp)
      back.val[size_t(9 * b + comp)] = sliced.val[size_t((pos / 32) * 288 + comp * 32 + pos % 32)];
  }
  const std::vector<double> gd(gathered.val.begin(), gathered.val.end());
  EXPECT_EQ(first_bitwise_difference(std::vector<double>(back.val.begin(), back.val.end()), gd), "");
  // The padding of the sliced layout stays 0 (the SpMV reads it).
  for (linalg::Offset st = 0; st < sliced.steps(); ++st)
    for (int l = 0; l < 32; ++l)
      if (sliced.col[size_t(st * 32 + l)] < 0)
        for (int comp = 0; comp < 9; ++comp) ASSERT_EQ(sliced.val[size_t(st * 288 + comp * 32 + l)], T(0));
  // The diagonal positions the Jacobi preconditioner reads.
  std::vector<T> diag(3 * size_t(p.nodes));
  linalg::block_diagonal(p, gathered, diag.data());
  for (size_t i = 0; i < diag.size(); ++i) ASSERT_EQ(sliced.val[size_t(g.diag_position[i])], diag[i]) << "row " << i;
  EXPECT_GT(g.padded_entries(), 0);  // steps padded to their longest list (rows' lists differ)
}

template <class T>
void check_layouts(const linalg::BlockGatherPlan& p, const std::vector<double>& local_d) {
  SCOPED_TRACE(sizeof(T) == 4 ? "fp32" : "fp64");
  const std::vector<T> local(local_d.begin(), local_d.end());
  linalg::BcsrMatrix<T> gathered = linalg::pattern_matrix<T>(p), scattered = linalg::pattern_matrix<T>(p);
  linalg::gather_matrix(p, local.data(), gathered);
  linalg::scatter_matrix(p, local.data(), scattered);

  // Sliced layouts: the plain one, and the gather's (rows' blocks reordered) that the device uses.
  const std::vector<T> local_block_major = block_major(p, local);
  {
    SCOPED_TRACE("make_sliced_bcsr");
    const linalg::SlicedBcsr<T> plain = linalg::make_sliced_bcsr(linalg::pattern_matrix<T>(p));
    const linalg::BcsrMatrix<T> back = linalg::to_bcsr(plain);
    ASSERT_EQ(back.row_ptr, p.row_ptr);
    ASSERT_EQ(back.col, p.col);
    check_sliced_gather(p, gathered, local_block_major, plain);
  }
  {
    SCOPED_TRACE("make_gather_layout");
    check_sliced_gather(p, gathered, local_block_major, linalg::make_gather_layout<T>(p));
  }

  // Scatter: the same sums in another order (OpenMP atomics).
  const std::vector<double> mags = gather_magnitudes(p, local_d);
  const std::vector<double> sd(scattered.val.begin(), scattered.val.end()),
      gd(gathered.val.begin(), gathered.val.end());
  EXPECT_LE(worst_scaled_difference(sd, gd, mags), tolerance(sizeof(T) == 4 ? Precision::Fp32 : Precision::Fp64));
}

TEST(AssemblyLayouts, SlicedReferenceAndScatterEqualGather) {
  auto sim = make(test_box(), Backend::Cpu, Precision::Fp64, 2);
  set_random_state(*sim, 5);
  const Assembled a = assemble(*sim, sim->dynamic_coefficients());
  const std::vector<double> local32 = on_fp32_grid(a.local);
  check_layouts<double>(sim->setup().plan, local32);
  check_layouts<float>(sim->setup().plan, local32);
}

// The gather's index of a contribution is the offset of its block's first value in the block-major
// local matrices, (ab E + e) 9 with ab = 4 a + b (element_gather.h), and the components follow it
// contiguously. Two tetrahedra sharing the face (1, 2, 3): E = 2, nodes 0..4.
TEST(AssemblyLayouts, GatherIndexIsBlockMajorOffset) {
  const std::vector<int32_t> conn{0, 1, 2, 3, 1, 2, 3, 4};
  const linalg::BlockGatherPlan p = linalg::make_block_gather_plan(5, 4, conn, {});
  const linalg::SlicedBcsr<float> layout = linalg::make_gather_layout<float>(p);
  const linalg::SlicedGatherIndex g = linalg::make_sliced_gather_index(p, layout);
  for (int c = 0; c < 9; ++c) EXPECT_EQ(g.component_offset[size_t(c)], c);
  // The plan's block (row, col), -1 if the pattern lacks it.
  auto find_block = [&](linalg::Index row, linalg::Index col) {
    const auto first = p.col.begin() + p.row_ptr[size_t(row)], last = p.col.begin() + p.row_ptr[size_t(row) + 1];
    const auto it = std::lower_bound(first, last, col);
    return it != last && *it == col ? linalg::Offset(it - p.col.begin()) : linalg::Offset(-1);
  };
  // The indices listed for a block, in the order the gather sums them.
  auto listed = [&](linalg::Offset block) {
    const linalg::Offset pos = g.block_position[size_t(block)], step = pos / 32, lane = pos % 32;
    std::vector<int32_t> out;
    for (linalg::Offset sub = g.sub_ptr[size_t(step)]; sub < g.sub_ptr[size_t(step) + 1]; ++sub)
      if (const int32_t b = g.block[size_t(sub * 32 + lane)]; b >= 0) out.push_back(b);
    return out;
  };
  using List = std::vector<int32_t>;
  EXPECT_EQ(listed(find_block(0, 0)), List{0});                                // e 0, a = b = 0
  EXPECT_EQ(listed(find_block(4, 4)), List{(15 * 2 + 1) * 9});                 // e 1, a = b = 3
  EXPECT_EQ(listed(find_block(1, 4)), List{(3 * 2 + 1) * 9});                  // e 1, a = 0, b = 3
  EXPECT_EQ(listed(find_block(4, 1)), (List{(12 * 2 + 1) * 9}));               // e 1, a = 3, b = 0
  EXPECT_EQ(listed(find_block(1, 2)), (List{(6 * 2 + 0) * 9, (1 * 2 + 1) * 9}));   // e 0 (1, 2), e 1 (0, 1)
  EXPECT_EQ(listed(find_block(3, 3)), (List{(15 * 2 + 0) * 9, (10 * 2 + 1) * 9}));  // e 0 (3, 3), e 1 (2, 2)
  EXPECT_EQ(find_block(0, 4), -1) << "nodes 0 and 4 share no element";
  // Every block's list against the offset formula, from the plan's element-block ids e 16 + ab.
  for (linalg::Offset b = 0; b < p.blocks(); ++b) {
    List want;
    for (linalg::Offset k = p.contrib_ptr[size_t(b)]; k < p.contrib_ptr[size_t(b) + 1]; ++k)
      want.push_back(int32_t((p.contrib[size_t(k)] % 16 * p.elements + p.contrib[size_t(k)] / 16) * 9));
    EXPECT_EQ(listed(b), want) << "block " << b;
  }

  // The block-major copy puts entry (3 a + i, 3 b + j) of element e at ((4 a + b) E + e) 9 + 3 i + j,
  // and the gather through these indices sums the element entries gather_matrix sums.
  std::vector<float> element_major(144 * size_t(p.elements));
  for (size_t k = 0; k < element_major.size(); ++k) element_major[k] = float(k);  // value = element-major index
  const std::vector<float> local = block_major(p, element_major);
  for (int64_t e = 0; e < p.elements; ++e)
    for (int a = 0; a < 4; ++a)
      for (int bb = 0; bb < 4; ++bb)
        for (int c = 0; c < 9; ++c)
          ASSERT_EQ(local[size_t(((4 * a + bb) * p.elements + e) * 9 + c)],
                    float(144 * e + (3 * a + c / 3) * 12 + 3 * bb + c % 3));
  linalg::BcsrMatrix<float> gathered = linalg::pattern_matrix<float>(p);
  linalg::gather_matrix(p, element_major.data(), gathered);
  check_sliced_gather(p, gathered, local, layout);
}

// Smallest and largest eigenvalue of a symmetric sparse matrix (dense solve: small cases only).
std::pair<double, double> extreme_eigenvalues(const SparseMatrix& m) {
  const Eigen::MatrixXd d(m);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(d, Eigen::EigenvaluesOnly);
  return {es.eigenvalues().minCoeff(), es.eigenvalues().maxCoeff()};
}

TEST(AssemblySpd, StiffnessWithRandomRotationsIsSymmetricPositiveDefinite) {
  auto sim = make(test_box(), Backend::Cpu, Precision::Fp64, 2);
  set_random_state(*sim, 23);
  for (bool dynamic : {false, true}) {
    SCOPED_TRACE(dynamic ? "dynamic coefficients" : "static coefficients (sum of R K R^T)");
    // The static matrix as R K R^T alone (twist 0): the static iterations' consistent tangent
    // (twist 1, test_tangent.cpp) adds the stress's geometric stiffness, which at this random
    // state (inverted elements, strains of order 1) is indefinite, as it should be.
    ElementCoefficients<double> k = dynamic ? sim->dynamic_coefficients() : sim->static_coefficients(1.0);
    k.twist = 0;
    const Assembled a = assemble(*sim, k);
    const SparseMatrix m = bcsr_to_sparse(sim->setup().plan, a.matrix);
    const SparseMatrix sym = 0.5 * (m + SparseMatrix(m.transpose()));
    EXPECT_LE(max_abs(SparseMatrix(m - sym)), 1e-14 * max_abs(m));
    Eigen::SimplicialLLT<SparseMatrix> llt(sym);
    EXPECT_EQ(llt.info(), Eigen::Success);
    const auto [lo, hi] = extreme_eigenvalues(sym);
    std::printf("%s: eigenvalues in [%.3e, %.3e]\n", dynamic ? "dynamic" : "static", lo, hi);
    // The smallest eigenvalue of the clamped box is far above rounding (1e-16 x the largest).
    EXPECT_GT(lo, 1e-10 * hi);
  }
}

#endif

}  // namespace
}  // namespace eb::bcsr_pcg::test
