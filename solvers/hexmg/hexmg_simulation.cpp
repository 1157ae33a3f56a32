#include "solvers/hexmg/hexmg_simulation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "assembly/hexmg/hex_element.h"
#include "meshes/errors.h"
#include "solvers/hexmg/smoothed_hierarchy.h"

namespace eb::hexmg {
namespace {

// Number of coarse blocks the fine coefficient (k, l) feeds in the fused Eqs. 10-11.
int galerkin_targets(int k, int l) {
  int n = 1;
  for (int d = 0; d < 3; ++d) {
    const int i = stencil_offset(k, d) + stencil_offset(l, d);
    int c = 0;
    for (int j = -1; j <= 1; ++j)
      if (i - 2 * j >= -1 && i - 2 * j <= 1) ++c;
    n *= c;
  }
  return n;
}

// The smoothed hierarchy's coarse levels (smoothed_hierarchy.h), added to the kernels they
// replace: per block entry a 3x3 block (9 values + a column index) and its 3-vector, 18 flops;
// the Galerkin products 54 flops per block contribution, each reading a block and updating one.
void add_smoothed_work(const SmoothedPlan& p, double per_galerkin, int s, double cycles, double coarse_iterations, double sweeps,
                       KernelWork& gal, KernelWork& gs, KernelWork& res, KernelWork& rst, KernelWork& itp,
                       KernelWork& cg) {
  const double blk = 9.0 * s + 4, vec = 3.0 * s;
  const int nl = p.n_levels();
  for (int l = 1; l < nl; ++l) {
    const SmoothedLevel& S = p.levels[size_t(l)];
    const BlockPattern& Af = l == 1 ? p.A0 : p.levels[size_t(l - 1)].A;
    // per step: the products run on every galerkin_every-th step
    const SmoothedPlan::GalerkinWork g = p.galerkin_work(l);
    const double c_ap = g.ap * per_galerkin, c_rap = g.rap * per_galerkin;
    gal.flops += 54 * (c_ap + c_rap);
    gal.bytes += (c_ap + c_rap) * (blk + 9.0 * s) + per_galerkin * double(Af.nnz() + S.R.nnz()) * blk;
    gal.compulsory_bytes += per_galerkin * double(Af.nnz() + S.P.nnz() + S.R.nnz() + 2 * S.AP.nnz() + S.A.nnz()) * blk;
    gal.launches += 2 * per_galerkin;
    const double a = double(S.A.nnz()), n = double(S.n);
    rst.flops += cycles * 18 * double(S.R.nnz());
    rst.bytes += cycles * (double(S.R.nnz()) * (blk + vec) + n * 2 * vec);
    rst.compulsory_bytes += cycles * (double(S.R.nnz()) * blk + n * 2 * vec);
    rst.launches += cycles;
    itp.flops += cycles * 18 * double(S.P.nnz());
    itp.bytes += cycles * (double(S.P.nnz()) * (blk + vec) + 2.0 * S.P.rows * vec);
    itp.compulsory_bytes += cycles * (double(S.P.nnz()) * blk + 2.0 * S.P.rows * vec);
    itp.launches += cycles;
    if (l + 1 < nl) {
      gs.flops += cycles * sweeps * (18 * a + 55 * n);
      gs.bytes += cycles * sweeps * (a * (blk + vec) + n * 2 * vec);
      gs.compulsory_bytes += cycles * sweeps * (a * blk + n * 2 * vec);
      gs.launches += cycles * sweeps * S.colours();
      res.flops += cycles * 18 * a;
      res.bytes += cycles * (a * (blk + vec) + n * 2 * vec);
      res.compulsory_bytes += cycles * (a * blk + n * 3 * vec);
      res.launches += cycles;
    } else {
      const double iters = coarse_iterations + 1;
      cg.flops += cycles * iters * (18 * a + 30 * n);
      cg.bytes += cycles * iters * (a * (blk + vec) + n * 10 * vec);
      cg.compulsory_bytes += cycles * (a * blk + n * 4 * vec);
      cg.launches += cycles;
    }
  }
}

}  // namespace

std::vector<KernelWork> work_breakdown(const Model& m, int s, double cycles, double coarse_iterations) {
  const int nl = m.n_levels();
  const double ne = double(m.n_elems());
  const double ix = 4.0;  // index bytes
  std::vector<double> V(nl), NB(nl), CH(nl, 0), PA(nl, 0), GF(nl, 0);
  int tk[27];
  for (int k = 0; k < 27; ++k) {
    tk[k] = 0;
    for (int l = 0; l < 27; ++l) tk[k] += galerkin_targets(k, l);
  }
  for (int l = 0; l < nl; ++l) {
    const Level& L = m.levels[l];
    V[l] = L.n_real;
    for (int32_t x = 0; x < L.n_padded; ++x) {
      if (L.nbr[x][kCentre] < 0) continue;
      for (int k = 0; k < 27; ++k) NB[l] += L.nbr[x][k] >= 0;
      if (!L.child.empty())
        for (int k = 0; k < 27; ++k)
          if (L.child[x][k] >= 0) {
            CH[l] += 1;
            GF[l] += 9.0 * (27 + 2 * tk[k]);
          }
      if (!L.parent.empty())
        for (int p = 0; p < 8; ++p) PA[l] += L.parent[x][p] >= 0;
    }
  }
  double incid = 0;  // vertex-element incidences = 8 ne
  for (const auto& v : m.ve)
    for (int s8 = 0; s8 < 8; ++s8) incid += v[s8] >= 0;
  const double nc = m.ncurves;
  std::vector<KernelWork> w;
  // rotations
  w.push_back({"rotations", m.solver.linear ? 0.0 : 700 * ne, m.solver.linear ? 0.0 : ne * (8 * ix + 42.0 * s),
               m.solver.linear ? 0.0 : ne * (8 * ix + 18.0 * s) + V[0] * 3.0 * s, m.solver.linear ? 0.0 : 1.0});
  // simulation-level assembly
  {
    const double per_vertex_bytes = 8 * ix + s * (1 + 9 + 3 * (nc + 1) + nc) + 1 + 27 * ix + (NB[0] / V[0]) + s * (243 + 6);
    // per incidence: R and E, and the element's 8 corner indices and displacements (local forces)
    w.push_back({"assembly", incid * 1330 + V[0] * 60, V[0] * per_vertex_bytes + incid * (10.0 * s + 8 * (ix + 3.0 * s)),
                 V[0] * per_vertex_bytes + ne * 10.0 * s, 1.0});
  }
  KernelWork gal{"coarse_assembly", 0, 0, 0, double(nl - 1)};
  for (int l = 1; l < nl && !m.smoothed; ++l) {
    gal.flops += GF[l];
    gal.bytes += V[l] * (27 * ix + 243.0 * s + 1) + CH[l] * (243.0 * s + 1);
    gal.compulsory_bytes += V[l] * (27 * ix + 243.0 * s + 1) + V[l - 1] * (243.0 * s + 1);
  }
  w.push_back(gal);
  const double sweeps = m.solver.pre_smooth + m.solver.post_smooth;
  KernelWork gs{"gauss_seidel", 0, 0, 0, 0}, res{"residual", 0, 0, 0, 0}, rst{"restriction", 0, 0, 0, 0},
      itp{"interpolation", 0, 0, 0, 0}, cg{"coarse_cg", 0, 0, 0, 0};
  // The smoothed hierarchy keeps the paper's smoothing and residual on level 0 only.
  for (int l = 0; l + 1 < (m.smoothed ? std::min(nl, 2) : nl); ++l) {
    const double offd = NB[l] - V[l];
    gs.flops += cycles * sweeps * (18 * offd + 55 * V[l]);
    gs.bytes += cycles * sweeps * (V[l] * (27 * ix + 6.0 * s) + NB[l] * 9.0 * s + offd * 3.0 * s);
    gs.compulsory_bytes += cycles * sweeps * (V[l] * (27 * ix + 9.0 * s) + NB[l] * 9.0 * s);
    gs.launches += cycles * sweeps * 8;
    res.flops += cycles * (18 * NB[l] + 9 * V[l]);
    res.bytes += cycles * (V[l] * (27 * ix + 6.0 * s) + NB[l] * 12.0 * s);
    res.compulsory_bytes += cycles * (V[l] * (27 * ix + 9.0 * s) + NB[l] * 9.0 * s);
    res.launches += cycles;
    if (m.smoothed) continue;
    rst.flops += cycles * 6 * CH[l + 1];
    rst.bytes += cycles * (V[l + 1] * (27 * ix + 6.0 * s) + CH[l + 1] * 3.0 * s);
    rst.compulsory_bytes += cycles * (V[l + 1] * (27 * ix + 6.0 * s) + V[l] * 3.0 * s);
    rst.launches += cycles;
    itp.flops += cycles * (3 * PA[l] + 6 * V[l]);
    itp.bytes += cycles * (V[l] * (8 * ix + 6.0 * s + 1) + PA[l] * 3.0 * s);
    itp.compulsory_bytes += cycles * (V[l] * (8 * ix + 6.0 * s + 1) + V[l + 1] * 3.0 * s);
    itp.launches += cycles;
  }
  if (m.smoothed) {
    gal.launches = 0;
    add_smoothed_work(*m.smoothed, 1.0 / m.solver.galerkin_every, s, cycles, coarse_iterations, sweeps, gal, gs, res, rst, itp, cg);
    for (KernelWork& k : w)
      if (k.kernel == gal.kernel) k = gal;  // pushed above, before the smoothing counts
    if (m.solver.mg_pcg) {  // per CG iteration one level-0 product and about 7 vector passes
      res.flops += cycles * (18 * NB[0] + 14 * 3 * V[0]);
      res.bytes += cycles * (V[0] * (27 * ix + 21.0 * s) + NB[0] * 12.0 * s);
      res.compulsory_bytes += cycles * (V[0] * (27 * ix + 21.0 * s) + NB[0] * 9.0 * s);
      res.launches += cycles * 8;
    }
  } else {
    const int l = nl - 1;
    const double iters = coarse_iterations + 1;  // + the initial residual
    cg.flops = cycles * iters * (18 * NB[l] + 30 * V[l]);
    cg.bytes = cycles * iters * (V[l] * (27 * ix + 33.0 * s) + NB[l] * 12.0 * s);
    cg.compulsory_bytes = cycles * (V[l] * (27 * ix + 12.0 * s) + NB[l] * 9.0 * s);  // on-chip after the first pass
    cg.launches = cycles;
  }
  if (m.solver.tolerance_mode) {
    // |r| after every cycle and once before: level-0 residuals
    res.flops += (cycles + 1) * (18 * NB[0] + 9 * V[0]);
    res.bytes += (cycles + 1) * (V[0] * (27 * ix + 6.0 * s) + NB[0] * 12.0 * s);
    res.compulsory_bytes += (cycles + 1) * (V[0] * (27 * ix + 9.0 * s) + NB[0] * 9.0 * s);
    res.launches += cycles + 1;
  }
  w.push_back(gs);
  w.push_back(res);
  w.push_back(rst);
  w.push_back(itp);
  w.push_back(cg);
  w.push_back({"update", 27 * V[0], V[0] * (ix + 18.0 * s), V[0] * 18.0 * s, 1.0});
  if (m.solver.jacobi_pcg) {
    // Jacobi-PCG replaces the multigrid solve: per iteration one level-0 product and 5 vectors.
    std::vector<KernelWork> p(w.begin(), w.begin() + 3);
    p.push_back({"jacobi_pcg", cycles * (18 * NB[0] + 40 * V[0]),
                 cycles * (V[0] * (27 * ix + 36.0 * s) + NB[0] * 12.0 * s),
                 cycles * (V[0] * (27 * ix + 36.0 * s) + NB[0] * 9.0 * s), cycles});
    p.push_back(w.back());
    return p;
  }
  return w;
}

std::vector<KernelWork> HexmgSimulation::kernel_work() const {
  const int s = precision_ == Precision::Fp32 ? 4 : 8;
  return work_breakdown(m_, s, mean_cycles(), mean_coarse_iterations());
}

WorkCounts HexmgSimulation::work_per_step() const {
  WorkCounts w;
  for (const auto& k : kernel_work()) {
    w.flops += k.flops;
    w.bytes += k.bytes;
  }
  // The paper's Table 3 convention (cache re-reads counted); details() has the compulsory bytes.
  w.bytes_convention = BytesConvention::Requested;
  return w;
}

SolverStats HexmgSimulation::solver_stats() const {
  SolverStats st;
  st.iterations = last_iterations_;
  if (step_ == 0) return st;
  double r0, r1;
  if (have_trace_residuals_) {
    r0 = trace_initial_;
    r1 = trace_final_;
  } else {
    // Computed on request (outside the timed steps): the last step's system is still assembled.
    const_cast<HexmgSimulation*>(this)->last_step_residuals(r0, r1);
  }
  st.initial_residual = r0;
  st.final_residual = r1;
  // Only a solve that stops on a tolerance can miss it; a fixed number of V-cycles reports the
  // reduction reached (final / initial) and nothing else.
  if (m_.solver.tolerance_mode || m_.solver.jacobi_pcg) st.converged = last_converged_;
  return st;
}

ValidityCounts HexmgSimulation::validity() const {
  ValidityCounts v = element_counts_;
  v.solver_failures = solver_failures_;
  v.first_solver_failure_step = first_solver_failure_step_;
  // The linear variant computes no rotations and so no det F.
  if (m_.solver.linear) return v;
  v.det_f_checked = true;
  v.inverted_threshold = kInvertedVolumeRatio;
  add_checks(v, const_cast<HexmgSimulation*>(this)->check_volumes(), step_);
  return v;
}

std::string to_string(PhaseArray a) {
  switch (a) {
    case PhaseArray::A: return "A";
    case PhaseArray::b: return "b";
    case PhaseArray::u: return "u";
    case PhaseArray::r: return "r";
    case PhaseArray::u0: return "u0";
    case PhaseArray::v0: return "v0";
    case PhaseArray::a0: return "a0";
    case PhaseArray::R: return "R";
  }
  return "?";
}

std::string to_string(const Phase& p) {
  const std::string l = "(level " + std::to_string(p.level) + ")";
  switch (p.kind) {
    case PhaseKind::Rotations: return "rotations";
    case PhaseKind::FineAssembly: return "fine assembly";
    case PhaseKind::Galerkin: return "Galerkin " + l;
    case PhaseKind::SmoothColour: return "Gauss-Seidel colour " + std::to_string(p.colour) + " " + l;
    case PhaseKind::SmoothSweep: return "Gauss-Seidel sweep " + l;
    case PhaseKind::Residual: return "residual " + l;
    case PhaseKind::Restrict: return "restriction " + l;
    case PhaseKind::Interpolate: return "interpolation " + l;
    case PhaseKind::CoarseSolve: return "coarsest CG";
    case PhaseKind::Update: return "Newmark update";
  }
  return "?";
}

size_t HexmgSimulation::array_size(PhaseArray a, int level) const {
  if (level < 0 || level >= m_.n_levels())
    throw std::invalid_argument("hexmg: level " + std::to_string(level) + " does not exist (" +
                                std::to_string(m_.n_levels()) + " levels)");
  const size_t n = size_t(m_.levels[level].n_padded), n0 = size_t(m_.levels[0].n_padded);
  switch (a) {
    case PhaseArray::A: return n * kCoeffs;
    case PhaseArray::b:
    case PhaseArray::u:
    case PhaseArray::r: return n * 3;
    case PhaseArray::u0:
    case PhaseArray::v0:
    case PhaseArray::a0: return n0 * 3;
    case PhaseArray::R: return size_t(m_.n_elems()) * 9;
  }
  return 0;
}

std::vector<double> HexmgSimulation::get_array(PhaseArray a, int level) {
  array_size(a, level);  // checks the level
  return read_array(a, level);
}

void HexmgSimulation::set_array(PhaseArray a, int level, const std::vector<double>& values) {
  if (values.size() != array_size(a, level))
    throw std::invalid_argument("hexmg: set_array(" + to_string(a) + ", level " + std::to_string(level) + ") needs " +
                                std::to_string(array_size(a, level)) + " values, got " + std::to_string(values.size()));
  write_array(a, level, values);
}

void HexmgSimulation::check_phase(const Phase& p) const {
  const int last = m_.n_levels() - 1;
  bool ok = p.level >= 0 && p.level <= last;
  switch (p.kind) {
    case PhaseKind::Galerkin: ok = ok && p.level >= 1; break;
    case PhaseKind::SmoothColour: ok = ok && p.colour >= 0 && p.colour < 8; break;
    case PhaseKind::Restrict:
    case PhaseKind::Interpolate: ok = ok && p.level < last; break;
    default: break;
  }
  if (!ok)
    throw std::invalid_argument("hexmg: phase " + to_string(p) + " does not exist on a hierarchy of " +
                                std::to_string(m_.n_levels()) + " levels");
}

void HexmgSimulation::run_phase(const Phase& p) {
  check_phase(p);
  run_phase_impl(p);
}

nlohmann::json HexmgSimulation::details() const {
  nlohmann::json j = model_details(m_);
  j["backend"] = to_string(backend_);
  j["precision"] = to_string(precision_);
  j["mean_cycles_per_step"] = mean_cycles();
  j["mean_coarse_cg_iterations"] = mean_coarse_iterations();
  // Element-steps with det F <= 0.05 seen by the steps' rotations (states 0 .. steps - 1;
  // validity() adds the latest state).
  j["inverted_element_steps"] = element_counts_.inverted_element_steps;
  if (element_counts_.first_inverted_element >= 0)
    j["first_inverted"] = {{"element", element_counts_.first_inverted_element}, {"step", element_counts_.first_inverted_step}};
  nlohmann::json k = nlohmann::json::array();
  const double ne = double(m_.n_elems());
  for (const auto& w : kernel_work())
    k.push_back({{"kernel", w.kernel},
                 {"flops", w.flops},
                 {"bytes", w.bytes},
                 {"compulsory_bytes", w.compulsory_bytes},
                 {"flops_per_element", w.flops / ne},
                 {"bytes_per_element", w.bytes / ne},
                 {"launches", w.launches}});
  j["kernels"] = k;
  j["byte_count_convention"] =
      "bytes: every byte each kernel reads or writes (Dick 2011 Table 3, cache hits counted); compulsory_bytes: "
      "each array touched once";
  add_details(j);
  return j;
}

std::vector<double> HexmgSimulation::elastic_forces(const std::vector<double>& slot_u, const std::vector<double>& R) const {
  const auto K = unit_hex_stiffness(m_.poisson, m_.h);
  std::vector<double> f(slot_u.size(), 0.0);
  for (int64_t e = 0; e < m_.n_elems(); ++e) {
    const double* Re = &R[9 * e];
    double q[8][3];  // R^T (p + u) - p
    for (int b = 0; b < 8; ++b) {
      const int32_t v = m_.ev[e][b];
      double x[3];
      for (int d = 0; d < 3; ++d) x[d] = corner_bit(b, d) * m_.h + slot_u[3 * v + d];
      for (int i = 0; i < 3; ++i) q[b][i] = Re[i] * x[0] + Re[3 + i] * x[1] + Re[6 + i] * x[2] - corner_bit(b, i) * m_.h;
    }
    for (int a = 0; a < 8; ++a) {
      double t[3] = {0, 0, 0};
      for (int b = 0; b < 8; ++b)
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 3; ++j) t[i] += K[(3 * a + i) * 24 + 3 * b + j] * q[b][j];
      const int32_t v = m_.ev[e][a];
      for (int i = 0; i < 3; ++i)
        f[3 * v + i] += m_.youngs[e] * (Re[3 * i] * t[0] + Re[3 * i + 1] * t[1] + Re[3 * i + 2] * t[2]);
    }
  }
  return f;
}

void HexmgSimulation::cell_fields(std::vector<mesh::Field>& out) {
  const std::vector<double> u = slot_displacement();
  const std::vector<double> R = rotations();
  const int64_t ne = m_.n_elems();
  std::vector<double> vm(ne), energy(ne), angle(ne), mat(ne);
  const double nu = m_.poisson;
  for (int64_t e = 0; e < ne; ++e) {
    double uc[8][3];
    for (int c = 0; c < 8; ++c)
      for (int d = 0; d < 3; ++d) uc[c][d] = u[3 * m_.ev[e][c] + d];
    double F[9];
    average_deformation_gradient(uc, m_.h, F);
    const double* Re = &R[9 * e];
    double G[9];  // R^T F
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) G[3 * i + j] = Re[i] * F[j] + Re[3 + i] * F[3 + j] + Re[6 + i] * F[6 + j];
    double eps[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) eps[3 * i + j] = 0.5 * (G[3 * i + j] + G[3 * j + i]) - (i == j ? 1.0 : 0.0);
    const double E = m_.youngs[e];
    const double lambda = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
    const double tr = eps[0] + eps[4] + eps[8];
    double sig[9], w = 0;
    for (int i = 0; i < 9; ++i) {
      sig[i] = 2 * mu * eps[i] + (i % 4 == 0 ? lambda * tr : 0.0);
      w += 0.5 * sig[i] * eps[i];
    }
    const double s11 = sig[0], s22 = sig[4], s33 = sig[8];
    vm[e] = std::sqrt(0.5 * ((s11 - s22) * (s11 - s22) + (s22 - s33) * (s22 - s33) + (s33 - s11) * (s33 - s11)) +
                      3.0 * (sig[1] * sig[1] + sig[5] * sig[5] + sig[2] * sig[2]));
    energy[e] = w;
    angle[e] = rotation_angle(Re);
    mat[e] = m_.material_id[e];
  }
  out.push_back({mesh::field::kVonMises, 1, std::move(vm)});
  out.push_back({mesh::field::kEnergyDensity, 1, std::move(energy)});
  out.push_back({mesh::field::kRotationAngle, 1, std::move(angle)});
  out.push_back({mesh::field::kMaterialId, 1, std::move(mat)});
}

std::vector<double> HexmgSimulation::smoothed_array(SmoothedArray, int) {
  throw InputError("hexmg: this variant or backend has no smoothed hierarchy");
}
void HexmgSimulation::set_smoothed_array(SmoothedArray, int, const std::vector<double>&) {
  throw InputError("hexmg: this variant or backend has no smoothed hierarchy");
}
void HexmgSimulation::run_smoothed_phase(SmoothedPhaseKind, int) {
  throw InputError("hexmg: this variant or backend has no smoothed hierarchy");
}

ConvergenceTrace HexmgSimulation::jacobi_pcg(int, double, double) {
  throw InputError("hexmg: the Jacobi-PCG comparison solver (Fig. 11) runs on the cpu backend only");
}

std::unique_ptr<HexmgSimulation> make_hexmg_cpu_impl(const Scenario& sc, const RunOptions& o);
#if defined(ELASTOBENCH_HAVE_CUDA)
std::unique_ptr<HexmgSimulation> make_hexmg_cuda_impl(const Scenario& sc, const RunOptions& o);
#endif

std::unique_ptr<HexmgSimulation> make_hexmg(const Scenario& sc, const RunOptions& o) {
  if (o.backend == Backend::Cpu) return make_hexmg_cpu_impl(sc, o);
#if defined(ELASTOBENCH_HAVE_CUDA)
  return make_hexmg_cuda_impl(sc, o);
#else
  throw InputError("hexmg: this build has no CUDA backend");
#endif
}

}  // namespace eb::hexmg
