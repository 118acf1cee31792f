// Scoring: points, partial credit, correctness gating timing, what cannot be evaluated, the
// physical floor; and the verdict the exit code and JSON tell.
#include <doctest/doctest.h>

#include <cmath>

#include "runner/check/expect.hpp"
#include "runner/check/figures.hpp"
#include "runner/check/score.hpp"
#include "runner/load/load.hpp"
#include "tests/test_support.hpp"

using namespace streamlab;
using namespace streamlab::test;

namespace {

// A 4 MiB copy in s1 (0.5 ms) and a 1 ms kernel in s2, with graded checks and expectations.
Experiment graded(const std::string& checks_and_expect) {
  return load_string(std::string(synthetic_experiment())
                             .substr(0, std::string(synthetic_experiment()).find("checks:")) +
                         checks_and_expect,
                     "graded.yaml");
}

RunRecord scored(const Experiment& e, RunRecord run, bool check_passes = true) {
  run.checks.assign(e.checks.size(), {"check", check_passes, check_passes ? "" : "h[0] = 1"});
  run.figures = run_figures(e, run);
  auto impossible = impossible_timings(e, run);
  run.impossible.insert(run.impossible.end(), impossible.begin(), impossible.end());
  run.expectations = evaluate_expectations(e, run);
  run.items = score_items(e, run);
  return run;
}

const char* kItems = R"y(checks:
  - equal: {id: copied, name: the copy arrives, points: 40, a: h, b: h}
expect:
  - {id: speedup, points: 30, measure: "gpu_span()", full_at: 1.0, zero_at: 1.4}
  - {id: fast, points: 20, visibility: hidden, that: "duration(up) < 1"}
  - {id: pinned, points: 10, visibility: after_due_date, no_diagnostics: [pageable-async]}
)y";

}  // namespace

TEST_CASE("score: a measure between full_at and zero_at earns its share, linearly") {
  Experiment e = graded(kItems);
  RunRecord run = scored(e, synthetic_run());  // gpu_span 1.2 ms: half way from 1.0 to 1.4
  REQUIRE(run.items.size() == 4);
  CHECK(run.items[0].title == "the copy arrives");
  CHECK(run.items[0].score == 40);
  CHECK(run.items[1].id == "speedup");
  CHECK(run.items[1].status == ScoredItem::Status::partial);
  CHECK(run.items[1].score == doctest::Approx(15));
  CHECK(run.items[1].output.find("50%") != std::string::npos);
  CHECK(run.items[2].score == 20);
  CHECK(run.items[2].visibility == Visibility::hidden);
  CHECK(run.items[3].score == 10);
  CHECK(total(run.items).score == doctest::Approx(85));
  CHECK(total(run.items).max_score == 100);
  CHECK(run.verdict() == Verdict::failed);  // held in part is not held
}

TEST_CASE("score: timing earns nothing unless every check passed; other items still count") {
  Experiment e = graded(kItems);
  RunRecord run = scored(e, synthetic_run(), false);
  CHECK(run.items[0].score == 0);
  CHECK(run.items[1].score == 0);
  CHECK(run.items[2].score == 0);
  CHECK(run.items[2].output.starts_with("no points: check 'the copy arrives' did not pass"));
  CHECK(run.items[3].score == 10);  // what check finds is not timing
}

TEST_CASE("score: on the host backend timing is not evaluated, scores 0 and says why") {
  Experiment e = graded(kItems);
  RunRecord host = run_on_host(e);
  REQUIRE(host.items.size() == 4);
  CHECK(host.items[0].score == 40);
  CHECK(host.items[1].status == ScoredItem::Status::not_evaluated);
  CHECK(host.items[1].score == 0);
  CHECK(host.items[1].output == "not evaluated: the host backend measures no GPU time");
  CHECK(host.verdict() == Verdict::incomplete);
}

TEST_CASE("score: a higher-is-better measure, and relative to a peer that did not run") {
  Experiment e = graded(R"y(expect:
  - {measure: "duration(k) / duration(up)", full_at: 2, zero_at: 1}
  - {measure: "gpu_span()", relative: reference, full_at: 1.2, zero_at: 2}
)y");
  RunRecord run = scored(e, synthetic_run());
  CHECK(run.items[0].score == 1);  // 1 / 0.5 = 2: full
  CHECK(run.items[1].status == ScoredItem::Status::not_evaluated);
  CHECK(run.items[1].output.find("relative to 'reference'") != std::string::npos);
}

TEST_CASE("score: titles repeat only with their line; checks in a loop get their ids") {
  Experiment e = graded(R"y(checks:
  - equal: {a: h, b: h}
  - equal: {a: h, b: h}
  - loop: {var: i, count: 2, checks: [{value: {id: "part[i]", buffer: {buffer: h, offset: i, count: 1}, value: 0}}]}
)y");
  RunRecord run = scored(e, synthetic_run());
  REQUIRE(run.items.size() == 4);
  CHECK(run.items[0].title != run.items[1].title);
  CHECK(run.items[0].title.ends_with("(line 12)"));
  CHECK(run.items[2].id == "part[0]");
  CHECK(run.items[3].id == "part[1]");
}

TEST_CASE("score: a time below the device's physical floor is impossible, and timing scores 0") {
  Experiment e = graded(kItems);
  RunRecord run = synthetic_run();
  run.peaks.memory_gbps = 4000;
  run.peaks.link_gbps = 4;  // the 4 MiB copy then needs 1.05 ms; it is timed at 0.5
  run.figures = run_figures(e, run);
  run.impossible = impossible_timings(e, run);
  REQUIRE(run.impossible.size() >= 1);
  CHECK(run.impossible[0].starts_with("op 'up' (line 8) took 0.5000 ms for 4 MiB"));
  run = scored(e, run);
  CHECK(run.items[1].score == 0);
  CHECK(run.items[1].output.starts_with("no points: op 'up'"));
  RunRecord real = synthetic_run();
  real.peaks.link_gbps = 63;  // PCIe 5.0 x16: 0.067 ms for 4 MiB
  real.peaks.memory_gbps = 4900;
  real.figures = run_figures(e, real);
  CHECK(impossible_timings(e, real).empty());
}

TEST_CASE("score: a measure that is no number, or bounds that do not order, is not evaluated") {
  Experiment e = graded(R"y(expect:
  - {measure: "duration(up) / (duration(up) - duration(up))", full_at: 1, zero_at: 2}
  - {measure: "gpu_span()", full_at: 1, zero_at: 1}
  - {measure: "gpu_span()", full_at: "1e300 * gpu_span() * 1e300", zero_at: 2}
  - {measure: "window(up, k)", full_at: 1, zero_at: 3}
)y");
  RunRecord run = scored(e, synthetic_run());
  REQUIRE(run.items.size() == 4);
  for (size_t i = 0; i < 3; ++i) {
    INFO(i, ": ", run.items[i].output);
    CHECK(run.items[i].status == ScoredItem::Status::not_evaluated);
    CHECK(run.items[i].score == 0);
  }
  CHECK(run.items[1].output.find("full_at and zero_at are both 1") != std::string::npos);
  CHECK(run.items[3].status == ScoredItem::Status::partial);  // 0.01 .. 1.21 ms: 1.2 of 1..3
  RunRecord untimed = synthetic_run();
  for (auto& rep : untimed.reps) rep.ops[0].start_ms = NAN;  // `up` not timed: no window
  untimed = scored(e, untimed);
  CHECK(untimed.items[3].status == ScoredItem::Status::not_evaluated);
}

TEST_CASE("score: what loses its points to the gate or the floor is failed, not passed") {
  Experiment e = graded(kItems);
  RunRecord run = scored(e, synthetic_run(), false);
  CHECK(run.items[2].status == ScoredItem::Status::failed);  // `fast` held, but the check failed
  RunRecord floor = synthetic_run();
  floor.impossible = {"op 'up' (line 8) took 0.5 ms for 4 MiB"};
  floor = scored(e, floor);
  CHECK(floor.items[2].status == ScoredItem::Status::failed);
  CHECK(floor.verdict() == Verdict::failed);
}
