#include "runner/report/compare_report.hpp"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runner/report/json_text.hpp"

namespace streamlab {
namespace {

using json = nlohmann::ordered_json;

// A cell of a markdown table: '|' would end it, a newline the row.
std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else
      out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::string fact(const RecordedRun* run, const std::string& name) {
  if (!run) return "";
  for (const auto& [n, v] : run->identity)
    if (n == name) return v;
  return "";
}

std::string ms(double v) { return std::isnan(v) ? "-" : fmt::format("{:.4g}", v); }
std::string ratio(double v) { return std::isnan(v) ? "-" : fmt::format("{:.3f}", v); }
std::string p_value(double p) { return std::isnan(p) ? "-" : p < 0.001 ? "<0.001" : fmt::format("{:.3f}", p); }

std::string sides(const Comparison& c, const CompareInputs& in) {
  const RecordedRun* a = in.a.empty() ? nullptr : &in.a.front();
  const RecordedRun* b = in.b.empty() ? nullptr : &in.b.front();
  std::string out = "| | A | B |\n|---|---|---|\n";
  auto runs = [](size_t n) { return fmt::format("{} run{}", n, n == 1 ? "" : "s"); };
  out += fmt::format("| results | {} ({}) | {} ({}) |\n", cell(c.a_label), runs(in.a.size()), cell(c.b_label), runs(in.b.size()));
  for (const char* name : {"date", "streamlab commit", "device", "device uuid", "driver", "backend", "timer"})
    if (!fact(a, name).empty() || !fact(b, name).empty())  // results recorded before provenance lack some
      out += fmt::format("| {} | {} | {} |\n", name, cell(fact(a, name)), cell(fact(b, name)));
  return out + "\n";
}

std::string table(const Comparison& c) {
  std::string out = "| run | measure | timed by | A median (ms) | B median (ms) | B/A | n (A, B) | p | verdict |\n"
                    "|---|---|---|---:|---:|---:|---:|---:|---|\n";
  for (const auto& r : c.rows)
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {}, {} | {} | {} |\n", cell(r.run.empty() ? "-" : r.run), cell(r.measure),
                       r.what, ms(r.a.median), ms(r.b.median), ratio(r.ratio), r.a.n, r.b.n, p_value(r.p),
                       r.change == Change::slower ? "**slower**" : change_name(r.change));
  return out + "\n";
}

std::string summary(const Comparison& c) {
  return fmt::format(
      "{} slower, {} faster, {} within threshold, {} no difference, {} untested. A measure is slower or "
      "faster when a two-sided Mann-Whitney U test on the timed repetitions' samples finds A and B "
      "different (p < {:g}) and the medians differ by more than {:g}%; untested: fewer than two "
      "samples on a side.\n",
      c.count(Change::slower), c.count(Change::faster), c.count(Change::within_threshold), c.count(Change::no_difference),
      c.count(Change::untested), c.options.alpha, c.options.threshold * 100);
}

json summary_json(const Summary& s) {
  return {{"n", s.n}, {"median", s.median}, {"min", s.min}, {"max", s.max}, {"cv", s.cv}};
}

json nullable(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

json side_json(const std::string& label, const std::vector<RecordedRun>& runs) {
  json facts = json::object();
  if (!runs.empty())
    for (const auto& [name, value] : runs.front().identity) facts[name] = value;
  return {{"path", label}, {"runs", runs.size()}, {"facts", facts}};
}

}  // namespace

std::string format_compare_markdown(const Comparison& c, const CompareInputs& in) {
  std::string out = "## streamlab compare: A " + c.a_label + ", B " + c.b_label + "\n\n";
  out += sides(c, in) + table(c) + summary(c);
  if (!c.notes.empty() || !in.skipped.empty()) out += "\nNotes:\n";
  for (const auto& n : c.notes) out += "- " + n + "\n";
  for (const auto& s : in.skipped) out += "- " + s + ": not a results file, left out\n";
  out += c.regressed() ? "\nverdict: regressed\n" : "\nverdict: no regression\n";
  return out;
}

std::string format_compare_json(const Comparison& c, const CompareInputs& in) {
  json rows = json::array();
  for (const auto& r : c.rows)
    rows.push_back({{"run", r.run}, {"measure", r.measure}, {"timed_by", r.what}, {"a", summary_json(r.a)},
                    {"b", summary_json(r.b)}, {"ratio", nullable(r.ratio)}, {"p", nullable(r.p)},
                    {"verdict", change_name(r.change)}});
  json counts = json::object();
  for (Change ch : {Change::slower, Change::faster, Change::within_threshold, Change::no_difference, Change::untested})
    counts[change_name(ch)] = c.count(ch);
  json doc = {{"schema_version", 1},
              {"kind", "compare"},
              {"test", {{"name", "Mann-Whitney U, two-sided"}, {"alpha", c.options.alpha}, {"threshold", c.options.threshold}}},
              {"a", side_json(c.a_label, in.a)},
              {"b", side_json(c.b_label, in.b)},
              {"rows", rows},
              {"counts", counts},
              {"notes", c.notes},
              {"skipped", in.skipped},
              {"regressed", c.regressed()}};
  return json_text(doc);
}

}  // namespace streamlab
