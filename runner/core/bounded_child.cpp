#include "runner/core/bounded_child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <stdexcept>

#include <fmt/format.h>

namespace streamlab {
namespace {

// The child's exit status when `work` threw: out of memory, or another error (its text on the
// pipe).
constexpr int kOutOfMemory = 70, kWorkFailed = 71, kParentGone = 72;

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

void set_limit(int resource, rlim_t value) {
  rlimit limit{value, value};
  ::setrlimit(resource, &limit);
}

[[noreturn]] void child(int fd, pid_t parent, const std::function<std::string()>& work,
                        const ChildBounds& bounds) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);               // it ends with this process, whatever ends that
  if (::getppid() != parent) ::_exit(kParentGone);  // the parent ended before the line above
  set_limit(RLIMIT_DATA, static_cast<rlim_t>(data_bytes_now() + bounds.memory_bytes));
  set_limit(RLIMIT_CPU, static_cast<rlim_t>(bounds.cpu_seconds));
  set_limit(RLIMIT_CORE, 0);  // a crash must not write the parent's whole memory to disk
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

// What the parent saw of the child.
struct Waited {
  int status = 0;
  bool reaped = false;
  bool over_time = false;    // killed for the wall-clock bound
  bool over_output = false;  // killed for sending too much
  double cpu_seconds = 0;
};

// Reads the child's output until it closes the pipe, within the bounds, then reaps it. Whatever
// happens (a bound, an exception), the child is killed and reaped and the pipe closed.
Waited collect(pid_t pid, int fd, const ChildBounds& bounds, std::string& bytes) {
  Waited w;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2 * bounds.cpu_seconds);
  bool done = false;
  try {
    char buffer[1 << 16];
    while (!done && !w.over_time && !w.over_output) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd, POLLIN, 0};
      int ready = left.count() > 0
                      ? ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)))
                      : 0;
      if (ready < 0 && errno != EINTR) break;
      if (ready == 0) {
        w.over_time = left.count() <= 0;
        continue;
      }
      ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno != EINTR && errno != EAGAIN) break;
      if (n == 0) done = true;
      if (n > 0) bytes.append(buffer, static_cast<size_t>(n));
      w.over_output = static_cast<int64_t>(bytes.size()) > bounds.output_bytes;
    }
  } catch (...) {  // bytes.append out of memory: stop the child before giving up
    ::kill(pid, SIGKILL);
  }
  if (!done) ::kill(pid, SIGKILL);
  ::close(fd);
  rusage usage{};
  pid_t got;
  while ((got = ::wait4(pid, &w.status, 0, &usage)) < 0 && errno == EINTR) {
  }
  w.reaped = got == pid;
  w.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  return w;
}

ChildResult judge(const Waited& w, const ChildBounds& bounds, std::string bytes) {
  std::string memory =
      fmt::format("it needed more than {} MiB of memory", bounds.memory_bytes >> 20);
  auto bounded = [](std::string why) {
    return ChildResult{ChildResult::bounded, "", std::move(why)};
  };
  if (!w.reaped) return {ChildResult::failed, "", "it could not be waited for"};
  if (w.over_output)
    return bounded(fmt::format("it sent back more than {} MiB", bounds.output_bytes >> 20));
  if (w.over_time) return bounded(fmt::format("it took longer than {} s", 2 * bounds.cpu_seconds));
  if (WIFEXITED(w.status)) {
    switch (WEXITSTATUS(w.status)) {
      case 0:
        return {ChildResult::ok, std::move(bytes), ""};
      case kOutOfMemory:
        return bounded(memory);
      case kWorkFailed:
        return {ChildResult::failed, "", std::move(bytes)};
      default:
        return {ChildResult::failed, "", fmt::format("it exited with {}", WEXITSTATUS(w.status))};
    }
  }
  int sig = WTERMSIG(w.status);
  if (sig == SIGXCPU ||
      (sig == SIGKILL && w.cpu_seconds + 1 >= static_cast<double>(bounds.cpu_seconds)))
    return bounded(fmt::format("it ran longer than {} s of CPU time", bounds.cpu_seconds));
  if (sig == SIGKILL)
    return bounded("it was killed (signal 9: the system may have run out of memory)");
  // Out of memory where the compiler does not check for it ends in SIGSEGV or SIGABRT.
  return bounded(
      fmt::format("it crashed (signal {}, {}), perhaps because {}", sig, strsignal(sig), memory));
}

}  // namespace

ChildResult run_bounded(const std::function<std::string()>& work, const ChildBounds& bounds) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return {ChildResult::failed, "", fmt::format("no pipe ({})", std::strerror(errno))};
  std::fflush(nullptr);  // nothing buffered is written twice
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(fds[0]), ::close(fds[1]);
    return {ChildResult::failed, "",
            fmt::format("it could not be started ({})", std::strerror(err))};
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], parent, work, bounds);
  }
  ::close(fds[1]);
  std::string bytes;
  Waited w = collect(pid, fds[0], bounds, bytes);
  return judge(w, bounds, std::move(bytes));
}

}  // namespace streamlab
