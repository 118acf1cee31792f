// grade: a submission scored by a rubric. The rubric's items are applied to the submission (an
// item it cannot apply scores zero, with the reason), the submission is checked, and it runs
// beside the rubric's peers (a reference solution, a baseline), repetition for repetition, so that
// relative measures compare runs that saw the same device. Whatever the submission does (it does
// not load, it races, it fails on the GPU, it runs past the time limit), the outputs are written,
// scored zero where it gave nothing to score; only the rubric and its peers can make grade fail.
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "runner/analyze/analyze.hpp"
#include "runner/check/score.hpp"
#include "runner/cli/cli.hpp"
#include "runner/cli/commands.hpp"
#include "runner/cli/run_support.hpp"
#include "runner/core/errors.hpp"
#include "runner/core/suggest.hpp"
#include "runner/load/environment.hpp"
#include "runner/load/rubric.hpp"
#include "runner/report/autograder.hpp"
#include "runner/report/files.hpp"

namespace streamlab {
namespace {

struct Peer {
  std::string name, file;
  Experiment exp;
};

// The rubric's params forced on the file: those it declares (a param it does not declare is the
// submission's own business; the rubric's items see the rubric's value anyway).
Experiment load_with_rubric_params(const std::string& path, const Rubric& rubric) {
  LoadOptions o;
  std::vector<std::string> declared = declared_params(path);
  for (const auto& [name, value] : rubric.params)
    if (index_of(declared, name) >= 0) o.overrides.emplace_back(name, std::to_string(value));
  return load_file(path, o);
}

// How an experiment runs under the rubric: its repetitions, gate and time limit, not its own.
void graded_settings(Experiment& exp, const Rubric& rubric) {
  exp.repeat = rubric.repeat, exp.warmup = rubric.warmup, exp.gate = rubric.gate;
  exp.timeout_s = 0;
}

[[noreturn]] void rubric_error(std::string message) {
  throw InvalidExperiment("streamlab: error: " + std::move(message) + "\n", {});
}

std::vector<Peer> load_peers(const Rubric& rubric, const RunArgs& args) {
  auto named = rubric.peers;
  if (!args.reference.empty()) {
    std::erase_if(named, [](const auto& p) { return p.first == "reference"; });
    named.emplace_back("reference", args.reference);
  }
  std::vector<Peer> peers;
  for (const auto& [name, file] : named) {
    Peer p{name, file, {}};
    try {
      p.exp = load_with_rubric_params(file, rubric);
      compile_for_check(p.exp);  // as for the submission: what `check` refuses
    } catch (const InvalidExperiment& e) {
      rubric_error(fmt::format("peer '{}' of the rubric does not load:\n{}", name, e.what()));
    }
    FindingCounts n = count_findings(analyze(p.exp));
    if (n.errors)
      rubric_error(fmt::format("peer '{}' ({}): streamlab check finds {}; a peer must be clean",
                               name, file, format_counts(n)));
    graded_settings(p.exp, rubric);
    peers.push_back(std::move(p));
  }
  return peers;
}

// The rubric must apply whole to its own reference solution: an item that does not is the
// rubric's mistake, not a student's.
void check_rubric_fits_reference(const Rubric& rubric, const std::vector<Peer>& peers) {
  for (const Peer& p : peers) {
    if (p.name != "reference") continue;
    Experiment copy = p.exp;
    copy.checks.clear(), copy.expectations.clear();
    auto unapplied = apply_rubric(rubric, copy);
    if (!unapplied.empty())
      rubric_error(
          fmt::format("{}: the rubric's item at line {} does not apply to its reference "
                      "solution ({}): {}",
                      rubric.file, unapplied.front().loc.line, p.file, unapplied.front().why));
  }
}

std::string peer_names(const std::vector<Peer>& peers) {
  std::vector<std::string> names;
  for (const Peer& p : peers) names.push_back(p.name);
  return names.empty() ? "none" : join(names);
}

// Each relative measure parsed against the peer it names, before anything runs; the records are
// attached once they exist. A peer it does not name, or a measure that does not parse there, is
// the rubric's mistake.
std::vector<PeerRun> peer_runs(const Experiment& sub, const std::vector<Peer>& peers,
                               const Rubric& rubric) {
  std::vector<PeerRun> out;
  for (const Peer& p : peers)
    out.push_back({p.name, &p.exp, nullptr,
                   std::vector<std::shared_ptr<const ExpectNode>>(sub.expectations.size())});
  for (size_t i = 0; i < sub.expectations.size(); ++i) {
    const Expectation& e = sub.expectations[i];
    if (e.relative.empty()) continue;
    auto peer = std::find_if(out.begin(), out.end(),
                             [&](const PeerRun& p) { return p.name == e.relative; });
    if (peer == out.end())
      rubric_error(fmt::format("{}:{}: relative: '{}' is no peer of the rubric (peers: {})",
                               rubric.file, e.loc.line, e.relative, peer_names(peers)));
    std::string error;
    peer->measures[i] = parse_peer_measure(*peer->exp, e, &error);
    if (!peer->measures[i])
      rubric_error(fmt::format("{}:{}: the measure '{}' does not apply to peer '{}': {}",
                               rubric.file, e.loc.line, e.text, e.relative, error));
  }
  return out;
}

int exit_code(const std::vector<ScoredItem>& items) {
  bool open = false;
  for (const ScoredItem& s : items) {
    if (s.status == ScoredItem::Status::failed || s.status == ScoredItem::Status::partial)
      return kExitCheckFailed;
    open = open || s.status == ScoredItem::Status::not_evaluated;
  }
  return open ? kExitIncomplete : kExitOk;
}

// Where the grade goes. Copied into the time limit's last words, so it refers only to what
// outlives the watchdog (the plan, declared before the limit).
struct Outputs {
  const OutputPlan* plan;
  std::chrono::steady_clock::time_point started;

  // Writes every output asked for; the console report unless one goes to stdout.
  void write(GradeReport r) const {
    r.execution_s = seconds_since(started);
    if (!plan->writes_stdout()) std::cout << format_grade_console(r) << std::flush;
    std::vector<std::string> texts;
    for (const auto& request : plan->requests())
      texts.push_back(request.option == "--json"         ? format_grade_json(r)
                      : request.option == "--gradescope" ? format_gradescope(r)
                      : request.option == "--junit"      ? format_junit(r)
                                                         : format_tap(r));
    plan->commit(texts);
  }
};

OutputPlan grade_plan(const RunArgs& args) {
  std::vector<OutputRequest> requests;
  for (auto [option, path] : {std::pair{"--json", &args.json},
                              {"--gradescope", &args.gradescope},
                              {"--junit", &args.junit},
                              {"--tap", &args.tap}})
    if (!path->empty()) requests.push_back({option, *path});
  OutputPlan plan(std::move(requests),
                  with_profile({{"the submission", args.file}, {"the rubric", args.rubric}}, args));
  refuse_stdout_without_stderr(plan, args.no_stderr);
  return plan;
}

// The submission, ready to run: loaded with the rubric's params, analyzed as the student wrote
// it (so that what check says never names a hidden item), its own checks and expectations set
// aside and the rubric's applied. Without `exp`, `problem` says why it did not load.
struct Submission {
  std::optional<Experiment> exp;
  Findings findings;
  std::vector<UnappliedItem> unapplied;
  std::string problem;
};

// `plan`: the reports, which may not replace a file the submission's kernels read, whether or not
// they compile.
Submission prepare_submission(const RunArgs& args, const Rubric& rubric, const OutputPlan& plan) {
  Submission s;
  try {
    s.exp = load_with_rubric_params(args.file, rubric);
    refuse_kernel_files(plan, *s.exp);
    // A kernel that does not compile fails `check`, so it fails the grade on every backend (the
    // host backend never compiles kernels to run them).
    compile_for_check(*s.exp);
  } catch (const InvalidExperiment& e) {
    s.exp.reset();
    const auto& d = e.diagnostics.items();
    s.problem =
        d.empty() ? std::string(e.what())
                  : fmt::format("the submission does not load: {}:{}:{}: {}{}", d.front().loc.file,
                                d.front().loc.line, d.front().loc.col, d.front().message,
                                d.size() > 1 ? fmt::format(" (and {} more)", d.size() - 1) : "");
    return s;
  }
  graded_settings(*s.exp, rubric);
  s.exp->checks.clear(), s.exp->expectations.clear();  // the student's own: not what is graded
  s.findings = analyze(*s.exp);
  s.unapplied = apply_rubric(rubric, *s.exp);
  return s;
}

std::string first_error(const Findings& f) {
  for (const Finding& x : f.items())
    if (x.severity == Severity::error)
      return fmt::format("line {}: {} [{}]", x.loc.line, x.message, x.code);
  return "";
}

std::string findings_output(const Findings& f) {
  std::string out;
  for (const Finding& x : f.items())
    if (x.severity != Severity::note)
      out += fmt::format("check: line {}: {}: {} [{}]\n", x.loc.line, severity_name(x.severity),
                         x.message, x.code);
  return out;
}

// Every item of the rubric at zero for `why`, the submission's as applied where it loaded.
std::vector<ScoredItem> zero_grade(const Rubric& rubric, const Submission& sub,
                                   const std::string& why, bool judge_findings) {
  if (!sub.exp) {
    std::vector<ScoredItem> zero;
    for (const UnappliedItem& u : rubric_items(rubric, why))
      zero.push_back(unscored_item(u.meta, u.check, u.title, u.loc, u.why));
    make_titles_unique(zero);
    return zero;
  }
  return merge_rubric_items(*sub.exp,
                            unrun_items(*sub.exp, why, judge_findings ? &sub.findings : nullptr),
                            sub.unapplied);
}

// From now on a time limit that passes still writes the outputs: every item at zero, saying so.
// The words are made now, from copies, so that they read nothing the command changes later.
void last_words(TimeLimit& limit, const Outputs& outputs, GradeReport report,
                std::vector<ScoredItem> zero_items) {
  auto words = std::make_shared<const std::pair<GradeReport, std::vector<ScoredItem>>>(
      std::move(report), std::move(zero_items));
  limit.last_words([outputs, words](const std::string& message) {
    GradeReport r = words->first;
    r.items = words->second;
    for (ScoredItem& s : r.items) s.output = "not finished: " + message;
    r.output = message + "\n";
    try {
      outputs.write(std::move(r));
    } catch (const std::exception&) {
    }
    return int(kExitCheckFailed);
  });
}

struct GradeRun {
  std::vector<std::unique_ptr<Backend>> backends;  // the peers', then the submission's
  std::vector<Participant> runs;
};

// The peers first: prepared before the submission, they have the device's memory they need
// whatever the submission takes.
GradeRun participants(Submission& sub, std::vector<Peer>& peers, const Rubric& rubric,
                      const RunArgs& args) {
  RunArgs run_args = args;
  run_args.timer = !rubric.timer.empty() ? rubric.timer : peers.empty() ? args.timer : "events";
  GradeRun g;
  for (Peer& p : peers) {
    g.backends.push_back(choose_backend(p.exp, run_args));
    g.runs.push_back(
        {&p.exp, g.backends.back().get(), {fmt::format("peer '{}': {}", p.name, p.file)}, {}});
  }
  g.backends.push_back(choose_backend(*sub.exp, run_args));
  g.runs.push_back({&*sub.exp, g.backends.back().get(), environment_notes(*sub.exp), sub.findings});
  return g;
}

// How it ran, the peers' own verdicts, and what could not be trusted.
std::string run_output(const std::vector<RunRecord>& records, const std::vector<Peer>& peers,
                       const RunOptions& options) {
  const RunRecord& sub = records.back();
  std::string out = fmt::format(
      "ran on the {} backend: {}; timer {}; {} warm-up + {} timed "
      "repetitions{}\n",
      sub.backend, sub.device, sub.timer, options.warmup, options.repeat,
      peers.empty() ? "" : ", each beside the peers'");
  for (size_t k = 0; k < peers.size(); ++k)
    if (records[k].verdict() == Verdict::failed)
      out +=
          fmt::format("warning: peer '{}' fails its own checks or expectations\n", peers[k].name);
  for (const auto& i : sub.impossible) out += "impossible: " + i + "\n";
  return out;
}

double span_of(const RunRecord& r) {
  return r.device_timing() && r.figures.host_span.n ? r.figures.host_span.median : NAN;
}

}  // namespace

int cmd_grade(const RunArgs& args) {
  auto started = std::chrono::steady_clock::now();
  OutputPlan plan = grade_plan(args);
  const Outputs outputs{&plan, started};
  std::optional<TimeLimit> limit(std::in_place, args, "the rubric");
  Rubric rubric = load_rubric(args.rubric);
  set_rubric_params(rubric, load_options(args.sets).overrides);
  Experiment limit_of_rubric;
  limit_of_rubric.timeout_s = rubric.timeout_s;
  limit->loaded(limit_of_rubric);

  GradeReport report;
  report.title = rubric.name, report.file = args.file, report.rubric = args.rubric;
  Submission none;
  last_words(*limit, outputs, report, zero_grade(rubric, none, "", false));
  std::vector<Peer> peers = load_peers(rubric, args);
  std::vector<InputFile> peer_files;
  for (const Peer& p : peers) peer_files.push_back({fmt::format("peer '{}'", p.name), p.file});
  plan.refuse_inputs(peer_files);
  check_rubric_fits_reference(rubric, peers);
  Submission sub = prepare_submission(args, rubric, plan);

  auto finish = [&](std::vector<ScoredItem> items, std::string output) {
    limit.reset();  // first: its last words would write the outputs too
    report.items = std::move(items);
    report.output = std::move(output);
    outputs.write(report);
    return sub.exp ? exit_code(report.items) : kExitCheckFailed;
  };
  if (!sub.exp) return finish(zero_grade(rubric, sub, sub.problem, false), sub.problem + "\n");
  std::vector<PeerRun> peer_list = peer_runs(*sub.exp, peers, rubric);
  std::string checked = findings_output(sub.findings);
  if (count_findings(sub.findings).errors) {
    std::string why =
        "not run: streamlab check finds an error in the submission: " + first_error(sub.findings);
    return finish(zero_grade(rubric, sub, why, true), checked + why + "\n");
  }

  apply_environment(*sub.exp);
  GradeRun g = participants(sub, peers, rubric, args);
  RunOptions options;
  // The host backend measures no time: one repetition proves what it can (as `run` does).
  bool timed = g.backends.back()->measures_device_time();
  options.repeat = timed ? rubric.repeat : 1, options.warmup = timed ? rubric.warmup : 0;
  options.progress = limit->progress_printer();
  options.where = &limit->progress;
  options.profile = profile_option(args);
  limit->running_on(g.backends.back().get());
  last_words(*limit, outputs, report, zero_grade(rubric, sub, "", true));

  std::vector<RunRecord> records;
  size_t failed = 0;
  try {
    records = run_together(g.runs, options, &failed);
  } catch (const std::exception& e) {
    limit->running_on(nullptr);
    limit->failed(e.what());
    if (failed != peers.size()) {  // a peer failed: the grader's problem, exit 3
      limit->last_words(nullptr);
      throw;
    }
    std::string why = std::string("the submission failed: ") + e.what();
    g.backends.clear();  // waits for the device, under the time limit
    return finish(zero_grade(rubric, sub, why, true), checked + why + "\n");
  }
  limit->running_on(nullptr);
  for (size_t k = 0; k < peers.size(); ++k) {
    evaluate(peers[k].exp, records[k]);
    peer_list[k].run = &records[k];
  }
  RunRecord& mine = records.back();
  evaluate(*sub.exp, mine, peer_list);
  report.spans.emplace_back("submission", span_of(mine));
  for (size_t k = 0; k < peers.size(); ++k)
    report.spans.emplace_back(peers[k].name, span_of(records[k]));
  report.results_json = format_json(*sub.exp, mine);
  report.span_ms = span_of(mine);
  return finish(merge_rubric_items(*sub.exp, mine.items, sub.unapplied),
                run_output(records, peers, options) + checked);
}

}  // namespace streamlab
