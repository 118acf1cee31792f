// runner/check/figures: what a run's samples become, on a record with round numbers.
#include <doctest/doctest.h>

#include <cmath>

#include "runner/check/figures.hpp"
#include "runner/load/load.hpp"
#include "tests/test_support.hpp"

using namespace streamlab;
using namespace streamlab::test;

TEST_CASE("figures: bandwidth, stream busy time, overlap and the bounds of the span") {
  Experiment e = load_string(synthetic_experiment(), "reports.yaml");
  RunFigures f = run_figures(e, synthetic_run());
  CHECK(f.ops[0].bytes == 4 << 20);
  CHECK(f.ops[0].gbps == doctest::Approx(8.388608));  // counted once, 1e9 bytes per GB
  CHECK(f.ops[1].bytes == 0);
  CHECK(std::isnan(f.ops[1].gbps));
  REQUIRE(f.streams.size() == 2);
  CHECK(f.streams[0].busy_ms == doctest::Approx(0.5));
  CHECK(f.streams[1].busy_ms == doctest::Approx(1.0));
  REQUIRE(f.overlaps.size() == 1);
  CHECK(f.overlaps[0].overlap_ms == doctest::Approx(0.3));
  REQUIRE(f.stream_overlaps.size() == 1);
  CHECK(f.stream_overlaps[0].overlap_ms == doctest::Approx(0.3));
  CHECK(f.bounds.sum_ms == doctest::Approx(1.5));
  CHECK(f.bounds.busiest_ms == doctest::Approx(1.0));
  CHECK(f.bounds.busiest == "stream s2");
  CHECK(f.bounds.span_ms == doctest::Approx(1.2));
  CHECK(f.bounds.efficiency == doctest::Approx(0.6));
  CHECK(f.bounds.concurrency == doctest::Approx(1.25));
}

TEST_CASE("figures: the spans and the typical repetition are computed once, with the rest") {
  Experiment e = load_string(synthetic_experiment(), "reports.yaml");
  RunRecord run = synthetic_run();
  run.reps.push_back(run.reps[0]);
  run.reps.back().host_span_ms = 9.0;  // the slowest of three: the median is the second
  RunFigures f = run_figures(e, run);
  CHECK(f.host_span.n == 3);
  CHECK(f.host_span.median == doctest::Approx(2.25));
  CHECK(f.host_span.max == doctest::Approx(9.0));
  CHECK(f.device_span.median == doctest::Approx(1.2));
  CHECK(f.typical_rep == 1);
  run.reps.clear();
  CHECK(run_figures(e, run).device_span.n == 0);
}
