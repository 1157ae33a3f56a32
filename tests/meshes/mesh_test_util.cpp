#include "mesh_test_util.h"

#include <array>
#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "meshes/mesh_io.h"
#include "meshes/sphere.h"

namespace eb::mesh::test {

std::filesystem::path temp_dir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string test = info ? std::string(info->test_suite_name()) + "_" + info->name() : "x";
  auto dir = std::filesystem::temp_directory_path() / ("eb_meshes_" + std::to_string(::getpid())) / (test + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::filesystem::path data_dir() {
  std::filesystem::path d = EB_MESH_DATA_DIR;
  if (const char* env = std::getenv("ELASTOBENCH_DATA"); env && *env) d = env;
  return std::filesystem::is_directory(d) ? d : std::filesystem::path();
}

MeshSpec ball_file_spec(const std::filesystem::path& dir, int target_elements) {
  write_surface(dir / "ball.obj", make_icosphere(3));
  MeshSpec f;
  f.source = "file";
  f.file = "ball.obj";
  f.target_elements = target_elements;
  return f;
}

void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

CliResult run_cli(const std::string& args) {
  CliResult r;
  const std::string cmd = std::string(EB_MESH_CLI) + " " + args + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

size_t count_files(const std::filesystem::path& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

}  // namespace eb::mesh::test
