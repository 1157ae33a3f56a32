#include "experiments/head_to_head/solver_system.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "meshes/errors.h"
#include "solvers/bcsr_pcg/bcsr_pcg_simulation.h"
#include "solvers/common/timers.h"
#include "solvers/hexmg/hexmg_simulation.h"
#include "solvers/linalg/element_gather.h"
#include "solvers/linalg/spmv_cpu.h"

namespace eb::head_to_head {

double true_relative_residual(const linalg::CsrMatrix<double>& A, const std::vector<double>& b, const double* x) {
  std::vector<double> ax(b.size());
  linalg::spmv(A, x, ax.data());
  double rr = 0, bb = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    rr += (b[i] - ax[i]) * (b[i] - ax[i]);
    bb += b[i] * b[i];
  }
  return bb > 0 ? std::sqrt(rr / bb) : std::sqrt(rr);
}

namespace {
// The systems are taken in fp64 on the CPU, whatever the run's backend.
RunOptions cpu_fp64(RunOptions o) {
  o.backend = Backend::Cpu;
  o.precision = Precision::Fp64;
  return o;
}
SolverSystem named(const Scenario& scenario, const char* family) {
  SolverSystem s;
  s.scene = scenario.name;
  s.family = family;
  return s;
}
}  // namespace

SolverSystem hex_system(const Scenario& scenario, const RunOptions& ro) {
  Stopwatch clock;
  SolverSystem s = named(scenario, "hex");
  s.hex = hexmg::make_hexmg(scenario, cpu_fp64(ro));
  s.elements = s.hex->model().n_elems();
  s.hex->begin_step();
  std::vector<hexmg::HexmgSimulation::Triplet> trip;
  std::vector<double> u;
  s.hex->export_system(trip, s.b, u);
  for (double v : u)
    if (v != 0) throw std::logic_error("head-to-head solvers: hexmg's first step does not start from 0");
  // export_system leaves out zero coefficients; explicit zeros complete every 3x3 node block, so
  // that the pattern is blocked and BCSR takes the matrix (no value changes).
  std::vector<uint64_t> blocks;
  blocks.reserve(trip.size());
  for (const auto& e : trip) blocks.push_back(uint64_t(e.row / 3) << 32 | uint64_t(e.col / 3));
  std::sort(blocks.begin(), blocks.end());
  blocks.erase(std::unique(blocks.begin(), blocks.end()), blocks.end());
  std::vector<linalg::Triplet<double>> t;
  t.reserve(trip.size() + 9 * blocks.size());
  for (const auto& e : trip) t.push_back({linalg::Index(e.row), linalg::Index(e.col), e.value});
  for (const uint64_t bk : blocks) {
    const auto r0 = linalg::Index(3 * (bk >> 32)), c0 = linalg::Index(3 * (bk & 0xffffffffu));
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) t.push_back({r0 + i, c0 + j, 0.0});
  }
  std::vector<uint64_t>().swap(blocks);
  std::vector<hexmg::HexmgSimulation::Triplet>().swap(trip);
  const auto n = linalg::Index(s.b.size());
  s.A = linalg::assemble_from_triplets(n, n, std::move(t));
  s.csr = linalg::to_csr(s.A);
  s.setup_seconds = clock.elapsed_ms() / 1000.0;
  return s;
}

std::vector<double> mask_element_matrices(int64_t elements, int npe, const std::vector<int32_t>& connectivity,
                                          const std::vector<uint8_t>& constrained, std::vector<double> local) {
  const int L = 3 * npe;
  for (int64_t e = 0; e < elements; ++e) {
    const int32_t* nodes = &connectivity[std::size_t(e * npe)];
    double* K = &local[std::size_t(e * L * L)];
    for (int r = 0; r < L; ++r)
      for (int c = 0; c < L; ++c) {
        const bool fixed_r = constrained[std::size_t(nodes[r / 3])] >> (r % 3) & 1;
        const bool fixed_c = constrained[std::size_t(nodes[c / 3])] >> (c % 3) & 1;
        if ((fixed_r || fixed_c) && !(nodes[r / 3] == nodes[c / 3] && r % 3 == c % 3)) K[r * L + c] = 0;
      }
  }
  return local;
}

namespace {
void add_element_products(int64_t begin, int64_t end, int npe, const int32_t* connectivity, const double* masked,
                          const double* x, double* y) {
  const int L = 3 * npe;
  double xe[24], ye[24];
  for (int64_t e = begin; e < end; ++e) {
    const int32_t* nodes = connectivity + e * npe;
    const double* K = masked + e * L * L;
    for (int a = 0; a < npe; ++a)
      for (int i = 0; i < 3; ++i) xe[3 * a + i] = x[3 * std::size_t(nodes[a]) + std::size_t(i)];
    for (int r = 0; r < L; ++r) {
      double acc = 0;
      for (int c = 0; c < L; ++c) acc += K[r * L + c] * xe[c];
      ye[r] = acc;
    }
    for (int a = 0; a < npe; ++a)
      for (int i = 0; i < 3; ++i) y[3 * std::size_t(nodes[a]) + std::size_t(i)] += ye[3 * a + i];
  }
}
}  // namespace

void element_matrix_product(int64_t elements, int npe, const std::vector<int32_t>& connectivity,
                            const std::vector<double>& masked, const double* x, double* y, std::size_t n,
                            std::vector<std::vector<double>>& scratch) {
  if (npe > 8) throw std::logic_error("element_matrix_product: at most 8 nodes per element");
  const int threads = elements < 4096 ? 1 : omp_get_max_threads();
  if (threads == 1) {
    std::fill(y, y + n, 0.0);
    add_element_products(0, elements, npe, connectivity.data(), masked.data(), x, y);
    return;
  }
  scratch.resize(std::size_t(threads));
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    std::vector<double>& yt = scratch[std::size_t(t)];
    yt.assign(n, 0.0);
    add_element_products(elements * t / threads, elements * (t + 1) / threads, npe, connectivity.data(), masked.data(),
                         x, yt.data());
  }
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < int64_t(n); ++i) {
    double acc = 0;
    for (int t = 0; t < threads; ++t) acc += scratch[std::size_t(t)][std::size_t(i)];
    y[i] = acc;
  }
}

SolverSystem tet_system(const Scenario& scenario, const RunOptions& ro, int warm_steps) {
  using bcsr_pcg::Phase;
  using bcsr_pcg::PhaseArray;
  Stopwatch clock;
  SolverSystem s = named(scenario, "tet");
  auto sim = bcsr_pcg::make_bcsr_pcg(scenario, cpu_fp64(ro));
  if (warm_steps > 0) sim->advance(warm_steps);
  if (sim->validity().nonfinite_steps > 0)
    throw RuntimeFailure("head-to-head solvers: bcsr-pcg diverged on " + scenario.name + " before its system was taken");
  const auto& setup = sim->setup();
  sim->set_coefficients(sim->dynamic_coefficients());
  sim->set_load_time(double(sim->steps_done()) * setup.dt, setup.dt);
  sim->run_phase(Phase::Rotation);
  sim->run_phase(Phase::Matrix);
  sim->run_phase(Phase::Update);
  linalg::BcsrMatrix<double> m = linalg::pattern_matrix<double>(setup.plan);
  m.val = sim->get_array(PhaseArray::matrix);
  if (m.val.size() != m.nnz()) throw std::logic_error("head-to-head solvers: bcsr-pcg's matrix is not in its plan's pattern");
  s.b = sim->get_array(PhaseArray::rhs);
  s.A = linalg::to_assembled(m);
  s.csr = linalg::to_csr(s.A);
  s.elements = setup.num_elements;
  auto conn = std::make_shared<std::vector<int32_t>>(setup.connectivity);
  auto masked = std::make_shared<std::vector<double>>(
      mask_element_matrices(s.elements, 4, setup.connectivity, setup.constrained, sim->get_array(PhaseArray::local)));
  auto scratch = std::make_shared<std::vector<std::vector<double>>>();
  const int64_t elements = s.elements;
  const std::size_t n = s.b.size();
  s.element_product = [=](const double* x, double* y) {
    element_matrix_product(elements, 4, *conn, *masked, x, y, n, *scratch);
  };
  s.setup_seconds = clock.elapsed_ms() / 1000.0;
  return s;
}

}  // namespace eb::head_to_head
