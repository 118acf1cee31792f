#pragma once
// A time limit on a whole command (`--timeout`, `timeout:` in the experiment). A kernel that
// never returns, or a host backend walking a huge buffer, must not hold a grader's machine for
// ever: when the limit passes, the watchdog's thread asks what had not finished, prints it, and
// ends the process with exit code 3. Reports are written only after the run (the CLI stops the
// watchdog first), so none is half written; a command that must still say something (grade's
// autograder outputs, every item at zero with the reason) gives the watchdog its last words.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace streamlab {

class Watchdog {
 public:
  // `what_was_running` is called on the watchdog's own thread, once, when the limit passes: it
  // must be safe to call while the command runs (it reads progress, never waits for it).
  Watchdog(std::chrono::steady_clock::time_point deadline, std::string limit_text,
           std::function<std::string()> what_was_running);
  ~Watchdog();  // stops it
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Moves the deadline (the experiment's own `timeout:` is known only once it is loaded).
  void set_deadline(std::chrono::steady_clock::time_point deadline, std::string limit_text);

  // What to do, on the watchdog's thread, once the limit has passed and what was running is
  // printed: `last_words` gets that message and returns the exit code (an autograder's outputs,
  // scored zero with the reason, must still be written). It must read nothing the command changes
  // while it runs.
  void set_last_words(std::function<int(const std::string& message)> last_words);

  // Something to do about once a second on the watchdog's thread while the command runs (the
  // progress line on a terminal): it must only read what the command updates, never wait for it.
  void set_ticker(std::function<void()> tick);

 private:
  void watch();
  [[noreturn]] void expire(const std::string& limit,
                           const std::function<int(const std::string&)>& last_words);

  std::mutex mutex_;
  std::condition_variable wake_;
  std::chrono::steady_clock::time_point deadline_;
  std::string limit_text_;
  std::function<std::string()> what_was_running_;
  std::function<int(const std::string&)> last_words_;
  std::function<void()> tick_;
  bool stopped_ = false;
  std::thread thread_;
};

}  // namespace streamlab
