#include "runner/report/console.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/check/figures.hpp"
#include "runner/check/score.hpp"
#include "runner/core/suggest.hpp"

namespace streamlab {
namespace {

constexpr size_t kMaxOverlapLines = 12;  // the JSON has them all

std::string ms(double v) { return std::isnan(v) ? "-" : fmt::format("{:.3f}", v); }

std::string span_line(std::string_view what, const Summary& s) {
  return fmt::format("  {:<40} median {:>9.3f} ms   min {:.3f}   max {:.3f}   cv {:.1f}%\n", what,
                     s.median, s.min, s.max, 100 * s.cv);
}

std::string header(const Experiment& exp, const RunRecord& run) {
  std::string params;
  for (const auto& [name, value] : exp.params)
    params += fmt::format("{}{}={}", params.empty() ? "" : " ", name, value);
  std::string out = fmt::format("{} ({})\n", exp.name, exp.file);
  out += fmt::format("  backend   {}: {}\n", run.backend, run.device);
  if (!params.empty()) out += fmt::format("  params    {}\n", params);
  out += fmt::format("  runs      {} warm-up + {} timed repetition{}\n", run.warmup,
                     run.reps.size(), run.reps.size() == 1 ? "" : "s");
  out += fmt::format("  timer     {}{}\n",
                     run.timer_description.empty() ? run.timer : run.timer_description,
                     run.backend == "cuda" ? "; host steady clock around each call" : "");
  for (const auto& note : run.notes) out += fmt::format("  note      {}\n", note);
  return out;
}

// Column widths that fit the longest id, kind and stream name of the experiment.
struct Widths {
  size_t id = 2, kind = 4, stream = 6;
};

Widths column_widths(const Experiment& exp) {
  Widths w;
  for (const Op& op : exp.ops) {
    w.id = std::max(w.id, op.id.size());
    w.kind = std::max(w.kind, op.kind->name.size());
    if (op.stream >= 0) w.stream = std::max(w.stream, exp.streams[op.stream].name.size());
  }
  return w;
}

// Median device ms, host ms and bandwidth of an op, as the table shows them; `of_ceiling`: an
// op's share of the run's copy ceiling ("81%"), "-" where it has none.
std::string op_timings(const RunRecord& run, const OpFigures& f) {
  if (run.backend == "host") return "";
  return fmt::format("  {:>10}  {:>10}  {:>8}  {:>7}", f.device.n ? ms(f.device.median) : "-",
                     ms(f.host.median), std::isnan(f.gbps) ? "-" : fmt::format("{:.1f}", f.gbps),
                     std::isnan(f.of_ceiling) ? "-" : fmt::format("{:.0f}%", 100 * f.of_ceiling));
}

// What a query answered: ": done in 3 of 20 repetitions".
std::string answers(const OpFigures& f) {
  return f.asked ? fmt::format(": done in {} of {} repetitions", f.done, f.asked) : "";
}

// The lines under the op table that say what its GB/s count and what "ceiling" is against.
std::string bandwidth_note(const RunRecord& run, const RunFigures& f) {
  std::string out;
  if (run.backend == "host") return out;
  for (const std::string& line : bandwidth_notes(f)) out += "  " + line + "\n";
  return out;
}

std::string op_table(const Experiment& exp, const RunRecord& run, const RunFigures& figures) {
  Widths w = column_widths(exp);
  std::string timings = run.backend == "host"
                            ? ""
                            : fmt::format("  {:>10}  {:>10}  {:>8}  {:>7}", "device ms", "host ms",
                                          "GB/s", "ceiling");
  std::string out = fmt::format("\n  {:>3}  {:<{}}  {:<{}}  {:<{}}  {:>4}{}  {}\n", "#", "op", w.id,
                                "kind", w.kind, "stream", w.stream, "line", timings, "what");
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const Op& op = exp.ops[i];
    std::string stream = op.stream >= 0 ? exp.streams[op.stream].name : "-";
    out += fmt::format("  {:>3}  {:<{}}  {:<{}}  {:<{}}  {:>4}{}  {}\n", i + 1, op.id, w.id,
                       op.kind->name, w.kind, stream, w.stream, op.loc.line,
                       op_timings(run, figures.ops[i]),
                       op.kind->describe(exp, op) + answers(figures.ops[i]));
  }
  return out + bandwidth_note(run, figures);
}

std::string spans(const RunRecord& run) {
  if (run.backend == "host")
    return "\n  host backend: ops emulated on host memory in issue order; no GPU times are "
           "measured (the timeline model's prediction is below, marked predicted)\n";
  std::string out = run.device_timing()
                        ? fmt::format("\n  medians over the timed repetitions; device ms from the {} timer\n",
                                      run.timer)
                        : "\n  medians over the timed repetitions; no device times (the timer is "
                          "none: spans only)\n";
  bool gated = !run.reps.empty() && !std::isnan(run.reps[0].gate_open_ms);
  out += span_line(
      gated ? "span (host: gate opening to final sync)" : "span (host: first issue to final sync)",
      run.figures.host_span);
  if (const Summary& gpu = run.figures.device_span; gpu.n)
    out += span_line("span (GPU: first op start to last end)", gpu);
  return out;
}

std::string overlap_line(const Experiment& exp, const RunFigures& f, const OverlapFigures& o) {
  double shorter = std::min(f.ops[o.a].device.median, f.ops[o.b].device.median);
  const std::string& name =
      f.ops[o.a].device.median <= f.ops[o.b].device.median ? exp.ops[o.a].id : exp.ops[o.b].id;
  return fmt::format("    {:<32} {:>9.3f} ms   {:.0f}% of {}\n",
                     exp.ops[o.a].id + " || " + exp.ops[o.b].id, o.overlap_ms,
                     100 * o.overlap_ms / shorter, name);
}

std::string concurrency(const Experiment& exp, const RunFigures& f) {
  if (std::isnan(f.bounds.span_ms)) return "";
  std::string out = "\n  streams (busy: union of their ops' device intervals)\n";
  for (const auto& s : f.streams)
    out += fmt::format("    {:<32} {:>9.3f} ms\n", exp.streams[s.stream].name, s.busy_ms);
  out += "  overlap (time both ran)\n";
  for (const auto& o : f.stream_overlaps)
    out += fmt::format("    {:<32} {:>9.3f} ms\n",
                       "streams " + exp.streams[o.a].name + " || " + exp.streams[o.b].name,
                       o.overlap_ms);
  for (size_t i = 0; i < f.overlaps.size() && i < kMaxOverlapLines; ++i)
    out += overlap_line(exp, f, f.overlaps[i]);
  if (f.overlaps.size() > kMaxOverlapLines)
    out +=
        fmt::format("    ... {} more op pairs in --json\n", f.overlaps.size() - kMaxOverlapLines);
  if (f.op_pairs_skipped)
    out += fmt::format("    (op pairs not listed: over {} device ops)\n", kMaxOpsForPairs);
  if (f.stream_pairs_skipped)
    out += fmt::format("    (stream pairs not listed: over {} streams with device ops)\n",
                       kMaxStreamsForPairs);
  if (f.overlaps.empty() && f.stream_overlaps.empty() && !f.op_pairs_skipped &&
      !f.stream_pairs_skipped)
    out += "    none\n";
  const SpanBounds& b = f.bounds;
  out += "  span against its bounds\n";
  out += fmt::format("    {:<40} {:>9.3f} ms\n", "no overlap (sum of op durations)", b.sum_ms);
  out += fmt::format("    {:<40} {:>9.3f} ms\n",
                     b.busiest.empty() ? "full overlap" : "full overlap (busiest: " + b.busiest + ")",
                     b.busiest_ms);
  out += fmt::format(
      "    {:<40} {:>9.3f} ms   efficiency {}, concurrency {:.2f}\n", "measured (GPU span)",
      b.span_ms,
      std::isnan(b.efficiency) ? std::string("-") : fmt::format("{:.0f}%", 100 * b.efficiency),
      b.concurrency);
  return out;
}

std::string checks(const RunRecord& run) {
  if (run.checks.empty()) return "\nchecks: none\n";
  std::string out = "\nchecks\n";
  size_t passed = 0;
  size_t skipped = 0;
  for (const auto& c : run.checks) {
    passed += c.passed;
    skipped += !c.evaluated;
    std::string_view tag = !c.evaluated ? "----" : c.passed ? "PASS" : "FAIL";
    out += c.detail.empty() ? fmt::format("  {}  {}\n", tag, c.title)
                            : fmt::format("  {}  {}: {}\n", tag, c.title, c.detail);
  }
  out += fmt::format("\n{} of {} checks passed{}\n", passed, run.checks.size(),
                     skipped ? fmt::format(", {} not evaluated", skipped) : "");
  return out;
}

std::string expectations(const RunRecord& run) {
  if (run.expectations.empty()) return "";
  std::string out = "\nexpectations\n";
  size_t held = 0, failed = 0, partial = 0;
  for (const auto& e : run.expectations) {
    using S = ExpectationResult::Status;
    held += e.status == S::passed, failed += e.status == S::failed;
    partial += e.status == S::partial;
    std::string_view tag = e.status == S::passed    ? "PASS"
                           : e.status == S::failed  ? "FAIL"
                           : e.status == S::partial ? "PART"
                                                    : "----";
    out += fmt::format("  {}  {}\n", tag, e.text);
    if (!e.detail.empty())
      out += fmt::format("        {}{}\n", e.status == S::not_evaluated ? "not evaluated: " : "",
                         e.detail);
    if (!e.prediction.empty())
      out += fmt::format("        {} in prediction{}{}\n", e.prediction,
                         e.prediction_detail.empty() ? "" : ": ", e.prediction_detail);
  }
  out += fmt::format("\n{} of {} expectations held, {} failed{}, {} not evaluated\n", held,
                     run.expectations.size(), failed,
                     partial ? fmt::format(", {} held in part", partial) : "",
                     run.expectations.size() - held - failed - partial);
  return out;
}

// The points of each item, for an experiment that gives points.
std::string score(const Experiment& exp, const RunRecord& run) {
  bool graded = std::any_of(exp.checks.begin(), exp.checks.end(),
                            [](const CheckSpec& c) { return c.item.points_given; }) ||
                std::any_of(exp.expectations.begin(), exp.expectations.end(),
                            [](const Expectation& e) { return e.item.points_given; });
  if (!graded) return "";
  ScoreTotal t = total(run.items);
  std::string out = fmt::format("\nscore: {:g} of {:g} points\n", t.score, t.max_score);
  for (const ScoredItem& s : run.items)
    out += fmt::format("  {:>6g} / {:<6g} {}{}\n", s.score, s.max_score, s.title,
                       s.score < s.max_score && !s.output.empty() ? ": " + s.output : "");
  return out;
}

}  // namespace

std::vector<std::string> bandwidth_notes(const RunFigures& f) {
  auto any = [&](double OpFigures::*field) {
    return std::any_of(f.ops.begin(), f.ops.end(),
                       [&](const OpFigures& o) { return !std::isnan(o.*field); });
  };
  if (!any(&OpFigures::gbps)) return {};
  std::vector<std::string> out = {
      "GB/s: device memory read + written (a D2D copy of B bytes counts 2B, a kernel its reads + "
      "writes); an H2D or D2H copy counts its bytes once, over the link"};
  if (any(&OpFigures::of_ceiling))
    out.push_back(fmt::format("ceiling: the op's share of the D2D copy ceiling, {:.0f} GB/s read + "
                              "written ({})",
                              f.ceiling.gbps, f.ceiling.source));
  return out;
}

std::string format_verdict(const RunRecord& run) {
  size_t checks_failed = 0, checks_open = 0, failed = 0, open = 0;
  for (const auto& c : run.checks)
    checks_failed += c.evaluated && !c.passed, checks_open += !c.evaluated;
  for (const auto& e : run.expectations) {
    using S = ExpectationResult::Status;
    failed += e.status == S::failed || e.status == S::partial;
    open += e.status == S::not_evaluated;
  }
  auto count = [](size_t n, std::string_view what) {
    return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s");
  };
  switch (run.verdict()) {
    case Verdict::failed: {
      std::vector<std::string> parts;
      if (checks_failed) parts.push_back(count(checks_failed, "check") + " failed");
      if (failed) parts.push_back(count(failed, "expectation") + " did not hold");
      if (!run.impossible.empty())
        parts.push_back(count(run.impossible.size(), "time") +
                        " below the device's physical floor, impossible");
      return fmt::format("verdict: FAILED: {}\n", join(parts));
    }
    case Verdict::incomplete: {
      std::vector<std::string> parts;
      if (checks_open) parts.push_back(count(checks_open, "check"));
      if (open) parts.push_back(count(open, "expectation"));
      return fmt::format(
          "verdict: INCOMPLETE: nothing failed, but {} could not be evaluated here; a pass needs "
          "every "
          "one evaluated (exit code 4)\n",
          join(parts, " and "));
    }
    case Verdict::passed:
      break;
  }
  if (run.checks.empty() && run.expectations.empty())
    return "verdict: passed: the experiment ran (it has no checks or expectations)\n";
  return "verdict: passed: every check and expectation was evaluated and held\n";
}

std::string format_op_list(const Experiment& exp) {
  RunRecord nothing_run;
  nothing_run.backend = "host";  // no timing columns
  RunFigures nothing_measured;
  nothing_measured.ops.resize(exp.ops.size());
  return op_table(exp, nothing_run, nothing_measured);
}

// Each graph op: its device time per launch, and that of each captured op within one launch.
std::string graphs(const Experiment& exp, const RunRecord& run) {
  constexpr size_t kMaxRows = 12;  // a graph of 1000 kernels: the first ones, then a summary
  std::string out;
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const Op& g = exp.ops[i];
    const OpFigures& f = run.figures.ops[i];
    if (g.body.empty() || !f.per_launch.n) continue;
    out += fmt::format("\n  graph '{}' (line {}): {} launch{}, {:.4f} ms each (median)\n", g.id,
                       g.loc.line, g.replays, g.replays == 1 ? "" : "es", f.per_launch.median);
    bool any = std::any_of(f.body.begin(), f.body.end(), [](const Summary& b) { return b.n > 0; });
    if (!any) {
      out += fmt::format(
          "    per captured op: not measured ({} timer; the cupti timer records each graph node)\n",
          run.timer);
      continue;
    }
    out +=
        "    captured op                kind                stream  line   device ms  (median, one "
        "launch)\n";
    double rest = 0;
    size_t rest_n = 0;
    for (size_t j = 0; j < g.body.size(); ++j) {
      const Op& b = g.body[j];
      if (j >= kMaxRows) {
        rest += f.body[j].n ? f.body[j].median : 0, ++rest_n;
        continue;
      }
      out += fmt::format("    {:<26} {:<19} {:<7} {:>4}  {:>10}\n", b.id, b.kind->name,
                         b.stream >= 0 ? exp.streams[b.stream].name : "-", b.loc.line,
                         f.body[j].n ? fmt::format("{:.4f}", f.body[j].median) : "-");
    }
    if (rest_n)
      out += fmt::format("    ... {} more captured ops, {:.4f} ms in all\n", rest_n, rest);
  }
  return out;
}

constexpr size_t kMaxWaitLines = 64;  // longer op lists: the JSON has every wait

std::string critical_path_line(const Experiment& exp, const std::vector<int>& path) {
  if (path.empty()) return "";
  std::string out;
  for (int op : path) out += fmt::format("{}{}", out.empty() ? "" : " -> ", exp.ops[op].id);
  return fmt::format("  critical path: {}\n", out);
}

std::string error_pct(double predicted, double measured) {
  if (std::isnan(predicted) || std::isnan(measured) || measured <= 0) return "-";
  return fmt::format("{:+.1f}%", 100 * (predicted - measured) / measured);
}

// Why each op started when it did, in the typical measured repetition.
std::string measured_waits(const Experiment& exp, const RunRecord& run) {
  if (run.waits.empty() || run.reps.empty()) return "";
  std::string out = fmt::format("\nwhy each op started when it did (repetition {} of {}, the median span)\n",
                                run.figures.typical_rep + 1, run.reps.size());
  size_t lines = 0;
  for (size_t i = 0; i < exp.ops.size() && lines < kMaxWaitLines; ++i)
    if (!run.waits[i].rule.empty() && exp.ops[i].device_work)
      out += fmt::format("  {:<16} {:>9.3f} ms  {}\n", exp.ops[i].id, run.waits[i].start_ms,
                         run.waits[i].text), ++lines;
  if (lines == kMaxWaitLines) out += "  ... (every op's wait is in the JSON report)\n";
  return out + critical_path_line(exp, run.critical_path);
}

// The timeline model's prediction: beside the measurement on the cuda backend (--predict), in
// its place on the host backend.
std::string prediction(const Experiment& exp, const RunRecord& run) {
  if (!run.predicted) return "";
  const PredictedRun& p = *run.predicted;
  const RepetitionSample& rep = p.run.reps.front();
  const bool measured = run.device_timing();
  std::string out = fmt::format("\npredicted by the timeline model (profile: {})\n", p.profile);
  for (const auto& note : p.notes) out += fmt::format("  note  {}\n", note);
  out += measured ? fmt::format("  {:<16} {:>10} {:>10} {:>10} {:>8}  {}\n", "op", "start ms",
                                "device ms", "measured", "error", "why it started then (predicted)")
                  : fmt::format("  {:<16} {:>10} {:>10}  {}\n", "op", "start ms", "device ms",
                                "why it started then");
  size_t lines = 0;
  const double origin = std::isnan(rep.gate_open_ms) ? 0 : rep.gate_open_ms;
  for (size_t i = 0; i < exp.ops.size() && lines < kMaxWaitLines; ++i) {
    const OpSample& s = rep.ops[i];
    if (!exp.ops[i].device_work || std::isnan(s.start_ms)) continue;
    ++lines;
    const std::string& why = p.run.waits[i].text;
    if (measured)
      out += fmt::format("  {:<16} {:>10.3f} {:>10.3f} {:>10} {:>8}  {}\n", exp.ops[i].id,
                         s.start_ms - origin, s.device_ms(), ms(run.figures.ops[i].device.median),
                         error_pct(s.device_ms(), run.figures.ops[i].device.median), why);
    else
      out += fmt::format("  {:<16} {:>10.3f} {:>10.3f}  {}\n", exp.ops[i].id, s.start_ms - origin,
                         s.device_ms(), why);
  }
  if (lines == kMaxWaitLines) out += "  ... (every op is in the JSON report)\n";
  out += fmt::format("  predicted span {:.3f} ms", rep.host_span_ms);
  if (measured && run.figures.host_span.n)
    out += fmt::format(", measured {:.3f} ms (error {})", run.figures.host_span.median,
                       error_pct(rep.host_span_ms, run.figures.host_span.median));
  out += "\n" + critical_path_line(exp, p.run.critical_path);
  return out;
}

std::string format_console_report(const Experiment& exp, const RunRecord& run) {
  return header(exp, run) + op_table(exp, run, run.figures) + spans(run) + graphs(exp, run) +
         concurrency(exp, run.figures) + measured_waits(exp, run) + prediction(exp, run) +
         checks(run) + expectations(run) + score(exp, run) + "\n" + format_verdict(run);
}

}  // namespace streamlab
