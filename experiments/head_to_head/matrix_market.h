#pragma once
// Matrix Market files (NIST's text exchange format) of the comparison's systems, for the solvers
// that run in another process (CuPy's CG, cupy_cg.py): the matrix as `coordinate real general`
// (every stored entry, 1-based), a vector as `array real general` (one column). Values are
// written with 17 significant digits, so that a round trip gives the same doubles.
#include <filesystem>
#include <vector>

#include "solvers/linalg/sparse_formats.h"

namespace eb::head_to_head {

void write_matrix_market(const std::filesystem::path& path, const linalg::AssembledMatrix<double>& a);
void write_matrix_market(const std::filesystem::path& path, const std::vector<double>& v);
// InputError naming the file and line for a header, size or entry that is not what the writer
// writes (comments `%` are skipped; `symmetric` coordinate files are expanded).
linalg::AssembledMatrix<double> read_matrix_market_matrix(const std::filesystem::path& path);
std::vector<double> read_matrix_market_vector(const std::filesystem::path& path);

}  // namespace eb::head_to_head
