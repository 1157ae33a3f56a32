#pragma once
// The host engine (NR_CPU + a host strategy + DCG_CPU): OpenMP over components, the tangent in a
// host operator of the setup's format. The mixed configuration of Fig. 16.10 (right) derives from
// it and moves only the solve to the GPU (nr_neohookean_cuda.cu).
#include <memory>
#include <vector>

#include "solvers/common/timers.h"
#include "solvers/nr_neohookean/nr_neohookean_engine.h"

namespace eb::nr_neohookean {

template <class T>
class HostEngine : public NrEngine<T> {
 public:
  HostEngine(const EngineInput<T>& in, int threads);
  void upload(Vec v, const std::vector<double>& host) override;
  std::vector<double> download(Vec v) override;
  void set_entries(Vec v, const std::vector<int32_t>& idx, const std::vector<double>& val) override;
  void copy(Vec to, Vec from) override;
  void midpoint() override;
  void predict(double dt) override;
  ElementChecks assemble(Vec at, double tangent_scale, double diag_mass) override;
  double residual_dynamic(double mass_coef, double force_coef) override;
  double residual_static() override;
  linalg::CgResult solve() override;
  void step(double alpha) override;
  void finish_dynamic(double momentum_coef, double keep) override;
  StageTimes take_times() override;
  std::vector<double> tangent_values() override;
  double time_spmv_ms(int repeats) override;
  std::string describe_cg() const override;
  AssemblyStrategy<T>& strategy() override { return *strategy_; }

 protected:
  std::vector<T>& vec(Vec v) { return vecs_[int(v)]; }
  const EngineInput<T>& in_;
  int threads_;
  int64_t n_;  // 3 * nodes
  std::vector<T> vecs_[kVecs];
  std::unique_ptr<AssemblyStrategy<T>> strategy_;
  std::unique_ptr<linalg::LinearOperator<T>> A_;
  std::unique_ptr<linalg::CgSolver<T>> cg_;
  StageTimes times_;
};

}  // namespace eb::nr_neohookean
