#include "experiments/head_to_head/nl_probes.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "meshes/errors.h"

namespace eb::head_to_head {
namespace {

using mesh::Vec3;

// Barycentric weights of p in tetrahedron (a, b, c, d): solves [b-a c-a d-a] l = p - a.
bool tet_weights(const Vec3* x, const Vec3& p, double tol, std::array<double, 8>& w) {
  double m[3][3], r[3];
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) m[i][j] = x[j + 1][i] - x[0][i];
    r[i] = p[i] - x[0][i];
  }
  const double det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
                     m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
                     m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
  if (det == 0.0) return false;
  double l[3];
  for (int k = 0; k < 3; ++k) {  // Cramer's rule: column k replaced by r
    double a[3][3];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) a[i][j] = j == k ? r[i] : m[i][j];
    l[k] = (a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) - a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
            a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0])) /
           det;
  }
  w[0] = 1.0 - l[0] - l[1] - l[2];
  w[1] = l[0];
  w[2] = l[1];
  w[3] = l[2];
  for (int a = 0; a < 4; ++a)
    if (w[a] < -tol) return false;
  return true;
}

// VTK hexahedron corners in reference coordinates (bottom face counter-clockwise, then top).
constexpr double kHexXi[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                                 {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};

void hex_shape(const double xi[3], double N[8], double dN[8][3]) {
  for (int a = 0; a < 8; ++a) {
    const double s[3] = {1 + kHexXi[a][0] * xi[0], 1 + kHexXi[a][1] * xi[1], 1 + kHexXi[a][2] * xi[2]};
    N[a] = s[0] * s[1] * s[2] / 8;
    dN[a][0] = kHexXi[a][0] * s[1] * s[2] / 8;
    dN[a][1] = kHexXi[a][1] * s[0] * s[2] / 8;
    dN[a][2] = kHexXi[a][2] * s[0] * s[1] / 8;
  }
}

// Trilinear weights of p in a hexahedron: Newton on x(xi) = p from the centre.
bool hex_weights(const Vec3* x, const Vec3& p, double tol, double length, std::array<double, 8>& w) {
  double xi[3] = {0, 0, 0}, N[8], dN[8][3];
  for (int it = 0; it < 30; ++it) {
    hex_shape(xi, N, dN);
    double r[3] = {-p[0], -p[1], -p[2]}, J[3][3] = {};
    for (int a = 0; a < 8; ++a)
      for (int i = 0; i < 3; ++i) {
        r[i] += N[a] * x[a][i];
        for (int j = 0; j < 3; ++j) J[i][j] += x[a][i] * dN[a][j];
      }
    const double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
                       J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                       J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
    if (det == 0.0 || !std::isfinite(det)) return false;
    double inv[3][3];
    inv[0][0] = (J[1][1] * J[2][2] - J[1][2] * J[2][1]) / det;
    inv[0][1] = (J[0][2] * J[2][1] - J[0][1] * J[2][2]) / det;
    inv[0][2] = (J[0][1] * J[1][2] - J[0][2] * J[1][1]) / det;
    inv[1][0] = (J[1][2] * J[2][0] - J[1][0] * J[2][2]) / det;
    inv[1][1] = (J[0][0] * J[2][2] - J[0][2] * J[2][0]) / det;
    inv[1][2] = (J[0][2] * J[1][0] - J[0][0] * J[1][2]) / det;
    inv[2][0] = (J[1][0] * J[2][1] - J[1][1] * J[2][0]) / det;
    inv[2][1] = (J[0][1] * J[2][0] - J[0][0] * J[2][1]) / det;
    inv[2][2] = (J[0][0] * J[1][1] - J[0][1] * J[1][0]) / det;
    double step = 0;
    for (int i = 0; i < 3; ++i) {
      const double d = inv[i][0] * r[0] + inv[i][1] * r[1] + inv[i][2] * r[2];
      xi[i] -= d;
      step = std::max(step, std::abs(d));
    }
    if (std::abs(xi[0]) > 3 || std::abs(xi[1]) > 3 || std::abs(xi[2]) > 3) return false;  // far outside
    const double rn = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    if (step < 1e-14 && rn < 1e-13 * length) break;
  }
  for (int i = 0; i < 3; ++i)
    if (std::abs(xi[i]) > 1 + tol) return false;
  hex_shape(xi, N, dN);
  for (int a = 0; a < 8; ++a) w[a] = N[a];
  return true;
}

}  // namespace

ProbeInterpolator::ProbeInterpolator(const std::vector<Vec3>& nodes, mesh::CellType type,
                                     const std::vector<int32_t>& connectivity, const std::vector<Vec3>& points,
                                     double tolerance) {
  const int per = type == mesh::CellType::Tetra ? 4 : (type == mesh::CellType::Hexahedron ? 8 : 0);
  if (per == 0) throw InputError("probe interpolation: only tetrahedra and hexahedra are supported");
  Vec3 lo = nodes.empty() ? Vec3{0, 0, 0} : nodes[0], hi = lo;
  for (const Vec3& x : nodes)
    for (int i = 0; i < 3; ++i) {
      lo[i] = std::min(lo[i], x[i]);
      hi[i] = std::max(hi[i], x[i]);
    }
  const double diag = std::sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                                (hi[2] - lo[2]) * (hi[2] - lo[2]));
  const double pad = tolerance * diag;
  const int64_t cells = int64_t(connectivity.size()) / per;
  for (std::size_t k = 0; k < points.size(); ++k) {
    const Vec3& p = points[k];
    Weights found;
    int64_t cell = -1;
    for (int64_t c = 0; c < cells && cell < 0; ++c) {
      Vec3 x[8];
      Vec3 clo{1e300, 1e300, 1e300}, chi{-1e300, -1e300, -1e300};
      for (int a = 0; a < per; ++a) {
        x[a] = nodes[size_t(connectivity[size_t(c * per + a)])];
        for (int i = 0; i < 3; ++i) {
          clo[i] = std::min(clo[i], x[a][i]);
          chi[i] = std::max(chi[i], x[a][i]);
        }
      }
      bool inside_box = true;
      for (int i = 0; i < 3; ++i) inside_box = inside_box && p[i] >= clo[i] - pad && p[i] <= chi[i] + pad;
      if (!inside_box) continue;
      const double size = std::max({chi[0] - clo[0], chi[1] - clo[1], chi[2] - clo[2]});
      const double tol = pad / std::max(size, 1e-300);
      std::array<double, 8> w{};
      const bool hit = per == 4 ? tet_weights(x, p, tol, w) : hex_weights(x, p, tol, size, w);
      if (!hit) continue;
      cell = c;
      found.count = per;
      for (int a = 0; a < per; ++a) {
        found.node[size_t(a)] = connectivity[size_t(c * per + a)];
        found.w[size_t(a)] = w[size_t(a)];
      }
    }
    if (cell < 0) {
      std::ostringstream m;
      m << "probe point " << k << " (" << p[0] << ", " << p[1] << ", " << p[2] << ") lies in no cell of the mesh";
      throw InputError(m.str());
    }
    weights_.push_back(found);
    cells_.push_back(cell);
  }
}

std::vector<Vec3> ProbeInterpolator::interpolate(const std::vector<double>& u) const {
  std::vector<Vec3> out(weights_.size(), Vec3{0, 0, 0});
  for (std::size_t k = 0; k < weights_.size(); ++k)
    for (int a = 0; a < weights_[k].count; ++a)
      for (int i = 0; i < 3; ++i) out[k][size_t(i)] += weights_[k].w[size_t(a)] * u[3 * size_t(weights_[k].node[size_t(a)]) + size_t(i)];
  return out;
}

double max_relative_error(const std::vector<Vec3>& u, const std::vector<Vec3>& ref) {
  double err = 0, scale = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    double e2 = 0, r2 = 0;
    for (int i = 0; i < 3; ++i) {
      e2 += (u[k][size_t(i)] - ref[k][size_t(i)]) * (u[k][size_t(i)] - ref[k][size_t(i)]);
      r2 += ref[k][size_t(i)] * ref[k][size_t(i)];
    }
    err = std::max(err, std::sqrt(e2));
    scale = std::max(scale, std::sqrt(r2));
  }
  return scale > 0 ? err / scale : (err > 0 ? INFINITY : 0.0);
}

}  // namespace eb::head_to_head
