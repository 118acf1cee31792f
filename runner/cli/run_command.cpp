// The run and check commands: the pipeline load -> analyze -> execute (with checks and
// expectations) -> report, under a time limit, with device faults traced to their op. Reports go to
// stdout, diagnostics and notes to stderr.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "ops/user_kernel.hpp"
#include "runner/analyze/analyze.hpp"
#include "runner/cli/cli.hpp"
#include "runner/cli/commands.hpp"
#include "runner/cli/locate_fault.hpp"
#include "runner/cli/run_support.hpp"
#include "runner/cli/sweep_command.hpp"
#include "runner/cli/watchdog.hpp"
#include "runner/core/diagnostics.hpp"
#include "runner/core/limits.hpp"
#include "runner/core/sha256.hpp"
#include "runner/core/version.hpp"
#include "runner/execute/execute.hpp"
#include "runner/load/environment.hpp"
#include "runner/load/load.hpp"
#include "runner/report/autograder.hpp"
#include "runner/report/console.hpp"
#include "runner/report/files.hpp"
#include "runner/report/output_file.hpp"

namespace streamlab {
namespace {

// Repetitions: the command line's, else the experiment's; the host backend runs once by default
// (it measures no GPU time, so repeating it only proves determinism).
RunOptions run_options(const Experiment& exp, const RunArgs& args, const Backend& backend) {
  bool host = !backend.measures_device_time();
  RunOptions o;
  o.repeat = args.repeat >= 0 ? args.repeat : (host ? 1 : exp.repeat);
  o.warmup = args.warmup >= 0 ? args.warmup : (host ? 0 : exp.warmup);
  if (std::string too_many = repetitions_problem(exp, o.repeat, o.warmup); !too_many.empty())
    throw CommandLineError("--repeat / --warmup: " + too_many);
  o.profile = profile_option(args);
  o.predict = args.predict;
  o.gate = !args.no_gate;
  return o;
}

// The report options, in the order their reports are formatted and written. `seconds`: the
// command's wall-clock time so far, for the autograders' execution time.
struct ReportOption {
  const char* option;
  std::string RunArgs::*path;
  std::string (*format)(const Experiment&, const RunRecord&, double seconds);
};
const ReportOption kReportOptions[] = {
    {"--json", &RunArgs::json,
     [](const Experiment& e, const RunRecord& r, double) { return format_json(e, r); }},
    {"--csv", &RunArgs::csv,
     [](const Experiment& e, const RunRecord& r, double) { return format_csv(e, r); }},
    {"--trace", &RunArgs::trace,
     [](const Experiment& e, const RunRecord& r, double) { return format_trace(e, r); }},
    {"--html", &RunArgs::html,
     [](const Experiment& e, const RunRecord& r, double) { return format_html(e, r); }},
    {"--gradescope", &RunArgs::gradescope,
     [](const Experiment& e, const RunRecord& r, double s) {
       return format_gradescope(grade_report(e, r, s));
     }},
    {"--junit", &RunArgs::junit,
     [](const Experiment& e, const RunRecord& r, double s) {
       return format_junit(grade_report(e, r, s));
     }},
    {"--tap", &RunArgs::tap, [](const Experiment& e, const RunRecord& r, double s) {
       return format_tap(grade_report(e, r, s));
     }}};

// The report paths, checked before the experiment is loaded: a path that cannot be written must
// not cost a run, and no report may replace the experiment it reports on.
OutputPlan output_plan(const RunArgs& args) {
  std::vector<OutputRequest> requests;
  for (const auto& r : kReportOptions)
    if (!(args.*r.path).empty()) requests.push_back({r.option, args.*r.path});
  OutputPlan plan(std::move(requests), with_profile({{"the experiment file", args.file}}, args));
  refuse_stdout_without_stderr(plan, args.no_stderr);
  return plan;
}

// Writes every report asked for, all or none; a report sent to stdout replaces the console report
// there.
void write_reports(const Experiment& exp, const RunRecord& record, const OutputPlan& plan,
                   double seconds) {
  if (!plan.writes_stdout()) std::cout << format_console_report(exp, record) << std::flush;
  std::vector<std::string> texts;
  for (const auto& request : plan.requests())
    for (const auto& r : kReportOptions)
      if (request.option == r.option) texts.push_back(r.format(exp, record, seconds));
  plan.commit(texts);
}

// A racy experiment's numbers and results mean nothing: `run` shows what analyze finds first and
// refuses to run on errors unless told to.
Findings refuse_on_findings(const Experiment& exp, const RunArgs& args) {
  Findings findings = analyze(exp);
  FindingCounts n = count_findings(findings);
  std::cerr << format_findings(findings, exp.source);
  if (n.errors == 0) return findings;
  if (args.allow_races) {
    std::cerr << fmt::format(
        "streamlab: warning: running despite {} (--allow-races): results may vary from run to "
        "run\n",
        format_counts(n));
    return findings;
  }
  throw InvalidExperiment(
      fmt::format("streamlab: error: not running '{}': {} (see above); its results would mean "
                  "nothing. Fix them, or pass --allow-races to run it anyway\n",
                  exp.file, format_counts(n)),
      {});
}

// What the backend did not say of where the run came from (it gave the device's facts).
void record_provenance(const Experiment& exp, const RunArgs& args, Provenance& p) {
  p.date = utc_now();
  p.command_line = args.command_line;
  p.version = std::string(version());
  p.commit = std::string(commit());
  p.host = host_facts();
  p.experiment_sha256 = sha256_hex(exp.source);
}

RunRecord run_with(const Experiment& exp, const RunArgs& args, Findings findings,
                   TimeLimit& limit) {
  auto backend = choose_backend(exp, args);
  if (!backend->measures_device_time()) {
    limit.progress.phase = RunProgress::compiling;
    compile_for_check(exp);
  }
  RunOptions options = run_options(exp, args, *backend);
  options.progress = limit.progress_printer();
  options.where = &limit.progress;
  options.notes = environment_notes(exp);
  options.findings = std::move(findings);
  limit.running_on(backend.get());
  try {
    RunRecord record = run_experiment(exp, *backend, options);
    limit.running_on(nullptr);
    record_provenance(exp, args, record.provenance);
    return record;
  } catch (const std::exception& e) {  // before `backend` is destroyed, which waits for the device
    limit.running_on(nullptr);
    limit.failed(e.what());
    throw;
  }
}

// The command line of a child run that finds the op behind a device fault (locate_fault.hpp): the
// same experiment and params, up to the repetition that faulted, every op synchronized.
std::vector<std::string> locating_args(const RunArgs& args, const DeviceFault& fault,
                                       int64_t timeout_s) {
  std::vector<std::string> out = {"run", args.file};
  for (const auto& set : args.sets) out.insert(out.end(), {"--set", set});
  out.insert(out.end(),
             {"--backend", "cuda", "--device", std::to_string(args.device), "--timer", "none",
              "--no-gate", "--warmup", "0", "--repeat", std::to_string(fault.repetition),
              "--timeout", std::to_string(timeout_s), "--locate-fault"});
  if (args.allow_races) out.emplace_back("--allow-races");
  return out;
}

// A device fault, with the op that caused it when a run with every op synchronized finds it.
RunError explain_fault(const Experiment& exp, const RunArgs& args, const DeviceFault& fault,
                       int64_t timeout_s) {
  release_cuda_device(args.device);
  LocatedFault found = locate_fault(locating_args(args, fault, timeout_s));
  std::string where = fault.op >= 0 ? fmt::format("in the call of op '{}' (line {})",
                                                  exp.ops[fault.op].id, exp.ops[fault.op].loc.line)
                                    : "at the repetition's final synchronize";
  if (found.op < 0 || static_cast<size_t>(found.op) >= exp.ops.size())
    return RunError(fmt::format(
        "a device fault in repetition {}: {}\n  the op behind it was not found: run again "
        "with every op synchronized, {}",
        fault.repetition, fault.what(), found.detail));
  const Op& op = exp.ops[found.op];
  return RunError(fmt::format(
      "{}: a device fault in repetition {}: {}\n  found by running the experiment again with every "
      "op synchronized "
      "(cudaDeviceSynchronize after each op): the fault appeared when this {} finished; run "
      "as written, CUDA reported it {}",
      op_context(op), fault.repetition, fault.error, op.kind->name, where));
}

}  // namespace

RunRecord run_loaded(const Experiment& exp, const RunArgs& args, std::optional<TimeLimit>& limit) {
  limit->progress.phase = RunProgress::analyzing;
  Findings findings = refuse_on_findings(exp, args);
  limit->progress.phase = RunProgress::preparing;  // the backend's set-up comes next
  apply_environment(exp);
  try {
    return run_with(exp, args, std::move(findings), *limit);
  } catch (const DeviceFault& fault) {
    if (args.locate_fault) {
      report_located(fault.op);
      throw;
    }
    int64_t seconds = limit->seconds_left(exp);
    limit.reset();  // the child run has what is left of it
    throw explain_fault(exp, args, fault, seconds);
  }
}

int exit_code(Verdict v) {
  switch (v) {
    case Verdict::passed:
      return kExitOk;
    case Verdict::failed:
      return kExitCheckFailed;
    case Verdict::incomplete:
      return kExitIncomplete;
  }
  return kExitCheckFailed;
}

int cmd_run(const RunArgs& args) {
  auto started = std::chrono::steady_clock::now();
  OutputPlan plan = output_plan(args);
  std::optional<TimeLimit> limit(std::in_place, args);
  auto parsed = parse_file(args.file);
  Experiment exp = instantiate(*parsed, load_options(args.sets));
  limit->loaded(exp);
  refuse_kernel_files(plan, exp);
  SweepSpec sweep = sweep_from_args(exp, args.sweeps, args.plots, args.sets);
  if (!sweep.empty()) return run_sweep(args, *parsed, std::move(sweep), plan, limit);
  RunRecord record = run_loaded(exp, args, limit);
  limit.reset();  // reports are written whole or not at all: not cut short by the limit
  write_reports(exp, record, plan, seconds_since(started));
  return exit_code(record.verdict());
}

// check: load and analyze. Exit 2 when the file is invalid or analyze finds errors; warnings and
// notes are advice.
int cmd_check(const RunArgs& args) {
  TimeLimit limit(args);
  Experiment exp;
  try {
    exp = load_file(args.file, load_options(args.sets));
    limit.loaded(exp);
    limit.progress.phase = RunProgress::compiling;
  } catch (const InvalidExperiment& e) {
    if (args.format != "json") throw;
    std::cout << format_load_errors_json(args.file, e.diagnostics);
    return kExitInvalid;
  }
  try {
    compile_for_check(exp);
  } catch (const InvalidExperiment& e) {
    if (args.format != "json") throw;
    std::cout << format_load_errors_json(args.file, e.diagnostics);
    return kExitInvalid;
  }
  limit.progress.phase = RunProgress::analyzing;
  Findings findings = analyze(exp);
  FindingCounts n = count_findings(findings);
  if (args.format == "json") {
    std::cout << format_findings_json(exp, findings);
    return n.errors ? kExitInvalid : kExitOk;
  }
  std::cerr << format_findings(findings, exp.source);
  std::cout << fmt::format(
      "{}: {}: '{}', {} ops, {} buffers, {} streams, {} events, {} checks: {}\n", exp.file,
      n.errors ? "invalid" : "ok", exp.name, exp.ops.size(), exp.buffers.size(),
      exp.streams.size() - 1, exp.events.size(), exp.checks.size(), format_counts(n));
  if (args.print) std::cout << format_op_list(exp);
  return n.errors ? kExitInvalid : kExitOk;
}

}  // namespace streamlab
