// The command line: a thin map from subcommands to library calls, and from exceptions to exit
// codes. Reports go to stdout, diagnostics and notes to stderr.
#include "runner/cli/cli.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "ops/kernels/kernel.hpp"
#include "ops/op_kind.hpp"
#include "ops/user_kernel.hpp"
#include "runner/analyze/analyze.hpp"
#include "runner/core/diagnostics.hpp"
#include "runner/load/environment.hpp"
#include "runner/execute/execute.hpp"
#include "runner/check/checks.hpp"
#include "runner/check/expect.hpp"
#include "runner/core/limits.hpp"
#include "runner/load/load.hpp"
#include "runner/cli/locate_fault.hpp"
#include "runner/report/output_file.hpp"
#include "runner/report/files.hpp"
#include "runner/report/console.hpp"
#include "runner/core/suggest.hpp"
#include "runner/cli/watchdog.hpp"

namespace streamlab {
namespace {

struct RunArgs {
  std::string file;
  std::vector<std::string> sets;
  int64_t repeat = -1, warmup = -1;  // -1: the experiment's own
  std::string backend = "auto";
  std::string timer = "auto";
  bool no_gate = false;
  int device = 0;
  std::string json, csv, trace, html;  // report files; "-" is stdout
  bool print = false;                  // check --print: the expanded op list
  std::string format = "text";         // check --format
  bool allow_races = false;            // run --allow-races: run despite analysis errors
  int64_t timeout = -1;                // --timeout seconds; -1: the experiment's, else the default
  bool locate_fault = false;           // hidden: a child run that finds the op behind a device fault
};

// The time limit of a command: the command line's --timeout, else the experiment's `timeout:`,
// else the default. The watchdog names what had not finished when it passes.
class TimeLimit {
 public:
  explicit TimeLimit(const RunArgs& args)
      : args_(args), start_(std::chrono::steady_clock::now()),
        watchdog_(deadline(seconds(nullptr)), limit_text(nullptr), [this] { return what_was_running(); }) {}

  // Once the experiment is loaded, its own `timeout:` applies unless --timeout was given.
  void loaded(const Experiment& exp) { watchdog_.set_deadline(deadline(seconds(&exp)), limit_text(&exp)); }
  void running_on(const Backend* backend) { backend_ = backend; }
  // The run failed: its cleanup may still wait for the device (a kernel that never ends), and the
  // limit's message must then say what failed, not only that time ran out.
  void failed(const std::string& why) {
    std::lock_guard lock(mutex_);
    failure_ = why;
  }
  RunProgress progress;

  int64_t seconds(const Experiment* exp) const {
    if (args_.timeout >= 0) return args_.timeout;
    return exp && exp->timeout_s > 0 ? exp->timeout_s : limits::kDefaultTimeoutSeconds;
  }
  // What is left of the limit, in whole seconds (at least 1); 0 when there is no limit.
  int64_t seconds_left(const Experiment& exp) const {
    int64_t s = seconds(&exp);
    if (s == 0) return 0;
    auto spent = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start_).count();
    return std::max<int64_t>(1, s - spent);
  }

 private:
  std::chrono::steady_clock::time_point deadline(int64_t s) const {
    return s == 0 ? std::chrono::steady_clock::time_point::max() : start_ + std::chrono::seconds(s);
  }
  std::string limit_text(const Experiment* exp) const {
    int64_t s = seconds(exp);
    std::string source = args_.timeout >= 0                ? fmt::format("--timeout {}", s)
                         : exp && exp->timeout_s > 0 ? fmt::format("`timeout: {}` in the experiment", s)
                                                     : "the default; --timeout S changes it";
    return fmt::format("the command ran longer than {} s ({})", s, source);
  }
  std::string what_was_running() const {
    {
      std::lock_guard lock(mutex_);
      if (!failure_.empty())
        return fmt::format("the run had failed ({}), and streamlab was waiting for the device's unfinished work "
                           "before it could exit", failure_);
    }
    std::string out = "stopped " + progress.describe();
    const Backend* b = backend_;
    std::string detail = b ? b->unfinished() : "";
    return detail.empty() ? out : out + "; " + detail;
  }

  const RunArgs& args_;
  std::chrono::steady_clock::time_point start_;
  std::atomic<const Backend*> backend_{nullptr};
  mutable std::mutex mutex_;
  std::string failure_;
  Watchdog watchdog_;  // last: it calls what_was_running(), which reads the members above
};

LoadOptions load_options(const std::vector<std::string>& sets) {
  LoadOptions options;
  for (const auto& s : sets) {
    auto eq = s.find('=');
    options.overrides.emplace_back(s.substr(0, eq), s.substr(eq + 1));
  }
  return options;
}

std::string validate_set(std::string& s) {
  auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
    return "expected NAME=VALUE (e.g. --set N=4096), got '" + s + "'";
  return "";
}

void add_set_option(CLI::App* cmd, std::vector<std::string>& sets) {
  cmd->add_option("--set", sets, "Override a param: NAME=EXPR (repeatable)")
      ->type_name("NAME=EXPR")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::Validator(validate_set, ""));
}

// Chooses the backend; with `auto` and no device, says on stderr that it falls back to the host.
std::unique_ptr<Backend> choose_backend(const Experiment& exp, const RunArgs& args) {
  if (args.backend == "host") return make_host_backend(exp);
  std::string why;
  int count = cuda_device_count(&why);
  if (args.backend == "cuda" && count == 0) throw RunError("--backend cuda: no CUDA device (" + why + ")");
  if (count == 0) {
    std::cerr << fmt::format(
        "streamlab: note: no CUDA device ({}); running on the host backend: results are validated, "
        "no GPU times are measured\n", why);
    return make_host_backend(exp);
  }
  if (args.device < 0 || args.device >= count)
    throw RunError(fmt::format("--device {}: no such device ({} CUDA device{})", args.device, count, count == 1 ? "" : "s"));
  const std::map<std::string, TimerChoice> timers = {{"auto", TimerChoice::automatic}, {"cupti", TimerChoice::cupti},
                                                     {"events", TimerChoice::events}, {"none", TimerChoice::none}};
  return make_cuda_backend(exp, args.device, {timers.at(args.timer), !args.no_gate, args.locate_fault});
}

// Repetitions: the command line's, else the experiment's; the host backend runs once by default
// (it measures no GPU time, so repeating it only proves determinism).
RunOptions run_options(const Experiment& exp, const RunArgs& args, const Backend& backend) {
  bool host = !backend.measures_device_time();
  RunOptions o;
  o.repeat = args.repeat >= 0 ? args.repeat : (host ? 1 : exp.repeat);
  o.warmup = args.warmup >= 0 ? args.warmup : (host ? 0 : exp.warmup);
  if (std::string too_many = repetitions_problem(exp, o.repeat, o.warmup); !too_many.empty())
    throw CommandLineError("--repeat / --warmup: " + too_many);
  return o;
}

// The report options, in the order their reports are formatted and written.
struct ReportOption {
  const char* option;
  std::string RunArgs::*path;
  std::string (*format)(const Experiment&, const RunRecord&);
};
const ReportOption kReportOptions[] = {{"--json", &RunArgs::json, format_json},
                                       {"--csv", &RunArgs::csv, format_csv},
                                       {"--trace", &RunArgs::trace, format_trace},
                                       {"--html", &RunArgs::html, format_html}};

// The report paths, checked before the experiment is loaded: a path that cannot be written must
// not cost a run, and no report may replace the experiment it reports on.
OutputPlan output_plan(const RunArgs& args) {
  std::vector<OutputRequest> requests;
  for (const auto& r : kReportOptions)
    if (!(args.*r.path).empty()) requests.push_back({r.option, args.*r.path});
  return OutputPlan(std::move(requests), {{"the experiment file", args.file}});
}

// The files the experiment's kernels read are known once it is loaded: no report replaces them.
void refuse_kernel_files(const OutputPlan& plan, const Experiment& exp) {
  std::vector<InputFile> inputs;
  for (auto& path : user_kernel_files(exp)) inputs.push_back({fmt::format("a file a user kernel reads ({})", path), path});
  plan.refuse_inputs(inputs);
}

// Writes every report asked for, all or none; a report sent to stdout replaces the console report
// there.
void write_reports(const Experiment& exp, const RunRecord& record, const OutputPlan& plan) {
  if (!plan.writes_stdout()) std::cout << format_console_report(exp, record) << std::flush;
  std::vector<std::string> texts;
  for (const auto& request : plan.requests())
    for (const auto& r : kReportOptions)
      if (request.option == r.option) texts.push_back(r.format(exp, record));
  plan.commit(texts);
}

// "repetition 12 of 23" on stderr, rewritten in place, once a run has taken a second; only on a
// terminal, so logs and pipes stay clean.
std::function<void(int64_t, int64_t)> progress_printer() {
  if (!isatty(STDERR_FILENO)) return {};
  auto start = std::chrono::steady_clock::now();
  return [start](int64_t done, int64_t total) {
    if (std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) return;
    std::cerr << fmt::format("\rstreamlab: repetition {} of {}", done, total) << (done == total ? "\r\033[K" : "")
              << std::flush;
  };
}

// A racy experiment's numbers and results mean nothing: `run` shows what analyze finds first and
// refuses to run on errors unless told to.
Findings refuse_on_findings(const Experiment& exp, const RunArgs& args) {
  Findings findings = analyze(exp);
  FindingCounts n = count_findings(findings);
  std::cerr << format_findings(findings, exp.source);
  if (n.errors == 0) return findings;
  if (args.allow_races) {
    std::cerr << fmt::format("streamlab: warning: running despite {} (--allow-races): results may vary from run to "
                             "run\n", format_counts(n));
    return findings;
  }
  throw InvalidExperiment(fmt::format("streamlab: error: not running '{}': {} (see above); its results would mean "
                                      "nothing. Fix them, or pass --allow-races to run it anyway\n",
                                      exp.file, format_counts(n)), {});
}

// User kernels are compiled by `check`, and by a run on the host backend (which cannot run them),
// for the oldest GPU streamlab targets (PTX for sm_75), so their errors show without a GPU; where
// NVRTC is missing, a note says they could not be compiled.
void compile_for_check(const Experiment& exp) {
  if (exp.kernels.empty()) return;
  try {
    compile_user_kernels(exp, "compute_75");
  } catch (const RunError& e) {
    std::cerr << fmt::format("streamlab: note: user kernels not compiled: {}\n", e.what());
  }
}

RunRecord run_with(const Experiment& exp, const RunArgs& args, Findings findings, TimeLimit& limit) {
  auto backend = choose_backend(exp, args);
  if (!backend->measures_device_time()) {
    limit.progress.phase = RunProgress::compiling;
    compile_for_check(exp);
  }
  RunOptions options = run_options(exp, args, *backend);
  options.progress = progress_printer();
  options.where = &limit.progress;
  options.notes = environment_notes(exp);
  options.findings = std::move(findings);
  limit.running_on(backend.get());
  try {
    RunRecord record = run_experiment(exp, *backend, options);
    limit.running_on(nullptr);
    return record;
  } catch (const std::exception& e) {  // before `backend` is destroyed, which waits for the device
    limit.running_on(nullptr);
    limit.failed(e.what());
    throw;
  }
}

// The command line of a child run that finds the op behind a device fault (locate_fault.hpp): the
// same experiment and params, up to the repetition that faulted, every op synchronized.
std::vector<std::string> locating_args(const RunArgs& args, const DeviceFault& fault, int64_t timeout_s) {
  std::vector<std::string> out = {"run", args.file};
  for (const auto& set : args.sets) out.insert(out.end(), {"--set", set});
  out.insert(out.end(), {"--backend", "cuda", "--device", std::to_string(args.device), "--timer", "none", "--no-gate",
                         "--warmup", "0", "--repeat", std::to_string(fault.repetition), "--timeout",
                         std::to_string(timeout_s), "--locate-fault"});
  if (args.allow_races) out.emplace_back("--allow-races");
  return out;
}

// A device fault, with the op that caused it when a run with every op synchronized finds it.
RunError explain_fault(const Experiment& exp, const RunArgs& args, const DeviceFault& fault, int64_t timeout_s) {
  release_cuda_device(args.device);
  LocatedFault found = locate_fault(locating_args(args, fault, timeout_s));
  std::string where = fault.op >= 0 ? fmt::format("in the call of op '{}' (line {})", exp.ops[fault.op].id,
                                                  exp.ops[fault.op].loc.line)
                                    : "at the repetition's final synchronize";
  if (found.op < 0 || static_cast<size_t>(found.op) >= exp.ops.size())
    return RunError(fmt::format("a device fault in repetition {}: {}\n  the op behind it was not found: run again "
                                "with every op synchronized, {}", fault.repetition, fault.what(), found.detail));
  const Op& op = exp.ops[found.op];
  return RunError(fmt::format(
      "{}: a device fault in repetition {}: {}\n  found by running the experiment again with every op synchronized "
      "(cudaDeviceSynchronize after each op): the fault appeared when this {} finished; run "
      "as written, CUDA reported it {}", op_context(op), fault.repetition, fault.error, op.kind->name, where));
}

int cmd_run(const RunArgs& args) {
  OutputPlan plan = output_plan(args);
  std::optional<TimeLimit> limit(std::in_place, args);
  Experiment exp = load_file(args.file, load_options(args.sets));
  limit->loaded(exp);
  refuse_kernel_files(plan, exp);
  Findings findings = refuse_on_findings(exp, args);
  apply_environment(exp);
  std::optional<RunRecord> ran;
  try {
    ran = run_with(exp, args, std::move(findings), *limit);
  } catch (const DeviceFault& fault) {
    if (args.locate_fault) {
      report_located(fault.op);
      throw;
    }
    int64_t seconds = limit->seconds_left(exp);
    limit.reset();  // the child run has what is left of it
    throw explain_fault(exp, args, fault, seconds);
  }
  const RunRecord& record = *ran;
  limit.reset();  // reports are written whole or not at all: not cut short by the limit
  write_reports(exp, record, plan);
  return record.checks_passed() && record.expectations_held() ? kExitOk : kExitCheckFailed;
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
  Findings findings = analyze(exp);
  FindingCounts n = count_findings(findings);
  if (args.format == "json") {
    std::cout << format_findings_json(exp, findings);
    return n.errors ? kExitInvalid : kExitOk;
  }
  std::cerr << format_findings(findings, exp.source);
  std::cout << fmt::format("{}: {}: '{}', {} ops, {} buffers, {} streams, {} events, {} checks: {}\n", exp.file,
                           n.errors ? "invalid" : "ok", exp.name, exp.ops.size(), exp.buffers.size(),
                           exp.streams.size() - 1, exp.events.size(), exp.checks.size(), format_counts(n));
  if (args.print) std::cout << format_op_list(exp);
  return n.errors ? kExitInvalid : kExitOk;
}

std::string op_fields(const OpKind& k) {
  std::vector<std::string> keys(k.keys.begin(), k.keys.end());
  keys.emplace_back("id?");
  return keys.empty() ? "" : join(keys);
}

std::string kernel_params(const KernelKind& k) {
  std::string out;
  for (const auto& p : k.params) {
    out += fmt::format("      {:<6} {:<5} {}\n", p.name, param_kind_name(p.kind), p.doc);
  }
  return out;
}

int cmd_list() {
  std::string out = "ops (fields; ? = optional)\n";
  for (const OpKind* k : op_table()) out += fmt::format("  {:<18} {}\n  {:<18} {}\n", k->name, op_fields(*k), "", k->summary);
  out += "\nkernels (args: in, out, inout = a buffer or element range read, written, or both; int = integer "
         "expression; real = number)\n";
  for (const auto& k : kernel_table()) out += fmt::format("  {}\n    {}\n{}", k.name, k.summary, kernel_params(k));
  out += "\nchecks\n";
  for (const auto& c : check_kinds()) out += fmt::format("  {:<10} {:<14} {}\n", c.name, c.fields, c.summary);
  out += "\nexpect functions (medians over the timed repetitions; numbers, params, + - * /, < <= > >= == !=, and or not)\n";
  for (const auto& f : expectation_functions())
    out += fmt::format("  {:<24} {:<5} {}\n", f.signature, f.unit, f.meaning);
  out += "\nenv (the variables an experiment may set, before CUDA starts; nothing else)\n";
  for (const EnvSetting& e : env_settings()) out += fmt::format("  {:<30} {:<42} {}\n", e.name, e.values, e.meaning);
  out += "\ndiagnostics of check and run (acknowledge one an experiment shows on purpose with `allow: [CODE]` on "
         "its op or check)\n";
  for (const auto& c : finding_kinds())
    out += fmt::format("  {:<20} {:<8} {}\n", c.code, severity_name(c.severity), c.meaning);
  std::cout << out;
  return kExitOk;
}

// "did you mean" for a mistyped subcommand, before CLI11 gives its generic message.
bool reject_unknown_command(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  const std::vector<std::string> commands = {"run", "check", "list"};
  std::string word = argv[1];
  if (std::find(commands.begin(), commands.end(), word) != commands.end()) return false;
  std::cerr << fmt::format("streamlab: error: unknown command '{}'{} (commands: {}; see streamlab --help)\n", word,
                           did_you_mean(word, commands), join(commands));
  return true;
}

void add_timeout_option(CLI::App* cmd, RunArgs& args) {
  cmd->add_option("--timeout", args.timeout,
                  fmt::format("Stop after SECONDS, naming the ops that had not finished (exit 3); 0: no limit "
                              "(default: the experiment's `timeout:`, else {} s)", limits::kDefaultTimeoutSeconds))
      ->type_name("SECONDS")
      ->check(CLI::Range(int64_t{0}, limits::kMaxTimeoutSeconds));
}

void add_run_options(CLI::App* run, RunArgs& args) {
  run->add_option("--repeat", args.repeat, "Timed repetitions (default: the experiment's repeat)")->check(CLI::PositiveNumber);
  run->add_option("--warmup", args.warmup, "Untimed repetitions first (default: the experiment's warmup)")->check(CLI::NonNegativeNumber);
  run->add_option("--backend", args.backend, "cuda, host, or auto: cuda when a device exists")
      ->check(CLI::IsMember({"auto", "cuda", "host"}));
  run->add_option("--device", args.device, "CUDA device index");
  run->add_option("--timer", args.timer,
                  "Device timing: cupti (activity records), events (CUDA events in each op's stream), none "
                  "(spans only, least overhead), or auto: cupti where it loads, else events")
      ->check(CLI::IsMember({"auto", "cupti", "events", "none"}));
  add_timeout_option(run, args);
  run->add_flag("--locate-fault", args.locate_fault, "")->group("");  // internal: see locate_fault.hpp
  run->add_flag("--allow-races", args.allow_races,
                "Run even when `streamlab check` finds errors (races, use before allocation or after free); "
                "to watch a race happen");
  run->add_flag("--no-gate", args.no_gate,
                "Issue ops without holding the streams first (by default a start gate holds them until the "
                "repetition is queued)");
  run->add_option("--json", args.json, "Write the results as JSON (schemas/results.schema.json); - for stdout")
      ->type_name("FILE");
  run->add_option("--csv", args.csv, "Write one CSV row per op per timed repetition; - for stdout")->type_name("FILE");
  run->add_option("--trace", args.trace, "Write a Chrome trace (Perfetto, chrome://tracing); - for stdout")
      ->type_name("FILE");
  run->add_option("--html", args.html, "Write a self-contained HTML report with an SVG timeline; - for stdout")
      ->type_name("FILE");
}

}  // namespace

int run_cli(int argc, char** argv) {
  if (reject_unknown_command(argc, argv)) return kExitInvalid;
  CLI::App app{"streamlab: a YAML-driven CUDA streams experiment runner"};
  app.set_version_flag("--version", std::string("streamlab ") + STREAMLAB_VERSION);
  app.require_subcommand(1);
  RunArgs args;
  auto* run = app.add_subcommand("run", "Load, run (warm-up + timed repetitions), check and report an experiment");
  run->add_option("experiment", args.file, "Experiment YAML file")->required();
  add_set_option(run, args.sets);
  add_run_options(run, args);
  auto* check = app.add_subcommand("check", "Load and check an experiment without running it: errors in the file, "
                                   "races between streams, use before allocation or after free, and "
                                   "synchronization pitfalls");
  check->add_option("experiment", args.file, "Experiment YAML file")->required();
  check->add_flag("--print", args.print, "Print the op list as expanded from arrays and loops");
  add_timeout_option(check, args);
  check->add_option("--format", args.format,
                    "text: diagnostics like a compiler's on stderr, a summary on stdout; json: one JSON document "
                    "on stdout (schemas/check.schema.json)")
      ->check(CLI::IsMember({"text", "json"}));
  add_set_option(check, args.sets);
  app.add_subcommand("list", "List the ops, kernels and checks an experiment can use");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitInvalid;
  }
  try {
    if (run->parsed()) return cmd_run(args);
    if (check->parsed()) return cmd_check(args);
    return cmd_list();
  } catch (const InvalidExperiment& e) {
    std::cerr << e.what();
    return kExitInvalid;
  } catch (const CommandLineError& e) {
    std::cerr << "streamlab: error: " << e.what() << "\n";
    return kExitInvalid;
  } catch (const RunError& e) {
    std::cerr << "streamlab: error: " << e.what() << "\n";
    return kExitRuntime;
  } catch (const std::bad_alloc&) {
    std::cerr << "streamlab: error: out of host memory\n";
    return kExitRuntime;
  } catch (const std::exception& e) {
    std::cerr << "streamlab: error: " << e.what() << "\n";
    return kExitRuntime;
  }
}

}  // namespace streamlab
