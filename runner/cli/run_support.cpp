#include "runner/cli/run_support.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <map>

#include <fmt/format.h>

#include "ops/user_kernel.hpp"
#include "runner/core/diagnostics.hpp"
#include "runner/core/errors.hpp"
#include "runner/core/limits.hpp"
#include "runner/predict/profile_io.hpp"

namespace streamlab {

LoadOptions load_options(const std::vector<std::string>& sets) {
  LoadOptions options;
  for (const auto& s : sets) {
    auto eq = s.find('=');
    options.overrides.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return options;
}

std::shared_ptr<const DeviceProfile> profile_option(const RunArgs& args) {
  if (args.profile.empty()) return nullptr;
  return std::make_shared<const DeviceProfile>(read_profile(args.profile));
}

std::unique_ptr<Backend> choose_backend(const Experiment& exp, const RunArgs& args) {
  if (args.backend == "host") return make_host_backend(exp);
  std::string why;
  int count = cuda_device_count(&why);
  if (args.backend == "cuda" && count == 0)
    throw RunError("--backend cuda: no CUDA device (" + why + ")");
  if (count == 0) {
    std::cerr << fmt::format(
        "streamlab: note: no CUDA device ({}); running on the host backend: results are validated, "
        "no GPU times are measured\n",
        why);
    return make_host_backend(exp);
  }
  if (args.device < 0 || args.device >= count)
    throw RunError(fmt::format("--device {}: no such device ({} CUDA device{})", args.device, count,
                               count == 1 ? "" : "s"));
  const std::map<std::string, TimerChoice> timers = {{"auto", TimerChoice::automatic},
                                                     {"cupti", TimerChoice::cupti},
                                                     {"events", TimerChoice::events},
                                                     {"none", TimerChoice::none}};
  return make_cuda_backend(exp, args.device,
                           {timers.at(args.timer), !args.no_gate, args.locate_fault});
}

namespace {

// Straight to the file descriptor, not through std::cerr: the colour module's buffer holds text
// until its newline, and the progress line never has one.
void write_stderr(std::string_view text) {
  for (size_t done = 0; done < text.size();) {
    ssize_t n = ::write(STDERR_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

int stderr_columns() {
  winsize size{};
  return ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 80;
}

}  // namespace

ProgressLine::ProgressLine(bool terminal, std::function<void(std::string_view)> write, int width)
    : terminal_(terminal), write_(std::move(write)), width_(width) {}

ProgressLine::ProgressLine()
    : ProgressLine(::isatty(STDERR_FILENO) == 1, write_stderr, stderr_columns()) {}

std::function<void(int64_t, int64_t)> ProgressLine::printer() {
  if (!terminal_) return {};
  return [this](int64_t done, int64_t total) { between(done, total, Clock::now()); };
}

void ProgressLine::between(int64_t done, int64_t total, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  over_ = seen_;
  if (finished_ || now - start_ < std::chrono::seconds(1)) return;
  show(fmt::format("streamlab: repetition {} of {}", done, total));
  if (done == total) {
    write_("\r\033[K");
    shown_ = false;
  }
}

void ProgressLine::tick(const RunProgress& progress, const Backend* backend,
                        Clock::time_point now) {
  int phase = progress.phase;
  int64_t repetition = progress.repetition, of = progress.of;
  bool repeating = phase == RunProgress::warmup || phase == RunProgress::timed;
  std::string doing = repeating && backend ? backend->activity() : "";
  std::lock_guard lock(mutex_);
  if (!repeating) {  // between runs: the next one's repetition 1 is a new one
    seen_ = over_ = -1;
    return;
  }
  int64_t seen = repetition * 2 + (phase == RunProgress::timed);
  if (seen != seen_) seen_ = seen, seen_since_ = now;
  auto ran = std::chrono::duration<double>(now - seen_since_).count();
  if (finished_ || seen == over_ || ran < kSlowSeconds) return;
  show(fmt::format("streamlab: {} repetition {} of {}, {:.0f} s{}{}",
                   phase == RunProgress::timed ? "timed" : "warm-up", repetition, of, ran,
                   doing.empty() ? "" : ": ", printable(doing)));
}

void ProgressLine::finish() {
  std::lock_guard lock(mutex_);
  if (shown_) write_("\r\033[K");
  shown_ = false;
  finished_ = true;
}

// The line cut to the terminal's width: a line that wrapped could not be rewritten with \r.
void ProgressLine::show(std::string text) {
  if (static_cast<int>(text.size()) >= width_) {
    text.resize(static_cast<size_t>(std::max(width_ - 1, 0)));
    while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80)
      text.pop_back();
    if (!text.empty() && static_cast<unsigned char>(text.back()) >= 0xC0)
      text.pop_back();  // a cut lead byte
  }
  write_("\r" + text + "\033[K");
  shown_ = true;
}

void compile_for_check(const Experiment& exp) {
  if (exp.kernels.empty()) return;
  try {
    compile_user_kernels(exp, "compute_75");
  } catch (const RunError& e) {
    std::cerr << fmt::format("streamlab: note: user kernels not compiled: {}\n", e.what());
  }
}

std::vector<InputFile> with_profile(std::vector<InputFile> inputs, const RunArgs& args) {
  if (!args.profile.empty()) inputs.push_back({"the device profile (--profile)", args.profile});
  return inputs;
}

// The files the experiment's kernels read are known once it is loaded: no report replaces them.
void refuse_kernel_files(const OutputPlan& plan, const Experiment& exp) {
  std::vector<InputFile> inputs;
  for (auto& path : user_kernel_files(exp))
    inputs.push_back({fmt::format("a file a user kernel reads ({})", path), path});
  plan.refuse_inputs(inputs);
}

void refuse_stdout_without_stderr(const OutputPlan& plan, bool no_stderr) {
  if (no_stderr && plan.writes_stdout())
    throw CommandLineError(
        "--no-stderr sends notes and diagnostics to stdout, where a report written to - would mix "
        "with them: write the report to a file");
}

}  // namespace streamlab
