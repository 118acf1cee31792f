#include "runner/core/safe_file.hpp"

#include "runner/core/experiment.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <system_error>
#include <vector>

#include <fmt/format.h>

namespace streamlab {
namespace {

struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

FileRead refuse(std::string why, int error = 0) { return {"", std::move(why), error}; }

FileRead failed(int error) {
  return refuse("cannot be read: " + std::generic_category().message(error), error);
}

FileRead not_regular(mode_t mode) {
  return refuse(fmt::format("is not a regular file ({})", file_kind(mode)));
}

std::string outside_message(const std::string& real, const std::string& folder) {
  return fmt::format(
      "leads to '{}', outside the experiment's folder '{}' (files an experiment names must lie in "
      "its folder or below it, symbolic links followed)",
      real, folder);
}

// The path of the file `fd` is open on, as the kernel knows it; nullopt without /proc.
std::optional<std::string> opened_path(int fd) {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(fmt::format("/proc/self/fd/{}", fd).c_str(), buf, sizeof buf);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof buf) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

bool inside(const std::string& path, const std::string& folder) {
  return folder == "/" ? path.size() > 1 && path[0] == '/'
                       : path.size() > folder.size() + 1 && path.starts_with(folder) &&
                             path[folder.size()] == '/';
}

// Reads at most max_bytes + 1 bytes: one more than allowed is enough to know the file is too
// large, whatever stat said of it (a file may grow while it is read).
FileRead read_at_most(int fd, int64_t max_bytes) {
  FileRead out;
  char buf[1 << 16];
  for (;;) {
    int64_t left = max_bytes + 1 - static_cast<int64_t>(out.text.size());
    ssize_t n = ::read(fd, buf, static_cast<size_t>(std::min<int64_t>(sizeof buf, left)));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failed(errno);
    if (n == 0) return out;
    out.text.append(buf, static_cast<size_t>(n));
    if (static_cast<int64_t>(out.text.size()) > max_bytes)
      return refuse("is larger than " + format_bytes(max_bytes));
  }
}

// Reads `path`, which must be a regular file. stat before opening, so that a device is never
// opened (opening one can have effects); fstat after, since the path may name something else by
// then. O_NONBLOCK: opening a FIFO put there in between returns at once instead of waiting for a
// writer. `folder`, when given, must hold the file actually opened.
FileRead read_regular(const std::string& path, int64_t max_bytes, const std::string* folder) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return failed(errno);
  if (!S_ISREG(st.st_mode)) return not_regular(st.st_mode);
  Fd fd{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)};
  if (fd.fd < 0) return failed(errno);
  if (folder) {
    auto real = opened_path(fd.fd);  // without /proc, the realpath checked before opening stands
    if (real && !inside(*real, *folder)) return refuse(outside_message(*real, *folder));
  }
  if (::fstat(fd.fd, &st) != 0) return failed(errno);
  if (!S_ISREG(st.st_mode)) return not_regular(st.st_mode);
  return read_at_most(fd.fd, max_bytes);
}

bool has_control_character(std::string_view name) {
  return std::any_of(name.begin(), name.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

}  // namespace

std::optional<std::string> path_in_folder(std::string_view base, std::string_view name) {
  if (name.starts_with('/')) return std::nullopt;
  std::vector<std::string_view> parts;
  auto add = [&](std::string_view path) {
    while (!path.empty()) {
      size_t slash = path.find('/');
      std::string_view part = path.substr(0, slash);
      path = slash == std::string_view::npos ? std::string_view() : path.substr(slash + 1);
      if (part.empty() || part == ".") continue;
      if (part != "..") {
        parts.push_back(part);
      } else if (parts.empty()) {
        return false;
      } else {
        parts.pop_back();
      }
    }
    return true;
  };
  if (!add(base) || !add(name)) return std::nullopt;
  std::string out;
  for (auto part : parts) out += (out.empty() ? "" : "/") + std::string(part);
  return out;
}

std::optional<std::string> real_path(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (!resolved) return std::nullopt;
  std::string out(resolved);
  std::free(resolved);
  return out;
}

const char* file_kind(unsigned mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a folder";
  return "not a file";
}

std::string folder_of(const std::string& file) {
  size_t slash = file.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : file.substr(0, slash);
}

FileRead read_in_experiment_folder(const std::string& experiment_file, std::string_view name,
                                   std::string_view base, int64_t max_bytes) {
  if (name.empty()) return refuse("names no file");
  if (has_control_character(name)) return refuse("has a control character in its name");
  if (name.starts_with('/'))
    return refuse(
        "is an absolute path; name a file in the experiment's folder, relative to it (absolute "
        "paths are "
        "not allowed)");
  auto rel = path_in_folder(base, name);
  if (!rel)
    return refuse(fmt::format(
        "is outside the experiment's folder '{}' (files an experiment names must lie in its "
        "folder or below it)",
        folder_of(experiment_file)));
  if (rel->empty()) return refuse("names the experiment's folder itself, not a file in it");
  auto folder = real_path(folder_of(experiment_file));
  if (!folder) return failed(errno);
  auto real = real_path(*folder == "/" ? "/" + *rel : *folder + "/" + *rel);
  if (!real) return failed(errno);
  if (!inside(*real, *folder)) return refuse(outside_message(*real, *folder));
  return read_regular(*real, max_bytes, &*folder);
}

FileRead read_experiment_file(const std::string& path) {
  return read_user_file(path, limits::kExperimentFileBytes);
}

FileRead read_user_file(const std::string& path, int64_t max_bytes) {
  if (path.empty()) return failed(ENOENT);
  return read_regular(path, max_bytes, nullptr);
}

}  // namespace streamlab
