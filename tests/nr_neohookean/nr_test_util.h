#pragma once
// Shared helpers of the nr-neohookean tests. Every test source is compiled into test_nr_neohookean
// (CPU) and, in CUDA builds, again into test_nr_neohookean_gpu (EB_NR_TEST_CUDA defined, label
// gpu), where the CUDA cases run and skip themselves without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "solvers/common/cuda_info.h"
#include "solvers/common/registry.h"
#include "solvers/common/scenario.h"
#include "solvers/nr_neohookean/assembly_strategy.h"
#include "solvers/nr_neohookean/nr_neohookean_setup.h"
#include "solvers/nr_neohookean/nr_neohookean_simulation.h"

namespace eb::nr_neohookean::test {

#if defined(EB_NR_TEST_CUDA)
inline constexpr Backend kBackend = Backend::Cuda;
#define EB_NR_SKIP_WITHOUT_DEVICE() \
  if (cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device: " << cuda_device_info(0).reason
#else
inline constexpr Backend kBackend = Backend::Cpu;
#define EB_NR_SKIP_WITHOUT_DEVICE() (void)0
#endif

// The strategy the end-to-end tests run: all-GPU (GlobalNZ) in the GPU binary, AssemblyCPU_Opt on
// the CPU.
#if defined(EB_NR_TEST_CUDA)
inline const char* kStrategy = "globalnz";
#else
inline const char* kStrategy = "cpu-opt";
#endif

inline RunOptions run_options(Backend b, Precision p, int threads = 1) {
  RunOptions o;
  o.backend = b;
  o.precision = p;
  o.threads = threads;
  return o;
}

// The cube-compression scenario (50 mm, symmetry planes, top face prescribed) at n elements per
// edge, with `overrides` after.
inline Scenario cube(int n, std::vector<std::string> overrides = {}) {
  std::vector<std::string> o = {"mesh.elements_per_edge=" + std::to_string(n)};
  o.insert(o.end(), overrides.begin(), overrides.end());
  return load_scenario("cube-compression", o);
}

// Positions X + a random perturbation of `amplitude` x the smallest element size (each component
// uniform in [-amplitude, amplitude] h), fixed seed: a deformed state with no inverted element for
// amplitudes below ~0.2.
inline std::vector<double> perturbed_positions(const NrSetup& s, double amplitude, unsigned seed) {
  const double h = std::cbrt(6.0 * s.min_volume);
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(-amplitude * h, amplitude * h);
  std::vector<double> x(size_t(3 * s.num_nodes));
  for (size_t n = 0; n < size_t(s.num_nodes); ++n)
    for (int d = 0; d < 3; ++d) x[3 * n + size_t(d)] = s.nodes[n][size_t(d)] + u(g);
  return x;
}

// The simulation of `sc` with this binary's backend and strategy.
inline std::unique_ptr<NrSimulation> make_sim(Scenario sc, Precision p, const char* strategy = kStrategy) {
  sc.solver.variant = strategy;
  return make_nr_simulation(sc, run_options(kBackend, p));
}

// The reference tangent and force in fp64, written from the element library directly (triplets
// summed; no map, no strategy), with the map's Dirichlet rule, as an assembled matrix.
inline linalg::AssembledMatrix<double> reference_tangent(const NrSetup& s, const std::vector<double>& x,
                                                         std::vector<double>& force) {
  std::vector<linalg::Triplet<double>> t;
  force.assign(x.size(), 0.0);
  const tet::Lame<double> lame{s.lambda, s.mu};
  auto fixed = [&](int64_t d) { return (s.constrained[size_t(d / 3)] >> (d % 3)) & 1; };
  for (int64_t e = 0; e < s.num_elements; ++e) {
    double xe[4][3], f[12], K[144];
    int64_t dof[12];
    for (int a = 0; a < 4; ++a)
      for (int i = 0; i < 3; ++i) {
        dof[3 * a + i] = 3 * int64_t(s.connectivity[size_t(4 * e + a)]) + i;
        xe[a][i] = x[size_t(dof[3 * a + i])];
      }
    tet::Tet4Reference<double> ref;
    for (int k = 0; k < 9; ++k) ref.Dm_inv[k] = s.Dm_inv[size_t(9 * e + k)];
    ref.volume = s.volume[size_t(e)];
    double det;
    tet::neo_hookean_element_force_tangent(ref, xe, lame, f, K, &det);
    for (int r = 0; r < 12; ++r) {
      if (!fixed(dof[r])) force[size_t(dof[r])] += f[r];
      for (int c = 0; c < 12; ++c) {
        const bool keep = dof[r] == dof[c] || (!fixed(dof[r]) && !fixed(dof[c]));
        t.push_back({linalg::Index(dof[r]), linalg::Index(dof[c]), keep ? K[12 * r + c] : 0.0});
      }
    }
  }
  return linalg::assemble_from_triplets(linalg::Index(x.size()), linalg::Index(x.size()), std::move(t));
}

// Values in the flat value space of `format` (for the pattern of `s`) as the assembled matrix.
inline linalg::AssembledMatrix<double> from_flat(const NrSetup& s, linalg::Format format,
                                                 const std::vector<double>& values) {
  const linalg::RowPositions rp = linalg::row_positions(linalg::make_format(s.pattern, format));
  linalg::AssembledMatrix<double> a;
  a.rows = a.cols = linalg::Index(rp.row_ptr.size() - 1);
  for (size_t r = 0; r + 1 < rp.row_ptr.size(); ++r)
    for (linalg::Offset k = rp.row_ptr[r]; k < rp.row_ptr[r + 1]; ++k) {
      a.row.push_back(linalg::Index(r));
      a.col.push_back(rp.col[size_t(k)]);
      a.val.push_back(values[size_t(rp.pos[size_t(k)])]);
    }
  return a;
}

// ||a - b||_2 / ||b||_2 over the entries (the same pattern).
inline double relative_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, n = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    d += (a[k] - b[k]) * (a[k] - b[k]);
    n += b[k] * b[k];
  }
  return std::sqrt(d / n);
}

}  // namespace eb::nr_neohookean::test
