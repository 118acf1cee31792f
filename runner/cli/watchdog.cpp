#include "runner/cli/watchdog.hpp"

#include <unistd.h>

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "runner/core/diagnostics.hpp"

namespace streamlab {
namespace {

constexpr int kExitRuntime =
    3;  // cli.hpp's exit code of a runtime failure; the CLI is above this layer

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
    : deadline_(deadline),
      limit_text_(std::move(limit_text)),
      what_was_running_(std::move(what_was_running)),
      thread_([this] { watch(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::set_deadline(std::chrono::steady_clock::time_point deadline,
                            std::string limit_text) {
  {
    std::lock_guard lock(mutex_);
    deadline_ = deadline;
    limit_text_ = std::move(limit_text);
  }
  wake_.notify_all();
}

void Watchdog::set_last_words(std::function<int(const std::string&)> last_words) {
  std::lock_guard lock(mutex_);
  last_words_ = std::move(last_words);
}

void Watchdog::set_ticker(std::function<void()> tick) {
  {
    std::lock_guard lock(mutex_);
    tick_ = std::move(tick);
  }
  wake_.notify_all();
}

// Sleeps until the deadline, or the next tick when there is a ticker; a tick runs without the
// lock, so that moving the deadline or stopping never waits for it.
void Watchdog::watch() {
  constexpr auto kTick = std::chrono::seconds(1);
  std::unique_lock lock(mutex_);
  auto next_tick = std::chrono::steady_clock::now() + kTick;
  while (!stopped_) {
    auto wake_at = tick_ ? std::min(deadline_, next_tick) : deadline_;
    if (wake_.wait_until(lock, wake_at) == std::cv_status::no_timeout)
      continue;  // stopped, moved, or a ticker set
    auto now = std::chrono::steady_clock::now();
    if (stopped_) break;
    if (now >= deadline_) {
      std::string limit = limit_text_;
      auto last_words = last_words_;
      lock.unlock();
      expire(limit, last_words);
    }
    if (tick_ && now >= next_tick) {
      auto tick = tick_;
      lock.unlock();
      tick();
      lock.lock();
      next_tick = now + kTick;
    }
  }
}

// Asks what was running on a thread of its own, for at most kAskSeconds: the answer queries the
// driver, which may itself be stuck. Then exits without unwinding: the main thread may be blocked
// in the driver for ever, and the driver ends the process's kernels when the process ends.
[[noreturn]] void Watchdog::expire(const std::string& limit,
                                   const std::function<int(const std::string&)>& last_words) {
  constexpr auto kAskSeconds = std::chrono::seconds(5);
  struct Answer {
    std::mutex mutex;
    std::condition_variable ready;
    std::string text;
    bool done = false;
  };
  auto answer = std::make_shared<Answer>();
  std::thread([answer, ask = what_was_running_] {
    std::string text = ask();
    std::lock_guard lock(answer->mutex);
    answer->text = std::move(text);
    answer->done = true;
    answer->ready.notify_all();
  }).detach();
  std::unique_lock lock(answer->mutex);
  bool answered = answer->ready.wait_for(lock, kAskSeconds, [&] { return answer->done; });
  std::string what =
      answered ? answer->text : "what was running could not be asked (the driver did not answer)";
  std::string message = printable(fmt::format("time limit reached: {}; {}", limit, what));
  write_stderr("streamlab: error: " + message + "\n");
  ::_exit(last_words ? last_words(message) : kExitRuntime);
}

}  // namespace streamlab
