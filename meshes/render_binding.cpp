#include "meshes/render_binding.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "meshes/errors.h"
#include "meshes/geometry.h"

namespace eb::mesh {
namespace {

// Uniform grid over element bounding boxes; each element is listed in every cell its box touches.
class ElementGrid {
 public:
  template <size_t N>
  ElementGrid(const std::vector<Vec3>& nodes, const std::vector<std::array<int32_t, N>>& elems) {
    lo_ = bbox_min(nodes);
    const Vec3 hi = bbox_max(nodes);
    double avg = 0;
    std::vector<std::array<Vec3, 2>> boxes(elems.size());
    for (size_t e = 0; e < elems.size(); ++e) {
      Vec3 a = nodes[size_t(elems[e][0])], b = a;
      for (auto v : elems[e])
        for (size_t d = 0; d < 3; ++d) {
          a[d] = std::min(a[d], nodes[size_t(v)][d]);
          b[d] = std::max(b[d], nodes[size_t(v)][d]);
        }
      boxes[e] = {a, b};
      avg += (b[0] - a[0]) + (b[1] - a[1]) + (b[2] - a[2]);
    }
    cell_ = std::max(avg / (3.0 * double(elems.size())), 1e-12);
    for (size_t d = 0; d < 3; ++d) n_[d] = std::clamp(int((hi[d] - lo_[d]) / cell_) + 1, 1, 512);
    start_.assign(size_t(n_[0]) * n_[1] * n_[2] + 1, 0);
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t e = 0; e < elems.size(); ++e) {
        const auto c0 = cell_of(boxes[e][0]), c1 = cell_of(boxes[e][1]);
        for (int k = c0[2]; k <= c1[2]; ++k)
          for (int j = c0[1]; j <= c1[1]; ++j)
            for (int i = c0[0]; i <= c1[0]; ++i) {
              const size_t c = index(i, j, k);
              if (pass == 0) ++start_[c + 1];
              else items_[start_[c]++] = int32_t(e);
            }
      }
      if (pass == 0) {
        for (size_t c = 1; c < start_.size(); ++c) start_[c] += start_[c - 1];
        items_.resize(start_.back());
      } else {
        for (size_t c = start_.size() - 1; c > 0; --c) start_[c] = start_[c - 1];
        start_[0] = 0;
      }
    }
  }

  // Calls f(element) for the elements in the cells at Chebyshev ring distance r around p's cell.
  template <typename F>
  void ring(const Vec3& p, int r, F&& f) const {
    const auto c = cell_of(p);
    for (int k = c[2] - r; k <= c[2] + r; ++k)
      for (int j = c[1] - r; j <= c[1] + r; ++j)
        for (int i = c[0] - r; i <= c[0] + r; ++i) {
          if (std::max({std::abs(i - c[0]), std::abs(j - c[1]), std::abs(k - c[2])}) != r) continue;
          if (i < 0 || j < 0 || k < 0 || i >= n_[0] || j >= n_[1] || k >= n_[2]) continue;
          const size_t q = index(i, j, k);
          for (size_t t = start_[q]; t < start_[q + 1]; ++t) f(items_[t]);
        }
  }
  int max_ring() const { return std::max({n_[0], n_[1], n_[2]}); }

 private:
  std::array<int, 3> cell_of(const Vec3& p) const {
    std::array<int, 3> c{};
    for (size_t d = 0; d < 3; ++d) c[d] = std::clamp(int(std::floor((p[d] - lo_[d]) / cell_)), 0, n_[d] - 1);
    return c;
  }
  size_t index(int i, int j, int k) const { return (size_t(k) * size_t(n_[1]) + size_t(j)) * size_t(n_[0]) + size_t(i); }

  Vec3 lo_{};
  double cell_ = 1;
  std::array<int, 3> n_{1, 1, 1};
  std::vector<size_t> start_;
  std::vector<int32_t> items_;
};

// Barycentric coordinates of p in tet x.
std::array<double, 4> barycentric(const std::array<Vec3, 4>& x, const Vec3& p) {
  const double v = tet_signed_volume(x[0], x[1], x[2], x[3]);
  std::array<double, 4> w{};
  w[0] = tet_signed_volume(p, x[1], x[2], x[3]) / v;
  w[1] = tet_signed_volume(x[0], p, x[2], x[3]) / v;
  w[2] = tet_signed_volume(x[0], x[1], p, x[3]) / v;
  w[3] = 1.0 - w[0] - w[1] - w[2];
  return w;
}

constexpr int kC[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};

std::array<double, 8> trilinear(const Vec3& u) {
  std::array<double, 8> w{};
  for (size_t c = 0; c < 8; ++c) {
    w[c] = 1;
    for (size_t a = 0; a < 3; ++a) w[c] *= kC[c][a] ? u[a] : 1.0 - u[a];
  }
  return w;
}

// Inverse trilinear map by Newton's method from the centre; exact in one step for boxes.
Vec3 inverse_trilinear(const std::array<Vec3, 8>& x, const Vec3& p) {
  Vec3 u{0.5, 0.5, 0.5};
  for (int it = 0; it < 20; ++it) {
    const auto w = trilinear(u);
    Vec3 r{-p[0], -p[1], -p[2]};
    double J[3][3] = {};
    for (size_t c = 0; c < 8; ++c) {
      for (size_t k = 0; k < 3; ++k) r[k] += w[c] * x[c][k];
      for (size_t a = 0; a < 3; ++a) {
        double d = kC[c][a] ? 1.0 : -1.0;
        for (size_t b = 0; b < 3; ++b)
          if (b != a) d *= kC[c][b] ? u[b] : 1.0 - u[b];
        for (size_t k = 0; k < 3; ++k) J[k][a] += d * x[c][k];
      }
    }
    const double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                       J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
    if (std::abs(det) < 1e-300) break;
    // du = -J^{-1} r by Cramer's rule.
    Vec3 du{};
    for (size_t a = 0; a < 3; ++a) {
      double M[3][3];
      for (size_t k = 0; k < 3; ++k)
        for (size_t b = 0; b < 3; ++b) M[k][b] = b == a ? -r[k] : J[k][b];
      du[a] = (M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
               M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0])) / det;
    }
    for (size_t a = 0; a < 3; ++a) u[a] += du[a];
    if (std::abs(du[0]) + std::abs(du[1]) + std::abs(du[2]) < 1e-13) break;
  }
  return u;
}

template <size_t N, typename Weights>
SurfaceBinding bind(const TriSurface& s, const std::vector<Vec3>& nodes, const std::vector<std::array<int32_t, N>>& elems,
                    Weights weights) {
  if (elems.empty()) throw InputError("cannot bind a surface to an empty mesh");
  if (s.nodes.empty()) throw InputError("cannot bind an empty surface");
  const ElementGrid grid(nodes, elems);
  SurfaceBinding b;
  b.nodes_per_element = int(N);
  b.nodes.resize(s.nodes.size());
  b.weights.resize(s.nodes.size());
  b.element.resize(s.nodes.size());
  b.outside.resize(s.nodes.size());
#pragma omp parallel for schedule(dynamic, 256)
  for (long vi = 0; vi < long(s.nodes.size()); ++vi) {
    const Vec3& p = s.nodes[size_t(vi)];
    double best = std::numeric_limits<double>::max();
    int32_t best_e = -1;
    std::array<double, 8> best_w{};
    int found_ring = -1;
    // Search rings outward; once something was found, one more ring settles the nearest.
    for (int r = 0; r <= grid.max_ring() && (found_ring < 0 || r <= found_ring + 1) && best > 0; ++r) {
      grid.ring(p, r, [&](int32_t e) {
        double out = 0;
        const auto w = weights(gather(nodes, elems[size_t(e)]), p, out);
        if (out < best) {
          best = out;
          best_e = e;
          best_w = w;
        }
      });
      if (best_e >= 0 && found_ring < 0) found_ring = r;
    }
    b.element[size_t(vi)] = best_e;
    b.outside[size_t(vi)] = best;
    b.weights[size_t(vi)] = best_w;
    b.nodes[size_t(vi)].fill(elems[size_t(best_e)][0]);
    for (size_t k = 0; k < N; ++k) b.nodes[size_t(vi)][k] = elems[size_t(best_e)][k];
  }
  return b;
}

}  // namespace

SurfaceBinding bind_surface(const TriSurface& surface, const TetMesh& mesh) {
  return bind(surface, mesh.nodes, mesh.elems, [](const std::array<Vec3, 4>& x, const Vec3& p, double& out) {
    const auto l = barycentric(x, p);
    out = std::max(0.0, -std::min({l[0], l[1], l[2], l[3]}));
    return std::array<double, 8>{l[0], l[1], l[2], l[3], 0, 0, 0, 0};
  });
}

SurfaceBinding bind_surface(const TriSurface& surface, const HexMesh& mesh) {
  return bind(surface, mesh.nodes, mesh.elems, [](const std::array<Vec3, 8>& x, const Vec3& p, double& out) {
    const Vec3 u = inverse_trilinear(x, p);
    out = 0;
    for (double c : u) out = std::max({out, -c, c - 1.0});
    return trilinear(u);
  });
}

std::vector<Vec3> surface_displacement(const SurfaceBinding& b, const std::vector<Vec3>& u) {
  std::vector<Vec3> out(b.nodes.size(), Vec3{0, 0, 0});
  for (size_t i = 0; i < b.nodes.size(); ++i)
    for (int k = 0; k < b.nodes_per_element; ++k) {
      const size_t n = size_t(b.nodes[i][size_t(k)]);
      if (n >= u.size()) throw InputError("node displacement array is shorter than the mesh bound to the surface");
      for (size_t d = 0; d < 3; ++d) out[i][d] += b.weights[i][size_t(k)] * u[n][d];
    }
  return out;
}

DeformedSurfaceWriter::DeformedSurfaceWriter(const std::filesystem::path& dir, std::string name, TriSurface rest,
                                             SurfaceBinding binding)
    : dir_(dir), name_(std::move(name)), rest_(std::move(rest)), binding_(std::move(binding)), pvd_(dir / (name_ + ".pvd")) {
  if (binding_.nodes.size() != rest_.nodes.size()) throw InputError("surface binding does not match the surface");
}

std::filesystem::path DeformedSurfaceWriter::write_frame(double time, const std::vector<Vec3>& node_displacement) {
  const auto disp = surface_displacement(binding_, node_displacement);
  std::vector<Vec3> points = rest_.nodes;
  Field f{field::kDisplacement, 3, {}};
  f.values.reserve(disp.size() * 3);
  for (size_t i = 0; i < points.size(); ++i)
    for (size_t d = 0; d < 3; ++d) {
      points[i][d] += disp[i][d];
      f.values.push_back(disp[i][d]);
    }
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "_%05d.vtp", frame_++);
  const auto path = dir_ / (name_ + suffix);
  write_vtp(path, points, rest_.tris, {f});
  pvd_.add(time, path.filename());
  pvd_.write();
  return path;
}

}  // namespace eb::mesh
