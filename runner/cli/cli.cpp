// The command line: a thin map from subcommands to their commands (commands.hpp), and from
// exceptions to exit codes.
#include "runner/cli/cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "runner/cli/commands.hpp"
#include "runner/cli/completion.hpp"
#include "runner/core/diagnostics.hpp"
#include "runner/core/errors.hpp"
#include "runner/core/limits.hpp"
#include "runner/core/suggest.hpp"
#include "runner/core/version.hpp"
#include "runner/report/colour.hpp"

namespace streamlab {
namespace {

std::string validate_set(std::string& s) {
  auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
    return "expected NAME=VALUE (e.g. --set N=4096), got '" + s + "'";
  return "";
}

// A whole-number option's check, on the text before CLI11 converts it: says the range in plain
// words (CLI11's own checks print the double's range, 309 digits) and refuses what does not fit,
// where CLI11's conversion would clamp it.
CLI::Validator whole_number(int64_t least, int64_t most) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        int64_t value = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc() && end == text.data() + text.size() && value >= least &&
            value <= most)
          return "";
        return fmt::format("expected a whole number from {} to {}, got '{}'", least, most,
                           printable(text));
      },
      "");
}

// The same for a number with a fraction: CLI::Range's message would print its bounds' 309 digits.
CLI::Validator real_number(double least, double most) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        double value = std::strtod(text.c_str(), &end);
        if (!text.empty() && end == text.c_str() + text.size() && value >= least && value <= most) return "";
        return fmt::format("expected a number from {:g} to {:g}, got '{}'", least, most, printable(text));
      },
      "");
}

// Every option that names a file refuses an empty one: `--json ''` would otherwise write nothing
// and say nothing, as if the option had not been given.
void refuse_empty_paths(CLI::App& app) {
  auto given = [](std::string what) {
    return CLI::Validator(
        [what](std::string& text) { return text.empty() ? "expected " + what + ", got ''" : std::string(); }, "");
  };
  const CLI::Validator output = given("a file's path (or - for stdout)"), input = given("a file's path");
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    for (CLI::Option* o : sub->get_options()) {
      for (const char* name : {"--json", "--csv", "--trace", "--html", "--gradescope", "--junit", "--tap",
                               "--markdown", "--output"})
        if (o->check_name(name)) o->check(output);
      for (const char* name : {"--profile", "--rubric", "--reference"})
        if (o->check_name(name)) o->check(input);
    }
}

// A --set gives a param one value: given twice, which one counts would be a guess.
std::string repeated_set(const std::vector<std::string>& sets) {
  std::set<std::string> seen;
  for (const auto& s : sets)
    if (std::string name = s.substr(0, s.find('=')); !seen.insert(name).second)
      return fmt::format("--set {}: given twice; give each param one value", name);
  return "";
}

void add_device_option(CLI::App* cmd, RunArgs& args) {
  cmd->add_option("--device", args.device, "CUDA device index")->check(whole_number(0, INT32_MAX));
}

void add_set_option(CLI::App* cmd, std::vector<std::string>& sets) {
  cmd->add_option("--set", sets, "Override a param: NAME=EXPR (repeatable)")
      ->type_name("NAME=EXPR")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::Validator(validate_set, ""));
}

// "did you mean" for a mistyped subcommand, before CLI11 gives its generic message.
bool reject_unknown_command(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return false;
  const std::vector<std::string> commands = {"run",  "check",      "grade",   "calibrate", "compare",
                                             "list", "completion", "manpage"};
  std::string word = argv[1];
  if (std::find(commands.begin(), commands.end(), word) != commands.end()) return false;
  std::cerr << fmt::format(
      "streamlab: error: unknown command '{}'{} (commands: {}; see streamlab --help)\n", word,
      did_you_mean(word, commands), join(commands));
  return true;
}

// --color on every subcommand (runner/report/colour.hpp decides what it means).
void add_colour_option(CLI::App* cmd, std::string& colour) {
  cmd->add_option("--color,--colour", colour,
                  "Colour verdicts and diagnostics: auto (on a terminal, unless NO_COLOR is set), "
                  "always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

// CLI11's own messages (a bad option, a value out of range) read like streamlab's other errors.
std::string failure_message(const CLI::App*, const CLI::Error& e) {
  return fmt::format("streamlab: error: {}\nRun with --help for more information.\n", e.what());
}

void add_timeout_option(CLI::App* cmd, RunArgs& args) {
  cmd->add_option(
         "--timeout", args.timeout,
         fmt::format(
             "Stop after SECONDS, naming the ops that had not finished (exit 3); 0: no limit "
             "(default: the experiment's `timeout:`, else {} s)",
             limits::kDefaultTimeoutSeconds))
      ->type_name("SECONDS")
      ->check(whole_number(0, limits::kMaxTimeoutSeconds));
}

void add_profile_option(CLI::App* cmd, RunArgs& args) {
  cmd->add_option("--profile", args.profile,
                  "The device profile the timeline model predicts with (a file `streamlab "
                  "calibrate` wrote; default: the built-in one for the device in use)")
      ->type_name("FILE");
}

// What autograders read, for `run` and `grade`.
void add_autograder_options(CLI::App* cmd, RunArgs& args) {
  cmd->add_option("--gradescope", args.gradescope,
                  "Write Gradescope's results.json (schemas/gradescope.schema.json); - for stdout")
      ->type_name("FILE");
  cmd->add_option("--junit", args.junit, "Write JUnit XML, a test case per check and expectation")
      ->type_name("FILE");
  cmd->add_option("--tap", args.tap, "Write TAP (version 14), a test per check and expectation")
      ->type_name("FILE");
}

// Before the command line is parsed: its own errors must follow the same rule.
void add_no_stderr_flag(CLI::App* cmd, RunArgs& args) {
  cmd->add_flag("--no-stderr", args.no_stderr,
                "Write nothing to stderr: notes, diagnostics and errors go to stdout (GitHub "
                "Classroom marks a test failed on any stderr)");
}

void add_run_options(CLI::App* run, RunArgs& args) {
  run->add_option("--repeat", args.repeat, "Timed repetitions (default: the experiment's repeat)")
      ->check(whole_number(1, limits::kRepetitions));
  run->add_option("--warmup", args.warmup,
                  "Untimed repetitions first (default: the experiment's warmup)")
      ->check(whole_number(0, limits::kRepetitions));
  run->add_option("--backend", args.backend, "cuda, host, or auto: cuda when a device exists")
      ->check(CLI::IsMember({"auto", "cuda", "host"}));
  add_device_option(run, args);
  run->add_option(
         "--timer", args.timer,
         "Device timing: cupti (activity records), events (CUDA events in each op's stream), none "
         "(spans only, least overhead), or auto: cupti where it loads, else events")
      ->check(CLI::IsMember({"auto", "cupti", "events", "none"}));
  add_timeout_option(run, args);
  add_profile_option(run, args);
  run->add_flag("--predict", args.predict,
                "Predict the run with the timeline model too and show the prediction beside the "
                "measurement, with its error (the host backend always predicts)");
  run->add_flag("--locate-fault", args.locate_fault, "")
      ->group("");  // internal: see locate_fault.hpp
  run->add_flag(
      "--allow-races", args.allow_races,
      "Run even when `streamlab check` finds errors (races, use before allocation or after free); "
      "to watch a race happen");
  run->add_flag(
      "--no-gate", args.no_gate,
      "Issue ops without holding the streams first (by default a start gate holds them until the "
      "repetition is queued)");
  run->add_option("--json", args.json,
                  "Write the results as JSON (schemas/results.schema.json); - for stdout")
      ->type_name("FILE");
  run->add_option("--csv", args.csv, "Write one CSV row per op per timed repetition; - for stdout")
      ->type_name("FILE");
  run->add_option("--trace", args.trace,
                  "Write a Chrome trace (Perfetto, chrome://tracing); - for stdout")
      ->type_name("FILE");
  run->add_option("--html", args.html,
                  "Write a self-contained HTML report with an SVG timeline; - for stdout")
      ->type_name("FILE");
  run->add_option("--sweep", args.sweeps,
                  "Run once per value of a param: NAME=V1,V2,... (integer expressions); repeated, "
                  "the product of the values; in place of the experiment's `sweep:`")
      ->type_name("NAME=V1,V2,...")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  run->add_option("--plot", args.plots,
                  "With a sweep: a measure to tabulate and plot against the swept params beside the "
                  "span, e.g. 'duration(k[0])' (repeatable; in place of the sweep's `plot:`)")
      ->type_name("MEASURE")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  add_autograder_options(run, args);
}

CLI::App* add_compare_command(CLI::App& app, CompareArgs& args) {
  auto* compare = app.add_subcommand(
      "compare",
      "Compare two results files of `run --json` (or two folders of them) per op and span: the "
      "medians, their ratio and a verdict from a test on the samples; exit 1 when B is slower");
  compare->add_option("a", args.a, "The baseline: a results JSON file, or a folder of them")->required();
  compare->add_option("b", args.b, "The results to judge against it (the same kind as A)")->required();
  compare->add_option("--threshold", args.threshold,
                      "Percent: a significant change of the medians smaller than this is no change (default 5)")
      ->type_name("PERCENT")
      ->check(real_number(0, 1000));
  compare->add_option("--alpha", args.alpha, "The test's significance level (default 0.01)")
      ->type_name("P")
      ->check(real_number(1e-9, 0.5));
  compare->add_option("--json", args.json, "Write the comparison as JSON (schemas/compare.schema.json); - for stdout")
      ->type_name("FILE");
  compare->add_option("--markdown", args.markdown, "Write the markdown table to a file too; - for stdout")
      ->type_name("FILE");
  return compare;
}

// --no-stderr anywhere on the command line: from here on, what is written to stderr (by streamlab,
// the CUDA libraries, or a child) goes to stdout, with nothing to forget.
void merge_stderr_if_asked(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--no-stderr") {
      std::fflush(stderr);
      ::dup2(STDOUT_FILENO, STDERR_FILENO);
      return;
    }
}

}  // namespace

int run_cli(int argc, char** argv) {
  merge_stderr_if_asked(argc, argv);
  if (reject_unknown_command(argc, argv)) return kExitInvalid;
  CLI::App app{"a YAML-driven CUDA streams experiment runner", "streamlab"};
  app.set_version_flag("--version", version_line());
  app.require_subcommand(1);
  app.failure_message(failure_message);
  RunArgs args;
  args.command_line.assign(argv, argv + argc);
  std::string colour = "auto";
  auto* run = app.add_subcommand(
      "run", "Load, run (warm-up + timed repetitions), check and report an experiment");
  run->add_option("experiment", args.file, "Experiment YAML file")->required();
  add_set_option(run, args.sets);
  add_run_options(run, args);
  add_no_stderr_flag(run, args);
  auto* check =
      app.add_subcommand("check",
                         "Load and check an experiment without running it: errors in the file, "
                         "races between streams, use before allocation or after free, and "
                         "synchronization pitfalls");
  check->add_option("experiment", args.file, "Experiment YAML file")->required();
  check->add_flag("--print", args.print, "Print the op list as expanded from arrays and loops");
  add_timeout_option(check, args);
  check
      ->add_option("--format", args.format,
                   "text: diagnostics like a compiler's on stderr, a summary on stdout; json: one "
                   "JSON document "
                   "on stdout (schemas/check.schema.json)")
      ->check(CLI::IsMember({"text", "json"}));
  add_set_option(check, args.sets);
  add_no_stderr_flag(check, args);
  auto* grade = app.add_subcommand(
      "grade",
      "Score a submission with a rubric (its hidden checks and expectations, points, peers such as "
      "the reference solution run beside it); outputs for Gradescope, JUnit and TAP");
  grade->add_option("submission", args.file, "The student's experiment")->required();
  grade->add_option("--rubric", args.rubric, "The instructor's rubric (NAME.rubric.yaml)")
      ->required()
      ->type_name("FILE");
  grade
      ->add_option("--reference", args.reference,
                   "The reference solution, run beside the submission as peer 'reference' (in "
                   "place of the rubric's)")
      ->type_name("FILE");
  grade->add_option("--set", args.sets, "Replace a param of the rubric: NAME=EXPR (repeatable)")
      ->type_name("NAME=EXPR")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(CLI::Validator(validate_set, ""));
  grade->add_option("--backend", args.backend, "cuda, host, or auto: cuda when a device exists")
      ->check(CLI::IsMember({"auto", "cuda", "host"}));
  add_device_option(grade, args);
  grade->add_option("--json", args.json, "Write the grade as JSON (schemas/grade.schema.json)")
      ->type_name("FILE");
  add_timeout_option(grade, args);
  add_profile_option(grade, args);
  add_autograder_options(grade, args);
  add_no_stderr_flag(grade, args);
  auto* calibrate = app.add_subcommand(
      "calibrate",
      "Measure what the timeline model needs of the GPU in use (copies, launches, kernels, host "
      "calls) and write its device profile as JSON");
  calibrate->add_option("--output,-o", args.output, "Where to write the profile; - for stdout")
      ->required()
      ->type_name("FILE");
  add_device_option(calibrate, args);
  add_timeout_option(calibrate, args);
  CompareArgs compare_args;
  auto* compare = add_compare_command(app, compare_args);
  auto* list = app.add_subcommand("list", "List the ops, kernels and checks an experiment can use");
  for (auto* cmd : {run, check, grade, calibrate, compare, list}) add_colour_option(cmd, colour);
  // Hidden: what the build runs to make the installed completions and man page (completion.hpp).
  std::string shell;
  auto* completion =
      app.add_subcommand("completion", "Print the shell's completion script")->group("");
  completion->add_option("shell", shell)->required()->check(CLI::IsMember({"bash", "zsh"}));
  auto* manpage = app.add_subcommand("manpage", "Print the man page (roff)")->group("");
  refuse_empty_paths(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    TerminalColour painted(colour_when(colour));
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitInvalid;
  }
  TerminalColour painted(colour_when(colour));
  try {
    if (auto twice = repeated_set(args.sets); !twice.empty()) throw CommandLineError(twice);
    if (run->parsed()) return cmd_run(args);
    if (check->parsed()) return cmd_check(args);
    if (grade->parsed()) return cmd_grade(args);
    if (calibrate->parsed()) return cmd_calibrate(args);
    if (compare->parsed()) return cmd_compare(compare_args);
    if (completion->parsed()) return print_generated(app, shell);
    if (manpage->parsed()) return print_generated(app, "man");
    return cmd_list();
  } catch (const InvalidExperiment& e) {
    std::cerr << printable(e.what());
    return kExitInvalid;
  } catch (const CommandLineError& e) {
    std::cerr << "streamlab: error: " << printable(e.what()) << "\n";
    return kExitInvalid;
  } catch (const InvalidInput& e) {
    std::cerr << printable(e.what()) << "\n";
    return kExitInvalid;
  } catch (const RunError& e) {
    std::cerr << "streamlab: error: " << printable(e.what()) << "\n";
    return kExitRuntime;
  } catch (const std::bad_alloc&) {
    std::cerr << "streamlab: error: out of host memory\n";
    return kExitRuntime;
  } catch (const std::exception& e) {
    std::cerr << "streamlab: error: " << printable(e.what()) << "\n";
    return kExitRuntime;
  }
}

}  // namespace streamlab
