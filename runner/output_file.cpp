#include "runner/output_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "runner/backend.hpp"

namespace streamlab {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw RunError(fmt::format("cannot write '{}': {}", path, why));
}

// Writes and closes `tmp`; returns the errno text of the first failure, or "".
std::string write_all(const std::string& tmp, std::string_view text) {
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return std::strerror(errno);
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  int saved = errno;
  ok = (std::fclose(f) == 0) && ok;
  return ok ? "" : std::strerror(saved ? saved : errno);
}

}  // namespace

void write_output_file(const std::string& path, std::string_view text) {
  if (path == "-") {
    std::cout << text << std::flush;
    return;
  }
  if (std::filesystem::is_directory(path)) fail(path, "it is a directory");
  std::string tmp = fmt::format("{}.tmp-{}", path, ::getpid());
  if (std::string why = write_all(tmp, text); !why.empty()) {
    std::remove(tmp.c_str());
    fail(path, why);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    fail(path, why);
  }
}

}  // namespace streamlab
