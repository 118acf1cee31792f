#include "runner/bounded_child.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <stdexcept>

#include <fmt/format.h>

namespace streamlab {
namespace {

// The child's exit status when `work` threw: out of memory, or another error (its text on the pipe).
constexpr int kOutOfMemory = 70, kWorkFailed = 71;

// VmData of this process, in bytes: RLIMIT_DATA counts it, and the child inherits all of it.
int64_t data_bytes_now() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("VmData:")) return std::strtoll(line.c_str() + 7, nullptr, 10) * 1024;
  return 0;
}

bool write_all(int fd, const std::string& bytes) {
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno != EINTR) return false;
    if (n > 0) done += static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void child(int fd, const std::function<std::string()>& work, const ChildBounds& bounds) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // it ends with this process, whatever ends that
  rlim_t data = static_cast<rlim_t>(data_bytes_now() + bounds.memory_bytes);
  rlimit memory{data, data}, cpu{static_cast<rlim_t>(bounds.cpu_seconds), static_cast<rlim_t>(bounds.cpu_seconds)};
  ::setrlimit(RLIMIT_DATA, &memory);
  ::setrlimit(RLIMIT_CPU, &cpu);
  int status = 0;
  try {
    status = write_all(fd, work()) ? 0 : kWorkFailed;
  } catch (const std::bad_alloc&) {
    status = kOutOfMemory;
  } catch (const std::exception& e) {
    write_all(fd, e.what());
    status = kWorkFailed;
  }
  ::_exit(status);  // no destructors, no atexit handlers of the parent's
}

std::string stopped_why(int status, const ChildBounds& bounds, const std::string& said) {
  std::string memory = fmt::format("it needed more than {} MiB of memory", bounds.memory_bytes >> 20);
  if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkFailed) return said;
  if (WIFEXITED(status))
    return WEXITSTATUS(status) == kOutOfMemory ? memory : fmt::format("it exited with {}", WEXITSTATUS(status));
  int sig = WTERMSIG(status);
  if (sig == SIGXCPU || sig == SIGKILL) return fmt::format("it ran longer than {} s of CPU time", bounds.cpu_seconds);
  if (sig == SIGABRT || sig == SIGSEGV) return memory + " (or failed)";
  return fmt::format("it was stopped by signal {} ({})", sig, strsignal(sig));
}

}  // namespace

ChildResult run_bounded(const std::function<std::string()>& work, const ChildBounds& bounds) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {false, "", fmt::format("no pipe for it ({})", std::strerror(errno))};
  std::fflush(nullptr);  // nothing buffered is written twice
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]), ::close(fds[1]);
    return {false, "", fmt::format("could not start it ({})", std::strerror(errno))};
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], work, bounds);
  }
  ::close(fds[1]);
  ChildResult result;
  char buffer[1 << 16];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n > 0) result.bytes.append(buffer, static_cast<size_t>(n));
    else if (errno != EINTR) break;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (!result.ok) result.why = stopped_why(status, bounds, result.bytes), result.bytes.clear();
  return result;
}

}  // namespace streamlab
