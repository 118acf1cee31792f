#include "runner/check/compare.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <unordered_map>

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

// A run's measures by name and kind, so that matching two runs of 100,000 ops each is linear
// (a scan per measure took half a minute).
class MeasureIndex {
 public:
  explicit MeasureIndex(const RecordedRun& run) {
    for (const auto& m : run.measures) index_.try_emplace(key(m), &m);
  }
  const RecordedMeasure* find(const RecordedMeasure& like) const {
    auto it = index_.find(key(like));
    return it == index_.end() ? nullptr : it->second;
  }

 private:
  static std::string key(const RecordedMeasure& m) { return m.name + '\0' + m.what; }
  std::unordered_map<std::string, const RecordedMeasure*> index_;
};

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
  const MeasureIndex in_a(a), in_b(b);
  for (const auto& m : a.measures) {
    const RecordedMeasure* other = in_b.find(m);
    if (other)
      out.rows.push_back(compare_measure(run, m, *other, o));
    else
      out.notes.push_back(fmt::format("{}: {} ({}) only in A", run, m.name, m.what));
  }
  for (const auto& m : b.measures)
    if (!in_a.find(m)) out.notes.push_back(fmt::format("{}: {} ({}) only in B", run, m.name, m.what));
}

std::unordered_map<std::string, const RecordedRun*> runs_by_key(const std::vector<RecordedRun>& runs) {
  std::unordered_map<std::string, const RecordedRun*> out;
  for (const auto& r : runs) out.try_emplace(r.key, &r);
  return out;
}

}  // namespace

Comparison compare_runs(const std::vector<RecordedRun>& a, const std::vector<RecordedRun>& b,
                        const CompareOptions& options) {
  Comparison out;
  out.options = options;
  const auto in_a = runs_by_key(a), in_b = runs_by_key(b);
  for (const auto& run : a) {
    if (auto it = in_b.find(run.key); it != in_b.end())
      compare_pair(run, *it->second, options, out);
    else
      out.notes.push_back(fmt::format("{}: only in A ({})", run.key, run.file));
  }
  for (const auto& run : b)
    if (!in_a.contains(run.key)) out.notes.push_back(fmt::format("{}: only in B ({})", run.key, run.file));
  return out;
}

}  // namespace streamlab
