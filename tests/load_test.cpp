#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>

#include "ops/kernels/kernel.hpp"
#include "runner/core/diagnostics.hpp"
#include "runner/load/load.hpp"
#include "tests/test_support.hpp"

using namespace streamlab;
using namespace streamlab::test;

namespace {

const char* kGood = R"(name: good
params: {N: 64, T: N/32}
repeat: 5
warmup: 1
streams:
  s1: {}
  s2: {flags: non-blocking}
events: {done: {}}
buffers:
  h: {type: int32, shape: [N, N], memory: pinned, init: {random: {seed: 7}}}
  d: {type: int32, shape: [N, N], memory: device}
  o: {type: int32, shape: [N, N], memory: device}
  p: {type: int32, shape: [N, N], memory: pageable}
  bytes: {type: uint8, count: 100, memory: device, init: zeros}
ops:
  - memcpyAsync: {id: up, dst: d, src: h, stream: s1}
  - eventRecord: {event: done, stream: s1}
  - streamWaitEvent: {stream: s2, event: done}
  - launch: {id: k, kernel: transpose_tiled, grid: [T, T], block: [32, 8], stream: s2, args: {in: d, out: o, n: N}}
  - memsetAsync: {dst: bytes, value: 255, stream: s2}
  - memcpy: {dst: p, src: o}
  - eventSynchronize: {event: done}
  - streamSynchronize: {stream: s2}
  - deviceSynchronize:
checks:
  - transpose: {input: h, output: p}
  - equal: {a: d, b: h}
)";

}  // namespace

TEST_CASE("load: a good experiment resolves every name and expression") {
  Experiment e = load_string(kGood, "good.yaml");
  CHECK(e.name == "good");
  CHECK(e.repeat == 5);
  CHECK(e.warmup == 1);
  REQUIRE(e.params.size() == 2);
  CHECK(e.params[1] == std::pair<std::string, int64_t>{"T", 2});
  REQUIRE(e.streams.size() == 3);
  CHECK(e.streams[0].legacy);
  CHECK_FALSE(e.streams[1].non_blocking);
  CHECK(e.streams[2].non_blocking);
  REQUIRE(e.buffers.size() == 5);
  CHECK(e.buffers[0].bytes == 64 * 64 * 4);
  CHECK(e.buffers[0].init.kind == InitSpec::Kind::random);
  CHECK(e.buffers[0].init.seed == 7);
  CHECK(e.buffers[4].bytes == 100);
  REQUIRE(e.ops.size() == 9);
  CHECK(e.ops[0].id == "up");
  CHECK(e.ops[0].stream == 1);
  CHECK(e.ops[0].device_work);
  CHECK(e.ops[1].id == "eventRecord#2");
  CHECK_FALSE(e.ops[1].device_work);
  CHECK(e.ops[3].kernel == find_kernel("transpose_tiled"));
  CHECK(e.ops[3].grid == std::array<int64_t, 3>{2, 2, 1});
  CHECK(e.ops[3].block == std::array<int64_t, 3>{32, 8, 1});
  CHECK(e.ops[3].args[2].scalar == 64);
  CHECK(e.ops[3].loc.line == 19);
  CHECK(e.ops[3].loc.col == 5);
  CHECK(e.ops[4].value == 255);
  CHECK(e.ops[5].stream == kLegacyStream);  // synchronous copies go to the default stream
  REQUIRE(e.checks.size() == 2);
  CHECK(e.checks[0].kind == "transpose");
}

TEST_CASE("load: --set overrides a param, and later params follow it") {
  LoadOptions o;
  o.overrides = {{"N", "2*64"}};
  Experiment e = load_string(kGood, "good.yaml", o);
  CHECK(e.params[0].second == 128);
  CHECK(e.params[1].second == 4);
  CHECK(e.buffers[0].count == 128 * 128);
}

TEST_CASE("load: --set of an unknown param or a bad expression is an error") {
  LoadOptions o;
  o.overrides = {{"n", "4"}, {"T", "N/0"}};
  CHECK(diagnostics_of(kGood, "good.yaml", o) ==
        "command line: error: --set T=N/0: division by zero\n"
        "command line: error: --set n=4: the experiment has no param 'n'; did you mean 'N'? "
        "(params: N, T)\n");
}

TEST_CASE("load: an expression error points at its column, quoted or not") {
  CHECK(diagnostics_of("name: x\nparams: {N: 4}\nbuffers:\n  a: {type: int32, count: N*Q, memory: "
                       "device}\nops: []\n") ==
        "test.yaml:4:29: error: count: unknown parameter 'Q' (params: N)\n"
        "    4 |   a: {type: int32, count: N*Q, memory: device}\n"
        "      |                             ^\n");
  CHECK(diagnostics_of("name: x\nparams: {N: 4}\nbuffers:\n  a: {type: int32, count: \"N*Q\", "
                       "memory: device}\nops: []\n")
            .starts_with("test.yaml:4:30: error: count: unknown parameter 'Q'"));
}

TEST_CASE("load: an unreadable file is an invalid experiment") {
  CHECK_THROWS_WITH_AS(
      load_file("/nonexistent/exp.yaml"),
      "/nonexistent/exp.yaml: error: cannot read the experiment file (does it exist?)\n",
      InvalidExperiment);
}

TEST_CASE("load: an empty file says what an experiment needs") {
  CHECK(
      diagnostics_of("") ==
      "test.yaml:1:1: error: the experiment is empty; expected a mapping with 'name' and 'ops'\n");
}

// Each file under tests/bad/ must produce exactly the diagnostics in the .expected file beside
// it. STREAMLAB_UPDATE_GOLDEN=1 rewrites them (then review the diff).
TEST_CASE("load: every bad experiment gives its expected diagnostics") {
  auto files = yaml_files("tests/bad");
  CHECK(files.size() >= 20);
  for (const auto& path : files) {
    std::string shown = "bad/" + path.filename().string();
    std::string actual = diagnostics_of(read_text(path), shown);
    auto expected_path = std::filesystem::path(path).replace_extension(".expected");
    if (std::getenv("STREAMLAB_UPDATE_GOLDEN")) std::ofstream(expected_path) << actual;
    INFO(shown);
    CHECK_FALSE(actual.empty());
    CHECK(actual == read_text(expected_path));
  }
}

TEST_CASE("load: every shipped experiment loads") {
  for (const auto& path : yaml_files("experiments")) {
    INFO(path.string());
    CHECK(diagnostics_of(read_text(path), path.filename().string()) == "");
  }
}

TEST_CASE("load: stream priorities, and the per-thread default stream joins when first named") {
  Experiment e = load_string(R"(name: streams
params: {P: -3}
streams:
  hi: {priority: P - 1}
  lo: {flags: non-blocking}
ops:
  - launch: {kernel: spin, grid: 1, block: 32, stream: per_thread, args: {us: 10}}
  - launch: {kernel: spin, grid: 1, block: 32, stream: hi, args: {us: 10}}
  - streamSynchronize: {stream: per_thread}
)",
                             "streams.yaml");
  REQUIRE(e.streams.size() == 4);  // legacy, hi, lo, per_thread (once, though named twice)
  CHECK(e.streams[1].priority == -4);
  CHECK_FALSE(e.streams[2].priority.has_value());
  CHECK(e.streams[3].per_thread);
  CHECK(e.streams[3].name == "per_thread");
  CHECK(e.ops[0].stream == 3);
  CHECK(e.ops[2].stream == 3);
}

TEST_CASE("load: env keeps its variables in order, values as written") {
  Experiment e = load_string(
      "name: e\nenv: {CUDA_DEVICE_MAX_CONNECTIONS: 1, CUBLAS_WORKSPACE_CONFIG: ':4096:8'}\nops: "
      "[]\n",
      "e.yaml");
  CHECK(e.env == std::vector<std::pair<std::string, std::string>>{
                     {"CUDA_DEVICE_MAX_CONNECTIONS", "1"}, {"CUBLAS_WORKSPACE_CONFIG", ":4096:8"}});
}

TEST_CASE(
    "load: arrays of streams and buffers, and loops expanded with their variable as a param") {
  Experiment e = load_string(R"(name: pipeline
params: {K: 3, C: 4}
streams:
  s: {array: K, flags: non-blocking}
buffers:
  h: {type: float32, count: K*C, memory: pinned, init: sequence}
  d: {type: float32, count: C, memory: device, array: K}
  r: {type: float32, count: C, memory: device, array: 2, init: {random: {seed: 7}}}
ops:
  - loop:
      var: i
      count: K
      ops:
        - memcpyAsync: {id: "up[i]", dst: "d[i]", src: {buffer: h, offset: i*C, count: C}, stream: "s[i]"}
        - loop: {var: j, count: 2, ops: [{launch: {kernel: scale, grid: 1, block: 4, stream: "s[i]", args: {x: "d[i]", factor: j + 2}}}]}
  - deviceSynchronize: {}
expect:
  - "duration(up[K - 1]) > 0"
)",
                             "pipeline.yaml");
  REQUIRE(e.streams.size() == 4);
  CHECK(e.streams[3].name == "s[2]");
  CHECK(e.streams[3].non_blocking);
  REQUIRE(e.buffers.size() == 6);
  CHECK(e.buffers[2].name == "d[1]");
  CHECK(e.buffers[4].init.seed == 7);  // random elements of an array each get their own seed
  CHECK(e.buffers[5].init.seed == 8);
  REQUIRE(e.ops.size() == 10);
  CHECK(e.ops[3].id == "up[1]");
  CHECK(e.ops[3].src.offset == 4);
  CHECK(e.ops[3].dst.buffer == 2);
  CHECK(e.ops[5].args[1].real == 3);  // i = 1, j = 1
  CHECK(e.ops[5].stream == 2);
  CHECK(e.ops[4].id == "launch#5");  // ids by position in the expanded list
  CHECK(e.params.size() == 2);       // loop variables do not outlive their loops
}

// What a diagnostic echoes reaches a grader's terminal: escaped, and a long line shown as a
// window around the column that never grows with the line and never splits a character.
TEST_CASE("load: diagnostics escape what they echo and show a window of a long line") {
  CHECK(printable("a\x1b[2Jb") == "a\\x1B[2Jb");
  CHECK(printable("\xe2\x80\xae"
                  "evil") == "\\xE2\\x80\\xAEevil");  // U+202E, right-to-left override
  CHECK(printable("\xd8\x9c") == "\\xD8\\x9C");       // U+061C, Arabic letter mark
  CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");
  Diagnostic d{Severity::error, {"f.yaml", 1, 201}, "here"};
  std::string garbage(1 << 20, '\x80');  // no character starts anywhere in it
  std::string shown = format_diagnostic(d, garbage);
  CHECK(shown.size() < 2000);
  std::string accents;
  for (int i = 0; i < 100; ++i) accents += "\xc3\xa9";  // é, two bytes each
  std::string line = accents + "X" + accents;
  d.loc.col = 201;  // the X
  shown = format_diagnostic(d, line);
  CHECK(shown.find("...") != std::string::npos);
  CHECK(shown.find("\\x") == std::string::npos);  // no character cut in two
  std::string rest = shown.substr(shown.find('\n') + 1);
  std::string source = rest.substr(8, rest.find('\n') - 8);  // after "    1 | "
  std::string caret = rest.substr(rest.find('\n') + 1 + 8);
  // The caret stands under the X: count characters, not bytes, up to its column.
  size_t want = caret.find('^'), chars = 0, i = 0;
  for (; i < source.size(); ++i) {
    if ((static_cast<unsigned char>(source[i]) & 0xC0) == 0x80) continue;
    if (chars++ == want) break;
  }
  CHECK(source.substr(i, 1) == "X");
}
