// The cuSPARSE-backed CSR operator (cusparse_operator.h).
#include <cusparse.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "meshes/errors.h"
#include "solvers/common/cuda_info.h"
#include "solvers/linalg/cusparse_operator.h"
#include "solvers/linalg/device_formats.cuh"

namespace eb::linalg {
namespace {

void check(cusparseStatus_t s, const char* what) {
  if (s != CUSPARSE_STATUS_SUCCESS)
    throw RuntimeFailure(std::string("cuSPARSE ") + what + ": " + cusparseGetErrorString(s));
}

template <class T>
constexpr cudaDataType value_type() {
  return std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
}

template <class T>
class CusparseCsrOperator final : public LinearOperator<T> {
 public:
  explicit CusparseCsrOperator(const CsrMatrix<T>& a) : rows_(a.rows) {
    if (a.rows != a.cols) throw InputError("cuSPARSE CSR operator: the matrix is not square");
    // cuSPARSE wants offsets and columns of one index type: 32-bit where the entries fit.
    const bool wide = a.nnz() > std::size_t(std::numeric_limits<int32_t>::max());
    const cusparseIndexType_t itype = wide ? CUSPARSE_INDEX_64I : CUSPARSE_INDEX_32I;
    if (wide) {
      ptr64_.upload(a.row_ptr);
      std::vector<int64_t> c(a.col.begin(), a.col.end());
      col64_.upload(c);
    } else {
      std::vector<int32_t> p(a.row_ptr.begin(), a.row_ptr.end());
      ptr32_.upload(p);
      col32_.upload(a.col);
    }
    val_.upload(a.val);
    std::vector<T> d(std::size_t(a.rows), T(0));
    linalg::diagonal(a, d.data());
    diag_.upload(d);
    cuda::DeviceBuffer<T> x(std::size_t(rows_), "cuSPARSE operator probe"), y(std::size_t(rows_), "cuSPARSE operator probe");
    check(cusparseCreate(&handle_), "create");
    check(cusparseCreateCsr(&mat_, rows_, rows_, int64_t(a.nnz()), wide ? (void*)ptr64_.data() : (void*)ptr32_.data(),
                            wide ? (void*)col64_.data() : (void*)col32_.data(), val_.data(), itype, itype,
                            CUSPARSE_INDEX_BASE_ZERO, value_type<T>()),
          "create CSR");
    check(cusparseCreateDnVec(&x_, rows_, x.data(), value_type<T>()), "create x");
    check(cusparseCreateDnVec(&y_, rows_, y.data(), value_type<T>()), "create y");
    std::size_t bytes = 0;
    const T one = 1, zero = 0;
    check(cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, x_, &zero, y_, value_type<T>(),
                                  kAlgorithm, &bytes),
          "SpMV buffer size");
    buffer_.resize(bytes ? bytes : 1, "cuSPARSE SpMV workspace");
    check(cusparseSpMV_preprocess(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, x_, &zero, y_, value_type<T>(),
                                  kAlgorithm, buffer_.data()),
          "SpMV preprocess");
    EB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~CusparseCsrOperator() override {
    cusparseDestroyDnVec(x_);
    cusparseDestroyDnVec(y_);
    cusparseDestroySpMat(mat_);
    cusparseDestroy(handle_);
  }
  Index rows() const override { return rows_; }
  Location location() const override { return Location::Device; }
  void apply(const T* x, T* y, StreamHandle stream) const override {
    const T one = 1, zero = 0;
    check(cusparseSetStream(handle_, cuda_stream(stream)), "set stream");
    check(cusparseDnVecSetValues(x_, const_cast<T*>(x)), "x");
    check(cusparseDnVecSetValues(y_, y), "y");
    check(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat_, x_, &zero, y_, value_type<T>(), kAlgorithm,
                       buffer_.data()),
          "SpMV");
  }
  void diagonal(T* d, StreamHandle stream) const override {
    EB_CUDA_CHECK(cudaMemcpyAsync(d, diag_.data(), diag_.bytes(), cudaMemcpyDeviceToDevice, cuda_stream(stream)));
  }
  std::string name() const override { return "csr (cuSPARSE SpMV)"; }
  typename LinearOperator<T>::Storage hot_storage() const override { return {val_.data(), val_.bytes()}; }

 private:
  static constexpr cusparseSpMVAlg_t kAlgorithm = CUSPARSE_SPMV_CSR_ALG2;
  Index rows_;
  cuda::DeviceBuffer<int32_t> ptr32_, col32_;
  cuda::DeviceBuffer<int64_t> ptr64_, col64_;
  cuda::DeviceBuffer<T> val_, diag_;
  mutable cuda::DeviceBuffer<unsigned char> buffer_;
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t mat_ = nullptr;
  // Descriptors of the vectors, re-pointed by each apply() (host-side only: no device work).
  cusparseDnVecDescr_t x_ = nullptr, y_ = nullptr;
};

}  // namespace

template <class T>
std::unique_ptr<LinearOperator<T>> make_cusparse_csr_operator(const CsrMatrix<T>& a) {
  if (cuda_device_count() == 0) throw RuntimeFailure("cuSPARSE CSR operator: " + cuda_device_info(0).reason);
  return std::make_unique<CusparseCsrOperator<T>>(a);
}

template std::unique_ptr<LinearOperator<float>> make_cusparse_csr_operator(const CsrMatrix<float>&);
template std::unique_ptr<LinearOperator<double>> make_cusparse_csr_operator(const CsrMatrix<double>&);

}  // namespace eb::linalg
