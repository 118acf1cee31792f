// The HTML report: one self-contained file (no network, no JavaScript) with an SVG timeline of
// the typical timed repetition (a lane per stream on the GPU, a row per graph's body, one for the
// host thread's API calls, a legend of the colours) and the tables of the console report. The
// SVG scales to the window. Formatting only.
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

// The SVG's own units (viewBox): it scales to the window, so text keeps its size relative to the
// drawing on a laptop and on a wide monitor alike.
constexpr double kWidth = 1200, kLabel = 200, kRight = 16, kLane = 26, kTop = 24;
constexpr double kCharWidth = 6.6;  // of an 11-unit sans-serif character, at most (tick labels)
constexpr size_t kMaxLabelChars = 28;  // a lane's label; longer names end in "..." (full on hover)
constexpr int kMaxTicks = 9;

std::string escape(std::string_view s) { return escape_markup(s); }

std::string cell(double v, const char* format = "{:.3f}") {
  return std::isnan(v) ? "-" : fmt::format(fmt::runtime(format), v);
}

// What a bar's colour says, one entry of the legend each.
enum class Look { h2d, d2h, d2d, kernel, memset, library, graph, other, host, count };
struct LookText {
  const char* colour;
  const char* meaning;
};
constexpr LookText kLooks[] = {
    {"#4e79a7", "H2D copy (host to device)"},
    {"#76b7b2", "D2H copy (device to host)"},
    {"#b07aa1", "D2D copy (device to device)"},
    {"#59a14f", "kernel"},
    {"#f28e2b", "memset"},
    {"#edc948", "library call (cuBLAS, cuDNN, NCCL)"},
    {"#e15759", "graph launch"},
    {"#9c9c9c", "other device work (host function)"},
    {"#bab0ac", "host: time in the op's API call"},
};

Look look_of(const Experiment& exp, const Op& op) {
  if (!op.body.empty()) return Look::graph;
  switch (op.kind->engine(exp, op)) {
    case Engine::copy_h2d:
      return Look::h2d;
    case Engine::copy_d2h:
      return Look::d2h;
    case Engine::copy_other:
      return Look::d2d;
    case Engine::compute:
      return op.kernel >= 0 ? Look::kernel : op.dst.valid() ? Look::memset : Look::library;
    case Engine::none:
      break;
  }
  return Look::other;
}

const char* colour(Look l) { return kLooks[static_cast<size_t>(l)].colour; }

// The labels of one axis: a step of 1, 2 or 5 x 10^k in the unit that fits the span, wide enough
// that no two labels touch.
struct Ticks {
  double step_ms = 1, per_ms = 1;  // per_ms: the unit's count in one ms (1000 for us)
  const char* unit = "ms";
  int decimals = 0;
  std::string label(double t_ms) const {
    return fmt::format("{:.{}f}", t_ms * per_ms, decimals);
  }
};

double nice_step(double raw) {
  double mag = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * mag * (1 + 1e-9)) return m * mag;
  return 10 * mag;
}

Ticks choose_ticks(double span_ms, double plot_width) {
  Ticks t;
  if (span_ms < 1) t.per_ms = 1000, t.unit = "us";
  else if (span_ms >= 1000) t.per_ms = 1e-3, t.unit = "s";
  for (double step = nice_step(span_ms * t.per_ms / (kMaxTicks - 1));; step = nice_step(step * 1.01)) {
    t.step_ms = step / t.per_ms;
    t.decimals = std::max(0, static_cast<int>(-std::floor(std::log10(step) + 1e-9)));
    const double room = t.step_ms / span_ms * plot_width;  // between two labels' centres
    const double widest =
        static_cast<double>(std::max(t.label(0).size(), t.label(span_ms).size()) + 1) * kCharWidth;
    if (room >= widest + 6) return t;
  }
}

// Long names end in "..." so that a label never runs into the bars.
std::string shortened(const std::string& s) {
  return s.size() <= kMaxLabelChars ? s : s.substr(0, kMaxLabelChars - 3) + "...";
}

struct Scale {
  double t0, t1;
  double x(double t) const { return kLabel + (t - t0) / (t1 - t0) * (kWidth - kLabel - kRight); }
};

Scale time_range(const RepetitionSample& rep) {
  double lo = 0, hi = 0;
  for (const auto& s : rep.ops) {
    lo = std::min({lo, s.issue_ms, std::isnan(s.start_ms) ? lo : s.start_ms});
    hi = std::max({hi, s.return_ms, std::isnan(s.end_ms) ? hi : s.end_ms});
  }
  return {lo, hi > lo ? hi : lo + 1};
}

// One bar, its times and `what` on hover; `why`: why it started then; `critical`: on the critical
// path (outlined in red); `predicted`: drawn lighter and dashed.
struct BarStyle {
  Look look = Look::other;
  bool critical = false, predicted = false;
};

std::string bar(const Scale& sc, double y, double start, double end, const std::string& name,
                const std::string& what, BarStyle style, const std::string& why = "") {
  double x = sc.x(start), w = std::max(1.0, sc.x(end) - x);
  return fmt::format(
      "<rect x='{:.1f}' y='{:.1f}' width='{:.1f}' height='{}' fill='{}' stroke='{}' "
      "stroke-width='{}'{}><title>{}: {:.3f} .. {:.3f} ms, {:.3f} ms\n{}{}</title></rect>\n",
      x, y + 3, w, kLane - 6, colour(style.look), style.critical ? "#c00" : "white",
      style.critical ? 2.5 : 1, style.predicted ? " fill-opacity='0.6' stroke-dasharray='3 2'" : "",
      escape(name), start, end, end - start, escape(what),
      why.empty() ? "" : "\nwhy it started then: " + escape(why) + (style.critical ? " (critical path)" : ""));
}

std::string lane_label(double y, const std::string& text, const std::string& second = "") {
  std::string out = fmt::format("<text x='4' y='{}' font-size='12'><title>{}</title>{}</text>\n",
                                y + (second.empty() ? 17 : 12), escape(text), escape(shortened(text)));
  if (!second.empty())
    out += fmt::format("<text x='4' y='{}' font-size='9' fill='#555'>{}</text>\n", y + 22,
                       escape(second));
  return out;
}

std::string axis(const Scale& sc, double y) {
  std::string out = fmt::format("<line x1='{}' y1='{}' x2='{}' y2='{}' stroke='#444'/>\n", kLabel,
                                y, kWidth - kRight, y);
  const Ticks t = choose_ticks(sc.t1 - sc.t0, kWidth - kLabel - kRight);
  for (double v = std::ceil(sc.t0 / t.step_ms - 1e-9) * t.step_ms; v <= sc.t1 + 1e-12; v += t.step_ms)
    out += fmt::format(
        "<line x1='{0:.1f}' y1='{1}' x2='{0:.1f}' y2='{2}' stroke='#444'/><text class='tick' "
        "x='{0:.1f}' y='{3}' font-size='11' text-anchor='middle'>{4}</text>\n",
        sc.x(v), y, y + 4, y + 16, t.label(std::abs(v) < t.step_ms * 1e-9 ? 0 : v));
  return out + fmt::format(
                   "<text x='{}' y='{}' font-size='11' text-anchor='end'>{} from the "
                   "repetition's first API call</text>\n",
                   kWidth - kRight, y + 32, t.unit);
}

// The legend: what each colour drawn means, only those present; it wraps onto more rows.
struct Legend {
  std::string svg;
  double height = 0;
};

Legend legend(const std::vector<bool>& present, bool critical, bool predicted, double y) {
  std::string out;
  double x = 4, row = y;
  auto entry = [&](const std::string& swatch, const std::string& text) {
    const double w = 22 + static_cast<double>(text.size()) * 6.2;
    if (x + w > kWidth) x = 4, row += 18;
    out += swatch + fmt::format("<text x='{:.1f}' y='{:.1f}' font-size='11'>{}</text>\n", x + 18,
                                row + 10, escape(text));
    x += w + 10;
  };
  auto box = [&](std::string_view fill, std::string_view extra) {
    return fmt::format("<rect x='{:.1f}' y='{:.1f}' width='14' height='12' fill='{}'{}/>", x, row,
                       fill, extra);
  };
  for (size_t l = 0; l < present.size(); ++l)
    if (present[l]) entry(box(kLooks[l].colour, ""), kLooks[l].meaning);
  if (critical) entry(box("white", " stroke='#c00' stroke-width='2.5'"), "critical path (outlined)");
  if (predicted)
    entry(box("#999", " fill-opacity='0.6' stroke='white' stroke-dasharray='3 2'"),
          "predicted by the timeline model, not measured");
  return {fmt::format("<g class='legend'>\n{}</g>\n", out), row + 18 - y};
}

// A graph op's body in one replay, in a row under the streams: each captured op's measured
// device time, laid end to end from the graph's start. CUPTI's node records give each node's
// time, not when it started within the replay, so the row says the placement is not measured.
struct BodyRow {
  size_t op = 0;
  std::vector<std::pair<size_t, double>> parts;  // captured op, median ms in one replay
};

std::vector<BodyRow> body_rows(const Experiment& exp, const RunFigures& f) {
  std::vector<BodyRow> rows;
  for (size_t i = 0; i < exp.ops.size() && i < f.ops.size(); ++i) {
    BodyRow row{i, {}};
    for (size_t j = 0; j < exp.ops[i].body.size() && j < f.ops[i].body.size(); ++j)
      if (f.ops[i].body[j].n) row.parts.emplace_back(j, f.ops[i].body[j].median);
    if (!row.parts.empty()) rows.push_back(std::move(row));
  }
  return rows;
}

std::string body_bars(const Experiment& exp, const Scale& sc, double y, const BodyRow& row,
                      double start) {
  std::string out;
  double t = start;
  for (const auto& [j, ms] : row.parts) {
    const Op& b = exp.ops[row.op].body[j];
    out += bar(sc, y, t, t + ms, exp.ops[row.op].id + "." + b.id,
               b.kind->describe(exp, b) + "\nmeasured: its device time in one replay (median); "
                                          "placement: not measured, laid end to end",
               {look_of(exp, b)});
    t += ms;
  }
  return out;
}

// What one SVG draws: the repetition, the waits and critical path, and a graph's body rows.
struct Drawing {
  const RepetitionSample* rep = nullptr;
  const std::vector<OpWait>* waits = nullptr;
  const std::vector<int>* path = nullptr;
  std::vector<BodyRow> bodies{};
  bool predicted = false;
};

// The SVG of one repetition: a lane per stream with ops, one per graph body, one for the host's
// calls, the axis and the legend.
std::string timeline_svg(const Experiment& exp, const Drawing& d) {
  const RepetitionSample& rep = *d.rep;
  Scale sc = time_range(rep);
  std::vector<bool> critical(exp.ops.size()), present(static_cast<size_t>(Look::count));
  for (int op : *d.path) critical[op] = true;
  std::vector<int> lane_of(exp.streams.size(), -1);  // only streams that have ops get a lane
  int lanes = 0;
  std::string svg;
  auto lane_y = [](int lane) { return kTop + lane * kLane; };
  for (const Op& op : exp.ops)
    if (op.stream >= 0 && lane_of[op.stream] < 0) {
      lane_of[op.stream] = lanes;
      svg += lane_label(lane_y(lanes++), "stream " + exp.streams[op.stream].name);
    }
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const Op& op = exp.ops[i];
    const OpSample& s = rep.ops[i];
    if (std::isnan(s.start_ms) || op.stream < 0) continue;
    const BarStyle style{look_of(exp, op), critical[i], d.predicted};
    present[static_cast<size_t>(style.look)] = true;
    svg += bar(sc, lane_y(lane_of[op.stream]), s.start_ms, s.end_ms, op.id + " (" + std::string(op.kind->name) + ")",
               op.kind->describe(exp, op), style, i < d.waits->size() ? (*d.waits)[i].text : "");
  }
  for (const BodyRow& row : d.bodies) {
    svg += lane_label(lane_y(lanes), "graph " + exp.ops[row.op].id + ": body, one replay",
                      "durations measured, placement not");
    svg += body_bars(exp, sc, lane_y(lanes++), row, rep.ops[row.op].start_ms);
    for (const auto& part : row.parts)
      present[static_cast<size_t>(look_of(exp, exp.ops[row.op].body[part.first]))] = true;
  }
  svg += lane_label(lane_y(lanes), "host (API calls)");
  for (size_t i = 0; i < exp.ops.size(); ++i)
    svg += bar(sc, lane_y(lanes), rep.ops[i].issue_ms, rep.ops[i].return_ms,
               exp.ops[i].id + " (" + std::string(exp.ops[i].kind->name) + ")",
               exp.ops[i].kind->describe(exp, exp.ops[i]), {Look::host, false, d.predicted});
  present[static_cast<size_t>(Look::host)] = !exp.ops.empty();
  const double axis_y = lane_y(lanes + 1), key_y = axis_y + 44;
  Legend key = legend(present, !d.path->empty(), d.predicted, key_y);
  if (!d.bodies.empty()) {
    key.svg += fmt::format(
        "<text x='4' y='{:.0f}' font-size='11'>graph body rows: each captured op's device time in "
        "one replay, measured by CUPTI; laid end to end from the graph's start, since when each "
        "started is not measured</text>\n",
        key_y + key.height + 12);
    key.height += 20;
  }
  const double height = key_y + key.height + 4;
  return fmt::format(
             "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {} {:.0f}' width='100%' "
             "preserveAspectRatio='xMinYMin meet' font-family='sans-serif'>\n",
             kWidth, height) +
         svg + axis(sc, axis_y) + key.svg + "</svg>\n";
}

std::string path_text(const Experiment& exp, const std::vector<int>& path) {
  std::string out;
  for (int op : path) out += (out.empty() ? "" : " &rarr; ") + escape(exp.ops[op].id);
  return out.empty() ? "" : "<p>Critical path (outlined in red): " + out + "</p>\n";
}

// Where the device bars come from, in a sentence for every backend and timer.
std::string device_source(const RunRecord& run) {
  if (!run.timer_description.empty()) return "Device bars: " + escape(run.timer_description) + ".";
  return "Device bars: the " + escape(run.timer) + " timer.";
}

// Why there is no measured timeline, when there is none.
std::string no_timeline(const RunRecord& run) {
  const std::string predicted = run.predicted ? " The predicted timeline is below." : "";
  if (run.backend == "host")
    return "<p>No measured timeline: the host backend runs the ops on host memory in issue order "
           "and measures no GPU time." + predicted + "</p>\n";
  if (run.reps.empty()) return "<p>No measured timeline: no timed repetition ran.</p>\n";
  return "<p>No measured timeline: the run's timer was none, which measures spans only (--timer "
         "cupti or events times each op)." + predicted + "</p>\n";
}

std::string timeline(const Experiment& exp, const RunRecord& run) {
  if (run.reps.empty() || !run.device_timing()) return no_timeline(run);
  const size_t typical = run.figures.typical_rep;
  const RepetitionSample& rep = run.reps[typical];
  Drawing d{&rep, &run.waits, &run.critical_path, body_rows(exp, run.figures), false};
  // Timed repetitions are numbered from 1, as in the CSV, the JSON and the trace.
  return fmt::format(
      "<h2>Timeline of timed repetition {} of {}</h2>\n<p>The typical repetition: the middle one "
      "of the {} timed ones ordered by host span ({:.3f} ms). Hover a bar for its times and why it "
      "started then. {} Host bars: the time the host spent in each op's API call, on its steady "
      "clock.</p>\n{}{}",
      typical + 1, run.reps.size(), run.reps.size(), rep.host_span_ms, device_source(run),
      path_text(exp, run.critical_path), timeline_svg(exp, d));
}

// The timeline model's prediction, drawn as a measured repetition is and marked predicted.
std::string predicted_timeline(const Experiment& exp, const RunRecord& run) {
  if (!run.predicted) return "";
  const PredictedRun& p = *run.predicted;
  std::string notes;
  for (const auto& n : p.notes) notes += "<li>" + escape(n) + "</li>";
  Drawing d{&p.run.reps.front(), &p.run.waits, &p.run.critical_path, {}, true};
  return fmt::format(
      "<h2>Predicted timeline (timeline model)</h2>\n<p>Predicted, not measured{}. "
      "Predicted span {:.3f} ms. Hover a bar for why it started then.</p>\n{}{}{}",
      p.profile.empty() ? "" : ": profile " + escape(p.profile), p.run.reps.front().host_span_ms,
      notes.empty() ? "" : "<ul>" + notes + "</ul>\n", path_text(exp, p.run.critical_path),
      timeline_svg(exp, d));
}

std::string op_rows(const Experiment& exp, const RunRecord& run, const RunFigures& f) {
  std::string rows;
  for (size_t i = 0; i < exp.ops.size(); ++i) {
    const Op& op = exp.ops[i];
    rows += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</"
        "td><td>{}</td></tr>\n",
        escape(op.id), op.kind->name, op.stream >= 0 ? escape(exp.streams[op.stream].name) : "-",
        op.loc.line, f.ops[i].device.n ? cell(f.ops[i].device.median) : "-",
        cell(f.ops[i].host.median), cell(f.ops[i].gbps, "{:.1f}"),
        std::isnan(f.ops[i].of_ceiling) ? "-" : fmt::format("{:.0f}%", 100 * f.ops[i].of_ceiling),
        escape(op.kind->describe(exp, op)));
  }
  std::string notes;
  if (run.backend != "host")
    for (const std::string& line : bandwidth_notes(f)) notes += "<p>" + escape(line) + "</p>\n";
  return "<h2>Ops (medians)</h2>\n<table><tr><th>op</th><th>kind</th><th>stream</th><th>line</"
         "th><th>device ms</th><th>host ms</th><th>GB/s</th><th>ceiling</th><th>what</th></tr>\n" +
         rows + "</table>\n" + notes;
}

std::string figure_rows(const Experiment& exp, const RunRecord& run, const RunFigures& f) {
  std::string out = "<h2>Span</h2>\n<table>";
  const Summary &h = run.figures.host_span, &d = run.figures.device_span;
  if (h.n)
    out += fmt::format("<tr><td>host span</td><td>{} ms (min {}, max {})</td></tr>",
                       cell(h.median), cell(h.min), cell(h.max));
  if (!d.n)
    return out + "<tr><td>GPU span</td><td>not measured (no device times)</td></tr></table>\n";
  out += fmt::format("<tr><td>GPU span</td><td>{} ms (min {}, max {})</td></tr>", cell(d.median),
                     cell(d.min), cell(d.max));
  const SpanBounds& b = f.bounds;
  out += fmt::format(
      "<tr><td>no-overlap bound</td><td>{} ms</td></tr><tr><td>full-overlap bound{}</td><td>{} "
      "ms</td></tr>"
      "<tr><td>efficiency, concurrency</td><td>{}, {}</td></tr></table>\n",
      cell(b.sum_ms), b.busiest.empty() ? "" : " (" + escape(b.busiest) + ")", cell(b.busiest_ms),
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
    "8px;font-size:13px;text-align:left;overflow-wrap:anywhere}.pass{color:#2a7d2a}.fail{color:#c0392b;"
    "font-weight:bold}svg{display:block;max-width:1800px;height:auto}";

}  // namespace

std::string format_html(const Experiment& exp, const RunRecord& run) {
  const RunFigures& f = run.figures;
  std::string notes;
  for (const auto& n : run.notes) notes += "<li>" + escape(n) + "</li>";
  return fmt::format(
      "<!DOCTYPE html>\n<html><head><meta "
      "charset='utf-8'><title>{0}</title><style>{1}</style></head><body>\n"
      "<h1>{0}</h1>\n{2}<ul><li>backend: {3} ({4})</li><li>{5} warm-up + {6} timed "
      "repetitions</li>"
      "<li>timer: {7}</li>{8}</ul>\n{9}{14}{10}{11}{12}{13}</body></html>\n",
      escape(exp.name), kStyle,
      exp.description.empty() ? "" : "<p>" + escape(exp.description) + "</p>\n", escape(run.backend), escape(run.device),
      run.warmup, run.reps.size(), escape(run.timer_description.empty() ? run.timer : run.timer_description), notes,
      timeline(exp, run),
      op_rows(exp, run, f), figure_rows(exp, run, f), verdicts(run), diagnostics(run),
      predicted_timeline(exp, run));
}

}  // namespace streamlab
