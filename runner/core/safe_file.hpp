#pragma once
// Reading the files an experiment names (docs/safety.md): a grader runs experiments that students
// wrote, so a file name in an experiment is untrusted data. Whatever it says, streamlab reads
// nothing outside the experiment's folder, never blocks on a FIFO or a device, and reads no more
// than a limit. The experiment file itself may be anywhere (the user named it), but it too must
// be a regular file of bounded size.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runner/core/limits.hpp"

namespace streamlab {

// A file's text, or why it was not read.
struct FileRead {
  std::string text;
  // Why not, as words that follow the file's name in a message: "is not a regular file (a
  // FIFO)", "is larger than 1 MiB". Empty when the file was read.
  std::string refusal;
  int error = 0;  // the errno of the system call that failed, when that is why
  bool ok() const { return refusal.empty(); }
};

// Reads the file `name` names, relative to `base` (a folder given relative to the experiment's
// folder; empty for the folder itself), the experiment's folder being that of `experiment_file`.
// It is read only if:
// - `name` is relative, and with "." and ".." taken lexically it stays inside the folder;
// - once every symbolic link is followed, the file lies in the folder (the folder's realpath, so
//   a folder reached through a link is fine, and links between files inside it are too); the
//   file actually opened is checked again through /proc/self/fd, so swapping a link between the
//   check and the open gains nothing;
// - it is a regular file, checked before opening (a device is never opened) and after (opened
//   with O_NONBLOCK, so a FIFO put in its place cannot block);
// - it has at most `max_bytes` bytes, counted while reading (st_size is not trusted).
FileRead read_in_experiment_folder(const std::string& experiment_file, std::string_view name,
                                   std::string_view base = {},
                                   int64_t max_bytes = limits::kSourceFileBytes);

// The experiment file, at the path the user gave (any folder): a regular file (opened without
// blocking) of at most limits::kExperimentFileBytes.
FileRead read_experiment_file(const std::string& path);
// Any other file the user named (a results file to compare): the same rules, `max_bytes` at most.
FileRead read_user_file(const std::string& path, int64_t max_bytes);

// `name` relative to `base` (both relative to the experiment's folder) as one path relative to
// that folder, "." and ".." resolved lexically: ("kernels", "../common/x.h") -> "common/x.h".
// nullopt when `name` is absolute or the path climbs out of the folder.
std::optional<std::string> path_in_folder(std::string_view base, std::string_view name);

// The absolute path without symbolic links, "." or ".." (realpath(3)); nullopt when it cannot be
// resolved (errno says why).
std::optional<std::string> real_path(const std::string& path);

// The folder of a file as its path names it: "exp.yaml" -> ".", "a/b/exp.yaml" -> "a/b".
std::string folder_of(const std::string& file);

// What a file that is not a regular file is, for messages: "a FIFO", "a character device", "a
// folder", "a symbolic link" (as lstat sees it), ...
const char* file_kind(unsigned mode);

}  // namespace streamlab
