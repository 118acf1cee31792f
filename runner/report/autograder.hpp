#pragma once
// What autograders read, from one list of graded items (ScoredItem): Gradescope's results.json,
// JUnit XML and TAP. Formatting only: the items and their scores are computed before
// (runner/check/score.hpp). An item that was not evaluated scores 0 and says why; JUnit and TAP
// mark it skipped, Gradescope failed.
#include <string>
#include <vector>

#include "runner/core/record.hpp"

namespace streamlab {

struct GradeReport {
  std::string title;  // the experiment's (or the rubric's) name
  std::string file;   // the experiment run (the submission)
  std::vector<ScoredItem> items;
  double execution_s = 0;  // the whole command, wall clock
  std::string output;      // what the run said, for the autograder's page (plain text)
  double span_ms = NAN;    // the median span, for a leaderboard; NaN: not measured
  // `streamlab grade` only:
  std::string rubric;                                 // the rubric file
  std::vector<std::pair<std::string, double>> spans;  // median span of each run: "submission",
                                                      // then the peers by name (NaN: none)
  std::string results_json;  // the submission's `--json` report, when it ran ("" otherwise)
};

// `streamlab grade`'s console report: what ran, each item's points and why, the total.
std::string format_grade_console(const GradeReport& r);
// `streamlab grade --json`: the same as one document (schemas/grade.schema.json), with the
// submission's results report inside.
std::string format_grade_json(const GradeReport& r);

// The report of a `run`: the record's items, its verdict and notes as output.
GradeReport grade_report(const Experiment& exp, const RunRecord& run, double execution_s);

// Gradescope's results.json (schemas/gradescope.schema.json): score, execution_time, output,
// tests[] with name, number, score, max_score, status, output and visibility.
std::string format_gradescope(const GradeReport& r);
// JUnit XML: one testsuite, a testcase per item (failure, skipped), the score as properties.
std::string format_junit(const GradeReport& r);
// TAP version 14 on its own: the plan, "ok N - name" per item, a YAML block with its score.
std::string format_tap(const GradeReport& r);

}  // namespace streamlab
