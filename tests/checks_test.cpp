// runner/check/checks: each check kind passes on right contents, and on wrong ones names the first
// wrong element with its index, actual and expected value.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "runner/load/load.hpp"
#include "tests/test_support.hpp"

using namespace streamlab;
using namespace streamlab::test;

namespace {

// The one check of `e`, run on the host backend.
CheckResult only_check(const Experiment& e) {
  RunRecord run = run_on_host(e);
  REQUIRE(run.checks.size() == 1);
  return run.checks[0];
}

}  // namespace

TEST_CASE(
    "checks: close, value, checksum and reference pass on right contents and name the first wrong "
    "element") {
  auto e = load_string(R"(name: c
buffers:
  x: {type: float32, count: 8, memory: device, init: sequence}
  y: {type: float32, count: 8, memory: device, init: {value: 1}}
  h: {type: float32, count: 8, memory: pinned, init: sequence}
  z: {type: float32, count: 8, memory: device, init: zeros}
  r: {type: float32, count: 8, memory: pinned}
  n: {type: int32, count: 4, memory: pinned, init: {value: 3}}
ops:
  - launch: {id: axpy, kernel: saxpy, grid: 1, block: 8, args: {x: x, y: y, a: 2}}
  - memcpy: {dst: z, src: h}
  - launch: {id: twice, kernel: scale, grid: 1, block: 8, args: {x: z, factor: 2}}
  - memcpy: {dst: r, src: z}
checks:
  - reference: {launch: axpy}
  - reference: {launch: twice, inputs: {x: h}, outputs: {x: r}}
  - close: {a: y, b: r, rtol: 0, atol: 1.5}
  - close: {a: y, b: r}
  - value: {buffer: {buffer: y, offset: 2, count: 1}, value: 5}
  - value: {buffer: n, value: 4}
  - checksum: {buffer: y, sum: 64}
  - checksum: {buffer: n, sum: 13}
  - equal: {a: {buffer: x, offset: 4}, b: {buffer: h, offset: 4}}
)",
                       "c.yaml");
  RunRecord run = run_on_host(e);
  REQUIRE(run.checks.size() == 9);
  std::vector<std::pair<std::string, std::string>> got;
  for (const auto& c : run.checks) got.emplace_back(c.title, c.passed ? "passed" : c.detail);
  // y = 2x + 1 = 1, 3, ..., 15 (sum 64); r = 2x = 0, 2, ..., 14; y - r = 1.
  CHECK(got ==
        std::vector<std::pair<std::string, std::string>>{
            {"reference(saxpy of 'axpy' -> y)", "passed"},
            {"reference(scale of 'twice' -> r)", "passed"},
            {"close(y, r)", "passed"},
            {"close(y, r)",
             "r[0] = 0, expected 1 (= y[0]) within rtol 1e-05, atol 1e-08; 8 of 8 elements differ"},
            {"value(y[2:3] == 5)", "passed"},
            {"value(n == 4)", "n[0] = 3, expected 4; 4 of 4 elements differ"},
            {"checksum(sum of y == 64)", "passed"},
            {"checksum(sum of n == 13)", "the sum is 12, expected 13"},
            {"equal(x[4:8], h[4:8])", "passed"},
        });
}

TEST_CASE("checks: a reference check catches a kernel whose output was overwritten") {
  auto e = load_string(R"(name: c
buffers:
  a: {type: float32, count: 4, memory: device, init: {value: 2}}
  b: {type: float32, count: 4, memory: device, init: {value: 3}}
  o: {type: float32, count: 4, memory: device}
ops:
  - launch: {id: add, kernel: vector_add, grid: 1, block: 4, args: {a: a, b: b, out: o}}
  - memset: {dst: {buffer: o, offset: 3}, value: 0}
checks:
  - reference: {launch: add}
)",
                       "c.yaml");
  RunRecord run = run_on_host(e);
  CHECK(run.checks[0].detail ==
        "o[3] = 0, expected 5 (host reference of vector_add); 1 of 4 elements differ");
}

// The transpose check walks in tiles (its reads then stay in cache); the mismatch it names is
// still the first in index order: t[0, 100] lies in a later tile than t[1, 0] but comes first.
TEST_CASE("checks: a transpose's first mismatch is the lowest index, whatever the walk") {
  auto e = load_string(R"(name: t
params: {N: 130}
buffers:
  a: {type: float32, shape: [N, N], memory: device, init: sequence}
  t: {type: float32, shape: [N, N], memory: device}
ops:
  - launch: {kernel: transpose_naive, grid: [5, 5], block: [32, 32], args: {in: a, out: t, n: N}}
  - memset: {dst: {buffer: t, offset: 130, count: 1}, value: 0}
  - memset: {dst: {buffer: t, offset: 100, count: 1}, value: 0}
checks:
  - transpose: {input: a, output: t}
)",
                       "t.yaml");
  CheckResult check = only_check(e);
  CHECK_FALSE(check.passed);
  CHECK(check.detail == "t[0, 100] = 0, expected 13000 (= a[100, 0]); 2 of 16900 elements differ");
}

TEST_CASE("checks: close holds for equal infinities, never for NaN") {
  auto overflowed = [](const char* then) {  // x is +inf after the first launch (3e38 x 10)
    return load_string(fmt::format(R"(name: inf
buffers:
  x: {{type: float32, count: 4, memory: device, init: {{value: 3e38}}}}
ops:
  - launch: {{kernel: scale, grid: 1, block: 4, args: {{x: x, factor: 10}}}}
{}checks:
  - close: {{a: x, b: x}}
)",
                                   then),
                       "inf.yaml");
  };
  CheckResult inf = only_check(overflowed(""));
  CHECK_MESSAGE(inf.passed, inf.detail);
  CheckResult nan = only_check(  // inf x 0 is NaN
      overflowed("  - launch: {kernel: scale, grid: 1, block: 4, args: {x: x, factor: 0}}\n"));
  CHECK_FALSE(nan.passed);
}
