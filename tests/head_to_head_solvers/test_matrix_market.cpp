// Matrix Market files of the solver comparison: a written matrix and vector read back give the
// same doubles, and a malformed file is refused naming the file and line.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "experiments/head_to_head/matrix_market.h"
#include "meshes/errors.h"

namespace eb::head_to_head {
namespace {

namespace fs = std::filesystem;

fs::path temp(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("eb_h2h_mm_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::create_directories(d);
  return d / name;
}

TEST(MatrixMarket, RoundTripIsExact) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  std::uniform_int_distribution<int> idx(0, 40);
  std::vector<linalg::Triplet<double>> t;
  for (int k = 0; k < 300; ++k) t.push_back({idx(rng), idx(rng), u(rng) * std::pow(10.0, idx(rng) - 20)});
  t.push_back({40, 40, 0.0});  // an explicit zero stays
  const auto a = linalg::assemble_from_triplets(41, 41, t);
  std::vector<double> v(57);
  for (auto& x : v) x = u(rng) / 3.0;
  write_matrix_market(temp("a.mtx"), a);
  write_matrix_market(temp("v.mtx"), v);
  const auto b = read_matrix_market_matrix(temp("a.mtx"));
  EXPECT_TRUE(a == b);
  EXPECT_EQ(read_matrix_market_vector(temp("v.mtx")), v);
}

TEST(MatrixMarket, SymmetricFilesAreExpanded) {
  std::ofstream(temp("s.mtx")) << "%%MatrixMarket matrix coordinate real symmetric\n% comment\n2 2 2\n1 1 4\n2 1 -1\n";
  const auto a = read_matrix_market_matrix(temp("s.mtx"));
  ASSERT_EQ(a.nnz(), 3u);
  EXPECT_EQ(a.val, (std::vector<double>{4, -1, -1}));
}

TEST(MatrixMarket, BadFilesNameTheLine) {
  std::ofstream(temp("bad.mtx")) << "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n";
  try {
    read_matrix_market_matrix(temp("bad.mtx"));
    FAIL() << "an entry outside the matrix was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.mtx:3"), std::string::npos) << e.what();
  }
  std::ofstream(temp("short.mtx")) << "%%MatrixMarket matrix array real general\n3 1\n1\n2\n";
  EXPECT_THROW(read_matrix_market_vector(temp("short.mtx")), InputError);
  EXPECT_THROW(read_matrix_market_vector(temp("bad.mtx")), InputError);  // a matrix is not a vector
}

}  // namespace
}  // namespace eb::head_to_head
