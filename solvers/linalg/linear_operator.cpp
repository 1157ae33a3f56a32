#include "solvers/linalg/linear_operator.h"

#include <algorithm>

#include "meshes/errors.h"

namespace eb::linalg {

std::string to_string(Location where) { return where == Location::Host ? "host" : "device"; }

template <class T>
HostFunctionOperator<T>::HostFunctionOperator(Index n, ApplyFn apply, std::vector<T> diag, std::string name)
    : rows_(n), apply_(std::move(apply)), diag_(std::move(diag)), name_(std::move(name)) {
  if (diag_.size() != size_t(rows_))
    throw InputError("operator '" + name_ + "': diagonal has " + std::to_string(diag_.size()) + " entries for " +
                     std::to_string(rows_) + " rows");
}

template <class T>
void HostFunctionOperator<T>::diagonal(T* d, StreamHandle) const {
  std::copy(diag_.begin(), diag_.end(), d);
}

template <class T>
std::unique_ptr<LinearOperator<T>> make_matrix_operator(const AssembledMatrix<T>& a, Format f, Location where) {
  if (where == Location::Device) return detail::make_device_matrix_operator(a, f);
  return std::visit(
      [&](auto&& m) -> std::unique_ptr<LinearOperator<T>> {
        using M = std::decay_t<decltype(m)>;
        return std::make_unique<HostMatrixOperator<M>>(std::move(m), to_string(f) + " (host)");
      },
      make_format(a, f));
}

template <class T>
std::unique_ptr<LinearOperator<T>> make_sliced_bcsr_operator(const SlicedBcsr<T>& s, Location where) {
  const BcsrMatrix<T> b = to_bcsr(s);
  std::vector<T> d(3 * size_t(b.block_rows));
  diagonal(b, d.data());
  if (where == Location::Device) return detail::make_device_sliced_operator(s);
  const Index n = 3 * b.block_rows;
  return std::make_unique<HostFunctionOperator<T>>(
      n, [s](const T* x, T* y) { spmv(s, x, y); }, std::move(d),
      "sliced bcsr (host, " + std::to_string(std::max(1, s.warps_per_slice)) + " warps per slice)");
}

template <class T>
std::vector<T> apply_from_host(const LinearOperator<T>& A, const std::vector<T>& x) {
  if (x.size() != size_t(A.rows()))
    throw InputError("operator '" + A.name() + "': vector of " + std::to_string(x.size()) + " entries for " +
                     std::to_string(A.rows()) + " rows");
  if (A.location() == Location::Device) return detail::device_apply_from_host(A, x, false);
  std::vector<T> y(x.size());
  A.apply(x.data(), y.data());
  return y;
}

template <class T>
std::vector<T> diagonal_from_host(const LinearOperator<T>& A) {
  if (A.location() == Location::Device) return detail::device_apply_from_host(A, std::vector<T>(size_t(A.rows())), true);
  std::vector<T> d(size_t(A.rows()));
  A.diagonal(d.data());
  return d;
}

template class HostFunctionOperator<float>;
template class HostFunctionOperator<double>;
template std::unique_ptr<LinearOperator<float>> make_matrix_operator(const AssembledMatrix<float>&, Format, Location);
template std::unique_ptr<LinearOperator<double>> make_matrix_operator(const AssembledMatrix<double>&, Format, Location);
template std::unique_ptr<LinearOperator<float>> make_sliced_bcsr_operator(const SlicedBcsr<float>&, Location);
template std::unique_ptr<LinearOperator<double>> make_sliced_bcsr_operator(const SlicedBcsr<double>&, Location);
template std::vector<float> apply_from_host(const LinearOperator<float>&, const std::vector<float>&);
template std::vector<double> apply_from_host(const LinearOperator<double>&, const std::vector<double>&);
template std::vector<float> diagonal_from_host(const LinearOperator<float>&);
template std::vector<double> diagonal_from_host(const LinearOperator<double>&);

}  // namespace eb::linalg
