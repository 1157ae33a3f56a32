#include "solvers/linalg/function_operator.h"

#include <algorithm>

#include "meshes/errors.h"

namespace eb::linalg {
namespace {

template <class T>
class HostFunctionOperatorMasked final : public FunctionOperator<T> {
 public:
  HostFunctionOperatorMasked(Index n, typename FunctionOperator<T>::ApplyFn apply, const std::vector<uint8_t>& fixed,
                             std::string name)
      : n_(n), apply_(std::move(apply)), diag_(size_t(n), T(1)), name_(std::move(name)) {
    for (Index i = 0; i < n; ++i)
      if (fixed[size_t(i)]) fixed_.push_back(i);
  }
  Index rows() const override { return n_; }
  Location location() const override { return Location::Host; }
  void apply(const T* x, T* y, StreamHandle s) const override {
    apply_(x, y, s);
    for (Index i : fixed_) y[i] = x[i];
  }
  void diagonal(T* d, StreamHandle) const override {
    std::copy(diag_.begin(), diag_.end(), d);
    for (Index i : fixed_) d[i] = T(1);
  }
  std::string name() const override { return name_; }
  T* diagonal_data() override { return diag_.data(); }

 private:
  Index n_;
  typename FunctionOperator<T>::ApplyFn apply_;
  std::vector<T> diag_;
  std::vector<Index> fixed_;
  std::string name_;
};

}  // namespace

template <class T>
std::unique_ptr<FunctionOperator<T>> make_function_operator(Location where, Index n,
                                                            typename FunctionOperator<T>::ApplyFn apply,
                                                            const std::vector<uint8_t>& fixed_rows, std::string name) {
  if (fixed_rows.size() != size_t(n))
    throw InputError("operator '" + name + "': " + std::to_string(fixed_rows.size()) + " fixed-row flags for " +
                     std::to_string(n) + " rows");
  if (where == Location::Device) return detail::make_device_function_operator<T>(n, std::move(apply), fixed_rows, std::move(name));
  return std::make_unique<HostFunctionOperatorMasked<T>>(n, std::move(apply), fixed_rows, std::move(name));
}

template std::unique_ptr<FunctionOperator<float>> make_function_operator(Location, Index,
                                                                         FunctionOperator<float>::ApplyFn,
                                                                         const std::vector<uint8_t>&, std::string);
template std::unique_ptr<FunctionOperator<double>> make_function_operator(Location, Index,
                                                                          FunctionOperator<double>::ApplyFn,
                                                                          const std::vector<uint8_t>&, std::string);

}  // namespace eb::linalg
