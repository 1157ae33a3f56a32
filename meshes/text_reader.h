#pragma once
// Reading of mesh files with diagnostics that name the file and line. The whole file is loaded
// into memory (mesh files are at most a few hundred MB) so that tokenizing is a pointer walk;
// binary blocks inside text formats (legacy VTK, binary STL/PLY) are read from the same buffer.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace eb::mesh {

class TextReader {
 public:
  // Throws InputError naming the file when it is missing or unreadable.
  explicit TextReader(const std::filesystem::path& path);
  TextReader(std::string name, std::string content);

  const std::string& name() const { return name_; }
  const std::string& data() const { return data_; }
  size_t position() const { return pos_; }
  // Moves to byte `pos` (e.g. after a binary block); recounts lines so messages stay right.
  void seek(size_t pos);
  size_t line() const { return line_; }
  bool at_end();  // true when only whitespace (and comments) remain

  // Characters from `comment` to the end of the line are skipped by next_token/at_end.
  void set_comment_char(char c) { comment_ = c; }

  // Next whitespace-separated token; fails with "unexpected end of file while reading <what>".
  std::string_view token(const char* what);
  // Next token if any, else empty view (no failure).
  std::string_view try_token();
  double real(const char* what);      // rejects NaN/Inf with the line number
  int64_t integer(const char* what);  // decimal integer
  // Rest of the current line (without the newline) and moves to the next line.
  std::string_view rest_of_line();
  // Next full line (without '\r\n'); false at end of file.
  bool next_line(std::string_view& out);
  // Number of the line last returned by next_line (for messages about it).
  size_t last_line() const { return last_line_; }

  // A count `n` the file announces for items of at least `min_bytes` each, still to be read
  // from here on: refused when negative or when the rest of the file cannot hold that many, so
  // that nothing is allocated for a header claiming 10^12 nodes in a 1 KB file. Text readers
  // pass 1 (what is allocated stays within a small multiple of the file's size) so that a
  // merely truncated file still fails where it ends, naming that line.
  size_t checked_count(int64_t n, size_t min_bytes, const std::string& what) const;
  // The same with the rest of the file's bytes counted from `from` (binary blocks); a message
  // names `line` when given (the header line that announced the count), else the current one.
  size_t checked_count_from(size_t from, uint64_t n, size_t min_bytes, const std::string& what, size_t line = 0) const;

  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail_at(size_t line, const std::string& message) const;

 private:
  void skip_space();
  std::string name_;
  std::string data_;
  size_t pos_ = 0;
  size_t line_ = 1;
  size_t last_line_ = 0;
  char comment_ = '\0';
};

// Number parsing shared with the line-oriented readers (OBJ, PLY). Return false on malformed
// text; finite-ness is checked by the caller so it can name the line.
bool parse_real(std::string_view s, double& out);
bool parse_integer(std::string_view s, int64_t& out);

// `v` as an integer when it is exactly one: binary and XML files may store indices, counts and
// cell types in any numeric type, and converting a fraction, NaN or 1e300 to an integer type
// is undefined. False beyond 2^53, where doubles stop holding every integer.
bool exact_integer(double v, int64_t& out);

// Splits a line into whitespace-separated tokens (at most `max` of them, the rest ignored).
size_t split_tokens(std::string_view line, std::string_view* tokens, size_t max);

std::string lowercase_extension(const std::filesystem::path& path);

}  // namespace eb::mesh
