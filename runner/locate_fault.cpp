#include "runner/locate_fault.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

extern char** environ;

namespace streamlab {
namespace {

constexpr std::string_view kLocated = "streamlab: located fault: op ";
constexpr size_t kMaxChildOutput = 1 << 16;  // what is kept of the child's stderr

// The environment, with CUDA_LAUNCH_BLOCKING=1: every launch returns once its kernel is done.
std::vector<std::string> child_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CUDA_LAUNCH_BLOCKING=", 21) != 0) env.emplace_back(*e);
  env.emplace_back("CUDA_LAUNCH_BLOCKING=1");
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Runs this program with `args`, its stdout discarded; returns its stderr (the first 64 KiB).
std::string run_child(const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return fmt::format("could not start it: {}", std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  std::vector<std::string> argv_strings{"/proc/self/exe"};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<std::string> env_strings = child_environment();
  auto argv = pointers(argv_strings), envp = pointers(env_strings);
  pid_t pid = 0;
  int spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  std::string out;
  char buffer[4096];
  for (ssize_t n; spawned == 0 && (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
    if (out.size() < kMaxChildOutput) out.append(buffer, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  if (spawned != 0) return fmt::format("could not start it: {}", std::strerror(spawned));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return out;
}

}  // namespace

std::string located_line(int64_t op) { return fmt::format("{}{}\n", kLocated, op); }

LocatedFault locate_fault(const std::vector<std::string>& args) {
  std::string out = run_child(args);
  size_t at = out.find(kLocated);
  if (at != std::string::npos) return {std::strtoll(out.c_str() + at + kLocated.size(), nullptr, 10), ""};
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return {-1, out.empty() ? "it ran without a fault" : out};
}

}  // namespace streamlab
