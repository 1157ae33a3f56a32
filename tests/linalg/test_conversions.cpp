// Conversions: every format from the assembled description and back, and through every other
// format, give exactly the input (operator== compares values bitwise-equal); the GPU layout of
// BCSR round-trips and its reference SpMV equals BCSR's bit for bit; bad input is refused with a
// message naming the row/entry. Host only (the conversions are host code).
#include <algorithm>
#include <numeric>

#include "meshes/errors.h"
#include "tests/linalg/linalg_cases.h"

namespace eb::linalg::test {
namespace {

class RoundTrip : public ::testing::TestWithParam<FormatCase> {};

template <class T>
void check_round_trip(const FormatCase& c) {
  const AssembledMatrix<T> A = cast_values<T>(problem(c.matrix).A);
  ASSERT_EQ(A.block, 3);
  const AnyMatrix<T> m = make_format(A, c.format);
  EXPECT_EQ(format_of(m), c.format);
  EXPECT_TRUE(to_assembled(m) == A) << "description -> " << to_string(c.format) << " -> description";
  for (Format g : all_formats()) {
    const AnyMatrix<T> via = make_format(to_assembled(m), g);
    EXPECT_TRUE(make_format(to_assembled(via), c.format) == m)
        << to_string(c.format) << " -> " << to_string(g) << " -> " << to_string(c.format);
  }
}

TEST_P(RoundTrip, Exact) {
  EB_LINALG_SKIP_WITHOUT_MATRIX(GetParam().matrix);
  with_precision(GetParam().precision, [&](auto t) { check_round_trip<decltype(t)>(GetParam()); });
}
INSTANTIATE_TEST_SUITE_P(Formats, RoundTrip, ::testing::ValuesIn(format_cases({"raptor", "box6", "random", "planted"})),
                         format_case_name);

TEST(Conversions, TypedConvertMatchesDirect) {
  const AssembledMatrix<double>& A = problem("planted").A;
  EXPECT_TRUE(convert<CsrMatrix<double>>(to_bcsr(A)) == to_csr(A));
  EXPECT_TRUE(convert<BcsrMatrix<double>>(to_dhyb(A)) == to_bcsr(A));
  EXPECT_TRUE(convert<DcooMatrix<double>>(to_ell(A)) == to_dcoo(A));
  EXPECT_TRUE(convert<HybMatrix<double>>(to_dcsr(A)) == to_hyb(A));
}

TEST(Conversions, PlantedMatrixExercisesEveryPart) {
  const AssembledMatrix<double>& A = problem("planted").A;
  const HybMatrix<double> h = to_hyb(A);
  EXPECT_GT(h.coo.nnz(), 0u) << "the long row must spill into HYB's COO part";
  const EllMatrix<double> e = to_ell(A);
  EXPECT_EQ(e.width, 3 * 100) << "row 0 couples to 99 other block rows and itself";
  const BcsrMatrix<double> b = to_bcsr(A);
  EXPECT_EQ(b.row_ptr[2] - b.row_ptr[1], 1) << "block row 1 holds only its diagonal block";
  EXPECT_NE(b.block_rows % SlicedBcsr<double>::kSliceRows, 0) << "the last slice must be partial";
}

TEST(SlicedBcsr, WarpsPerSliceRule) {
  // 132 SMs (H100): 8 warps below 792 slices (the real meshes: 188-642), 4 from there on (the
  // bunnies of 1,040 and 10,400 slices), fewer only when slices are shorter than that.
  EXPECT_EQ(choose_warps_per_slice(188, 188 * 22, 132), 8);
  EXPECT_EQ(choose_warps_per_slice(791, 791 * 16, 132), 8);
  EXPECT_EQ(choose_warps_per_slice(792, 792 * 16, 132), 4);
  EXPECT_EQ(choose_warps_per_slice(10400, 10400 * 16, 132), 4);
  EXPECT_EQ(choose_warps_per_slice(188, 188 * 6, 132), 4);  // 6 steps: 4 warps, not 8
  EXPECT_EQ(choose_warps_per_slice(188, 188 * 3, 132), 2);
  EXPECT_EQ(choose_warps_per_slice(1, 1, 132), 1);
  EXPECT_EQ(choose_warps_per_slice(0, 0, 132), 1);
}

// The device product's blocks (its fused dot's partial sums): 4 slices a block with one warp per
// slice, 8 / W with W warps per slice; at least one.
TEST(SlicedBcsr, ProductBlocks) {
  EXPECT_EQ(sliced_bcsr_product_blocks(1040, 1), 260u);
  EXPECT_EQ(sliced_bcsr_product_blocks(1041, 1), 261u);
  EXPECT_EQ(sliced_bcsr_product_blocks(1041, 0), 261u) << "0: one warp per slice (the CPU reference's reading)";
  EXPECT_EQ(sliced_bcsr_product_blocks(1040, 2), 260u);
  EXPECT_EQ(sliced_bcsr_product_blocks(1040, 4), 520u);
  EXPECT_EQ(sliced_bcsr_product_blocks(188, 8), 188u);
  EXPECT_EQ(sliced_bcsr_product_blocks(0, 4), 1u);
}

TEST(Conversions, AssemblySumsDuplicatesAndSorts) {
  std::vector<Triplet<double>> t = {{1, 2, 1.0}, {0, 0, 2.0}, {1, 2, 0.5}, {0, 1, -1.0}, {1, 0, 0.0}};
  const AssembledMatrix<double> a = assemble_from_triplets<double>(2, 3, t);
  EXPECT_EQ(a.row, (std::vector<Index>{0, 0, 1, 1}));
  EXPECT_EQ(a.col, (std::vector<Index>{0, 1, 0, 2}));
  EXPECT_EQ(a.val, (std::vector<double>{2.0, -1.0, 0.0, 1.5}));  // the explicit zero stays in the pattern
  EXPECT_EQ(a.block, 1);
  EXPECT_EQ(problem("box6").A.block, 3);
}

TEST(Conversions, HybWidthRule) {
  // 6 rows: at least 2 (a third) must reach column K; rows of length >= 5: 3, >= 6: 1.
  EXPECT_EQ(hyb_default_width({1, 1, 1, 5, 5, 9}), 5);
  EXPECT_EQ(hyb_default_width({4, 4, 4}), 4);
  EXPECT_EQ(hyb_default_width({}), 0);
}

TEST(Conversions, BadInputIsRefusedWithTheRow) {
  // Not 3x3-blocked: row 1 lacks column 2 of the block.
  std::vector<Triplet<double>> t;
  for (Index r = 0; r < 3; ++r)
    for (Index c = 0; c < 3; ++c)
      if (!(r == 1 && c == 2)) t.push_back({r, c, 1.0});
  const AssembledMatrix<double> a = assemble_from_triplets<double>(3, 3, t);
  EXPECT_EQ(a.block, 1);
  try {
    to_bcsr(a);
    ADD_FAILURE() << "BCSR accepted a partial block";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("row 1 "), std::string::npos) << e.what();
  }
  // No diagonal entry in row 2.
  const AssembledMatrix<double> nd = assemble_from_triplets<double>(3, 3, {{0, 0, 1.0}, {1, 1, 1.0}, {2, 0, 1.0}});
  for (Format f : {Format::Dcoo, Format::Dcsr, Format::Dhyb}) {
    try {
      make_format(nd, f);
      ADD_FAILURE() << to_string(f) << " accepted a missing diagonal";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("row 2 has none"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(to_dcsr(assemble_from_triplets<double>(2, 3, {{0, 0, 1.0}})), InputError);
  EXPECT_THROW(to_ell(a, 2), InputError);
  EXPECT_THROW(assemble_from_triplets<double>(2, 2, {{0, 2, 1.0}}), InputError);
  EXPECT_THROW(format_from_string("csc"), InputError);
  EXPECT_EQ(format_from_string("dhyb"), Format::Dhyb);
}

// The GPU layout of BCSR: exact round trip, every block row in exactly one lane, its SpMV equal to
// BCSR's bit for bit (same blocks, same order per row), for several sorting windows.
TEST(SlicedBcsr, RoundTripAndSpmv) {
  for (const char* name : {"planted", "box5", "random"}) {
    const BcsrMatrix<double> b = to_bcsr(problem(name).A);
    const std::vector<double> x = random_vector(3 * size_t(b.block_rows), 9);
    std::vector<double> y(x.size()), ys(x.size());
    spmv(b, x.data(), y.data());
    for (int window : {0, 1, 8, 1000}) {
      const SlicedBcsr<double> s = make_sliced_bcsr(b, window);
      EXPECT_TRUE(to_bcsr(s) == b) << name << " window " << window;
      std::vector<Index> rows;
      for (Index r : s.perm)
        if (r >= 0) rows.push_back(r);
      std::sort(rows.begin(), rows.end());
      std::vector<Index> all(size_t(b.block_rows));
      std::iota(all.begin(), all.end(), Index(0));
      EXPECT_EQ(rows, all) << name << " window " << window;
      EXPECT_EQ(Offset(s.steps()) * SlicedBcsr<double>::kSliceRows - padding_blocks(s), Offset(b.blocks()));
      std::fill(ys.begin(), ys.end(), std::nan(""));
      spmv(s, x.data(), ys.data());
      EXPECT_EQ(ys, y) << name << " window " << window;
    }
  }
}

// Sorting by length inside windows can only shrink the padding (each slice's width is its
// longest row); on the planted matrix the one long row then pads a single slice.
TEST(SlicedBcsr, SortingReducesPadding) {
  const BcsrMatrix<double> b = to_bcsr(problem("box6").A);
  EXPECT_LE(padding_blocks(make_sliced_bcsr(b, 8)), padding_blocks(make_sliced_bcsr(b, 0)));
  EXPECT_LE(padding_blocks(make_sliced_bcsr(b, 1000)), padding_blocks(make_sliced_bcsr(b, 8)));
}

}  // namespace
}  // namespace eb::linalg::test
