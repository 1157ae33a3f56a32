#include "meshes/atomic_file.h"

#include <atomic>
#include <system_error>

#include <unistd.h>

#include "meshes/errors.h"

namespace eb::mesh {
namespace {

std::filesystem::path temp_name(const std::filesystem::path& target) {
  // pid + counter: concurrent writers (threads or processes) never share a temporary.
  static std::atomic<unsigned> counter{0};
  auto name = target.filename().string();
  name = "." + name + ".tmp" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
  return target.parent_path() / name;
}

}  // namespace

AtomicFile::AtomicFile(std::filesystem::path target, bool binary)
    : target_(std::move(target)), temp_(temp_name(target_)) {
  if (target_.filename().empty()) throw InputError("output path '" + target_.string() + "' names no file");
  const auto dir = target_.parent_path();
  if (!dir.empty() && !std::filesystem::is_directory(dir))
    throw InputError("cannot write " + target_.string() + ": folder " + dir.string() + " does not exist");
  out_.open(temp_, binary ? std::ios::out | std::ios::binary | std::ios::trunc : std::ios::out | std::ios::trunc);
  if (!out_) throw InputError("cannot open " + temp_.string() + " for writing (output " + target_.string() + ")");
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

void AtomicFile::commit() {
  out_.flush();
  const bool ok = bool(out_);
  out_.close();
  if (!ok || out_.fail()) throw RuntimeFailure("write error on " + target_.string() + " (disk full?)");
  std::error_code ec;
  std::filesystem::rename(temp_, target_, ec);
  if (ec) throw RuntimeFailure("cannot rename " + temp_.string() + " to " + target_.string() + ": " + ec.message());
  committed_ = true;
}

void write_atomically(const std::filesystem::path& target, const std::function<void(std::ostream&)>& body,
                      bool binary) {
  AtomicFile file(target, binary);
  body(file.stream());
  file.commit();
}

}  // namespace eb::mesh
