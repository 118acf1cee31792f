#include <doctest/doctest.h>

#include <cmath>

#include "runner/check/expect.hpp"
#include "runner/check/figures.hpp"
#include "runner/execute/execute.hpp"
#include "runner/load/load.hpp"

using namespace streamlab;

namespace {

Experiment experiment(const std::string& expect) {
  return load_string(R"(name: e
params: {N: 64}
streams: {s1: {}, s2: {}}
ops:
  - launch: {id: a, kernel: spin, grid: 1, block: 32, stream: s1, args: {us: 100}}
  - launch: {id: b, kernel: spin, grid: 1, block: 32, stream: s2, args: {us: 100}}
expect:
)" + expect,
                     "e.yaml");
}

// Two repetitions: a runs 0..1 ms, b 0.5..2 ms (overlap 0.5 ms); host span 2.1 ms.
RunRecord measured(const std::string& backend = "cuda") {
  RunRecord run;
  run.backend = backend;
  run.timer = backend == "cuda" ? "cupti" : "none";
  for (int r = 0; r < 2; ++r) {
    RepetitionSample rep;
    rep.ops = {{0, 0.01, 0.0, 1.0}, {0.01, 0.02, 0.5, 2.0}};
    rep.host_span_ms = 2.1;
    rep.device_span_ms = 2.0;
    run.reps.push_back(rep);
  }
  return run;
}

ExpectationResult only(const Experiment& e, RunRecord run) {
  run.figures = run_figures(e, run);
  auto results = evaluate_expectations(e, run);
  REQUIRE(results.size() == 1);
  return results[0];
}

}  // namespace

TEST_CASE("expectations: a condition over medians passes or fails, with every operand's value") {
  auto pass =
      only(experiment("  - \"overlap(a, b) >= 0.5 * duration(a) and span() < 3\"\n"), measured());
  CHECK(pass.status == ExpectationResult::Status::passed);
  CHECK(pass.detail == "overlap(a, b) = 0.5 ms, duration(a) = 1 ms, span() = 2.1 ms");
  auto fail =
      only(experiment("  - \"gpu_span() <= 1.25 * max(duration(a), duration(b))\"\n"), measured());
  CHECK(fail.status == ExpectationResult::Status::failed);
  CHECK(fail.detail == "gpu_span() = 2 ms, duration(a) = 1 ms, duration(b) = 1.5 ms");
  CHECK(fail.loc.line == 8);
}

TEST_CASE("expectations: arithmetic, params, precedence, not and or") {
  CHECK(only(experiment("  - \"N / 2 + 1 == 33\"\n"), measured()).status ==
        ExpectationResult::Status::passed);
  CHECK(only(experiment("  - \"-2 * -3 == 6 and not (1 > 2)\"\n"), measured()).status ==
        ExpectationResult::Status::passed);
  CHECK(only(experiment("  - \"1 > 2 or abs(-1) == 1\"\n"), measured()).status ==
        ExpectationResult::Status::passed);
  CHECK(only(experiment("  - \"stream_busy(s2) == 1.5\"\n"), measured()).status ==
        ExpectationResult::Status::passed);
  CHECK(only(experiment("  - \"N > 100\"\n"), measured("host")).status ==
        ExpectationResult::Status::failed);
}

TEST_CASE(
    "expectations: about GPU time, never passed on the host backend or without a device timer") {
  auto host = only(experiment("  - \"span() < 100\"\n"), measured("host"));
  CHECK(host.status == ExpectationResult::Status::not_evaluated);
  CHECK(host.detail == "the host backend measures no GPU time");
  RunRecord untimed = measured();
  untimed.timer = "none";
  for (auto& rep : untimed.reps)
    for (auto& op : rep.ops) op.start_ms = op.end_ms = NAN;
  auto none = only(experiment("  - \"duration(a) < 100\"\n"), untimed);
  CHECK(none.status == ExpectationResult::Status::not_evaluated);
  CHECK(none.detail == "not measured with --timer none: duration(a) = not measured");
}

TEST_CASE("expectations: arithmetic that gives no finite number decides no verdict") {
  RunRecord zero = measured();
  for (auto& rep : zero.reps) rep.ops[1].end_ms = rep.ops[1].start_ms;  // b took 0 ms
  for (const char* text : {"  - \"duration(a) / duration(b) > 1\"\n",
                           "  - \"not (duration(b) / duration(b) < 1)\"\n",
                           "  - \"span() > 0 and duration(a) / duration(b) > 1\"\n",
                           "  - \"span() / 0 > 0\"\n"}) {
    auto r = only(experiment(text), zero);
    INFO(text);
    CHECK(r.status == ExpectationResult::Status::not_evaluated);
    CHECK(r.detail.ends_with("the arithmetic gives no finite number (a division by a measured 0?)"));
  }
  // A guard decides where it can: an unknown side does not matter when the other decides.
  CHECK(only(experiment("  - \"duration(b) == 0 or duration(a) / duration(b) < 2\"\n"), zero).status ==
        ExpectationResult::Status::passed);
  CHECK(only(experiment("  - \"duration(b) > 0 and duration(a) / duration(b) < 2\"\n"), zero).status ==
        ExpectationResult::Status::failed);
}

TEST_CASE("expectations: ready() of an op that is no query, and an expression known at load that "
          "gives no finite number, are refused with their column") {
  auto error_of = [](const std::string& expect) {
    try {
      experiment(expect);
    } catch (const InvalidExperiment& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  CHECK(error_of("  - \"ready(a) >= 0\"\n")
            .find("e.yaml:8:12: error: expect: ready: op 'a' is a launch; expected the id of a "
                  "streamQuery or eventQuery op") != std::string::npos);
  CHECK(error_of("  - \"1 / (N - 64) > 0\"\n")
            .find("e.yaml:8:6: error: expect: '1 / (N - 64) > 0' gives no finite number (a division "
                  "by zero?)") != std::string::npos);
  CHECK(error_of("  - \"1e308 * 10 > 0\"\n").find("'1e308 * 10 > 0' gives no finite number") !=
        std::string::npos);
  CHECK(error_of("  - \"1e999 > 0\"\n").find("'1e999' is inf, not a finite number") != std::string::npos);
  CHECK(error_of("  - \"N / 3 > 0\"\n") == "loaded");
  CHECK(error_of("  - \"N == 64 or 1 / (N - 64) > 0\"\n") == "loaded");  // guarded: it holds
  CHECK(error_of("  - \"span() / 0 > 0\"\n") == "loaded");  // a measure decides: said at run time
}

TEST_CASE("measures: the unit of a plotted measure follows from its functions' units") {
  Experiment e = experiment("  - duration(a) > 0\n");
  auto unit = [&](const char* text) {
    std::string error;
    auto m = parse_measure(e, text, &error);
    REQUIRE_MESSAGE(m, error);
    return measure_unit(*m);
  };
  CHECK(unit("duration(a)") == "ms");
  CHECK(unit("end(b) - start(a)") == "ms");
  CHECK(unit("2 * duration(a) + 0.5") == "ms");
  CHECK(unit("-max(duration(a), duration(b))") == "ms");
  CHECK(unit("duration(a) / duration(b)") == "");
  CHECK(unit("duration(a) / 2") == "ms");
  CHECK(unit("N") == "");
  CHECK_FALSE(unit("duration(a) * duration(b)").has_value());
  CHECK_FALSE(unit("2 / duration(a)").has_value());
  CHECK(unit("max(duration(a), N)") == "ms");
  CHECK_FALSE(unit("min(duration(a), bandwidth(b))").has_value());
}
