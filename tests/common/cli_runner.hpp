#pragma once
// Runs the winnow CLI as a child process for end-to-end tests.
#include <filesystem>
#include <string>
#include <vector>

namespace winnow::test {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

/// Runs `winnow args...` (no shell: arguments are passed as they are).
CliResult run_cli(const std::vector<std::string>& args);

/// Expects the CLI's bad-input contract: exit status 2 and one line on stderr that contains
/// `names` (the file or the problem).
void expect_one_line_error(const CliResult& r, const std::string& names);

/// A fresh empty directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  /// Names of the files in the directory (to check that nothing was left behind).
  std::vector<std::string> files() const;

 private:
  std::filesystem::path path_;
};

inline std::filesystem::path data_path(const std::string& name) {
  return std::filesystem::path(WINNOW_DATA_DIR) / name;
}
inline std::filesystem::path test_data_path(const std::string& name) {
  return std::filesystem::path(WINNOW_TEST_DATA_DIR) / name;
}

}  // namespace winnow::test
