// A sweep's reports: one row per point, the swept params as columns.
#include "runner/report/sweep_report.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "runner/check/expect.hpp"
#include "runner/report/files.hpp"
#include "runner/report/json_document.hpp"
#include "runner/report/json_text.hpp"
#include "runner/report/markup.hpp"

namespace streamlab {

Verdict SweepRun::verdict() const {
  Verdict worst = Verdict::passed;
  for (const auto& p : points) {
    Verdict v = p.record.verdict();
    if (v == Verdict::failed) return v;
    if (v == Verdict::incomplete) worst = v;
  }
  return worst;
}

namespace {

using json = nlohmann::ordered_json;

// What a point's span is: measured on a GPU; on the host backend (no GPU time), only predicted.
bool measured(const SweepPointRun& p) { return p.record.figures.host_span.n > 0 && p.record.backend != "host"; }
double span_median(const SweepPointRun& p) { return measured(p) ? p.record.figures.host_span.median : NAN; }
double predicted_span(const SweepPointRun& p) {
  return p.record.predicted ? p.record.predicted->run.figures.host_span.median : NAN;
}
bool any_predicted(const SweepRun& s) {
  return std::any_of(s.points.begin(), s.points.end(), [](const auto& p) { return p.record.predicted != nullptr; });
}
bool any_measured(const SweepRun& s) { return std::any_of(s.points.begin(), s.points.end(), measured); }

std::string number(double v, int digits = 3) { return std::isnan(v) ? "-" : fmt::format("{:.{}f}", v, digits); }
std::string measure(double v) { return std::isnan(v) ? "-" : fmt::format("{:.4g}", v); }

// ---- console -------------------------------------------------------------------------------

std::vector<std::string> header(const SweepRun& s) {
  std::vector<std::string> h;
  for (const auto& a : s.spec.axes) h.push_back(a.name);
  if (any_measured(s)) h.insert(h.end(), {"span ms", "min", "max"});
  if (any_predicted(s)) h.push_back("predicted ms");
  for (const auto& p : s.spec.plots) h.push_back(p.text);
  h.insert(h.end(), {"checks", "expectations", "verdict"});
  return h;
}

std::string checks_cell(const RunRecord& r) {
  size_t passed = std::count_if(r.checks.begin(), r.checks.end(), [](const auto& c) { return c.evaluated && c.passed; });
  return fmt::format("{}/{}", passed, r.checks.size());
}

// Expectations held (or, on the host backend, holding in prediction) of all.
std::string expectations_cell(const RunRecord& r) {
  size_t held = 0, predicted = 0;
  for (const auto& e : r.expectations) {
    held += e.status == ExpectationResult::Status::passed;
    predicted += e.prediction == "holds";
  }
  if (r.backend == "host" && r.predicted) return fmt::format("{}/{} in prediction", predicted, r.expectations.size());
  return fmt::format("{}/{}", held, r.expectations.size());
}

// A plot's cell: the measured value, else the predicted one marked with a `~`.
std::string plot_cell(const SweepPointRun& p, size_t k) {
  if (!std::isnan(p.plots[k])) return measure(p.plots[k]);
  return std::isnan(p.predicted_plots[k]) ? "-" : "~" + measure(p.predicted_plots[k]);
}

std::vector<std::string> row(const SweepRun& s, const SweepPointRun& p) {
  std::vector<std::string> r;
  for (const auto& [name, value] : p.params) r.push_back(std::to_string(value));
  const Summary& span = p.record.figures.host_span;
  if (any_measured(s))
    r.insert(r.end(), {number(span_median(p)), measured(p) ? number(span.min) : "-",
                       measured(p) ? number(span.max) : "-"});
  if (any_predicted(s)) r.push_back(number(predicted_span(p)));
  for (size_t k = 0; k < s.spec.plots.size(); ++k) r.push_back(plot_cell(p, k));
  r.push_back(checks_cell(p.record));
  r.push_back(expectations_cell(p.record));
  r.emplace_back(verdict_name(p.record.verdict()));
  return r;
}

std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(rows.front().size());
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::string out;
  for (const auto& r : rows) {
    std::string line = " ";
    for (size_t c = 0; c < r.size(); ++c) line += fmt::format(" {:>{}}", r[c], width[c]);
    out += line + "\n";
  }
  return out;
}

std::string point_name(const SweepPoint& point) {
  std::string out;
  for (const auto& [name, value] : point) out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, value);
  return out;
}

// What did not pass, each item with its reason once, followed by the points where it did not.
std::string problems(const SweepRun& s) {
  std::vector<std::pair<std::string, std::vector<std::string>>> lines;  // in order of appearance
  auto add = [&](std::string line, const SweepPoint& at) {
    auto it = std::find_if(lines.begin(), lines.end(), [&](const auto& l) { return l.first == line; });
    if (it == lines.end()) it = lines.insert(lines.end(), {std::move(line), {}});
    it->second.push_back(point_name(at));
  };
  for (const auto& p : s.points) {
    for (const auto& c : p.record.checks)
      if (!c.evaluated || !c.passed)
        add(fmt::format("{} check {}: {}", c.evaluated ? "FAIL" : "not evaluated", c.title, c.detail), p.params);
    for (const auto& e : p.record.expectations)
      if (e.status == ExpectationResult::Status::failed || e.status == ExpectationResult::Status::not_evaluated)
        add(fmt::format("{} expect {}{}{}", e.status == ExpectationResult::Status::failed ? "FAIL" : "not evaluated",
                        e.text, e.detail.empty() ? "" : ": ", e.detail),
            p.params);
    for (const auto& i : p.record.impossible) add("FAIL impossible timing: " + i, p.params);
  }
  std::string out;
  for (const auto& [line, at] : lines)
    out += fmt::format("  {}\n    at {}\n", line, at.size() == s.points.size() ? "every point" : fmt::format("{}", fmt::join(at, ", ")));
  return out;
}

std::string verdict_line(const SweepRun& s) {
  std::vector<std::string> failed, incomplete;
  for (const auto& p : s.points) {
    Verdict v = p.record.verdict();
    if (v == Verdict::failed) failed.push_back(point_name(p.params));
    if (v == Verdict::incomplete) incomplete.push_back(point_name(p.params));
  }
  if (!failed.empty()) return fmt::format("verdict: failed at {} of {} points ({})\n", failed.size(), s.points.size(), fmt::join(failed, ", "));
  if (!incomplete.empty())
    return fmt::format("verdict: incomplete: not every check and expectation could be evaluated at {} of {} points\n",
                       incomplete.size(), s.points.size());
  return fmt::format("verdict: passed: every check and expectation was evaluated and held at all {} points\n", s.points.size());
}

}  // namespace

std::string format_sweep_console(const SweepRun& s) {
  const SweepPointRun& first = s.points.front();
  std::vector<std::string> names;
  for (const auto& a : s.spec.axes) names.push_back(a.name);
  std::string out = fmt::format("{}: sweep over {} ({} points), backend {}\n", first.exp.name, fmt::join(names, ", "),
                                s.points.size(), first.record.backend);
  if (any_measured(s))
    out += "  span: the host clock from the start gate's opening to the final synchronize, median over the timed repetitions\n";
  if (any_predicted(s))
    out += fmt::format("  predicted ms: the timeline model's span{}; profile: {}\n",
                       any_measured(s) ? "" : " (the host backend measures no GPU time)", first.record.predicted->profile);
  if (!s.spec.plots.empty() && !any_measured(s))
    out += "  a measure marked ~ is the prediction's value\n";
  std::vector<std::vector<std::string>> rows = {header(s)};
  for (const auto& p : s.points) rows.push_back(row(s, p));
  out += table(rows);
  return out + problems(s) + verdict_line(s);
}

// ---- JSON and CSV --------------------------------------------------------------------------

namespace {

json nullable(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

json point_json(const SweepRun& s, const SweepPointRun& p) {
  json params = json::object();
  for (const auto& [name, value] : p.params) params[name] = value;
  json plots = json::array();
  for (size_t k = 0; k < s.spec.plots.size(); ++k)
    plots.push_back({{"measure", s.spec.plots[k].text}, {"value", nullable(p.plots[k])},
                     {"predicted", nullable(p.predicted_plots[k])}});
  return {{"params", params},
          {"span_ms", nullable(span_median(p))},
          {"span_min_ms", measured(p) ? json(p.record.figures.host_span.min) : json(nullptr)},
          {"span_max_ms", measured(p) ? json(p.record.figures.host_span.max) : json(nullptr)},
          {"predicted_span_ms", nullable(predicted_span(p))},
          {"plots", plots},
          {"verdict", verdict_name(p.record.verdict())},
          {"results", results_document(p.exp, p.record)}};
}

}  // namespace

std::string format_sweep_json(const SweepRun& s) {
  json axes = json::array(), plots = json::array(), points = json::array();
  for (const auto& a : s.spec.axes) axes.push_back({{"param", a.name}, {"values", a.values}});
  for (const auto& p : s.spec.plots) plots.push_back(p.text);
  for (const auto& p : s.points) points.push_back(point_json(s, p));
  json doc = {{"schema_version", kResultsSchemaVersion},
              {"kind", "sweep"},
              {"tool", {{"name", "streamlab"}, {"version", STREAMLAB_VERSION}}},
              {"experiment", s.points.front().exp.name},
              {"file", s.points.front().exp.file},
              {"axes", axes},
              {"plots", plots},
              {"points", points},
              {"verdict", verdict_name(s.verdict())}};
  return json_text(doc);
}

// Each point's CSV rows (format_csv), its params in the first columns.
std::string format_sweep_csv(const SweepRun& s) {
  std::string out;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const SweepPointRun& p = s.points[i];
    std::string prefix;
    for (const auto& [name, value] : p.params) prefix += std::to_string(value) + ",";
    std::string csv = format_csv(p.exp, p.record);
    size_t line_end = csv.find('\n');
    if (i == 0) {
      for (const auto& a : s.spec.axes) out += a.name + ",";
      out += csv.substr(0, line_end + 1);
    }
    for (size_t at = line_end + 1; at < csv.size();) {
      size_t end = csv.find('\n', at);
      out += prefix + csv.substr(at, end - at + 1);
      at = end + 1;
    }
  }
  return out;
}

// ---- HTML: a plot of each figure against the first swept param -------------------------------

namespace {

constexpr double kPlotW = 720, kPlotH = 360, kLeft = 70, kRight = 170, kTop = 20, kBottom = 50;
constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

// At most about `most` round steps (1, 2 or 5 times a power of ten) covering [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int most = 6) {
  double raw = (hi - lo) / most, mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag * (raw / mag <= 1 ? 1 : raw / mag <= 2 ? 2 : raw / mag <= 5 ? 5 : 10);
  std::vector<double> ticks;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push_back(t);
  return ticks;
}

struct Series {
  std::string label;  // the other axes' values, e.g. "MIB=64"; empty with one axis
  std::vector<std::pair<double, double>> points, lows, highs;  // x, y (and the whisker ends)
  bool dashed = false;
};

// The x axis: logarithmic (base 2) where the swept values are positive and span a factor of 8 or
// more (1, 2, 4, 8 fall evenly), else linear.
struct XScale {
  double lo, hi;
  bool log;
  double operator()(double v) const {
    double f = log ? (std::log2(v) - std::log2(lo)) / std::max(1e-9, std::log2(hi) - std::log2(lo))
                   : (v - lo) / std::max(1e-9, hi - lo);
    return kLeft + f * (kPlotW - kLeft - kRight);
  }
};

XScale x_scale(const SweepAxis& axis) {
  auto [lo, hi] = std::minmax_element(axis.values.begin(), axis.values.end());
  double a = static_cast<double>(*lo), b = static_cast<double>(*hi);
  if (a == b) a -= 1, b += 1;
  return {a, b, a > 0 && b / a >= 8};
}

std::string polyline(const std::vector<std::pair<double, double>>& pts, const XScale& xs, auto ys,
                     const std::string& colour, bool dashed) {
  std::string d, marks;
  for (const auto& [x, y] : pts) {
    if (std::isnan(y)) continue;
    d += fmt::format("{:.1f},{:.1f} ", xs(x), ys(y));
    marks += fmt::format("<circle cx='{:.1f}' cy='{:.1f}' r='3' fill='{}'><title>{:g}: {:.4g}</title></circle>\n",
                         xs(x), ys(y), colour, x, y);
  }
  return fmt::format("<polyline fill='none' stroke='{}' stroke-width='2'{} points='{}'/>\n{}", colour,
                     dashed ? " stroke-dasharray='6 4'" : "", d, marks);
}

std::string whiskers(const Series& s, const XScale& xs, auto ys, const std::string& colour) {
  std::string out;
  for (size_t i = 0; i < s.lows.size(); ++i) {
    double x = xs(s.lows[i].first);
    out += fmt::format("<line x1='{0:.1f}' x2='{0:.1f}' y1='{1:.1f}' y2='{2:.1f}' stroke='{3}'/>\n", x,
                       ys(s.lows[i].second), ys(s.highs[i].second), colour);
  }
  return out;
}

std::string plot_svg(const std::string& title, const std::string& unit, const SweepAxis& axis,
                     const std::vector<Series>& series) {
  double lo = 0, hi = 0;
  for (const auto& s : series)
    for (const auto* v : {&s.points, &s.highs})
      for (const auto& [x, y] : *v)
        if (!std::isnan(y)) hi = std::max(hi, y);
  if (hi <= lo) hi = lo + 1;
  auto ticks = nice_ticks(lo, hi * 1.05);
  hi = std::max(hi * 1.05, ticks.back());
  auto ys = [&](double v) { return kPlotH - kBottom - (v - lo) / (hi - lo) * (kPlotH - kBottom - kTop); };
  XScale xs = x_scale(axis);
  std::string svg = fmt::format(
      "<svg viewBox='0 0 {0} {1}' width='100%' style='max-width:{0}px' role='img' "
      "xmlns='http://www.w3.org/2000/svg' font-family='sans-serif' font-size='12'>\n<title>{2}</title>\n",
      kPlotW, kPlotH, escape_markup(title));
  double x0 = kLeft, x1 = kPlotW - kRight, y0 = kPlotH - kBottom;
  svg += fmt::format("<line x1='{0}' y1='{1}' x2='{2}' y2='{1}' stroke='#444'/><line x1='{0}' y1='{3}' x2='{0}' y2='{1}' stroke='#444'/>\n",
                     x0, y0, x1, kTop);
  for (double t : ticks)
    svg += fmt::format("<line x1='{0}' x2='{1}' y1='{2:.1f}' y2='{2:.1f}' stroke='#ddd'/><text x='{3}' y='{4:.1f}' text-anchor='end'>{5:g}</text>\n",
                       x0, x1, ys(t), x0 - 6, ys(t) + 4, t);
  for (int64_t v : axis.values)
    svg += fmt::format("<line x1='{0:.1f}' x2='{0:.1f}' y1='{1}' y2='{2}' stroke='#444'/><text x='{0:.1f}' y='{3}' text-anchor='middle'>{4}</text>\n",
                       xs(static_cast<double>(v)), y0, y0 + 5, y0 + 18, v);
  svg += fmt::format("<text x='{:.1f}' y='{}' text-anchor='middle'>{}{}</text>\n", (x0 + x1) / 2, kPlotH - 10,
                     escape_markup(axis.name), xs.log ? " (log scale)" : "");
  svg += fmt::format("<text x='14' y='{:.1f}' text-anchor='middle' transform='rotate(-90 14 {:.1f})'>{}</text>\n",
                     (kTop + y0) / 2, (kTop + y0) / 2, escape_markup(unit));
  for (size_t i = 0; i < series.size(); ++i) {
    std::string colour = kColours[(series[i].dashed ? i / 2 : i) % std::size(kColours)];
    svg += whiskers(series[i], xs, ys, colour) + polyline(series[i].points, xs, ys, colour, series[i].dashed);
    double ly = kTop + 16 * static_cast<double>(i) + 6;
    svg += fmt::format("<line x1='{0}' x2='{1}' y1='{2:.1f}' y2='{2:.1f}' stroke='{3}' stroke-width='2'{4}/><text x='{5}' y='{6:.1f}'>{7}</text>\n",
                       x1 + 12, x1 + 36, ly, colour, series[i].dashed ? " stroke-dasharray='6 4'" : "", x1 + 42, ly + 4,
                       escape_markup(series[i].label));
  }
  return svg + "</svg>\n";
}

// The points grouped by their values of every axis but the first: one line each.
std::map<SweepPoint, std::vector<const SweepPointRun*>> groups(const SweepRun& s) {
  std::map<SweepPoint, std::vector<const SweepPointRun*>> out;
  for (const auto& p : s.points) out[SweepPoint(p.params.begin() + 1, p.params.end())].push_back(&p);
  return out;
}

std::string group_label(const SweepPoint& rest, const char* what) {
  std::string label = what;
  for (const auto& [name, value] : rest) label += fmt::format(" {}={}", name, value);
  return label;
}

// One figure's series: measured (with min..max whiskers for the span) and predicted, per group.
std::vector<Series> figure_series(const SweepRun& s, auto measured_value, auto predicted_value, auto range) {
  std::vector<Series> out;
  for (const auto& [rest, points] : groups(s)) {
    Series m{group_label(rest, "measured"), {}, {}, {}, false}, p{group_label(rest, "predicted"), {}, {}, {}, true};
    for (const SweepPointRun* pt : points) {
      double x = static_cast<double>(pt->params.front().second);
      m.points.emplace_back(x, measured_value(*pt));
      p.points.emplace_back(x, predicted_value(*pt));
      if (auto r = range(*pt); !std::isnan(r.first)) m.lows.emplace_back(x, r.first), m.highs.emplace_back(x, r.second);
    }
    auto has = [](const Series& v) { return std::any_of(v.points.begin(), v.points.end(), [](auto& q) { return !std::isnan(q.second); }); };
    if (has(m)) out.push_back(std::move(m));
    if (has(p)) out.push_back(std::move(p));
  }
  return out;
}

std::string points_table(const SweepRun& s) {
  std::string out = "<table><tr>";
  for (const auto& h : header(s)) out += "<th>" + escape_markup(h) + "</th>";
  out += "</tr>\n";
  for (const auto& p : s.points) {
    out += "<tr>";
    for (const auto& c : row(s, p)) out += "<td>" + escape_markup(c) + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace

std::string format_sweep_html(const SweepRun& s) {
  const SweepPointRun& first = s.points.front();
  const SweepAxis& axis = s.spec.axes.front();
  std::string body = fmt::format("<h1>{}: sweep over {}</h1>\n<p>{} points, backend {}{}</p>\n",
                                 escape_markup(first.exp.name), escape_markup(axis.name), s.points.size(),
                                 escape_markup(first.record.backend),
                                 any_measured(s) ? "" : "; the host backend measures no GPU time, so the spans and timing measures are the timeline model's prediction");
  auto span_range = [](const SweepPointRun& p) {
    return measured(p) ? std::pair{p.record.figures.host_span.min, p.record.figures.host_span.max}
                       : std::pair{double(NAN), double(NAN)};
  };
  auto no_range = [](const SweepPointRun&) { return std::pair{double(NAN), double(NAN)}; };
  body += "<h2>span</h2>\n";
  if (any_measured(s)) body += "<p>Median over the timed repetitions; the whiskers run from the fastest to the slowest.</p>\n";
  body += plot_svg("span against " + axis.name, "span (ms)", axis, figure_series(s, span_median, predicted_span, span_range));
  for (size_t k = 0; k < s.spec.plots.size(); ++k) {
    body += "<h2>" + escape_markup(s.spec.plots[k].text) + "</h2>\n";
    const SweepPlot& plot = s.spec.plots[k];
    const auto unit = measure_unit(*plot.root);  // the y axis: the measure and its unit
    body += plot_svg(plot.text + " against " + axis.name,
                     unit && !unit->empty() ? fmt::format("{} ({})", plot.text, *unit) : plot.text,
                     axis,
                     figure_series(
                         s, [k](const SweepPointRun& p) { return p.plots[k]; },
                         [k](const SweepPointRun& p) { return p.predicted_plots[k]; }, no_range));
  }
  body += "<h2>points</h2>\n" + points_table(s);
  body += "<p>" + escape_markup(verdict_line(s)) + "</p>\n";
  return fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{} sweep</title><style>"
      "body{{font-family:sans-serif;margin:2em;color:#222;max-width:1100px}}table{{border-collapse:collapse}}"
      "td,th{{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:right}}</style></head><body>\n{}</body></html>\n",
      escape_markup(first.exp.name), body);
}

}  // namespace streamlab
