#include <doctest/doctest.h>

#include <cstring>

#include "ops/op_kind.hpp"
#include "runner/context/buffer_init.hpp"
#include "runner/execute/backend.hpp"
#include "runner/execute/execute.hpp"
#include "runner/execute/memory_budget.hpp"
#include "runner/load/load.hpp"
#include "tests/test_support.hpp"

using namespace streamlab;
using namespace streamlab::test;

namespace {

std::string transpose_experiment(const std::string& kernel, const std::string& grid,
                                 const std::string& block, int64_t n) {
  return "name: t\nparams: {N: " + std::to_string(n) +
         "}\nbuffers:\n"
         "  h: {type: int32, shape: [N, N], memory: pinned, init: {random: {seed: 3}}}\n"
         "  d: {type: int32, shape: [N, N], memory: device}\n"
         "  o: {type: int32, shape: [N, N], memory: device}\n"
         "  r: {type: int32, shape: [N, N], memory: pinned}\n"
         "ops:\n"
         "  - memcpy: {dst: d, src: h}\n"
         "  - launch: {id: k, kernel: " +
         kernel + ", grid: " + grid + ", block: " + block +
         ", args: {in: d, out: o, n: N}}\n"
         "  - memcpy: {dst: r, src: o}\n"
         "checks:\n  - transpose: {input: h, output: r}\n";
}

}  // namespace

TEST_CASE("host backend: every shipped experiment runs and validates") {
  size_t checks = 0;  // spin-only experiments have none; the others must all pass
  for (const auto& path : yaml_files("experiments")) {
    INFO(path.string());
    bool has_n = false;  // C6 and C9 run at N=8192 and 16384 on the GPU; small here
    for (const auto& p : load_file(path.string()).params) has_n = has_n || p.first == "N";
    LoadOptions small;
    if (has_n) small.overrides = {{"N", "256"}};
    Experiment e = load_file(path.string(), small);
    RunRecord run = run_on_host(e);
    CHECK(run.backend == "host");
    CHECK_FALSE(run.device_timing());
    REQUIRE(run.reps.size() == 1);
    checks += run.checks.size();
    for (const auto& c : run.checks) {
      INFO(c.title, ": ", c.detail);
      CHECK((c.passed || !c.evaluated));
    }
  }
  CHECK(checks > 0);
}

TEST_CASE("host backend: both transposes validate, also when N is not a multiple of their tile") {
  for (int64_t n : {1, 31, 33, 100, 129, 256}) {
    INFO("N = ", n);
    auto naive = load_string(
        transpose_experiment("transpose_naive", "[\"(N+31)/32\", \"(N+31)/32\"]", "[32, 32]", n),
        "t.yaml");
    CHECK(run_on_host(naive).checks_passed());
    auto tiled = load_string(
        transpose_experiment("transpose_tiled", "[\"(N+127)/128\", \"(N+127)/128\"]", "[32, 8]", n),
        "t.yaml");
    CHECK(run_on_host(tiled).checks_passed());
  }
}

TEST_CASE("host backend: elements a short grid misses stay poisoned and fail the check") {
  // N = 100 with grid [3, 3] of 32x32 threads covers rows and columns 0..95 only.
  auto e =
      load_string(transpose_experiment("transpose_naive", "[3, 3]", "[32, 32]", 100), "t.yaml");
  RunRecord run = run_on_host(e);
  REQUIRE(run.checks.size() == 1);
  CHECK_FALSE(run.checks[0].passed);
  CHECK(run.checks[0].title == "transpose(h -> r)");
  // Row 0 misses columns 96..99; rows 96..99 miss everything: 96*4 + 4*100 elements.
  CHECK(run.checks[0].detail.starts_with(
      "r[0, 96] = -842150451 (bytes 0xCD: never written, the poison pattern), expected "));
  CHECK(run.checks[0].detail.ends_with(" (= h[96, 0]); 784 of 10000 elements differ"));
}

TEST_CASE("host backend: memset, sequence and value init, equal check with the first mismatch") {
  auto e = load_string(R"(name: m
buffers:
  seq: {type: int64, count: 6, memory: pinned, init: {sequence: {start: 10, step: -3}}}
  val: {type: float32, count: 6, memory: device, init: {value: 2.5}}
  d:   {type: uint8, count: 8, memory: device}
  h:   {type: uint8, count: 8, memory: pageable, init: {value: 7}}
  h2:  {type: uint8, count: 8, memory: pageable, init: zeros}
ops:
  - memset: {dst: d, value: 7}
  - memcpy: {dst: h2, src: d}
checks:
  - equal: {a: h, b: h2}
  - equal: {a: seq, b: seq}
)",
                       "m.yaml");
  auto backend = make_host_backend(e);
  RunRecord run = run_experiment(e, *backend, {1, 0, {}});
  CHECK(run.checks_passed());
  auto seq = backend->contents(0);
  int64_t last;
  std::memcpy(&last, seq.data() + 5 * 8, 8);
  CHECK(last == -5);
  float v;
  std::memcpy(&v, backend->contents(1).data() + 4, 4);
  CHECK(v == 2.5f);
}

TEST_CASE("host backend: an equal check reports index, actual and expected") {
  auto e = load_string(R"(name: m
buffers:
  a: {type: int32, shape: [2, 3], memory: pinned, init: sequence}
  b: {type: int32, shape: [2, 3], memory: pinned, init: {sequence: {start: 0, step: 2}}}
ops: []
checks:
  - equal: {a: a, b: b}
)",
                       "m.yaml");
  RunRecord run = run_on_host(e);
  CHECK(run.checks[0].detail == "b[0, 1] = 2, expected 1 (= a[0, 1]); 5 of 6 elements differ");
}

TEST_CASE("buffer init: random init is deterministic per seed and differs between seeds") {
  Buffer b;
  b.type = ElemType::int32;
  b.count = 1000;
  b.bytes = 4000;
  b.init = {InitSpec::Kind::random, 0, 1, 1};
  std::vector<std::byte> x(4000), y(4000), z(4000);
  fill_initial(b, x.data());
  fill_initial(b, y.data());
  b.init.seed = 2;
  fill_initial(b, z.data());
  CHECK(x == y);
  CHECK(x != z);
  int32_t first;
  std::memcpy(&first, x.data(), 4);
  CHECK(first >= 0);  // random int32 values are non-negative, never the poison pattern
}

TEST_CASE(
    "host backend: buffers too large for host memory are refused before anything is allocated") {
  auto e = load_string(
      "name: huge\nbuffers:\n  huge: {type: int64, count: 1152921504606846975, memory: device}\n"
      "  more: {type: int64, count: 1152921504606846975, memory: pinned}\nops: []\n",
      "m.yaml");
  CHECK(memory_need(e, false).host == INT64_MAX);  // the sum saturates
  CHECK(memory_need(e, true).device == 9223372036854775800);
  auto backend = make_host_backend(e);
  std::string message;
  try {
    run_experiment(e, *backend, {1, 0, {}});
  } catch (const RunError& error) {
    message = error.what();
  }
  CHECK(message.starts_with(
      "the experiment's buffers need more than 8 EiB of host memory (the host backend keeps "
      "every buffer in host memory); this process may allocate "));
  CHECK(message.ends_with("nothing was allocated"));
}

TEST_CASE("host backend: copies, memsets and kernels on element ranges touch those elements only") {
  Experiment e = load_string(R"(name: ranges
buffers:
  h: {type: int32, count: 16, memory: pinned, init: sequence}
  d: {type: int32, count: 16, memory: device, init: {value: -1}}
  r: {type: int32, count: 16, memory: pinned, init: zeros}
ops:
  - memcpy: {dst: {buffer: d, offset: 8}, src: {buffer: h, count: 8}}
  - memcpy: {dst: {buffer: d, count: 4}, src: {buffer: h, offset: 12}}
  - memset: {dst: {buffer: d, offset: 4, count: 2}, value: 0}
  - memcpy: {dst: r, src: d}
)",
                             "ranges.yaml");
  auto backend = make_host_backend(e);
  run_experiment(e, *backend, {1, 0, {}});
  auto bytes = backend->contents(2);
  std::vector<int32_t> r(16);
  std::memcpy(r.data(), bytes.data(), bytes.size());
  CHECK(r == std::vector<int32_t>{12, 13, 14, 15, 0, 0, -1, -1, 0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(e.ops[0].kind->describe(e, e.ops[0]) == "h[0:8] -> d[8:16] (H2D, 32 B)");
}

TEST_CASE("host backend: the vector kernels and reduce_sum compute what their signatures say") {
  Experiment e = load_string(R"(name: vectors
buffers:
  x: {type: float32, count: 8, memory: device, init: sequence}
  y: {type: float32, count: 8, memory: device, init: {value: 1}}
  out: {type: float32, count: 8, memory: device, init: zeros}
  partial: {type: float32, count: 2, memory: device}
  total: {type: float32, count: 1, memory: device}
ops:
  - launch: {kernel: vector_add, grid: 1, block: 4, args: {a: x, b: y, out: out}}
  - launch: {kernel: saxpy, grid: 2, block: 2, args: {x: x, y: y, a: 2}}
  - launch: {kernel: scale, grid: 1, block: 1, args: {x: {buffer: out, offset: 6}, factor: 0.5}}
  - launch: {kernel: reduce_sum, grid: 2, block: 2, args: {in: x, out: partial}}
  - launch: {kernel: reduce_sum, grid: 1, block: 2, args: {in: partial, out: total}}
  - launch: {kernel: fill, grid: 1, block: 32, args: {out: {buffer: x, count: 2}, value: -1.25}}
  - launch: {kernel: empty, grid: 1, block: 1}
)",
                             "vectors.yaml");
  auto backend = make_host_backend(e);
  run_experiment(e, *backend, {1, 0, {}});
  auto floats = [&](int b) {
    auto bytes = backend->contents(b);
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return v;
  };
  CHECK(floats(2) == std::vector<float>{1, 2, 3, 4, 5, 6, 3.5f, 4});  // x + 1, the last two halved
  CHECK(floats(1) == std::vector<float>{1, 3, 5, 7, 9, 11, 13, 15});  // 2x + 1
  // 4 threads in all: block 0's threads visit 0, 4 and 1, 5; block 1's 2, 6 and 3, 7.
  CHECK(floats(3) == std::vector<float>{10, 18});
  CHECK(floats(4) == std::vector<float>{28});
  CHECK(floats(0) == std::vector<float>{-1.25f, -1.25f, 2, 3, 4, 5, 6, 7});
}

TEST_CASE("host backend: host functions run in order, queries answer done, event flags load") {
  auto e = load_string(R"(name: q
streams: {s: {}}
events:
  e: {flags: [blocking-sync, disable-timing]}
  f: {flags: disable-timing}
ops:
  - launchHostFunc: {id: nap, fn: sleep, us: 2000, stream: s}
  - launchHostFunc: {id: now, fn: mark, stream: s}
  - eventRecord: {event: e, stream: s}
  - streamQuery: {id: sq, stream: s}
  - eventQuery: {id: eq, event: e}
expect:
  - "ready(sq) == 1 and ready(eq) == 1"
)",
                       "q.yaml");
  CHECK(e.events[0].blocking_sync);
  CHECK(e.events[0].disable_timing);
  CHECK_FALSE(e.events[1].blocking_sync);
  CHECK(e.ops[0].kind->describe(e, e.ops[0]) == "sleep(2000 us)");
  RunRecord run = run_on_host(e);
  CHECK(run.reps[0].ops[0].host_ms() >= 2.0);  // the host backend runs the function in the call
  CHECK(run.reps[0].ops[3].answer == 1);
  CHECK(run.reps[0].ops[4].answer == 1);
  CHECK(run.reps[0].ops[0].answer == -1);
  REQUIRE(run.expectations.size() == 1);
  CHECK(run.expectations[0].status == ExpectationResult::Status::passed);
}

TEST_CASE("host backend: the read host function reads a host buffer; device memory is refused") {
  auto e = load_string(R"(name: r
streams: {s: {}}
buffers:
  h: {type: float32, count: 1024, memory: pinned, init: {value: 2}}
ops:
  - launchHostFunc: {id: consume, fn: read, buffer: {buffer: h, offset: 256, count: 512}, stream: s}
)",
                       "r.yaml");
  CHECK(e.ops[0].kind->describe(e, e.ops[0]) == "read(h[256:768])");
  auto accesses = e.ops[0].kind->accesses(e, e.ops[0]);
  REQUIRE(accesses.size() == 1);
  CHECK(accesses[0].host);
  CHECK_FALSE(accesses[0].write);
  RunRecord run = run_on_host(e);
  CHECK(run.reps[0].ops[0].host_ms() >= 0);
  CHECK(diagnostics_of("name: r\nbuffers:\n  d: {type: float32, count: 4, memory: device}\nops:\n"
                       "  - launchHostFunc: {fn: read, buffer: d}\n")
            .find("host function read needs memory the host can read (pinned, pageable, managed or "
                  "mapped); 'd' is "
                  "device memory") != std::string::npos);
  CHECK(
      diagnostics_of("name: r\nops:\n  - launchHostFunc: {fn: read}\n").find("missing 'buffer'") !=
      std::string::npos);
}

TEST_CASE("host backend: managed and mapped buffers take kernels, memsets and copies") {
  auto e = load_string(R"(name: m
buffers:
  m: {type: float32, count: 8, memory: managed, init: sequence}
  z: {type: float32, count: 8, memory: mapped, init: {value: 1}}
  h: {type: float32, count: 8, memory: pageable}
ops:
  - launch: {id: add, kernel: vector_add, grid: 1, block: 8, args: {a: m, b: z, out: z}}
  - memcpy: {dst: h, src: z}
checks:
  - reference: {launch: add}
  - equal: {a: z, b: h}
)",
                       "m.yaml");
  CHECK(e.ops[1].kind->describe(e, e.ops[1]) == "z -> h (H2H, 32 B)");
  CHECK(run_on_host(e).checks_passed());
}

TEST_CASE(
    "host backend: buffers allocated and freed by ops, the last allocation left for the checks") {
  auto e = load_string(R"(name: lifetimes
streams: {s: {}}
buffers:
  h: {type: float32, count: 64, memory: pinned, init: sequence}
  tmp: {type: float32, count: 64, memory: device}
  out: {type: float32, count: 64, memory: device}
  stage: {type: float32, count: 64, memory: pinned}
ops:
  - mallocAsync: {buffer: tmp, stream: s}
  - memcpyAsync: {dst: tmp, src: h, stream: s}
  - mallocAsync: {buffer: out, stream: s}
  - launch: {id: twice, kernel: scale, grid: 1, block: 64, stream: s, args: {x: tmp, factor: 2}}
  - memcpyAsync: {dst: out, src: tmp, stream: s}
  - freeAsync: {buffer: tmp, stream: s}
  - mallocHost: {buffer: stage}
  - memcpyAsync: {dst: stage, src: out, stream: s}
  - streamSynchronize: {stream: s}
checks:
  - reference: {launch: twice, inputs: {x: h}, outputs: {x: stage}}
  - equal: {a: out, b: stage}
)",
                       "lifetimes.yaml");
  CHECK(e.buffers[1].alloc_op == 0);
  CHECK(e.buffers[1].free_op == 5);
  CHECK(e.buffers[3].free_op == -1);
  auto backend = make_host_backend(e);
  RunRecord run = run_experiment(e, *backend, {3, 0, {}});
  CHECK(run.checks_passed());
}
