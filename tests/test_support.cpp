#include "tests/test_support.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "runner/execute/backend.hpp"
#include "ops/user_kernel.hpp"
#include "runner/core/diagnostics.hpp"

namespace streamlab::test {

std::filesystem::path source_dir() {
  if (const char* env = std::getenv("STREAMLAB_SOURCE_DIR")) return env;
  return STREAMLAB_SOURCE_DIR;
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::filesystem::path> yaml_files(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(source_dir() / dir))
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string diagnostics_of(const std::string& text, const std::string& file, const LoadOptions& options) {
  try {
    load_string(text, file, options);
    return "";
  } catch (const InvalidExperiment& e) {
    return e.what();
  }
}

bool have_gpu(std::string* why) { return cuda_device_count(why) > 0; }

std::optional<std::string> compile_errors(const Experiment& exp, const std::string& arch) {
  try {
    compile_user_kernels(exp, arch);
    return "";
  } catch (const InvalidExperiment& err) {
    return err.what();
  } catch (const RunError& err) {
    MESSAGE("skipped: NVRTC is not installed here (", err.what(), ")");
    return std::nullopt;
  }
}

}  // namespace streamlab::test
