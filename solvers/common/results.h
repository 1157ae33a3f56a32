#pragma once
// Result files: atomic writes, machine/build provenance, CSV helpers.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace eb {

// Writes `text` to `path` atomically: a temporary file in the same folder, then rename, so a
// reader (or a crash) never leaves half a file under the final name.
void write_file_atomic(const std::filesystem::path& path, const std::string& text);
void write_json_atomic(const std::filesystem::path& path, const nlohmann::json& j);
// Reads a JSON file written earlier (a manifest, a meta.json to extend); InputError naming the
// file when it is missing or not JSON.
nlohmann::json read_json_file(const std::filesystem::path& path);

// Machine, build and git provenance recorded in every result file.
nlohmann::json machine_info(int cuda_device = 0);
nlohmann::json build_json();

// Peak resident set size of this process (bytes).
std::size_t peak_host_memory_bytes();

// Minimal CSV table: a header and rows of numbers/strings, written atomically.
class CsvTable {
 public:
  explicit CsvTable(std::vector<std::string> columns) : columns_(std::move(columns)) {}
  void add_row(std::vector<std::string> cells);
  std::string str() const;
  void write(const std::filesystem::path& path) const { write_file_atomic(path, str()); }
  static std::string num(double v);  // shortest round-trip representation
  const std::vector<std::string>& columns() const { return columns_; }

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace eb
