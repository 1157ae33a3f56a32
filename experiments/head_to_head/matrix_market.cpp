#include "experiments/head_to_head/matrix_market.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "meshes/errors.h"

namespace eb::head_to_head {
namespace {

struct File {
  std::FILE* f = nullptr;
  explicit File(const std::filesystem::path& p) : f(std::fopen(p.c_str(), "w")) {
    if (!f) throw RuntimeFailure("cannot write " + p.string());
  }
  ~File() {
    if (f) std::fclose(f);
  }
};

struct Reader {
  std::filesystem::path path;
  std::ifstream in;
  long line_no = 0;
  explicit Reader(const std::filesystem::path& p) : path(p), in(p) {
    if (!in) throw InputError(p.string() + ": cannot open the Matrix Market file");
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw InputError(path.string() + ":" + std::to_string(line_no) + ": " + why);
  }
  // The banner's words after %%MatrixMarket (lower-case as written).
  std::string banner() {
    std::string line;
    if (!std::getline(in, line)) fail("empty file");
    ++line_no;
    if (line.rfind("%%MatrixMarket", 0) != 0) fail("no %%MatrixMarket banner");
    return line;
  }
  // The next line that is not a comment or blank.
  std::istringstream data() {
    std::string line;
    while (std::getline(in, line)) {
      ++line_no;
      if (!line.empty() && line[0] != '%' && line.find_first_not_of(" \t\r") != std::string::npos)
        return std::istringstream(line);
    }
    fail("the file ends early");
  }
};

}  // namespace

void write_matrix_market(const std::filesystem::path& path, const linalg::AssembledMatrix<double>& a) {
  File out(path);
  std::fprintf(out.f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %zu\n", a.rows, a.cols, a.nnz());
  for (std::size_t k = 0; k < a.nnz(); ++k) std::fprintf(out.f, "%d %d %.17g\n", a.row[k] + 1, a.col[k] + 1, a.val[k]);
  if (std::ferror(out.f)) throw RuntimeFailure("writing " + path.string() + " failed");
}

void write_matrix_market(const std::filesystem::path& path, const std::vector<double>& v) {
  File out(path);
  std::fprintf(out.f, "%%%%MatrixMarket matrix array real general\n%zu 1\n", v.size());
  for (double x : v) std::fprintf(out.f, "%.17g\n", x);
  if (std::ferror(out.f)) throw RuntimeFailure("writing " + path.string() + " failed");
}

linalg::AssembledMatrix<double> read_matrix_market_matrix(const std::filesystem::path& path) {
  Reader r(path);
  const std::string banner = r.banner();
  if (banner.find("coordinate") == std::string::npos || banner.find("real") == std::string::npos)
    r.fail("expected a `coordinate real` matrix, found '" + banner + "'");
  const bool symmetric = banner.find("symmetric") != std::string::npos;
  long rows = 0, cols = 0, entries = 0;
  if (!(r.data() >> rows >> cols >> entries) || rows < 0 || cols < 0 || entries < 0) r.fail("bad size line");
  std::vector<linalg::Triplet<double>> t;
  t.reserve(std::size_t(symmetric ? 2 * entries : entries));
  for (long k = 0; k < entries; ++k) {
    long i = 0, j = 0;
    double v = 0;
    if (!(r.data() >> i >> j >> v)) r.fail("bad entry");
    if (i < 1 || i > rows || j < 1 || j > cols) r.fail("entry (" + std::to_string(i) + ", " + std::to_string(j) + ") outside the matrix");
    t.push_back({linalg::Index(i - 1), linalg::Index(j - 1), v});
    if (symmetric && i != j) t.push_back({linalg::Index(j - 1), linalg::Index(i - 1), v});
  }
  return linalg::assemble_from_triplets(linalg::Index(rows), linalg::Index(cols), std::move(t));
}

std::vector<double> read_matrix_market_vector(const std::filesystem::path& path) {
  Reader r(path);
  const std::string banner = r.banner();
  if (banner.find("array") == std::string::npos || banner.find("real") == std::string::npos)
    r.fail("expected an `array real` vector, found '" + banner + "'");
  long rows = 0, cols = 0;
  if (!(r.data() >> rows >> cols) || rows < 0 || cols != 1) r.fail("bad size line (a vector has one column)");
  std::vector<double> v(static_cast<std::size_t>(rows));
  for (auto& x : v)
    if (!(r.data() >> x)) r.fail("bad value");
  return v;
}

}  // namespace eb::head_to_head
