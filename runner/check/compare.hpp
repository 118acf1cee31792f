#pragma once
// Comparing two sets of recorded runs (`streamlab compare`): per run, its span and each op's time,
// the two medians, their ratio and a verdict that accounts for noise. A difference counts only when
// a test on the repetitions' samples says it is not noise and it exceeds the threshold, so a CI job
// fails on a real regression and not on a noisy machine.
#include <string>
#include <vector>

#include "runner/core/provenance.hpp"
#include "runner/core/stats.hpp"

namespace streamlab {

// A time recorded for every timed repetition of a run.
struct RecordedMeasure {
  std::string name;                 // "span", "device span", an op's id
  std::string what;                 // how it was timed: "host clock", "device", "host call"
  std::vector<double> samples_ms;   // one per timed repetition; NaN where not measured
};

// One run read back from a results file (a sweep's file holds one per point).
struct RecordedRun {
  std::string file;        // the file it was read from
  std::string key;         // what it is matched by: its path in a folder, and a sweep point's params
  std::string experiment = {};  // the experiment's name
  Facts identity = {};          // what should be equal for the comparison to be like for like
  std::vector<RecordedMeasure> measures = {};
};

struct CompareOptions {
  double threshold = 0.05;  // a relative change of the medians smaller than this is no change
  double alpha = 0.01;      // the test's significance level
};

enum class Change {
  slower,            // significant, and B's median more than the threshold above A's
  faster,            // significant, and more than the threshold below
  within_threshold,  // significant, but smaller than the threshold
  no_difference,     // the test cannot tell the samples apart
  untested,          // fewer than two samples on a side: the ratio alone, no verdict
};
const char* change_name(Change c);

struct MeasureComparison {
  std::string run, measure, what;
  Summary a = {}, b = {};
  double ratio = 0;  // b.median / a.median (NaN when a's is 0)
  double p = 0;      // the Mann-Whitney test's p-value (NaN: untested)
  Change change = Change::untested;
};

struct Comparison {
  CompareOptions options;
  std::string a_label, b_label;          // the arguments, as given
  std::vector<MeasureComparison> rows;   // matched measures, in A's order
  std::vector<std::string> notes;        // runs or measures on one side only, unlike facts
  int count(Change c) const;
  bool regressed() const { return count(Change::slower) > 0; }
};

Comparison compare_runs(const std::vector<RecordedRun>& a, const std::vector<RecordedRun>& b,
                        const CompareOptions& options);

}  // namespace streamlab
