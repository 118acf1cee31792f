#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "runner/execute/backend.hpp"
#include "runner/check/figures.hpp"
#include "runner/report/console.hpp"
#include "runner/report/files.hpp"
#include "tests/test_support.hpp"

using namespace streamlab;
using namespace streamlab::test;

namespace {

const char* kExperiment = R"(name: reports
params: {N: 1024}
streams: {s1: {}, s2: {}}
buffers:
  h: {type: int32, shape: [N, N], memory: pinned, init: sequence}
  d: {type: int32, shape: [N, N], memory: device}
ops:
  - memcpyAsync: {id: up, dst: d, src: h, stream: s1}
  - launch: {id: k, kernel: spin, grid: 1, block: 32, stream: s2, args: {us: 1000}}
  - streamSynchronize: {stream: s1}
checks:
  - equal: {a: h, b: h}
)";

// A device-timed run with round numbers, as the cuda backend would record it: the 4 MiB copy
// runs 0.5 ms (8.39 GB/s), the kernel 1 ms beside it, overlapping the copy for 0.3 ms.
RunRecord synthetic_run() {
  RunRecord run;
  run.backend = "cuda";
  run.device = "Test GPU (sm_90, 1 SMs, 1 copy engines, device 0)";
  run.timer = "events";
  run.timer_description = "CUDA events around each device op, in its own stream";
  run.notes = {"a note"};
  run.warmup = 1;
  for (int r = 0; r < 2; ++r) {
    RepetitionSample rep;
    rep.number = uint64_t(r) + 2;
    rep.ops.push_back({0.001, 0.004, 0.010 + r, 0.510 + r});
    rep.ops.push_back({0.004, 0.007, 0.210 + r, 1.210 + r});
    rep.ops.push_back({0.007, 1.300 + r, NAN, NAN});
    rep.gate_open_ms = 0.006;
    rep.host_span_ms = 1.250 + r;
    rep.device_span_ms = 1.200;
    run.reps.push_back(rep);
  }
  run.checks.push_back({"equal(h, h)", true, ""});
  run.figures = run_figures(load_string(kExperiment, "reports.yaml"), run);
  return run;
}

// Compares with tests/golden/NAME; STREAMLAB_UPDATE_GOLDEN=1 rewrites it (then review the diff).
void check_golden(const std::string& name, const std::string& actual) {
  auto path = source_dir() / "tests/golden" / name;
  if (std::getenv("STREAMLAB_UPDATE_GOLDEN")) std::ofstream(path) << actual;
  INFO(name);
  CHECK(actual == read_text(path));
}

}  // namespace

TEST_CASE("reports: JSON, CSV, trace and console of a device-timed run match their golden files") {
  Experiment e = load_string(kExperiment, "reports.yaml");
  RunRecord run = synthetic_run();
  check_golden("reports.json", format_json(e, run));
  check_golden("reports.csv", format_csv(e, run));
  check_golden("reports.trace.json", format_trace(e, run));
  check_golden("reports.console.txt", format_console_report(e, run));
  check_golden("reports.html", format_html(e, run));
}

TEST_CASE("figures: bandwidth, stream busy time, overlap and the bounds of the span") {
  Experiment e = load_string(kExperiment, "reports.yaml");
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
