#include "runner/cli/locate_fault.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

extern char** environ;

namespace streamlab {
namespace {

constexpr size_t kMaxChildOutput = 1 << 16;  // what is kept of the child's stderr: its end

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct ChildRun {
  std::string err;      // the last 64 KiB of its stderr
  std::string located;  // what it wrote to kLocatedFd: "op N\n" when it found the op
  std::string failure;  // why it could not start, the signal that stopped it, or ""
};

// Keeps the last kMaxChildOutput bytes: the child's last words are the ones that matter.
void keep_tail(std::string& out, const char* data, size_t n) {
  out.append(data, n);
  if (out.size() > 2 * kMaxChildOutput) out.erase(0, out.size() - kMaxChildOutput);
}

// Reads `fd` to its end, keeping the last kMaxChildOutput bytes.
std::string read_tail(int fd) {
  std::string out;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (n > 0)
      keep_tail(out, buffer, static_cast<size_t>(n));
    else if (errno != EINTR)
      break;
  }
  if (out.size() > kMaxChildOutput) out.erase(0, out.size() - kMaxChildOutput);
  return out;
}

// Runs this program with `args` and this process's environment (an experiment's `env:` is already
// applied to it, and the child applies it again), its stdout discarded. What it found comes on a
// pipe of its own (kLocatedFd), apart from its stderr, where the experiment's text may appear.
ChildRun run_child(const std::vector<std::string>& args) {
  int err_fds[2], found_fds[2];
  if (::pipe2(err_fds, O_CLOEXEC) != 0)
    return {"", "", fmt::format("could not start it: {}", std::strerror(errno))};
  if (::pipe2(found_fds, O_CLOEXEC) != 0) {
    ::close(err_fds[0]), ::close(err_fds[1]);
    return {"", "", fmt::format("could not start it: {}", std::strerror(errno))};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, err_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_adddup2(&actions, found_fds[1], kLocatedFd);
  std::vector<std::string> argv_strings{"/proc/self/exe"};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  auto argv = pointers(argv_strings);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(err_fds[1]), ::close(found_fds[1]);
  ChildRun run;
  // stderr first, to its end (the child exits then): the other pipe holds a few bytes at most, so
  // the child never waits on it.
  if (spawned == 0) run.err = read_tail(err_fds[0]), run.located = read_tail(found_fds[0]);
  ::close(err_fds[0]), ::close(found_fds[0]);
  if (spawned != 0) return {"", "", fmt::format("could not start it: {}", std::strerror(spawned))};
  int status = 0;
  pid_t got;
  while ((got = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (got != pid)
    run.failure = "it could not be waited for";
  else if (WIFSIGNALED(status))
    run.failure = fmt::format("it was stopped by signal {} ({})", WTERMSIG(status),
                              strsignal(WTERMSIG(status)));
  return run;
}

}  // namespace

void report_located(int64_t op) {
  std::string line = fmt::format("op {}\n", op);
  (void)!::write(kLocatedFd, line.data(),
                 line.size());  // not a child of locate_fault: nobody reads it
}

LocatedFault locate_fault(const std::vector<std::string>& args) {
  ChildRun run = run_child(args);
  int64_t op = -1;
  if (std::sscanf(run.located.c_str(), "op %" SCNd64, &op) == 1) {
    LocatedFault found{op, ""};
    if (op < 0)
      found.detail = "it faulted too, but at its repetition's final synchronize, after every op";
    return found;
  }
  std::string& out = run.err;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  if (!run.failure.empty()) return {-1, out.empty() ? run.failure : run.failure + ": " + out};
  return {-1, out.empty() ? "it ran without a fault" : out};
}

}  // namespace streamlab
