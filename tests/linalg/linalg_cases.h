#pragma once
// What each linalg test source is instantiated for. Every per-backend source is compiled twice:
// into test_linalg (subject: the host, reference: Eigen in fp64) and into test_linalg_gpu
// (EB_LINALG_TEST_CUDA; subject: the device, reference: the host backend of the same format and
// precision; label `gpu`, skipped without a usable device).
#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "solvers/common/cuda_info.h"
#include "solvers/linalg/linear_operator.h"
#include "tests/linalg/linalg_test_util.h"

namespace eb::linalg {
inline void PrintTo(Format f, std::ostream* os) { *os << to_string(f); }
}  // namespace eb::linalg

namespace eb::linalg::test {

#if defined(EB_LINALG_TEST_CUDA)
constexpr Location kSubject = Location::Device;
#else
constexpr Location kSubject = Location::Host;
#endif

#define EB_LINALG_SKIP_WITHOUT_DEVICE()                                                 \
  do {                                                                                  \
    if (::eb::linalg::test::kSubject == ::eb::linalg::Location::Device &&               \
        ::eb::cuda_device_count() == 0)                                                 \
      GTEST_SKIP() << "no usable CUDA device: " << ::eb::cuda_device_info(0).reason;    \
  } while (0)

enum class Precision { Fp32, Fp64 };
inline std::string to_string(Precision p) { return p == Precision::Fp32 ? "fp32" : "fp64"; }
inline void PrintTo(Precision p, std::ostream* os) { *os << to_string(p); }

// Named test matrices (fp64). Real meshes come from the data folder; absent -> empty matrix.
//   armadillo  Armadillo13K.msh, 13,230 nodes (39,690 DOFs), base clamped along y
//   raptor     raptorTetra_8418.vtu, 2,996 nodes, base clamped along y
//   hand       hand_olivier.mesh, 20,541 nodes (61,623 DOFs), 78,233 tets, clamped at the low end
//              of its long axis (y)
//   box5/box6  the benchmark's cantilever, 12 x 3 x 3 cubes of 5 / 6 tets, clamped at x = 0
//   random     random SPD blocks, 700 block rows
//   planted    planted_blocks(101): a row coupled to all, a diagonal-only row, a partial slice
struct NamedProblem {
  AssembledMatrix<double> A;
  std::vector<double> b;  // a load for the elastic problems; random otherwise
  bool available() const { return A.rows > 0; }
};

inline NamedProblem make_problem(const std::string& name) {
  auto elastic = [](const mesh::TetMesh& m, const std::string& n, int axis) {
    if (m.elems.empty()) return NamedProblem{};
    ElasticProblem p = clamped_problem(m, n, axis);
    return NamedProblem{std::move(p.K), std::move(p.b)};
  };
  auto random_rhs = [](AssembledMatrix<double> A) {
    std::vector<double> b = random_vector(size_t(A.rows), 11);
    return NamedProblem{std::move(A), std::move(b)};
  };
  if (name == "armadillo") return elastic(load_data_mesh("Armadillo13K.msh"), name, 1);
  if (name == "raptor") return elastic(load_data_mesh("raptorTetra_8418.vtu"), name, 1);
  if (name == "hand") return elastic(load_data_mesh("hand_olivier.mesh"), name, 1);
  if (name == "box5") return elastic(box_cantilever(12, 5), name, 0);
  if (name == "box6") return elastic(box_cantilever(12, 6), name, 0);
  if (name == "random") return random_rhs(random_spd_blocks(700, 6, 3));
  if (name == "planted") return random_rhs(planted_blocks(101, 5));
  throw std::logic_error("unknown test matrix " + name);
}

// One build per process (each test case runs in its own process under ctest).
inline const NamedProblem& problem(const std::string& name) {
  static std::map<std::string, NamedProblem> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, make_problem(name)).first;
  return it->second;
}

#define EB_LINALG_SKIP_WITHOUT_MATRIX(name)                                                        \
  do {                                                                                             \
    if (!::eb::linalg::test::problem(name).available())                                            \
      GTEST_SKIP() << "mesh of '" << (name) << "' not found in the data folder (third-party data)"; \
  } while (0)

inline std::string case_label(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// A named matrix in a format and a precision (the SpMV and conversion checks).
struct FormatCase {
  std::string matrix;
  Format format;
  Precision precision;
};
inline std::string label(const FormatCase& c) {
  return case_label(c.matrix + "_" + to_string(c.format) + "_" + to_string(c.precision));
}
inline std::string format_case_name(const ::testing::TestParamInfo<FormatCase>& i) { return label(i.param); }
inline void PrintTo(const FormatCase& c, std::ostream* os) { *os << label(c); }
// Every format in both precisions for each named matrix.
inline std::vector<FormatCase> format_cases(const std::vector<std::string>& matrices) {
  std::vector<FormatCase> out;
  for (const std::string& m : matrices)
    for (Format f : all_formats())
      for (Precision p : {Precision::Fp32, Precision::Fp64}) out.push_back({m, f, p});
  return out;
}

// Calls body(T{}) with T the precision's type (float or double).
template <class Body>
void with_precision(Precision p, Body&& body) {
  if (p == Precision::Fp64)
    body(double{});
  else
    body(float{});
}

}  // namespace eb::linalg::test
