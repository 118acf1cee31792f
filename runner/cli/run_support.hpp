#pragma once
// What the run, check and grade commands share: the time limit of a command, the backend the
// command line chooses, progress on a terminal, and the rules for what may go to stdout.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "runner/cli/commands.hpp"
#include "runner/cli/watchdog.hpp"
#include "runner/core/limits.hpp"
#include "runner/execute/execute.hpp"
#include "runner/load/load.hpp"
#include "runner/report/output_file.hpp"

namespace streamlab {

// The progress line on a terminal (stderr), rewritten in place: between repetitions, once the run
// has taken a second, "repetition 12 of 23"; within a repetition that has run for about
// kSlowSeconds, about once a second, what it is doing ("timed repetition 3 of 20, 5 s: in the call
// of op 'sync' (deviceSynchronize, line 38)"). Nothing at all when stderr is no terminal, so logs
// and tests read as without it. The repetition's own thread never takes its lock: between() runs
// between repetitions, tick() on the watchdog's thread.
class ProgressLine {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kSlowSeconds = 2;
  // `write`: where the line goes (stderr, or a test's string); `width`: the terminal's columns.
  ProgressLine(bool terminal, std::function<void(std::string_view)> write, int width);
  ProgressLine();  // on stderr, if it is a terminal

  bool on_terminal() const { return terminal_; }
  // RunOptions::progress: `done` of `total` repetitions (empty when not on a terminal).
  std::function<void(int64_t done, int64_t total)> printer();
  void between(int64_t done, int64_t total, Clock::time_point now);
  // The watchdog's tick: what the repetition in progress is doing, once it has run kSlowSeconds.
  void tick(const RunProgress& progress, const Backend* backend, Clock::time_point now);
  // The run is over or failed: the line is cleared, and nothing more is written.
  void finish();

 private:
  void show(std::string text);  // with mutex_ held

  bool terminal_;
  std::function<void(std::string_view)> write_;
  int width_;
  Clock::time_point start_ = Clock::now();
  std::mutex mutex_;
  bool shown_ = false, finished_ = false;
  // The repetition tick() last saw (its phase and number), and the one between() said was over:
  // a tick that reads the progress just before the run enters its next phase must not show it.
  int64_t seen_ = -1, over_ = -1;
  Clock::time_point seen_since_{};
};

// The time limit of a command: the command line's --timeout, else the experiment's (or the
// rubric's) `timeout:`, else the default. The watchdog names what had not finished when it passes.
class TimeLimit {
 public:
  // `file`: what a `timeout:` comes from, for the message ("the experiment", "the rubric").
  // `started`: when the command began; the limit counts from then (a sweep's points share the
  // command's limit, not one each).
  // `exp`: the experiment when it is already loaded, so that the first deadline is already its own.
  explicit TimeLimit(const RunArgs& args, std::string file = "the experiment",
                     std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now(),
                     const Experiment* exp = nullptr)
      : args_(args),
        file_(std::move(file)),
        start_(started),
        watchdog_(deadline(seconds(exp)), limit_text(exp),
                  [this] { return what_was_running(); }) {
    if (line_.on_terminal())
      watchdog_.set_ticker([this] { line_.tick(progress, backend_, ProgressLine::Clock::now()); });
  }
  ~TimeLimit() { line_.finish(); }  // before the watchdog, whose ticks write the line, stops
  TimeLimit(const TimeLimit&) = delete;
  TimeLimit& operator=(const TimeLimit&) = delete;

  // RunOptions::progress: the progress line between repetitions (empty when not on a terminal).
  std::function<void(int64_t, int64_t)> progress_printer() { return line_.printer(); }

  // Once the experiment is loaded, its own `timeout:` applies unless --timeout was given.
  void loaded(const Experiment& exp) {
    watchdog_.set_deadline(deadline(seconds(&exp)), limit_text(&exp));
  }
  void running_on(const Backend* backend) { backend_ = backend; }
  void last_words(std::function<int(const std::string&)> f) {
    watchdog_.set_last_words(std::move(f));
  }
  // The run failed: its cleanup may still wait for the device (a kernel that never ends), and the
  // limit's message must then say what failed, not only that time ran out.
  void failed(const std::string& why) {
    std::lock_guard lock(mutex_);
    failure_ = why;
  }
  RunProgress progress;
  std::chrono::steady_clock::time_point started() const { return start_; }

  int64_t seconds(const Experiment* exp) const {
    if (args_.timeout >= 0) return args_.timeout;
    return exp && exp->timeout_s > 0 ? exp->timeout_s : limits::kDefaultTimeoutSeconds;
  }
  // What is left of the limit, in whole seconds (at least 1); 0 when there is no limit.
  int64_t seconds_left(const Experiment& exp) const {
    int64_t s = seconds(&exp);
    if (s == 0) return 0;
    auto spent =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start_)
            .count();
    return std::max<int64_t>(1, s - spent);
  }

 private:
  std::chrono::steady_clock::time_point deadline(int64_t s) const {
    return s == 0 ? std::chrono::steady_clock::time_point::max() : start_ + std::chrono::seconds(s);
  }
  std::string limit_text(const Experiment* exp) const {
    int64_t s = seconds(exp);
    std::string source = args_.timeout >= 0 ? fmt::format("--timeout {}", s)
                         : exp && exp->timeout_s > 0
                             ? fmt::format("`timeout: {}` in {}", s, file_)
                             : "the default; --timeout S changes it";
    return fmt::format("the command ran longer than {} s ({})", s, source);
  }
  std::string what_was_running() const {
    {
      std::lock_guard lock(mutex_);
      if (!failure_.empty())
        return fmt::format(
            "the run had failed ({}), and streamlab was waiting for the device's unfinished work "
            "before it could exit",
            failure_);
    }
    std::string out = "stopped " + progress.describe();
    const Backend* b = backend_;
    std::string detail = b ? b->unfinished() : "";
    return detail.empty() ? out : out + "; " + detail;
  }

  const RunArgs& args_;
  std::string file_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<const Backend*> backend_{nullptr};
  mutable std::mutex mutex_;
  std::string failure_;
  ProgressLine line_;
  Watchdog watchdog_;  // last: it calls what_was_running(), which reads the members above
};

// --set NAME=EXPR, as load takes them.
LoadOptions load_options(const std::vector<std::string>& sets);

// --profile FILE, read once and before anything runs (a profile that is not valid is exit 2);
// null without the option (the built-in profile of the device in use).
std::shared_ptr<const DeviceProfile> profile_option(const RunArgs& args);

// Chooses the backend; with `auto` and no device, says on stderr that it falls back to the host.
std::unique_ptr<Backend> choose_backend(const Experiment& exp, const RunArgs& args);

// User kernels are compiled by `check`, and by a run on the host backend (which cannot run them),
// for the oldest GPU streamlab targets (PTX for sm_75), so their errors show without a GPU; where
// NVRTC is missing, a note says they could not be compiled.
void compile_for_check(const Experiment& exp);

// The files the experiment's kernels read are known once it is loaded: no report replaces them.
void refuse_kernel_files(const OutputPlan& plan, const Experiment& exp);
// `inputs` and the device profile `--profile` names, if any: files a command reads, which no
// report of it may replace.
std::vector<InputFile> with_profile(std::vector<InputFile> inputs, const RunArgs& args);

// With --no-stderr, notes and diagnostics go to stdout: a report written to "-" would mix with
// them, so it is refused (CommandLineError).
void refuse_stdout_without_stderr(const OutputPlan& plan, bool no_stderr);

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace streamlab
