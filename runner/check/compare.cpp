#include "runner/check/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace streamlab {

const char* change_name(Change c) {
  switch (c) {
    case Change::slower: return "slower";
    case Change::faster: return "faster";
    case Change::within_threshold: return "within threshold";
    case Change::no_difference: return "no difference";
    case Change::untested: return "untested";
  }
  return "";
}

int Comparison::count(Change c) const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [c](const auto& r) { return r.change == c; }));
}

namespace {

Change judge(double ratio, double p, const CompareOptions& o) {
  if (std::isnan(p)) return Change::untested;
  if (p >= o.alpha) return Change::no_difference;
  if (ratio > 1 + o.threshold) return Change::slower;
  if (ratio < 1 - o.threshold) return Change::faster;
  return Change::within_threshold;
}

MeasureComparison compare_measure(const std::string& run, const RecordedMeasure& a,
                                  const RecordedMeasure& b, const CompareOptions& o) {
  MeasureComparison c{.run = run, .measure = a.name, .what = a.what};
  c.a = summarize(a.samples_ms);
  c.b = summarize(b.samples_ms);
  c.ratio = c.a.median != 0 ? c.b.median / c.a.median : NAN;
  c.p = mann_whitney_p(a.samples_ms, b.samples_ms);
  c.change = std::isnan(c.ratio) ? Change::untested : judge(c.ratio, c.p, o);
  return c;
}

const RecordedMeasure* find_measure(const RecordedRun& run, const RecordedMeasure& like) {
  for (const auto& m : run.measures)
    if (m.name == like.name && m.what == like.what) return &m;
  return nullptr;
}

// What differs between the two runs' facts: a comparison across devices, builds or files is
// still made, but said.
void note_unlike(const RecordedRun& a, const RecordedRun& b, std::vector<std::string>& notes) {
  std::map<std::string, std::string> theirs(b.identity.begin(), b.identity.end());
  for (const auto& [name, value] : a.identity) {
    if (name == "date") continue;  // when they ran is said once, in the report's head
    auto it = theirs.find(name);
    if (it != theirs.end() && it->second != value)
      notes.push_back(fmt::format("{}: {} differs: A {}, B {}", a.key.empty() ? a.experiment : a.key, name,
                                  value.empty() ? "(none)" : value, it->second.empty() ? "(none)" : it->second));
  }
}

void compare_pair(const RecordedRun& a, const RecordedRun& b, const CompareOptions& o, Comparison& out) {
  std::string run = a.key.empty() ? a.experiment : a.key;
  note_unlike(a, b, out.notes);
  for (const auto& m : a.measures) {
    const RecordedMeasure* other = find_measure(b, m);
    if (other)
      out.rows.push_back(compare_measure(run, m, *other, o));
    else
      out.notes.push_back(fmt::format("{}: {} ({}) only in A", run, m.name, m.what));
  }
  for (const auto& m : b.measures)
    if (!find_measure(a, m)) out.notes.push_back(fmt::format("{}: {} ({}) only in B", run, m.name, m.what));
}

const RecordedRun* find_run(const std::vector<RecordedRun>& runs, const std::string& key) {
  for (const auto& r : runs)
    if (r.key == key) return &r;
  return nullptr;
}

}  // namespace

Comparison compare_runs(const std::vector<RecordedRun>& a, const std::vector<RecordedRun>& b,
                        const CompareOptions& options) {
  Comparison out;
  out.options = options;
  for (const auto& run : a) {
    if (const RecordedRun* other = find_run(b, run.key))
      compare_pair(run, *other, options, out);
    else
      out.notes.push_back(fmt::format("{}: only in A ({})", run.key, run.file));
  }
  for (const auto& run : b)
    if (!find_run(a, run.key)) out.notes.push_back(fmt::format("{}: only in B ({})", run.key, run.file));
  return out;
}

}  // namespace streamlab
