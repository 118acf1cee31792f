// memPrefetchAsync: how it is read, what the analyzer and a capture make of it, the host backend,
// and on the GPU, that the migration leaves the kernel's time.
#include <doctest/doctest.h>

#include <cmath>

#include "ops/op_kind.hpp"
#include "runner/analyze/analyze.hpp"
#include "runner/core/errors.hpp"
#include "runner/execute/backend.hpp"
#include "tests/test_support.hpp"

using namespace streamlab;
using namespace streamlab::test;

namespace {

// A managed buffer, a device one and two streams; `ops` is the op list's YAML.
std::string experiment(const std::string& ops) {
  return "name: p\nstreams: {s: {}, t: {}}\nbuffers:\n"
         "  m: {type: float32, count: 4096, memory: managed, init: {value: 1}}\n"
         "  d: {type: float32, count: 4096, memory: device}\n"
         "ops:\n" +
         ops + "  - deviceSynchronize: {}\n";
}

}  // namespace

TEST_CASE(
    "memPrefetchAsync: reads a range, a destination (device by default) and a stream (legacy by "
    "default)") {
  Experiment e = load_string(
      experiment("  - memPrefetchAsync: {buffer: m}\n"
                 "  - memPrefetchAsync: {buffer: {buffer: m, offset: 1024, count: 512}, "
                 "to: host, stream: t}\n"),
      "p.yaml");
  const Op& whole = e.ops[0];
  CHECK(whole.stream == kLegacyStream);
  CHECK(whole.device_work);
  CHECK(whole.kind->describe(e, whole) == "m -> device (16 KiB)");
  CHECK(whole.kind->bytes(e, whole) == 16384);
  const Op& part = e.ops[1];
  CHECK(e.streams[part.stream].name == "t");
  CHECK(part.kind->describe(e, part) == "m[1024:1536] -> host (2 KiB)");
  CHECK_FALSE(part.kind->blocks_host(e, part));
}

TEST_CASE("memPrefetchAsync: only managed memory, only device or host, never inside a graph") {
  CHECK(diagnostics_of(experiment("  - memPrefetchAsync: {buffer: d, stream: s}\n"), "p.yaml")
            .find("memPrefetchAsync moves the pages of managed memory; 'd' is device memory") !=
        std::string::npos);
  CHECK(diagnostics_of(experiment("  - memPrefetchAsync: {buffer: m, to: gpu}\n"), "p.yaml")
            .find("unknown prefetch destination 'gpu' (expected one of: device, host)") !=
        std::string::npos);
  CHECK(diagnostics_of(experiment("  - memPrefetchAsync: {buffer: m, where: host}\n"), "p.yaml")
            .find("'where'") != std::string::npos);
  std::string in_graph =
      diagnostics_of(experiment("  - graph:\n      stream: s\n      ops:\n"
                                "        - memPrefetchAsync: {buffer: m, stream: s}\n"),
                     "p.yaml");
  CHECK(in_graph.find(
            "cannot be captured into graph 'graph#1': streamlab does not capture prefetches") !=
        std::string::npos);
}

// A prefetch moves pages, not values: unordered with a kernel writing the same buffer, it is no
// race, where a second writer would be.
TEST_CASE("memPrefetchAsync: never races, and orders what follows it in its stream") {
  std::string kernel =
      "  - launch: {id: k, kernel: scale, grid: 4, block: 256, stream: t, args: {x: m, factor: "
      "2}}\n";
  Experiment quiet =
      load_string(experiment(kernel + "  - memPrefetchAsync: {buffer: m, stream: s}\n"), "p.yaml");
  Findings calm = analyze(quiet);
  for (const auto& f : calm.items()) CHECK(f.code != "race");
  Experiment racy = load_string(
      experiment(
          kernel +
          "  - launch: {kernel: scale, grid: 4, block: 256, stream: s, args: {x: m, factor: 3}}\n"),
      "p.yaml");
  bool race = false;
  Findings found = analyze(racy);
  for (const auto& f : found.items()) race |= f.code == "race";
  CHECK(race);
  CHECK(quiet.ops[1].kind->accesses(quiet, quiet.ops[1]).empty());
}

TEST_CASE("memPrefetchAsync: the host backend leaves the contents as they were") {
  Experiment e = load_string(
      experiment("  - memPrefetchAsync: {buffer: m, to: host, stream: s}\n"
                 "  - launch: {kernel: scale, grid: 4, block: 256, stream: s, args: {x: m, "
                 "factor: 2}}\n") +
          "checks:\n  - value: {buffer: m, value: 2}\n",
      "p.yaml");
  auto backend = make_host_backend(e);
  RunRecord run = run_experiment(e, *backend, {1, 0, {}});
  REQUIRE(run.checks.size() == 1);
  CHECK(run.checks[0].passed);
}

TEST_SUITE("gpu") {
  // The experiment's own expectations: the kernel on host-resident pages takes at least three
  // times the one after the prefetch, and the prefetches and that kernel together less than it.
  TEST_CASE("memPrefetchAsync: after a prefetch the kernel no longer pays for the migration") {
    std::string why;
    if (!have_gpu(&why)) {
      MESSAGE("skipped: no CUDA device (" << why << ")");
      return;
    }
    Experiment e = load_file((source_dir() / "experiments/managed/prefetch.yaml").string());
    auto gpu = make_cuda_backend(e, 0, {TimerChoice::events});
    RunRecord run = run_experiment(e, *gpu, {3, 1, {}});
    CHECK(run.checks_passed());
    for (const auto& x : run.expectations) {
      INFO(x.text, ": ", x.detail);
      CHECK(x.status == ExpectationResult::Status::passed);
    }
    for (const auto& rep : run.reps)
      for (size_t i = 0; i < e.ops.size(); ++i)
        if (e.ops[i].device_work) CHECK(rep.ops[i].end_ms > rep.ops[i].start_ms);
  }
}
