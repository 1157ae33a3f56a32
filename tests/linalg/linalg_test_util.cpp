#include "tests/linalg/linalg_test_util.h"

#include <Eigen/Dense>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <utility>

#include "meshes/box.h"
#include "meshes/errors.h"
#include "meshes/mesh_io.h"

namespace eb::linalg::test {

std::filesystem::path data_dir() {
  std::filesystem::path d = EB_MESH_DATA_DIR;
  if (const char* env = std::getenv("ELASTOBENCH_DATA"); env && *env) d = env;
  return std::filesystem::is_directory(d) ? d : std::filesystem::path();
}

mesh::TetMesh load_data_mesh(const std::string& name) {
  const auto dir = data_dir();
  if (dir.empty() || !std::filesystem::exists(dir / name)) return {};
  return mesh::read_tet_mesh(dir / name);
}

namespace {

// Gradients of the four linear shape functions of tet e and its volume.
double tet_gradients(const mesh::TetMesh& m, size_t e, std::array<Eigen::Vector3d, 4>& g) {
  const auto& t = m.elems[e];
  auto x = [&](int a) { return Eigen::Vector3d(m.nodes[size_t(t[size_t(a)])].data()); };
  Eigen::Matrix3d J;
  J << x(1) - x(0), x(2) - x(0), x(3) - x(0);
  const double det = J.determinant();
  const Eigen::Matrix3d inv = J.inverse();
  for (int a = 1; a < 4; ++a) g[size_t(a)] = inv.row(a - 1).transpose();
  g[0] = -(g[1] + g[2] + g[3]);
  return det / 6.0;
}

// Block (a, b) of a linear tet's stiffness added to blk (row-major 3x3):
// V (lambda g_a g_b^T + mu g_b g_a^T + mu (g_a . g_b) I).
void add_tet_block(const Eigen::Vector3d& ga, const Eigen::Vector3d& gb, double vol, double lambda, double mu,
                   double* blk) {
  const double dot = ga.dot(gb);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) blk[3 * r + c] += vol * (lambda * ga[r] * gb[c] + mu * ga[c] * gb[r] + (r == c ? mu * dot : 0.0));
}

void lame(const Material& mat, double& lambda, double& mu) {
  lambda = mat.youngs * mat.poisson / ((1 + mat.poisson) * (1 - 2 * mat.poisson));
  mu = mat.youngs / (2 * (1 + mat.poisson));
}

// Sorted distinct nodes sharing a tet with node i (i included).
void node_neighbours(const mesh::TetMesh& m, const std::vector<Offset>& ptr, const std::vector<Index>& tets, Index i,
                     std::vector<Index>& out) {
  out.clear();
  for (Offset k = ptr[size_t(i)]; k < ptr[size_t(i) + 1]; ++k)
    for (int32_t v : m.elems[size_t(tets[size_t(k)])]) out.push_back(v);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

// SPD block matrix on a given symmetric block pattern (pairs i != j, both directions present).
AssembledMatrix<double> spd_on_links(Index nb, const std::vector<std::pair<Index, Index>>& links, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<Triplet<double>> t;
  std::vector<double> abs_row(3 * size_t(nb), 0.0);
  for (auto [i, j] : links) {
    if (i >= j) continue;  // each pair once: B_ij random, B_ji = B_ij^T
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        const double v = u(rng);
        t.push_back({3 * i + r, 3 * j + c, v});
        t.push_back({3 * j + c, 3 * i + r, v});
        abs_row[3 * size_t(i) + size_t(r)] += std::abs(v);
        abs_row[3 * size_t(j) + size_t(c)] += std::abs(v);
      }
  }
  for (Index i = 0; i < nb; ++i) {
    double s[3][3];
    for (int r = 0; r < 3; ++r)
      for (int c = r; c < 3; ++c) s[r][c] = s[c][r] = u(rng);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        if (r != c) abs_row[3 * size_t(i) + size_t(r)] += std::abs(s[r][c]);
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        const double v = r == c ? abs_row[3 * size_t(i) + size_t(r)] + 1.0 + std::abs(s[r][r]) : s[r][c];
        t.push_back({3 * i + r, 3 * i + c, v});
      }
  }
  return assemble_from_triplets(3 * nb, 3 * nb, std::move(t));
}

}  // namespace

BcsrMatrix<double> tet_stiffness(const mesh::TetMesh& m, const Material& mat) {
  const Index nn = Index(m.nodes.size());
  const size_t ne = m.elems.size();
  double lambda, mu;
  lame(mat, lambda, mu);

  // Inverted or flat tets first, so that the message names the first one.
  int64_t bad = std::numeric_limits<int64_t>::max();
#pragma omp parallel for schedule(static) reduction(min : bad)
  for (int64_t e = 0; e < int64_t(ne); ++e) {
    std::array<Eigen::Vector3d, 4> g;
    if (!(tet_gradients(m, size_t(e), g) > 0)) bad = std::min(bad, e);
  }
  if (bad != std::numeric_limits<int64_t>::max())
    throw InputError("tet stiffness: element " + std::to_string(bad) + " has non-positive volume");

  std::vector<Offset> ptr(size_t(nn) + 1, 0);
  for (const auto& t : m.elems)
    for (int32_t v : t) ++ptr[size_t(v) + 1];
  for (size_t i = 0; i < size_t(nn); ++i) ptr[i + 1] += ptr[i];
  std::vector<Index> tets(size_t(ptr.back()));
  {
    std::vector<Offset> cursor(ptr.begin(), ptr.end() - 1);
    for (size_t e = 0; e < ne; ++e)
      for (int32_t v : m.elems[e]) tets[size_t(cursor[size_t(v)]++)] = Index(e);
  }

  BcsrMatrix<double> K;
  K.block_rows = K.block_cols = nn;
  K.row_ptr.assign(size_t(nn) + 1, 0);
#pragma omp parallel
  {
    std::vector<Index> nb;
#pragma omp for schedule(dynamic, 1024)
    for (Index i = 0; i < nn; ++i) {
      node_neighbours(m, ptr, tets, i, nb);
      K.row_ptr[size_t(i) + 1] = Offset(nb.size());
    }
  }
  for (size_t i = 0; i < size_t(nn); ++i) K.row_ptr[i + 1] += K.row_ptr[i];
  K.col.resize(size_t(K.row_ptr.back()));
  K.val.assign(9 * K.col.size(), 0.0);
#pragma omp parallel
  {
    std::vector<Index> nb;
    std::array<Eigen::Vector3d, 4> g;
#pragma omp for schedule(dynamic, 1024)
    for (Index i = 0; i < nn; ++i) {
      node_neighbours(m, ptr, tets, i, nb);
      const Offset row = K.row_ptr[size_t(i)];
      std::copy(nb.begin(), nb.end(), K.col.begin() + row);
      for (Offset k = ptr[size_t(i)]; k < ptr[size_t(i) + 1]; ++k) {
        const auto& t = m.elems[size_t(tets[size_t(k)])];
        const double vol = tet_gradients(m, size_t(tets[size_t(k)]), g);
        const int a = int(std::find(t.begin(), t.end(), i) - t.begin());
        for (int b = 0; b < 4; ++b) {
          const Offset pos = row + (std::lower_bound(nb.begin(), nb.end(), t[size_t(b)]) - nb.begin());
          add_tet_block(g[size_t(a)], g[size_t(b)], vol, lambda, mu, K.val.data() + 9 * pos);
        }
      }
    }
  }
  return K;
}

std::array<double, 144> tet_element_stiffness(const mesh::TetMesh& m, size_t e, const Material& mat) {
  double lambda, mu;
  lame(mat, lambda, mu);
  std::array<Eigen::Vector3d, 4> g;
  const double vol = tet_gradients(m, e, g);
  std::array<double, 144> K{};
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      double blk[9] = {};
      add_tet_block(g[size_t(a)], g[size_t(b)], vol, lambda, mu, blk);
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) K[size_t(12 * (3 * a + r) + 3 * b + c)] = blk[3 * r + c];
    }
  return K;
}

std::vector<Index> base_nodes(const mesh::TetMesh& m, int axis, double fraction) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& p : m.nodes) {
    lo = std::min(lo, p[size_t(axis)]);
    hi = std::max(hi, p[size_t(axis)]);
  }
  std::vector<Index> out;
  for (size_t i = 0; i < m.nodes.size(); ++i)
    if (m.nodes[i][size_t(axis)] <= lo + fraction * (hi - lo)) out.push_back(Index(i));
  return out;
}

void clamp_nodes(BcsrMatrix<double>& K, const std::vector<Index>& nodes) {
  double mean = 0;
  for (Index br = 0; br < K.block_rows; ++br)
    for (Offset b = K.row_ptr[size_t(br)]; b < K.row_ptr[size_t(br) + 1]; ++b)
      if (K.col[size_t(b)] == br) mean += K.val[9 * size_t(b)] + K.val[9 * size_t(b) + 4] + K.val[9 * size_t(b) + 8];
  mean /= 3.0 * std::max<Index>(1, K.block_rows);
  std::vector<char> fixed(size_t(K.block_rows), 0);
  for (Index n : nodes) fixed[size_t(n)] = 1;
  for (Index br = 0; br < K.block_rows; ++br)
    for (Offset b = K.row_ptr[size_t(br)]; b < K.row_ptr[size_t(br) + 1]; ++b) {
      const Index bc = K.col[size_t(b)];
      if (!fixed[size_t(br)] && !fixed[size_t(bc)]) continue;
      double* blk = K.val.data() + 9 * b;
      for (int c = 0; c < 9; ++c) blk[c] = (bc == br && c % 4 == 0) ? mean : 0.0;
    }
}

ElasticProblem clamped_problem(const mesh::TetMesh& m, const std::string& name, int axis) {
  BcsrMatrix<double> K = tet_stiffness(m);
  const std::vector<Index> base = base_nodes(m, axis, 0.05);
  if (base.empty()) throw InputError(name + ": no base nodes to clamp");
  clamp_nodes(K, base);
  std::vector<char> fixed(m.nodes.size(), 0);
  for (Index n : base) fixed[size_t(n)] = 1;
  // A body force along -axis (gravity on a model standing on its base), lumped: each node carries
  // a quarter of its tets' volumes.
  std::vector<double> b(3 * m.nodes.size(), 0.0);
  std::array<Eigen::Vector3d, 4> g;
  for (size_t e = 0; e < m.elems.size(); ++e) {
    const double vol = tet_gradients(m, e, g);
    for (int32_t v : m.elems[e])
      if (!fixed[size_t(v)]) b[3 * size_t(v) + size_t(axis)] -= vol / 4;
  }
  return ElasticProblem{to_assembled(K), std::move(b), name};
}

mesh::TetMesh box_cantilever(int n, int tets_per_cube) {
  const int m = std::max(1, n / 4);
  return mesh::make_box_tet({0, 0, 0}, {1.0, 0.25, 0.25}, {n, m, m}, tets_per_cube);
}

AssembledMatrix<double> random_spd_blocks(Index block_rows, int links, uint32_t seed) {
  std::mt19937 rng(seed ^ 0x9e3779b9u);
  std::uniform_int_distribution<Index> pick(0, block_rows - 1);
  std::vector<std::pair<Index, Index>> pairs;
  for (Index i = 0; i < block_rows; ++i)
    for (int k = 0; k < links; ++k)
      if (Index j = pick(rng); j != i) {
        pairs.emplace_back(std::min(i, j), std::max(i, j));
      }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  return spd_on_links(block_rows, pairs, seed);
}

AssembledMatrix<double> planted_blocks(Index block_rows, uint32_t seed) {
  std::vector<std::pair<Index, Index>> pairs;
  for (Index j = 2; j < block_rows; ++j) pairs.emplace_back(0, j);      // the long row 0
  for (Index i = 2; i + 1 < block_rows; ++i) pairs.emplace_back(i, i + 1);  // a chain; row 1 stays alone
  return spd_on_links(block_rows, pairs, seed);
}

std::vector<double> random_vector(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

Eigen::SparseMatrix<double, Eigen::RowMajor> to_eigen(const AssembledMatrix<double>& a) {
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(a.nnz());
  for (size_t k = 0; k < a.nnz(); ++k) t.emplace_back(a.row[k], a.col[k], a.val[k]);
  Eigen::SparseMatrix<double, Eigen::RowMajor> m(a.rows, a.cols);
  m.setFromTriplets(t.begin(), t.end());
  return m;
}

}  // namespace eb::linalg::test
