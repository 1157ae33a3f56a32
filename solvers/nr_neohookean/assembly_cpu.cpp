// The host strategies (Cecka, Lew & Darve 2011, Fig. 16.8): AssemblyCPU, the direct stiffness
// method of Algorithm 1 that locates every entry in the pattern as it adds it, and
// AssemblyCPU_Opt, the same with the locations precomputed (element_value_map.h).
//
// AssemblyCPU runs on one thread (the paper's reference). AssemblyCPU_Opt on one thread is the
// paper's loop; on several threads it computes the element data in parallel into a buffer and
// then sums each value over its contribution list (invert_element_value_map) in parallel. The
// lists are in element order, so the sums are those of the one-thread loop bit for bit and the
// result does not depend on the thread count.
#include <algorithm>
#include <vector>

#include <omp.h>

#include "solvers/nr_neohookean/assembly_strategy.h"

namespace eb::nr_neohookean {

namespace {

template <class T>
class AssemblyCpu final : public AssemblyStrategy<T> {
 public:
  explicit AssemblyCpu(const AssemblyProblem<T>& p)
      : p_(p), rows_(linalg::Index(3 * p.nodes)) {
    // The pattern's K(i, j) as sorted rows, searched per entry (what a general sparse matrix class
    // does on insertion); built from the map's own format so that both strategies fill the same
    // positions. The map's entries already say which are kept (Dirichlet).
    rp_.row_ptr.assign(size_t(rows_) + 1, 0);
    std::vector<std::vector<std::pair<linalg::Index, int64_t>>> rows(static_cast<size_t>(rows_));
    const int L = 12;
    const auto& conn = *p.connectivity;
    for (int64_t e = 0; e < p.elements; ++e)
      for (int r = 0; r < L; ++r)
        for (int c = 0; c < L; ++c) {
          const int32_t pos = p.map->entry[size_t((e * L + r) * L + c)];
          if (pos < 0) continue;
          const linalg::Index gr = 3 * conn[size_t(4 * e + r / 3)] + r % 3;
          const linalg::Index gc = 3 * conn[size_t(4 * e + c / 3)] + c % 3;
          rows[size_t(gr)].push_back({gc, pos});
        }
    for (size_t r = 0; r < rows.size(); ++r) {
      auto& l = rows[r];
      std::sort(l.begin(), l.end());
      l.erase(std::unique(l.begin(), l.end()), l.end());
      rp_.row_ptr[r + 1] = rp_.row_ptr[r] + linalg::Offset(l.size());
      for (const auto& [c, pos] : l) {
        rp_.col.push_back(c);
        rp_.pos.push_back(pos);
      }
    }
  }
  std::string name() const override { return "cpu"; }
  linalg::Location location() const override { return linalg::Location::Host; }
  bool deterministic() const override { return true; }
  AssemblyWork work() const override {
    return {compulsory_assembly_bytes(p_), double(p_.elements) * element_routine_flops()};
  }
  void assemble(const T* x, const AssemblyTargets<T>& out, linalg::StreamHandle) override {
    for (int64_t q = 0; q < out.values.size(); ++q) out.values.at(q) = T(0);
    std::fill(out.force, out.force + rows_, T(0));
    const int32_t* conn = p_.connectivity->data();
    T f[12], K[144];
    for (int64_t e = 0; e < p_.elements; ++e) {
      element_routine(x, conn, p_.supplemental->data(), p_.form, p_.lame, e, f, K, out.checks);
      // The searched pattern holds only the entries the map keeps (Dirichlet), so every (r, c) is
      // offered and the dropped ones are not found.
      for (int r = 0; r < 12; ++r) {
        const linalg::Index gr = 3 * conn[4 * e + r / 3] + r % 3;
        if (p_.map->dof[size_t(12 * e + r)] >= 0) out.force[gr] += out.force_scale * f[r];
        for (int c = 0; c < 12; ++c) add(gr, 3 * conn[4 * e + c / 3] + c % 3, out.tangent_scale * K[12 * r + c], out.values);
      }
    }
  }

 private:
  void add(linalg::Index r, linalg::Index c, T v, const linalg::ValueSegments<T>& values) const {
    const auto b = rp_.col.begin() + rp_.row_ptr[size_t(r)], e = rp_.col.begin() + rp_.row_ptr[size_t(r) + 1];
    const auto it = std::lower_bound(b, e, c);
    if (it != e && *it == c) values.at(rp_.pos[size_t(it - rp_.col.begin())]) += v;
  }
  const AssemblyProblem<T>& p_;
  linalg::Index rows_;
  linalg::RowPositions rp_;
};

template <class T>
class AssemblyCpuOpt final : public AssemblyStrategy<T> {
 public:
  explicit AssemblyCpuOpt(const AssemblyProblem<T>& p)
      : p_(p), threads_(p.threads > 0 ? p.threads : omp_get_max_threads()) {
    if (threads_ > 1) {
      inv_ = linalg::invert_element_value_map(*p.map);
      local_.resize(size_t(p.elements) * 144);
      vec_.resize(size_t(p.elements) * 12);
    }
  }
  std::string name() const override { return "cpu-opt"; }
  linalg::Location location() const override { return linalg::Location::Host; }
  bool deterministic() const override { return true; }
  AssemblyWork work() const override {
    return {compulsory_assembly_bytes(p_) + 4.0 * double(p_.map->entry.size() + p_.map->dof.size()),
            double(p_.elements) * element_routine_flops()};
  }
  void assemble(const T* x, const AssemblyTargets<T>& out, linalg::StreamHandle) override {
    const int32_t* conn = p_.connectivity->data();
    const T* S = p_.supplemental->data();
    const int32_t* entry = p_.map->entry.data();
    const int32_t* dof = p_.map->dof.data();
    const int64_t E = p_.elements;
    const int64_t rows = p_.map->rows;
    if (threads_ <= 1) {
      for (int64_t q = 0; q < out.values.size(); ++q) out.values.at(q) = T(0);
      std::fill(out.force, out.force + rows, T(0));
      T f[12], K[144];
      for (int64_t e = 0; e < E; ++e) {
        element_routine(x, conn, S, p_.form, p_.lame, e, f, K, out.checks);
        for (int q = 0; q < 144; ++q)
          if (const int32_t pos = entry[144 * e + q]; pos >= 0) out.values.at(pos) += out.tangent_scale * K[q];
        for (int r = 0; r < 12; ++r)
          if (const int32_t d = dof[12 * e + r]; d >= 0) out.force[d] += out.force_scale * f[r];
      }
      return;
    }
    T* local = local_.data();
    T* vec = vec_.data();
#pragma omp parallel num_threads(threads_)
    {
#pragma omp for schedule(static)
      for (int64_t e = 0; e < E; ++e) element_routine(x, conn, S, p_.form, p_.lame, e, vec + 12 * e, local + 144 * e, out.checks);
      const int64_t nv = out.values.size();
#pragma omp for schedule(static)
      for (int64_t q = 0; q < nv; ++q) {
        const int64_t b = inv_.value_ptr[size_t(q)], en = inv_.value_ptr[size_t(q) + 1];
        if (b == en) continue;  // padding or a dropped entry: left as it is
        T acc = T(0);
        for (int64_t k = b; k < en; ++k) acc += out.tangent_scale * local[inv_.value_src[size_t(k)]];
        out.values.at(q) = acc;
      }
#pragma omp for schedule(static)
      for (int64_t r = 0; r < rows; ++r) {
        T acc = T(0);
        for (int64_t k = inv_.row_ptr[size_t(r)]; k < inv_.row_ptr[size_t(r) + 1]; ++k)
          acc += out.force_scale * vec[inv_.row_src[size_t(k)]];
        out.force[r] = acc;
      }
    }
  }

 private:
  const AssemblyProblem<T>& p_;
  int threads_;
  linalg::ValueContributions inv_;
  std::vector<T> local_, vec_;
};

}  // namespace

template <class T>
std::unique_ptr<AssemblyStrategy<T>> make_assembly_cpu(const AssemblyProblem<T>& p) {
  return std::make_unique<AssemblyCpu<T>>(p);
}
template <class T>
std::unique_ptr<AssemblyStrategy<T>> make_assembly_cpu_opt(const AssemblyProblem<T>& p) {
  return std::make_unique<AssemblyCpuOpt<T>>(p);
}
// Host strategies hold no device memory.
template <class T>
std::size_t estimate_assembly_cpu(const AssemblyProblem<T>&) {
  return 0;
}
template <class T>
std::size_t estimate_assembly_cpu_opt(const AssemblyProblem<T>&) {
  return 0;
}
template std::size_t estimate_assembly_cpu(const AssemblyProblem<float>&);
template std::size_t estimate_assembly_cpu(const AssemblyProblem<double>&);
template std::size_t estimate_assembly_cpu_opt(const AssemblyProblem<float>&);
template std::size_t estimate_assembly_cpu_opt(const AssemblyProblem<double>&);
template std::unique_ptr<AssemblyStrategy<float>> make_assembly_cpu(const AssemblyProblem<float>&);
template std::unique_ptr<AssemblyStrategy<double>> make_assembly_cpu(const AssemblyProblem<double>&);
template std::unique_ptr<AssemblyStrategy<float>> make_assembly_cpu_opt(const AssemblyProblem<float>&);
template std::unique_ptr<AssemblyStrategy<double>> make_assembly_cpu_opt(const AssemblyProblem<double>&);

}  // namespace eb::nr_neohookean
