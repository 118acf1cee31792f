#include "runner/watchdog.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "runner/diagnostics.hpp"

namespace streamlab {
namespace {

constexpr int kExitRuntime = 3;  // a CUDA or runtime failure (cli.hpp)

// write(2) until done: the process ends right after, with nothing else to flush it.
void write_stderr(const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

Watchdog::Watchdog(std::chrono::steady_clock::time_point deadline, std::string limit_text,
                   std::function<std::string()> what_was_running)
    : deadline_(deadline), limit_text_(std::move(limit_text)), what_was_running_(std::move(what_was_running)),
      thread_([this] { watch(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::set_deadline(std::chrono::steady_clock::time_point deadline, std::string limit_text) {
  {
    std::lock_guard lock(mutex_);
    deadline_ = deadline;
    limit_text_ = std::move(limit_text);
  }
  wake_.notify_all();
}

void Watchdog::watch() {
  std::unique_lock lock(mutex_);
  while (!stopped_) {
    if (wake_.wait_until(lock, deadline_) == std::cv_status::no_timeout) continue;  // stopped, or moved
    if (stopped_ || std::chrono::steady_clock::now() < deadline_) continue;
    std::string what = what_was_running_();
    // Exits without unwinding: the main thread may be blocked in the driver for ever, and the
    // driver ends the process's kernels when the process ends.
    write_stderr(printable(fmt::format("streamlab: error: time limit reached: {}; {}\n", limit_text_, what)));
    ::_exit(kExitRuntime);
  }
}

}  // namespace streamlab
