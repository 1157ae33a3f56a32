#pragma once
// Output files appear complete or not at all: everything is written to a temporary file in the
// destination folder and renamed over the target on commit(). A failure (exception) before
// commit() removes the temporary, so a bad input never leaves a partial output behind.
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

namespace eb::mesh {

class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target, bool binary = true);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ofstream& stream() { return out_; }
  // Flushes, checks the stream state and renames the temporary onto the target.
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  std::ofstream out_;
  bool committed_ = false;
};

// Convenience: AtomicFile + callback; throws InputError naming the file on I/O failure.
void write_atomically(const std::filesystem::path& target, const std::function<void(std::ostream&)>& body,
                      bool binary = true);

}  // namespace eb::mesh
