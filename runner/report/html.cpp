// The HTML report: one self-contained file (no network, no JavaScript) with an SVG timeline of
// the median repetition (a lane per stream on the GPU, one for the host thread's API calls) and
// the tables of the console report. Formatting only.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "ops/op_kind.hpp"
#include "runner/check/figures.hpp"
#include "runner/report/console.hpp"
#include "runner/report/files.hpp"
#include "runner/report/markup.hpp"

namespace streamlab {
namespace {

constexpr double kWidth = 960, kLabel = 150, kLane = 26, kTop = 24;

std::string escape(std::string_view s) { return escape_markup(s); }

std::string cell(double v, const char* format = "{:.3f}") {
  return std::isnan(v) ? "-" : fmt::format(fmt::runtime(format), v);
}

std::string_view color(const Op& op) {
  if (op.src.valid() && op.dst.valid()) return "#4e79a7";  // copies
  if (op.kernel >= 0) return "#59a14f";                    // kernels
  if (op.dst.valid()) return "#f28e2b";                    // memsets
  return "#9c9c9c";                                        // synchronization, events
}

struct Scale {
  double t0, t1;
  double x(double t) const { return kLabel + (t - t0) / (t1 - t0) * (kWidth - kLabel - 10); }
};

Scale time_range(const RepetitionSample& rep) {
  double lo = 0, hi = 0;
  for (const auto& s : rep.ops) {
    lo = std::min({lo, s.issue_ms, std::isnan(s.start_ms) ? lo : s.start_ms});
    hi = std::max({hi, s.return_ms, std::isnan(s.end_ms) ? hi : s.end_ms});
  }
  return {lo, hi > lo ? hi : lo + 1};
}

// One op's bar; `why`: why it started then (on hover); `critical`: on the critical path (outlined).
std::string bar(const Scale& sc, int lane, double start, double end, const Op& op,
                const std::string& what, const std::string& why = "", bool critical = false) {
  double x = sc.x(start), w = std::max(1.0, sc.x(end) - x), y = kTop + lane * kLane + 3;
  return fmt::format(
      "<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{}' fill='{}' stroke='{}' "
      "stroke-width='{}'><title>{} "
      "({}): {:.3f} .. {:.3f} ms, "
      "{:.3f} ms\n{}{}</title></rect>\n",
      x, y, w, kLane - 6, color(op), critical ? "#c00" : "white", critical ? 2.5 : 1,
      escape(op.id), op.kind->name, start, end, end - start, escape(what),
      why.empty() ? "" : "\nwhy it started then: " + escape(why) + (critical ? " (critical path)" : ""));
}

std::string axis(const Scale& sc, int lanes) {
  double y = kTop + lanes * kLane;
  std::string out = fmt::format("<line x1='{}' y1='{}' x2='{}' y2='{}' stroke='#444'/>\n", kLabel,
                                y, kWidth - 10, y);
  double step = std::pow(10, std::floor(std::log10((sc.t1 - sc.t0) / 5)));
  for (double t = std::ceil(sc.t0 / step) * step; t <= sc.t1; t += step)
    out += fmt::format("<text x='{:.1f}' y='{}' font-size='11' text-anchor='middle'>{:g}</text>\n",
                       sc.x(t), y + 14, t);
  return out + fmt::format("<text x='{}' y='{}' font-size='11'>ms</text>\n", kWidth - 30, y + 28);
}

// The SVG of one repetition: a lane per stream with ops, one for the host's calls; with waits,
// each device bar says why it started then, and the critical path is outlined in red.
std::string timeline_svg(const Experiment& exp, const RepetitionSample& rep,
                         const std::vector<OpWait>& waits, const std::vector<int>& path) {
  Scale sc = time_range(rep);
  std::vector<bool> critical(exp.ops.size());
  for (int op : path) critical[op] = true;
  std::vector<int> lane_of(exp.streams.size(), -1);  // only streams that have ops get a lane
  int lanes = 0;
  std::string svg;
  for (const Op& op : exp.ops)
    if (op.stream >= 0 && lane_of[op.stream] < 0) {
      lane_of[op.stream] = lanes;
      svg += fmt::format("<text x='4' y='{}' font-size='12'>stream {}</text>\n",
                         kTop + lanes * kLane + 17, escape(exp.streams[op.stream].name));
      ++lanes;
    }
  svg += fmt::format("<text x='4' y='{}' font-size='12'>host (API calls)</text>\n",
                     kTop + lanes * kLane + 17);
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const Op& op = exp.ops[i];
    const OpSample& s = rep.ops[i];
    std::string what = op.kind->describe(exp, op);
    if (!std::isnan(s.start_ms))
      svg += bar(sc, lane_of[op.stream], s.start_ms, s.end_ms, op, what,
                 i < waits.size() ? waits[i].text : "", critical[i]);
    svg += bar(sc, lanes, s.issue_ms, s.return_ms, op, what);
  }
  return fmt::format(
             "<svg xmlns='http://www.w3.org/2000/svg' width='{}' height='{}' "
             "font-family='sans-serif'>\n",
             kWidth, kTop + (lanes + 1) * kLane + 36) +
         svg + axis(sc, lanes + 1) + "</svg>\n";
}

std::string path_text(const Experiment& exp, const std::vector<int>& path) {
  std::string out;
  for (int op : path) out += (out.empty() ? "" : " &rarr; ") + escape(exp.ops[op].id);
  return out.empty() ? "" : "<p>Critical path (outlined in red): " + out + "</p>\n";
}

std::string timeline(const Experiment& exp, const RunRecord& run) {
  if (run.reps.empty() || !run.device_timing()) return "";
  const RepetitionSample& rep = run.reps[run.figures.typical_rep];
  std::string svg = timeline_svg(exp, rep, run.waits, run.critical_path);
  return fmt::format(
      "<h2>Timeline of repetition {} (the median span)</h2>\n<p>Hover a bar for its times and "
      "why it started then. Device bars from the {} timer; host bars are API calls.</p>\n{}{}",
      rep.number, escape(run.timer), path_text(exp, run.critical_path), svg);
}

// The timeline model's prediction, drawn as a measured repetition is and marked predicted.
std::string predicted_timeline(const Experiment& exp, const RunRecord& run) {
  if (!run.predicted) return "";
  const PredictedRun& p = *run.predicted;
  std::string notes;
  for (const auto& n : p.notes) notes += "<li>" + escape(n) + "</li>";
  return fmt::format(
      "<h2>Predicted timeline (timeline model)</h2>\n<p>Predicted, not measured: profile {}. "
      "Predicted span {:.3f} ms. Hover a bar for why it started then.</p>\n<ul>{}</ul>\n{}{}",
      escape(p.profile), p.run.reps.front().host_span_ms, notes,
      path_text(exp, p.run.critical_path),
      timeline_svg(exp, p.run.reps.front(), p.run.waits, p.run.critical_path));
}

std::string op_rows(const Experiment& exp, const RunFigures& f) {
  std::string rows;
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const Op& op = exp.ops[i];
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</"
        "td></tr>\n",
        escape(op.id), op.kind->name, op.stream >= 0 ? escape(exp.streams[op.stream].name) : "-",
        op.loc.line, f.ops[i].device.n ? cell(f.ops[i].device.median) : "-",
        cell(f.ops[i].host.median), cell(f.ops[i].gbps, "{:.1f}"),
        escape(op.kind->describe(exp, op)));
  }
  return "<h2>Ops "
         "(medians)</h2>\n<table><tr><th>op</th><th>kind</th><th>stream</th><th>line</"
         "th><th>device ms</th>"
         "<th>host ms</th><th>GB/s</th><th>what</th></tr>\n" +
         rows + "</table>\n";
}

std::string figure_rows(const Experiment& exp, const RunRecord& run, const RunFigures& f) {
  std::string out = "<h2>Span</h2>\n<table>";
  const Summary &h = run.figures.host_span, &d = run.figures.device_span;
  out += fmt::format("<tr><td>host span</td><td>{} ms (min {}, max {})</td></tr>", cell(h.median),
                     cell(h.min), cell(h.max));
  if (d.n)
    out += fmt::format("<tr><td>GPU span</td><td>{} ms (min {}, max {})</td></tr>", cell(d.median),
                       cell(d.min), cell(d.max));
  const SpanBounds& b = f.bounds;
  out += fmt::format(
      "<tr><td>no-overlap bound</td><td>{} ms</td></tr><tr><td>full-overlap bound ({})</td><td>{} "
      "ms</td></tr>"
      "<tr><td>efficiency, concurrency</td><td>{}, {}</td></tr></table>\n",
      cell(b.sum_ms), escape(b.busiest), cell(b.busiest_ms),
      std::isnan(b.efficiency) ? "-" : fmt::format("{:.0f}%", 100 * b.efficiency),
      cell(b.concurrency, "{:.2f}"));
  for (const auto& o : f.overlaps)
    out += fmt::format("<p>{} and {} overlap {} ms</p>\n", escape(exp.ops[o.a].id),
                       escape(exp.ops[o.b].id), cell(o.overlap_ms));
  return out;
}

std::string verdicts(const RunRecord& run) {
  std::string out = "<h2>Checks and expectations</h2>\n<table>";
  for (const auto& c : run.checks)
    out += fmt::format("<tr><td class='{}'>{}</td><td>{}</td><td>{}</td></tr>",
                       !c.evaluated ? "skip"
                       : c.passed   ? "pass"
                                    : "fail",
                       !c.evaluated ? "not evaluated"
                       : c.passed   ? "PASS"
                                    : "FAIL",
                       escape(c.title), escape(c.detail));
  for (const auto& e : run.expectations) {
    using S = ExpectationResult::Status;
    std::string_view tag = e.status == S::passed    ? "PASS"
                           : e.status == S::failed  ? "FAIL"
                           : e.status == S::partial ? "PART"
                                                    : "not evaluated";
    out += fmt::format("<tr><td class='{}'>{}</td><td><code>{}</code></td><td>{}</td></tr>",
                       e.status == S::failed || e.status == S::partial ? "fail" : "pass", tag,
                       escape(e.text), escape(e.detail));
  }
  std::string verdict = format_verdict(run);
  verdict.pop_back();  // its newline
  return out + "</table>\n<p>" + escape(verdict) + "</p>\n";
}

// What `streamlab check` says of the experiment; nothing when it says nothing.
std::string diagnostics(const RunRecord& run) {
  const Findings& findings = run.diagnostics;
  if (findings.items().empty()) return "";
  std::string out = "<h2>Diagnostics (streamlab check)</h2>\n<table>";
  for (const auto& f : findings.items()) {
    out += fmt::format("<tr><td class='{}'>{}{}</td><td>{}</td><td>line {}</td><td>{}</td></tr>",
                       f.severity == Severity::error && !f.acknowledged ? "fail" : "pass",
                       severity_name(f.severity), f.acknowledged ? " (acknowledged)" : "",
                       escape(f.code), f.loc.line, escape(f.message));
  }
  return out + "</table>\n";
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse}td,th{border:"
    "1px solid #ccc;"
    "padding:3px "
    "8px;font-size:13px;text-align:left}.pass{color:#2a7d2a}.fail{color:#c0392b;font-weight:bold}";

}  // namespace

std::string format_html(const Experiment& exp, const RunRecord& run) {
  const RunFigures& f = run.figures;
  std::string notes;
  for (const auto& n : run.notes) notes += "<li>" + escape(n) + "</li>";
  return fmt::format(
      "<!DOCTYPE html>\n<html><head><meta "
      "charset='utf-8'><title>{0}</title><style>{1}</style></head><body>\n"
      "<h1>{0}</h1>\n<p>{2}</p>\n<ul><li>backend: {3} ({4})</li><li>{5} warm-up + {6} timed "
      "repetitions</li>"
      "<li>timer: {7}</li>{8}</ul>\n{9}{14}{10}{11}{12}{13}</body></html>\n",
      escape(exp.name), kStyle, escape(exp.description), escape(run.backend), escape(run.device),
      run.warmup, run.reps.size(), escape(run.timer_description), notes, timeline(exp, run),
      op_rows(exp, f), figure_rows(exp, run, f), verdicts(run), diagnostics(run),
      predicted_timeline(exp, run));
}

}  // namespace streamlab
