#include "runner/cli/run_support.hpp"

#include <unistd.h>

#include <iostream>
#include <map>

#include <fmt/format.h>

#include "ops/user_kernel.hpp"
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

std::function<void(int64_t, int64_t)> progress_printer() {
  if (!isatty(STDERR_FILENO)) return {};
  auto start = std::chrono::steady_clock::now();
  return [start](int64_t done, int64_t total) {
    if (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) return;
    std::cerr << fmt::format("\rstreamlab: repetition {} of {}", done, total)
              << (done == total ? "\r\033[K" : "") << std::flush;
  };
}

void compile_for_check(const Experiment& exp) {
  if (exp.kernels.empty()) return;
  try {
    compile_user_kernels(exp, "compute_75");
  } catch (const RunError& e) {
    std::cerr << fmt::format("streamlab: note: user kernels not compiled: {}\n", e.what());
  }
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
