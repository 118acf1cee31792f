#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>

#include "runner/context/device_timer.hpp"
#include "runner/core/errors.hpp"
#include "runner/load/load.hpp"

using namespace streamlab;

TEST_CASE("CUPTI join: activities land on their op through the correlation of this repetition") {
  RepetitionSample rep;
  rep.ops.resize(3);
  const uint64_t t0 = 1'000'000'000;  // ns
  std::vector<Correlation> correlations = {
      {10, activity_key(2, 0)},  // op 0, this repetition
      {11, activity_key(2, 2)},  // op 2
      {12, activity_key(1, 1)},  // an earlier repetition: ignored
  };
  std::vector<DeviceActivity> activities = {
      {10, t0 + 500'000, t0 + 1'500'000},    // op 0: 0.5 .. 1.5 ms
      {11, t0 + 2'000'000, t0 + 2'250'000},  // op 2 in two pieces (a staged pageable copy)
      {11, t0 + 2'500'000, t0 + 3'000'000},
      {12, t0 + 100'000, t0 + 200'000},  // earlier repetition
      {99, t0, t0 + 10},                 // correlated with nothing (the start gate, say)
      {10, 0, 0},                        // dropped timestamps: ignored
  };
  assign_intervals(activities, correlations, 2, t0, rep);
  CHECK(rep.ops[0].start_ms == doctest::Approx(0.5));
  CHECK(rep.ops[0].end_ms == doctest::Approx(1.5));
  CHECK(std::isnan(rep.ops[1].start_ms));
  CHECK(rep.ops[2].start_ms == doctest::Approx(2.0));
  CHECK(rep.ops[2].end_ms == doctest::Approx(3.0));
  CHECK(rep.device_span_ms == doctest::Approx(2.5));
}

TEST_CASE("device span: NaN when no op has a device interval") {
  RepetitionSample rep;
  rep.ops.resize(2);
  set_device_span(rep);
  CHECK(std::isnan(rep.device_span_ms));
}

TEST_CASE(
    "CUPTI timer: a missing library is a run error that says where it looked and what to do") {
  setenv("STREAMLAB_CUPTI", "/nonexistent/libcupti.so.13", 1);
  Experiment e = load_string("name: x\nops: []\n", "x.yaml");
  CHECK_THROWS_WITH_AS(
      make_cupti_timer(e),
      "--timer cupti: CUPTI (libcupti.so.13) could not be loaded: tried "
      "/nonexistent/libcupti.so.13 "
      "(last: /nonexistent/libcupti.so.13: cannot open shared object file: No such file or "
      "directory); install it or set STREAMLAB_CUPTI to its path, or use --timer events",
      RunError);
  unsetenv("STREAMLAB_CUPTI");
}
