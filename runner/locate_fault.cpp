#include "runner/locate_fault.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

extern char** environ;

namespace streamlab {
namespace {

constexpr std::string_view kLocated = "streamlab: located fault: op ";
constexpr size_t kMaxChildOutput = 1 << 16;  // what is kept of the child's stderr: its end

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct ChildRun {
  std::string err;  // the last 64 KiB of its stderr, where the located line is
  std::string failure;  // why it could not start, or the signal that stopped it
};

// Keeps the last kMaxChildOutput bytes: the child's last words are the ones that matter.
void keep_tail(std::string& out, const char* data, size_t n) {
  out.append(data, n);
  if (out.size() > 2 * kMaxChildOutput) out.erase(0, out.size() - kMaxChildOutput);
}

// Runs this program with `args` and this process's environment (an experiment's `env:` is already
// applied to it, and the child applies it again), its stdout discarded.
ChildRun run_child(const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return {"", fmt::format("could not start it: {}", std::strerror(errno))};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  std::vector<std::string> argv_strings{"/proc/self/exe"};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  auto argv = pointers(argv_strings);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  ChildRun run;
  char buffer[4096];
  for (ssize_t n; spawned == 0 && (n = ::read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
    if (n > 0) keep_tail(run.err, buffer, static_cast<size_t>(n));
    else if (errno != EINTR) break;
  }
  ::close(pipe_fds[0]);
  if (spawned != 0) return {"", fmt::format("could not start it: {}", std::strerror(spawned))};
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status))
    run.failure = fmt::format("it was stopped by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (run.err.size() > kMaxChildOutput) run.err.erase(0, run.err.size() - kMaxChildOutput);
  return run;
}

}  // namespace

std::string located_line(int64_t op) { return fmt::format("{}{}\n", kLocated, op); }

// The child prints the located line last, after any diagnostics of its own: the last one counts.
LocatedFault locate_fault(const std::vector<std::string>& args) {
  ChildRun run = run_child(args);
  size_t at = run.err.rfind(kLocated);
  if (at != std::string::npos) {
    LocatedFault found{std::strtoll(run.err.c_str() + at + kLocated.size(), nullptr, 10), ""};
    if (found.op < 0) found.detail = "it faulted too, but at its repetition's final synchronize, after every op";
    return found;
  }
  std::string& out = run.err;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  if (!run.failure.empty()) return {-1, out.empty() ? run.failure : run.failure + ": " + out};
  return {-1, out.empty() ? "it ran without a fault" : out};
}

}  // namespace streamlab
