#include "meshes/text_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "meshes/errors.h"

namespace eb::mesh {

TextReader::TextReader(const std::filesystem::path& path) : name_(path.string()) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(name_ + ": file not found");
  if (std::filesystem::is_directory(path, ec)) throw InputError(name_ + ": is a directory, not a mesh file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(name_ + ": cannot open for reading");
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  in.seekg(0);
  data_.resize(size_t(size));
  if (size > 0 && !in.read(data_.data(), size)) throw InputError(name_ + ": read error");
}

TextReader::TextReader(std::string name, std::string content) : name_(std::move(name)), data_(std::move(content)) {}

void TextReader::seek(size_t pos) {
  pos = std::min(pos, data_.size());
  if (pos >= pos_)
    line_ += size_t(std::count(data_.begin() + long(pos_), data_.begin() + long(pos), '\n'));
  else
    line_ = 1 + size_t(std::count(data_.begin(), data_.begin() + long(pos), '\n'));
  pos_ = pos;
}

void TextReader::skip_space() {
  const size_t n = data_.size();
  while (pos_ < n) {
    const char c = data_[pos_];
    if (c == '\n') {
      ++line_;
      ++pos_;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++pos_;
    } else if (comment_ && c == comment_) {
      while (pos_ < n && data_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
}

bool TextReader::at_end() {
  skip_space();
  return pos_ >= data_.size();
}

std::string_view TextReader::try_token() {
  skip_space();
  const size_t start = pos_, n = data_.size();
  while (pos_ < n && !std::isspace(static_cast<unsigned char>(data_[pos_]))) ++pos_;
  return std::string_view(data_).substr(start, pos_ - start);
}

std::string_view TextReader::token(const char* what) {
  const auto t = try_token();
  if (t.empty()) fail(std::string("unexpected end of file while reading ") + what + " (truncated file?)");
  return t;
}

double TextReader::real(const char* what) {
  const auto t = token(what);
  double v = 0.0;
  if (!parse_real(t, v)) fail("expected a number for " + std::string(what) + ", found '" + std::string(t) + "'");
  if (!std::isfinite(v)) fail("non-finite value '" + std::string(t) + "' in " + what);
  return v;
}

int64_t TextReader::integer(const char* what) {
  const auto t = token(what);
  int64_t v = 0;
  if (!parse_integer(t, v)) fail("expected an integer for " + std::string(what) + ", found '" + std::string(t) + "'");
  return v;
}

std::string_view TextReader::rest_of_line() {
  const size_t start = pos_, n = data_.size();
  while (pos_ < n && data_[pos_] != '\n') ++pos_;
  size_t end = pos_;
  if (pos_ < n) {
    ++pos_;
    ++line_;
  }
  if (end > start && data_[end - 1] == '\r') --end;
  return std::string_view(data_).substr(start, end - start);
}

bool TextReader::next_line(std::string_view& out) {
  if (pos_ >= data_.size()) return false;
  last_line_ = line_;
  out = rest_of_line();
  return true;
}

size_t TextReader::checked_count(int64_t n, size_t min_bytes, const std::string& what) const {
  if (n < 0) fail("negative " + what + " " + std::to_string(n));
  return checked_count_from(pos_, uint64_t(n), min_bytes, what);
}

size_t TextReader::checked_count_from(size_t from, uint64_t n, size_t min_bytes, const std::string& what, size_t line) const {
  // Text items are separated by at least one byte that the last one may lack.
  const uint64_t left = from < data_.size() ? uint64_t(data_.size() - from) + 1 : 1;
  if (min_bytes > 0 && n > left / min_bytes)
    fail_at(line ? line : line_, what + " " + std::to_string(n) + " cannot fit in the " + std::to_string(left - 1) +
         " bytes left in the file (truncated file or corrupt header?)");
  return size_t(n);
}

void TextReader::fail(const std::string& message) const { fail_at(line_, message); }

void TextReader::fail_at(size_t line, const std::string& message) const {
  throw InputError(name_ + ":" + std::to_string(line) + ": " + message);
}

bool parse_real(std::string_view s, double& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  if (r.ec == std::errc::result_out_of_range) {
    out = HUGE_VAL;  // reported as non-finite by the caller
    return true;
  }
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_integer(std::string_view s, int64_t& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool exact_integer(double v, int64_t& out) {
  constexpr double kLimit = 9007199254740992.0;  // 2^53
  if (!(v >= -kLimit && v <= kLimit) || v != std::floor(v)) return false;
  out = int64_t(v);
  return true;
}

size_t split_tokens(std::string_view line, std::string_view* tokens, size_t max) {
  size_t count = 0, i = 0;
  const size_t n = line.size();
  while (count < max) {
    while (i < n && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i >= n) break;
    const size_t start = i;
    while (i < n && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    tokens[count++] = line.substr(start, i - start);
  }
  return count;
}

std::string lowercase_extension(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return ext;
}

}  // namespace eb::mesh
