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
#include "runner/core/expr.hpp"
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

// The rubric's params forced on an experiment: those it declares (a param it does not declare
// is the submission's own business; the rubric's items see the rubric's value anyway).
LoadOptions forced_params(const Rubric& rubric, const Experiment& declared) {
  LoadOptions o;
  for (const auto& [name, value] : rubric.params)
    for (const auto& p : declared.params)
      if (p.first == name) o.overrides.emplace_back(name, std::to_string(value));
  return o;
}

// Loaded twice: once to learn its params, once with the rubric's values for them.
Experiment load_with_rubric_params(const std::string& path, const Rubric& rubric) {
  return load_file(path, forced_params(rubric, load_file(path)));
}

// How an experiment runs under the rubric: its repetitions, gate and timer, not its own.
void graded_settings(Experiment& exp, const Rubric& rubric) {
  exp.repeat = rubric.repeat, exp.warmup = rubric.warmup, exp.gate = rubric.gate;
  exp.timeout_s = 0;
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
    } catch (const InvalidExperiment& e) {
      throw InvalidExperiment(fmt::format("streamlab: error: peer '{}' of the rubric does not "
                                          "load:\n{}",
                                          name, e.what()),
                              {});
    }
    FindingCounts n = count_findings(analyze(p.exp));
    if (n.errors)
      throw InvalidExperiment(fmt::format("streamlab: error: peer '{}' ({}): streamlab check finds "
                                          "{}; a peer must be clean\n",
                                          name, file, format_counts(n)),
                              {});
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
      throw InvalidExperiment(
          fmt::format("streamlab: error: {}: the rubric's item at line {} "
                      "does not apply to its reference solution ({}): {}\n",
                      rubric.file, unapplied.front().loc.line, p.file, unapplied.front().why),
          {});
  }
}

// Each relative measure parsed against the peer it names; a peer it does not name, or a measure
// that does not parse there, is the rubric's mistake.
// Checked before anything runs; the records are attached once they exist.
std::vector<PeerRun> peer_runs(const Experiment& sub, const std::vector<Peer>& peers,
                               const Rubric& rubric) {
  std::vector<PeerRun> out;
  for (size_t k = 0; k < peers.size(); ++k)
    out.push_back({peers[k].name, &peers[k].exp, nullptr,
                   std::vector<std::shared_ptr<const ExpectNode>>(sub.expectations.size())});
  for (size_t i = 0; i < sub.expectations.size(); ++i) {
    const Expectation& e = sub.expectations[i];
    if (e.relative.empty()) continue;
    auto peer = std::find_if(out.begin(), out.end(),
                             [&](const PeerRun& p) { return p.name == e.relative; });
    if (peer == out.end())
      throw InvalidExperiment(fmt::format("streamlab: error: {}:{}: relative: '{}' is no peer of "
                                          "the rubric (peers: {})\n",
                                          rubric.file, e.loc.line, e.relative,
                                          peers.empty() ? "none" : [&] {
                                            std::string names;
                                            for (const Peer& p : peers) names += (names.empty() ? "" : ", ") + p.name;
                                            return names;
                                          }()),
                              {});
    std::string error;
    peer->measures[i] = parse_peer_measure(*peer->exp, e.text, &error);
    if (!peer->measures[i])
      throw InvalidExperiment(
          fmt::format("streamlab: error: {}:{}: the measure '{}' does not apply "
                      "to peer '{}': {}\n",
                      rubric.file, e.loc.line, e.text, e.relative, error),
          {});
  }
  return out;
}

// Every item of the rubric scored nothing, for `why`: the submission gave nothing to score.
// no_diagnostics items are still judged by what `check` found, when it could look.
std::vector<ScoredItem> zero_items(const Experiment* sub, const std::string& why,
                                   const Findings* findings) {
  std::vector<ScoredItem> items;
  if (!sub) return items;
  RunRecord none;
  none.backend = "none";
  if (findings) none.diagnostics = *findings;
  for (const CheckSpec& c : sub->checks)
    none.checks.push_back(
        {c.item.name.empty() ? fmt::format("{} (line {})", c.kind, c.loc.line) : c.item.name, false,
         why});
  none.expectations = evaluate_expectations(*sub, none);
  for (size_t i = 0; i < none.expectations.size(); ++i)
    if (sub->expectations[i].form != Expectation::Form::no_diagnostics || !findings)
      none.expectations[i].status = ExpectationResult::Status::failed,
      none.expectations[i].fraction = 0, none.expectations[i].detail = why;
  items = score_items(*sub, none);
  return items;
}

// The applied items' scores with the unapplied ones where the rubric lists them.
std::vector<ScoredItem> merge(const Experiment& sub, std::vector<ScoredItem> scored,
                              const std::vector<UnappliedItem>& unapplied) {
  std::vector<ScoredItem> out;
  size_t checks = sub.checks.size();
  auto section = [&](bool check, size_t from, size_t count) {
    for (size_t k = 0; k <= count; ++k) {
      for (const UnappliedItem& u : unapplied)
        if (u.check == check && u.before == k)
          out.push_back(unscored_item(u.meta, u.check, u.title, u.loc, u.why));
      if (k < count && from + k < scored.size()) out.push_back(scored[from + k]);
    }
  };
  section(true, 0, checks);
  section(false, checks, sub.expectations.size());
  gate_timing(out);  // a check that did not apply gates timing as one that failed
  make_titles_unique(out);
  return out;
}

// --set NAME=EXPR replaces a param of the rubric (a quick check on a small problem, say).
void override_params(Rubric& rubric, const std::vector<std::string>& sets) {
  ParamScope scope;
  for (const auto& [name, value] : rubric.params) scope[name] = value;
  for (const auto& [name, text] : load_options(sets).overrides) {
    auto it = std::find_if(rubric.params.begin(), rubric.params.end(),
                           [&](const auto& p) { return p.first == name; });
    if (it == rubric.params.end())
      throw CommandLineError(
          fmt::format("--set {}={}: the rubric has no param '{}'", name, text, name));
    auto value = evaluate(text, scope);
    if (auto* e = std::get_if<ExprError>(&value))
      throw CommandLineError(fmt::format("--set {}={}: {}", name, text, e->message));
    it->second = scope[name] = std::get<int64_t>(value);
  }
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

struct Outputs {
  const OutputPlan& plan;
  const RunArgs& args;
  std::chrono::steady_clock::time_point started;

  // Writes every output asked for; the console report unless one goes to stdout.
  void write(GradeReport& r) const {
    r.execution_s = seconds_since(started);
    if (!plan.writes_stdout()) std::cout << format_grade_console(r) << std::flush;
    std::vector<std::string> texts;
    for (const auto& request : plan.requests())
      texts.push_back(request.option == "--json"         ? format_grade_json(r)
                      : request.option == "--gradescope" ? format_gradescope(r)
                      : request.option == "--junit"      ? format_junit(r)
                                                         : format_tap(r));
    plan.commit(texts);
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
                  {{"the submission", args.file}, {"the rubric", args.rubric}});
  refuse_stdout_without_stderr(plan, args.no_stderr);
  return plan;
}

// The submission, ready to run: loaded with the rubric's params, its own checks and expectations
// set aside, the rubric's applied. nullopt (with why) when it does not load.
struct Submission {
  std::optional<Experiment> exp;
  std::vector<UnappliedItem> unapplied;
  std::string problem;  // why it is not run, for every item it could not score
};

Submission prepare_submission(const RunArgs& args, const Rubric& rubric) {
  Submission s;
  try {
    s.exp = load_with_rubric_params(args.file, rubric);
  } catch (const InvalidExperiment& e) {
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
  s.unapplied = apply_rubric(rubric, *s.exp);
  return s;
}

std::string first_error(const Findings& f) {
  for (const Finding& x : f.items())
    if (!x.acknowledged && x.severity == Severity::error)
      return fmt::format("line {}: {} [{}]", x.loc.line, x.message, x.code);
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

}  // namespace

int cmd_grade(const RunArgs& args) {
  auto started = std::chrono::steady_clock::now();
  OutputPlan plan = grade_plan(args);
  Outputs outputs{plan, args, started};
  std::optional<TimeLimit> limit(std::in_place, args, "the rubric");
  Rubric rubric = load_rubric(args.rubric);
  override_params(rubric, args.sets);
  Experiment timeout_holder;
  timeout_holder.timeout_s = rubric.timeout_s;
  limit->loaded(timeout_holder);
  std::vector<Peer> peers = load_peers(rubric, args);
  check_rubric_fits_reference(rubric, peers);
  Submission sub = prepare_submission(args, rubric);
  if (sub.exp) refuse_kernel_files(plan, *sub.exp);

  GradeReport report;
  report.title = rubric.name;
  report.file = args.file;
  report.rubric = args.rubric;
  auto finish = [&](std::vector<ScoredItem> items, std::string output) {
    limit.reset();  // first: its last words would write the report too
    report.items = sub.exp ? merge(*sub.exp, std::move(items), sub.unapplied) : std::move(items);
    report.output = std::move(output);
    outputs.write(report);
    return sub.exp ? exit_code(report.items) : kExitCheckFailed;
  };
  if (!sub.exp) {
    std::vector<ScoredItem> zero;
    for (const UnappliedItem& u : rubric_items(rubric, sub.problem))
      zero.push_back(unscored_item(u.meta, u.check, u.title, u.loc, u.why));
    make_titles_unique(zero);
    return finish(std::move(zero), sub.problem + "\n");
  }

  std::vector<PeerRun> peer_list = peer_runs(*sub.exp, peers, rubric);
  Findings findings = analyze(*sub.exp);
  std::string checked = findings_output(findings);
  if (count_findings(findings).errors) {
    std::string why =
        "not run: streamlab check finds an error in the submission: " + first_error(findings);
    return finish(zero_items(&*sub.exp, why, &findings), checked + why + "\n");
  }

  apply_environment(*sub.exp);
  RunArgs run_args = args;
  run_args.timer = !rubric.timer.empty() ? rubric.timer : peers.empty() ? args.timer : "events";
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<Participant> runs;
  backends.push_back(choose_backend(*sub.exp, run_args));
  runs.push_back({&*sub.exp, backends.back().get(), environment_notes(*sub.exp), findings});
  for (Peer& p : peers) {
    backends.push_back(choose_backend(p.exp, run_args));
    runs.push_back(
        {&p.exp, backends.back().get(), {fmt::format("peer '{}': {}", p.name, p.file)}, {}});
  }
  RunOptions options;
  // The host backend measures no time: one repetition proves what it can (as `run` does).
  bool timed = backends.front()->measures_device_time();
  options.repeat = timed ? rubric.repeat : 1, options.warmup = timed ? rubric.warmup : 0;
  options.progress = progress_printer();
  options.where = &limit->progress;
  limit->running_on(backends.front().get());
  // Past the time limit, the outputs still say what happened: every item scores nothing.
  const Experiment* graded = &*sub.exp;
  limit->last_words([&report, &outputs, &sub, graded](const std::string& message) {
    report.items = merge(*graded, zero_items(graded, "not run to the end: " + message, nullptr),
                         sub.unapplied);
    report.output = message + "\n";
    try {
      outputs.write(report);
    } catch (const std::exception&) {
    }
    return int(kExitCheckFailed);
  });

  std::vector<RunRecord> records;
  size_t failed = 0;
  try {
    records = run_together(runs, options, &failed);
  } catch (const std::exception& e) {
    if (failed != 0) throw;  // a peer failed: the grader's problem, exit 3
    limit->running_on(nullptr);
    limit->failed(e.what());
    std::string why = std::string("the submission failed: ") + e.what();
    backends.clear();  // waits for the device, under the time limit
    return finish(zero_items(&*sub.exp, why, &findings), checked + why + "\n");
  }
  limit->running_on(nullptr);
  for (size_t k = 0; k < peers.size(); ++k) evaluate(peers[k].exp, records[k + 1]);
  for (size_t k = 0; k < peers.size(); ++k) peer_list[k].run = &records[k + 1];
  evaluate(*sub.exp, records[0], peer_list);

  auto span = [](const RunRecord& r) {
    return r.device_timing() && r.figures.host_span.n ? r.figures.host_span.median : NAN;
  };
  report.spans.emplace_back("submission", span(records[0]));
  for (size_t k = 0; k < peers.size(); ++k)
    report.spans.emplace_back(peers[k].name, span(records[k + 1]));
  report.results_json = format_json(*sub.exp, records[0]);
  if (records[0].device_timing() && records[0].figures.host_span.n)
    report.span_ms = records[0].figures.host_span.median;
  std::string output = fmt::format(
      "ran on the {} backend: {}; timer {}; {} warm-up + {} timed "
      "repetitions{}\n",
      records[0].backend, records[0].device, records[0].timer, options.warmup, options.repeat,
      peers.empty() ? "" : ", each beside the peers'");
  for (size_t k = 0; k < peers.size(); ++k)
    if (records[k + 1].verdict() == Verdict::failed)
      output +=
          fmt::format("warning: peer '{}' fails its own checks or expectations\n", peers[k].name);
  for (const auto& i : records[0].impossible) output += "impossible: " + i + "\n";
  return finish(records[0].items, output + checked);
}

}  // namespace streamlab
