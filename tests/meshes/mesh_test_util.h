#pragma once
#include <filesystem>
#include <string>

#include "meshes/mesh.h"
#include "meshes/mesh_spec.h"

namespace eb::mesh::test {

// Fresh empty folder under the system temp dir, unique per test.
std::filesystem::path temp_dir(const std::string& name);
// Third-party data folder; empty path when absent (tests then GTEST_SKIP).
std::filesystem::path data_dir();
void write_text(const std::filesystem::path& p, const std::string& text);
// Writes a closed icosphere to dir/ball.obj; returns a MeshSpec (source "file") voxelizing it to
// about target_elements voxels.
MeshSpec ball_file_spec(const std::filesystem::path& dir, int target_elements);

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout + stderr
};
// Runs the mesh CLI driver with the given argument string (shell-quoted by the caller).
CliResult run_cli(const std::string& args);

// Number of files in a folder (to check no partial output was left).
size_t count_files(const std::filesystem::path& dir);

}  // namespace eb::mesh::test
