#include "runner/report/autograder.hpp"

#include <chrono>
#include <cmath>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runner/check/score.hpp"
#include "runner/report/console.hpp"
#include "runner/report/json_text.hpp"
#include "runner/report/markup.hpp"

namespace streamlab {
namespace {

using json = nlohmann::ordered_json;

bool full_marks(const ScoredItem& s) { return s.status == ScoredItem::Status::passed; }
bool skipped(const ScoredItem& s) { return s.status == ScoredItem::Status::not_evaluated; }

std::string points(double v) { return fmt::format("{:g}", std::round(v * 1e4) / 1e4); }

// ISO 8601, UTC, for JUnit's timestamps.
std::string now_utc() {
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}", fmt::gmtime(t));
}

std::string xml(std::string_view text) { return escape_markup(text); }

// One line for TAP's description: no newline, and no '#', which starts a directive there.
std::string tap_line(std::string_view text) {
  std::string out;
  for (char c : text) out += c == '\n' || c == '\r' ? ' ' : c == '#' ? '_' : c;
  return out;
}

}  // namespace

GradeReport grade_report(const Experiment& exp, const RunRecord& run, double execution_s) {
  GradeReport r;
  r.title = exp.name;
  r.file = exp.file;
  r.items = run.items;
  r.execution_s = execution_s;
  r.output = fmt::format("{} on the {} backend ({})\n", exp.file, run.backend, run.device);
  for (const auto& n : run.notes) r.output += "note: " + n + "\n";
  for (const auto& i : run.impossible) r.output += "impossible: " + i + "\n";
  r.output += format_verdict(run);
  if (run.device_timing() && run.figures.host_span.n) r.span_ms = run.figures.host_span.median;
  return r;
}

std::string format_gradescope(const GradeReport& r) {
  json tests = json::array();
  for (size_t i = 0; i < r.items.size(); ++i) {
    const ScoredItem& s = r.items[i];
    tests.push_back({{"name", s.title},
                     {"number", std::to_string(i + 1)},
                     {"score", s.score},
                     {"max_score", s.max_score},
                     {"status", full_marks(s) ? "passed" : "failed"},
                     {"output", s.output},
                     {"visibility", visibility_name(s.visibility)},
                     {"tags", json::array({s.check ? "check" : "expectation", s.id})}});
  }
  ScoreTotal t = total(r.items);
  json doc = {{"score", t.score},        {"execution_time", std::lround(r.execution_s)},
              {"output", r.output},      {"output_format", "text"},
              {"visibility", "visible"}, {"stdout_visibility", "hidden"},
              {"tests", tests}};
  if (!std::isnan(r.span_ms))
    doc["leaderboard"] =
        json::array({{{"name", "span (ms)"}, {"value", r.span_ms}, {"order", "asc"}}});
  return json_text(doc);
}

std::string format_junit(const GradeReport& r) {
  size_t failures = 0, skips = 0;
  for (const ScoredItem& s : r.items)
    failures += !full_marks(s) && !skipped(s), skips += skipped(s);
  ScoreTotal t = total(r.items);
  std::string time = fmt::format("{:.3f}", r.execution_s), stamp = now_utc();
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"streamlab\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" skipped=\"{2}\" "
      "time=\"{3}\" timestamp=\"{4}\">\n"
      "  <testsuite name=\"{5}\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" skipped=\"{2}\" "
      "time=\"{3}\" timestamp=\"{4}\" file=\"{6}\">\n"
      "    <properties>\n"
      "      <property name=\"score\" value=\"{7}\"/>\n"
      "      <property name=\"max_score\" value=\"{8}\"/>\n"
      "    </properties>\n",
      r.items.size(), failures, skips, time, stamp, xml(r.title), xml(r.file), points(t.score),
      points(t.max_score));
  for (const ScoredItem& s : r.items) {
    out += fmt::format(
        "    <testcase name=\"{}\" classname=\"{}\" time=\"0\" file=\"{}\" line=\"{}\">\n",
        xml(s.title), xml(s.check ? "check" : "expectation"), xml(s.loc.file), s.loc.line);
    std::string score = fmt::format("{} of {} points", points(s.score), points(s.max_score));
    if (skipped(s))
      out += fmt::format("      <skipped message=\"{}\"/>\n", xml(s.output));
    else if (!full_marks(s))
      out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n", xml(score),
                         status_name(s.status), xml(s.output));
    out += fmt::format("      <system-out>{}: {}</system-out>\n", xml(score), xml(s.output));
    out += "    </testcase>\n";
  }
  out += fmt::format("    <system-out>{}</system-out>\n  </testsuite>\n</testsuites>\n",
                     xml(r.output));
  return out;
}

std::string format_tap(const GradeReport& r) {
  std::string out = fmt::format("TAP version 14\n1..{}\n", r.items.size());
  for (size_t i = 0; i < r.items.size(); ++i) {
    const ScoredItem& s = r.items[i];
    out += fmt::format("{} {} - {}{}\n", full_marks(s) || skipped(s) ? "ok" : "not ok", i + 1,
                       tap_line(s.title),
                       skipped(s) ? " # SKIP " + tap_line(s.output) : std::string());
    json block = {{"id", s.id},
                  {"status", status_name(s.status)},
                  {"score", s.score},
                  {"max_score", s.max_score},
                  {"visibility", visibility_name(s.visibility)},
                  {"line", s.loc.line},
                  {"output", s.output}};
    out += "  ---\n";
    for (const auto& [key, value] : block.items())
      out += fmt::format("  {}: {}\n", key,
                         value.dump(-1, ' ', false, json::error_handler_t::replace));
    out += "  ...\n";
  }
  ScoreTotal t = total(r.items);
  out += fmt::format("# score {} of {}\n", points(t.score), points(t.max_score));
  return out;
}

std::string format_grade_console(const GradeReport& r) {
  std::string out = fmt::format("grade: {} ({})\n  submission  {}\n", r.title, r.rubric, r.file);
  for (const auto& [who, span] : r.spans)
    out += fmt::format("  span        {:<12} {}\n", who,
                       std::isnan(span) ? "not measured" : fmt::format("{:.4f} ms (median)", span));
  out += "\n" + r.output;
  out += "\n  points           item\n";
  for (const ScoredItem& s : r.items)
    out += fmt::format("  {:>6} / {:<6}  {}{}\n", points(s.score), points(s.max_score), s.title,
                       s.visibility == Visibility::visible
                           ? ""
                           : fmt::format(" [{}]", visibility_name(s.visibility))) +
           (s.output.empty() ? "" : fmt::format("                   {}\n", s.output));
  ScoreTotal t = total(r.items);
  return out + fmt::format("\nscore: {} of {} points\n", points(t.score), points(t.max_score));
}

std::string format_grade_json(const GradeReport& r) {
  json items = json::array();
  for (const ScoredItem& s : r.items) items.push_back(scored_item_json(s));
  json spans = json::object();
  for (const auto& [who, span] : r.spans)
    spans[who] = std::isnan(span) ? json(nullptr) : json(span);
  ScoreTotal t = total(r.items);
  json doc = {{"rubric", r.rubric},
              {"title", r.title},
              {"submission", r.file},
              {"score", t.score},
              {"max_score", t.max_score},
              {"execution_time", r.execution_s},
              {"output", r.output},
              {"spans_ms", spans},
              {"items", items},
              {"results", r.results_json.empty() ? json(nullptr)
                                                 : json::parse(r.results_json, nullptr, false)}};
  return json_text(doc);
}

}  // namespace streamlab
