// streamlab compare: the test it judges noise with, its verdicts, and reading results files back.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <doctest/doctest.h>

#include "runner/check/compare.hpp"
#include "runner/core/diagnostics.hpp"
#include "runner/load/results_file.hpp"
#include "test_support.hpp"

using namespace streamlab;
using streamlab::test::source_dir;

TEST_CASE("compare: the Mann-Whitney test's p-values, exact and approximate") {
  // Exact two-sided p-values, counted over every ordering by an independent enumeration.
  CHECK(mann_whitney_p({1, 2, 3}, {4, 5, 6}) == doctest::Approx(0.1));
  CHECK(mann_whitney_p({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}) == doctest::Approx(2.0 / 252));
  CHECK(mann_whitney_p({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5}) == doctest::Approx(2.0 / 252));  // symmetric
  CHECK(mann_whitney_p({1.1, 3.2, 5.0, 7.7}, {2.0, 4.4, 6.1, 8.8, 9.9}) == doctest::Approx(0.4126984127));
  CHECK(mann_whitney_p({1.0, 2.5, 3.1, 4.8, 5.2, 6.6}, {3.0, 5.5, 7.1, 8.2, 9.0, 9.5, 10.1}) ==
        doctest::Approx(0.0221445221));
  // 21 + 21 samples: the normal approximation, against the exact 0.07814 (U = 150).
  std::vector<double> a, b;
  for (int i = 0; i < 21; ++i) b.push_back(i);
  for (int i = 0; i < 7; ++i) a.push_back(20.5 + 0.1 * i);
  a.push_back(2.5);
  for (int i = 1; i <= 13; ++i) a.push_back(-i);
  CHECK(mann_whitney_p(a, b) == doctest::Approx(0.07814).epsilon(0.01));
  // Ties: all equal is no evidence of a difference; too few samples is no test.
  CHECK(mann_whitney_p({2, 2, 2}, {2, 2, 2}) == doctest::Approx(1));
  CHECK(std::isnan(mann_whitney_p({1}, {2, 3, 4})));
  CHECK(std::isnan(mann_whitney_p({1, NAN}, {2, 3})));  // NaN: a repetition that measured nothing
}

namespace {

RecordedRun run_of(std::string key, std::vector<double> span, std::string device = "H200") {
  RecordedRun r{.file = key + ".json", .key = key, .experiment = "e"};
  r.identity = {{"device", device}, {"date", key}};
  r.measures.push_back({"span", "host clock", std::move(span)});
  return r;
}

// The row of run `run`'s measure `measure` (its span, or an op id).
const MeasureComparison& row(const Comparison& c, const std::string& run,
                             const std::string& measure = "span") {
  for (const auto& r : c.rows)
    if (r.run == run && r.measure == measure) return r;
  FAIL("no row for " << run << " " << measure);
  return c.rows.front();
}

}  // namespace

TEST_CASE("compare: a difference counts when the test finds it and it passes the threshold") {
  std::vector<double> base = {10.0, 10.1, 9.9, 10.05, 9.95, 10.02, 9.98, 10.03};
  auto scaled = [&](double f) {
    std::vector<double> v;
    for (double x : base) v.push_back(x * f);
    return v;
  };
  std::vector<RecordedRun> a = {run_of("slow", base), run_of("fast", base), run_of("small", base),
                                run_of("same", base), run_of("one", {10}), run_of("gone", base)};
  std::vector<RecordedRun> b = {run_of("slow", scaled(1.2)), run_of("fast", scaled(0.8)),
                                run_of("small", scaled(1.02)), run_of("same", base),
                                run_of("one", {20}), run_of("new", base, "A100")};
  Comparison c = compare_runs(a, b, {.threshold = 0.05, .alpha = 0.01});
  CHECK(row(c, "slow").change == Change::slower);
  CHECK(row(c, "slow").ratio == doctest::Approx(1.2));
  CHECK(row(c, "fast").change == Change::faster);
  CHECK(row(c, "small").change == Change::within_threshold);
  CHECK(row(c, "same").change == Change::no_difference);
  CHECK(row(c, "one").change == Change::untested);  // twice as slow, but one sample is no evidence
  CHECK(c.regressed());
  CHECK(c.count(Change::slower) == 1);
  auto noted = [&](const std::string& text) {
    return std::any_of(c.notes.begin(), c.notes.end(), [&](const std::string& n) { return n == text; });
  };
  CHECK(noted("gone: only in A (gone.json)"));
  CHECK(noted("new: only in B (new.json)"));
  CHECK(std::none_of(c.notes.begin(), c.notes.end(), [](const std::string& n) { return n.find("date") != std::string::npos; }));
  // A wider threshold forgives the 20%.
  CHECK_FALSE(compare_runs(a, b, {.threshold = 0.25, .alpha = 0.01}).regressed());

  std::vector<RecordedRun> other = {run_of("slow", base, "A100")};
  Comparison across = compare_runs({run_of("slow", base)}, other, {});
  REQUIRE(across.notes.size() == 1);
  CHECK(across.notes[0] == "slow: device differs: A H200, B A100");
}

namespace {

std::string write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
  return path.string();
}

std::string error_of(const std::string& path) {
  std::vector<std::string> skipped;
  try {
    read_recorded_runs(path, skipped);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("compare: results files read back, every run with its samples") {
  std::string root = source_dir().string();
  std::vector<std::string> skipped;
  auto runs = read_recorded_runs(root + "/tests/golden/h200/graph_fork_join.json", skipped);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].experiment == "graph-fork-join");
  REQUIRE(runs[0].measures.size() >= 3);
  CHECK(runs[0].measures[0].name == "span");
  CHECK(runs[0].measures[0].samples_ms.size() == 10);
  CHECK(runs[0].measures[1].name == "device span");
  CHECK(runs[0].measures[2].what == "device");

  auto folder = read_recorded_runs(root + "/tests/golden/h200", skipped);
  CHECK(folder.size() >= 8);
  CHECK(std::any_of(folder.begin(), folder.end(), [](const RecordedRun& r) { return r.key == "graph_fork_join.json"; }));
}

TEST_CASE("compare: a results file that is not one is an error naming the file and where") {
  auto dir = std::filesystem::temp_directory_path() / "streamlab_compare_test";
  std::filesystem::remove_all(dir);
  CHECK(error_of((dir / "missing.json").string()) ==
        (dir / "missing.json").string() + ": error: cannot read the file (does it exist?)");
  std::string bad = write(dir / "bad.json", "{\n  \"tool\": [1,\n}");
  CHECK(error_of(bad).rfind(bad + ":3:1: error: not JSON: ", 0) == 0);
  std::string other = write(dir / "other.json", "{\"traceEvents\": []}");
  CHECK(error_of(other).find("not a results file of `streamlab run --json`") != std::string::npos);
  std::string typed = write(dir / "typed.json",
                            R"({"schema_version": 1, "tool": {"name": "streamlab"}, "experiment": {"name": "e"},
                                "spans": {"samples": {"host_ms": [1, "x"]}}, "ops": []})");
  CHECK(error_of(typed) == typed + ": error: .spans.samples.host_ms: expected an array of numbers (or null)");
  std::string version = write(dir / "v2.json", R"({"schema_version": 2, "tool": {"name": "streamlab"}, "ops": []})");
  CHECK(error_of(version) == version + ": error: schema_version: this streamlab reads version 1, the file is 2");
  std::string ops = write(dir / "ops.json", R"({"schema_version": 1, "tool": {"name": "streamlab"}, "experiment": {"name": "e"},
                                "spans": {"samples": {"host_ms": [1]}}, "ops": [{"id": "x"}]})");
  CHECK(error_of(ops) == ops + ": error: ops[0]: expected a member 'samples'");
  std::string huge = write(dir / "huge.json", R"({"schema_version": 1e99999})");
  CHECK(error_of(huge) == huge + ": error: not JSON streamlab reads: number overflow parsing '1e99999'");

  // A folder: results files by their path in it; other JSON left out and said.
  std::filesystem::remove_all(dir);
  write(dir / "sub/r.json", R"({"schema_version": 1, "tool": {"name": "streamlab"}, "experiment": {"name": "e"},
                                "spans": {"samples": {"host_ms": [1, 2]}}, "ops": []})");
  write(dir / "trace.json", "{\"traceEvents\": []}");
  std::vector<std::string> skipped;
  auto runs = read_recorded_runs(dir.string(), skipped);
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].key == "sub/r.json");
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0] == (dir / "trace.json").string());
  std::filesystem::remove_all(dir);
}

// Two runs recorded on the H200 one after the other (bench pipeline, 120 ops, 20 repetitions
// each): with CUPTI, then with the events timer. The span is the same work timed by the host
// clock, so the timer must not move it; an events-timed copy lasts from the end of the op before
// it in its stream, so it also holds the time the copy waited for an engine that other streams'
// copies kept busy, and reads 2-3 times CUPTI's execution time.
TEST_CASE("compare: recorded H200 pipeline runs, CUPTI against events") {
  std::string dir = source_dir().string() + "/tests/golden/h200/";
  std::vector<std::string> skipped;
  auto a = read_recorded_runs(dir + "pipeline_four_streams_cupti.json", skipped);
  auto b = read_recorded_runs(dir + "pipeline_four_streams_events.json", skipped);
  Comparison c = compare_runs(a, b, {});
  CHECK(row(c, "pipeline-four-streams", "span").change == Change::no_difference);
  CHECK(row(c, "pipeline-four-streams", "span").ratio == doctest::Approx(1.0).epsilon(0.02));
  CHECK(row(c, "pipeline-four-streams", "in[0]").change == Change::slower);
  CHECK(row(c, "pipeline-four-streams", "in[0]").ratio > 2);
  CHECK(row(c, "pipeline-four-streams", "k[0]").change == Change::slower);
  CHECK(c.regressed());
  CHECK(std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n) {
    return n == "pipeline-four-streams: timer differs: A cupti, B events";
  }));
}
