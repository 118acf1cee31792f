#include "runner/report/output_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "runner/core/diagnostics.hpp"
#include "runner/core/safe_file.hpp"
#include "runner/core/suggest.hpp"
#include "runner/execute/backend.hpp"

namespace streamlab {
namespace {

// ---- Checks before the run ----

// Where a path points, to tell two spellings of one file apart from two files: the resolved path,
// and for a file that exists its device and inode (which a hard link shares too).
struct Identity {
  std::string path;
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
};

bool same_file(const Identity& a, const Identity& b) {
  return a.path == b.path || (a.exists && b.exists && a.dev == b.dev && a.ino == b.ino);
}

struct Split {
  std::string folder;  // as the user spelled it, "." for none
  std::string name;
};

Split split(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

std::string error_text(int err) { return std::strerror(err); }

std::string join_path(const std::string& folder, const std::string& name) {
  return folder == "/" ? "/" + name : folder + "/" + name;
}

// What is at `path` now, not following a symlink there: a report replaces the link, not its target.
Identity target_identity(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) return {path, true, st.st_dev, st.st_ino};
  return {path};
}

std::string refusal_for_input(const std::string& what) {
  return fmt::format("that is {}; a report never replaces a file the run reads", what);
}

std::string not_regular(mode_t mode) {
  return fmt::format(
      "not a regular file ({}); streamlab writes reports only to regular files or - (stdout)",
      file_kind(mode));
}

// Why `folder` is no folder to write into, or "".
std::string folder_problem(const std::string& folder, struct stat& st) {
  if (::stat(folder.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return fmt::format("its folder '{}' does not exist", folder);
    return fmt::format("its folder '{}' cannot be read ({})", folder, error_text(errno));
  }
  if (!S_ISDIR(st.st_mode)) return fmt::format("its folder '{}' is not a directory", folder);
  return "";
}

// Why we cannot create a file in `folder`, or "". W_OK|X_OK with the effective ids, as open(2)
// will check them; root passes it everywhere but on a read-only file system.
std::string unwritable_folder(const std::string& folder) {
  if (::faccessat(AT_FDCWD, folder.c_str(), W_OK | X_OK, AT_EACCESS) != 0)
    return fmt::format("its folder '{}' is not writable by us ({})", folder, error_text(errno));
  return "";
}

// Why streamlab must not replace the existing regular file `path`, or "". A file nobody may
// write is refused even for root, who may write anything: a report never replaces a file that
// its user could not have written to by hand. In a sticky folder (like /tmp) rename(2) would
// refuse another user's file, after the run; say so before it.
std::string replace_problem(const std::string& path, const struct stat& st,
                            const struct stat& folder_st) {
  bool nobody_writes = (st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0;
  if (nobody_writes || ::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0)
    return "a read-only file; streamlab replaces only files you may write";
  uid_t me = ::geteuid();
  if ((folder_st.st_mode & S_ISVTX) && me != 0 && st.st_uid != me && folder_st.st_uid != me)
    return "another user's file in a sticky folder (like /tmp), where only its owner may replace "
           "it";
  return "";
}

// An input as the file system sees it: fully resolved, since a report must not replace the file
// it names through any spelling or link. A missing input is compared by its spelling only.
Identity input_identity(const std::string& path) {
  Identity id;
  std::string real = real_path(path).value_or("");
  if (real.empty()) {
    Split s = split(path);
    std::string folder = real_path(s.folder).value_or("");
    id.path = folder.empty() ? path : join_path(folder, s.name);
  } else {
    id.path = real;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) id = {id.path, true, st.st_dev, st.st_ino};
  return id;
}

// A file a report must not replace, or share with another report, and what to say if it would.
struct Known {
  std::string why;
  Identity id;
};

struct Checked {
  std::string problem;  // "" when the path can be written
  std::string folder;   // resolved
  std::string name;
  Identity id;
};

Checked refused(std::string why) {
  Checked c;
  c.problem = std::move(why);
  return c;
}

// Checks one report path: its folder, what is there now, and the files it must not be. Nothing is
// opened, so a FIFO cannot block. One problem per path, the most telling first.
Checked check_file(const std::string& path, const std::vector<Known>& known) {
  Checked c;
  Split s = split(path);
  if (s.name.empty() || s.name == "." || s.name == "..")
    return refused("names a folder; give a file name");
  struct stat folder_st;
  if (c.problem = folder_problem(s.folder, folder_st); !c.problem.empty()) return c;
  c.folder = real_path(s.folder).value_or("");
  if (c.folder.empty())
    return refused(
        fmt::format("its folder '{}' cannot be resolved ({})", s.folder, error_text(errno)));
  c.name = s.name;
  c.id.path = join_path(c.folder, c.name);
  struct stat st;
  if (::lstat(c.id.path.c_str(), &st) == 0) {
    c.id = {c.id.path, true, st.st_dev, st.st_ino};
    if (!S_ISREG(st.st_mode)) return refused(not_regular(st.st_mode));
  } else if (errno != ENOENT) {
    return refused(fmt::format("cannot look at it ({})", error_text(errno)));
  }
  // After the type: "/dev/null is a device" says more than "/dev is not writable".
  if (std::string why = unwritable_folder(s.folder); !why.empty()) return refused(why);
  for (const auto& k : known)
    if (same_file(c.id, k.id)) return refused(k.why);
  if (c.id.exists) c.problem = replace_problem(c.id.path, st, folder_st);
  return c;
}

// ---- Temporaries, and the signals that must remove them ----

// A signal handler may neither allocate nor lock, so the temporaries' paths live in static
// buffers, and the handler only reads them. One commit at a time (the command line has one).
constexpr int kMaxTemporaries = 16;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr size_t kSignalCount = std::size(kSignals);

char g_temp_path[kMaxTemporaries][PATH_MAX];
std::atomic<bool> g_temp_live[kMaxTemporaries];
struct sigaction g_previous[kSignalCount];
bool g_installed[kSignalCount];
std::atomic<bool> g_committing{false};

extern "C" void remove_temporaries_and_reraise(int sig) {
  int saved = errno;
  for (int i = 0; i < kMaxTemporaries; ++i)
    if (g_temp_live[i].load()) ::unlink(g_temp_path[i]);
  for (size_t k = 0; k < kSignalCount; ++k)
    if (kSignals[k] == sig) ::sigaction(sig, &g_previous[k], nullptr);
  // Blocked until this handler returns; then the previous action (by default: end the process).
  ::raise(sig);
  errno = saved;
}

// A name nobody can guess, so nobody can plant a symlink or FIFO at it beforehand (O_EXCL would
// refuse one anyway; guessing would only make the commit fail).
std::string random_suffix() {
  static constexpr std::string_view kChars =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char bytes[6];
  size_t got = 0;
  while (got < sizeof bytes) {
    ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno != EINTR) throw RunError(fmt::format("getrandom: {}", error_text(errno)));
    if (n > 0) got += static_cast<size_t>(n);
  }
  std::string out;
  for (unsigned char b : bytes) out += kChars[b % kChars.size()];
  return out;
}

// Writes, syncs and closes `fd`; returns the errno text of the first failure, or "". The sync
// keeps a crash just after the rename from leaving an empty file where the old report was.
std::string write_and_close(int fd, std::string_view text) {
  std::string why;
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0 && why.empty()) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno != EINTR) why = error_text(errno);
    if (n > 0) p += n, left -= static_cast<size_t>(n);
  }
  if (why.empty() && ::fsync(fd) != 0) why = error_text(errno);
  if (::close(fd) != 0 && why.empty()) why = error_text(errno);
  return why;
}

// The temporaries of one commit. While they exist, SIGINT, SIGTERM, SIGHUP and SIGQUIT remove
// them before taking their course; leaving (normally or by an exception) removes those not
// renamed and puts the previous handlers back.
class Temporaries {
 public:
  Temporaries() {
    if (g_committing.exchange(true))
      throw std::logic_error("OutputPlan::commit: one commit at a time");
    install_handlers();
  }
  ~Temporaries() {
    for (int i = 0; i < kMaxTemporaries; ++i)
      if (g_temp_live[i].exchange(false)) ::unlink(g_temp_path[i]);
    restore_handlers();
    g_committing = false;
  }
  Temporaries(const Temporaries&) = delete;
  Temporaries& operator=(const Temporaries&) = delete;

  // Creates `.NAME.XXXXXX` in `folder` as open(2) creates a new file (mode 0666 less the umask),
  // writes `text` to it; returns its slot. Throws RunError with the reason.
  int write(const std::string& folder, const std::string& name, std::string_view text) {
    int slot = count_++;
    if (slot >= kMaxTemporaries) throw std::logic_error("OutputPlan::commit: too many reports");
    int fd = create(slot, folder, name);
    if (std::string why = write_and_close(fd, text); !why.empty())
      throw RunError(fmt::format("writing its temporary failed ({})", why));
    return slot;
  }

  // Renames the temporary in `slot` over `target`; "" or the reason it failed.
  std::string rename_over(int slot, const std::string& target) {
    if (::rename(g_temp_path[slot], target.c_str()) != 0) return error_text(errno);
    g_temp_live[slot] = false;
    return "";
  }

 private:
  // The path is published to the handler before the file exists, so no moment has a temporary
  // that a signal would leave behind.
  static int create(int slot, const std::string& folder, const std::string& name) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      // A name of 255 bytes must still fit NAME_MAX with the dot and the suffix.
      std::string path =
          join_path(folder, fmt::format(".{}.{}", name.substr(0, 240), random_suffix()));
      if (path.size() >= PATH_MAX) throw RunError("its path is too long for a temporary beside it");
      std::memcpy(g_temp_path[slot], path.c_str(), path.size() + 1);
      g_temp_live[slot] = true;
      int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd >= 0) return fd;
      int err = errno;
      g_temp_live[slot] = false;
      if (err != EEXIST)
        throw RunError(fmt::format("cannot create a temporary in its folder '{}' ({})", folder,
                                   error_text(err)));
    }
    throw RunError(
        fmt::format("cannot create a temporary in its folder '{}' (every name taken)", folder));
  }

  // A signal already ignored (nohup) stays ignored: nothing would end the run for it.
  static void install_handlers() {
    struct sigaction ours {};
    ours.sa_handler = remove_temporaries_and_reraise;
    ours.sa_flags = SA_RESTART;
    sigemptyset(&ours.sa_mask);
    for (int sig : kSignals) sigaddset(&ours.sa_mask, sig);
    for (size_t k = 0; k < kSignalCount; ++k) {
      ::sigaction(kSignals[k], nullptr, &g_previous[k]);
      bool ignored = !(g_previous[k].sa_flags & SA_SIGINFO) && g_previous[k].sa_handler == SIG_IGN;
      g_installed[k] = !ignored && ::sigaction(kSignals[k], &ours, nullptr) == 0;
    }
  }

  static void restore_handlers() {
    for (size_t k = 0; k < kSignalCount; ++k)
      if (g_installed[k]) ::sigaction(kSignals[k], &g_previous[k], nullptr);
  }

  int count_ = 0;
};

}  // namespace

// ---- OutputPlan ----

OutputPlan::OutputPlan(std::vector<OutputRequest> requests, const std::vector<InputFile>& inputs)
    : requests_(std::move(requests)), targets_(requests_.size()) {
  std::vector<Known> known;
  for (const auto& in : inputs)
    known.push_back({refusal_for_input(in.what), input_identity(in.path)});
  std::string stdout_owner;
  std::vector<std::string> problems;
  for (size_t i = 0; i < requests_.size(); ++i) {
    const OutputRequest& r = requests_[i];
    std::string why;
    if (r.path == "-") {
      if (!stdout_owner.empty())
        why = fmt::format("also the output of {}; only one report can go to - (stdout)",
                          stdout_owner);
      else
        stdout_owner = r.option;
    } else {
      Checked c = check_file(r.path, known);
      why = c.problem;
      targets_[i] = {c.folder, c.name};
      if (!c.id.path.empty()) known.push_back({fmt::format("also the path of {}", r.option), c.id});
    }
    if (!why.empty()) problems.push_back(fmt::format("{} {}: {}", r.option, r.path, why));
  }
  // One line per problem, each as the command line prints an error.
  if (!problems.empty()) throw CommandLineError(join(problems, "\nstreamlab: error: "));
}

void OutputPlan::refuse_inputs(const std::vector<InputFile>& inputs) const {
  std::vector<std::string> problems;
  for (size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i].path == "-") continue;
    Identity target = target_identity(target_path(i));
    for (const auto& in : inputs)
      if (same_file(target, input_identity(in.path))) {
        problems.push_back(fmt::format("{} {}: {}", requests_[i].option, requests_[i].path,
                                       refusal_for_input(in.what)));
        break;
      }
  }
  if (!problems.empty()) throw CommandLineError(join(problems, "\nstreamlab: error: "));
}

void OutputPlan::commit(const std::vector<std::string>& texts) const {
  if (texts.size() != requests_.size())
    throw std::logic_error("OutputPlan::commit: one text per request");
  commit_files(texts);
  for (size_t i = 0; i < requests_.size(); ++i)
    if (requests_[i].path == "-") std::cout << texts[i] << std::flush;
  if (!std::cout) throw RunError("cannot write the report to stdout");
}

// Every temporary is written before any target is touched, and the targets are checked again
// just before the renames, so that only a race can make a rename fail.
void OutputPlan::commit_files(const std::vector<std::string>& texts) const {
  Temporaries temps;
  std::vector<int> slots(requests_.size(), -1);
  auto fail = [&](size_t i, const std::string& why, const std::string& outcome) {
    throw RunError(
        fmt::format("{} {}: {}; {}", requests_[i].option, requests_[i].path, why, outcome));
  };
  for (size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i].path == "-") continue;
    try {
      slots[i] = temps.write(targets_[i].folder, targets_[i].name, texts[i]);
    } catch (const RunError& e) {
      fail(i, e.what(), "no report was written");
    }
  }
  for (size_t i = 0; i < requests_.size(); ++i) {
    struct stat st;
    if (slots[i] >= 0 && ::lstat(target_path(i).c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      fail(i, fmt::format("it became {} after streamlab checked it", file_kind(st.st_mode)),
           "no report was written");
  }
  // Renames cannot be undone together: a failure here (a race with another process) says which
  // reports are already new.
  std::vector<std::string> replaced;
  for (size_t i = 0; i < requests_.size(); ++i) {
    if (slots[i] < 0) continue;
    if (std::string why = temps.rename_over(slots[i], target_path(i)); !why.empty())
      fail(i, fmt::format("cannot rename its temporary over it ({})", why),
           replaced.empty() ? "no report was written" : "only " + join(replaced) + " written");
    replaced.push_back(fmt::format("{} {}", requests_[i].option, requests_[i].path));
  }
}

std::string OutputPlan::target_path(size_t i) const {
  return join_path(targets_[i].folder, targets_[i].name);
}

bool OutputPlan::writes_stdout() const {
  for (const auto& r : requests_)
    if (r.path == "-") return true;
  return false;
}

}  // namespace streamlab
