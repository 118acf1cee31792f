// Issue 6 without a GPU: 16-bit floats, the host references of gemm and convolutionForward, graphs
// and `times` on the host backend, user kernels (skipped on the host, compiled by NVRTC where it
// is installed), and optional libraries loaded only when needed.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>

#include "ops/op_kind.hpp"
#include "ops/start_gate_rule.hpp"
#include "ops/user_kernel.hpp"
#include "runner/context/library.hpp"
#include "runner/core/half.hpp"
#include "runner/execute/backend.hpp"
#include "runner/execute/execute.hpp"
#include "runner/load/load.hpp"
#include "tests/test_support.hpp"

using namespace streamlab;
using namespace streamlab::test;

namespace {

struct HostRun {
  Experiment exp;
  std::unique_ptr<Backend> backend;
  RunRecord record;
  template <class T>
  std::vector<T> read(const std::string& buffer) {
    for (size_t i = 0; i < exp.buffers.size(); ++i)
      if (exp.buffers[i].name == buffer) {
        auto bytes = backend->contents(static_cast<int>(i));
        std::vector<T> out(bytes.size() / sizeof(T));
        std::memcpy(out.data(), bytes.data(), bytes.size());
        return out;
      }
    FAIL("no buffer ", buffer);
    return {};
  }
};

HostRun run_host(const std::string& yaml) {
  HostRun r{load_string(yaml, "lib.yaml"), nullptr, {}};
  r.backend = make_host_backend(r.exp);
  r.record = run_experiment(r.exp, *r.backend, {1, 0, {}});
  return r;
}

// Whether a shared library whose path contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(name) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE(
    "float16 and bfloat16: exact values round-trip, halfway cases round to even, overflow is "
    "infinite") {
  for (float v : {0.0f, 1.0f, -2.5f, 0.333251953125f, 65504.0f, 0x1.0p-24f, 0x1.0p-14f})
    CHECK(half_to_float(float_to_half(v)) == v);
  CHECK(float_to_half(1.0f) == 0x3C00);
  CHECK(float_to_half(1.0f + 0x1.0p-11f) == 0x3C00);      // halfway: to the even neighbour
  CHECK(float_to_half(1.0f + 3 * 0x1.0p-11f) == 0x3C02);  // halfway: to the even neighbour, up
  CHECK(float_to_half(65520.0f) == 0x7C00);               // rounds past 65504: infinity
  CHECK(float_to_half(0x1.0p-25f) == 0x0000);             // half the smallest subnormal: to even, 0
  CHECK(float_to_half(0x1.8p-25f) == 0x0001);
  CHECK(std::isnan(half_to_float(float_to_half(NAN))));
  CHECK(float_to_bfloat16(1.0f) == 0x3F80);
  CHECK(bfloat16_to_float(float_to_bfloat16(1.0f + 0x1.0p-8f)) == 1.0f);  // halfway: to even
  CHECK(bfloat16_to_float(float_to_bfloat16(1.0f + 0x1.8p-8f)) == 1.0f + 0x1.0p-7f);
}

TEST_CASE("gemm on the host: row-major C = alpha*A*B + beta*C, rounded to C's type") {
  auto r = run_host(R"(name: g
streams: {s1: {}}
buffers:
  a: {type: float32, shape: [2, 3], memory: device, init: {sequence: {start: 1}}}
  b: {type: float32, shape: [3, 2], memory: device, init: {sequence: {start: 1}}}
  c: {type: float32, shape: [2, 2], memory: device, init: {value: 1}}
  a16: {type: float16, shape: [2, 3], memory: device, init: {sequence: {start: 1}}}
  b16: {type: float16, shape: [3, 2], memory: device, init: {sequence: {start: 1}}}
  c16: {type: float16, shape: [2, 2], memory: device}
ops:
  - gemm: {id: mm, stream: s1, a: a, b: b, c: c, alpha: 2, beta: 10, workspace: none}
  - gemm: {id: mm16, stream: s1, a: a16, b: b16, c: c16, workspace: none}
checks:
  - reference: {op: mm}
)");
  // [[1,2,3],[4,5,6]] x [[1,2],[3,4],[5,6]] = [[22,28],[49,64]]
  CHECK(r.read<float>("c") ==
        std::vector<float>{2 * 22 + 10, 2 * 28 + 10, 2 * 49 + 10, 2 * 64 + 10});
  REQUIRE(r.record.checks.size() == 1);
  CHECK(r.record.checks[0].passed);
  CHECK(r.record.checks[0].title == "reference(gemm 'mm' -> c, computed on the host)");
  auto c16 = r.read<uint16_t>("c16");
  CHECK(half_to_float(c16[3]) == 64.0f);
}

TEST_CASE("gemm: shapes that do not multiply are a load error") {
  CHECK(diagnostics_of(R"(name: g
buffers:
  a: {type: float32, shape: [2, 3], memory: device}
  c: {type: float32, shape: [2, 2], memory: device}
ops:
  - gemm: {a: a, b: a, c: c, workspace: none}
)")
            .find("gemm of A [2, 3] and B [2, 3] needs B [3, N]") != std::string::npos);
}

TEST_CASE(
    "convolutionForward on the host: padding, stride and dilation as cuDNN's cross-correlation") {
  auto r = run_host(R"(name: c
streams: {s1: {}}
buffers:
  x: {type: float32, shape: [1, 1, 3, 3], memory: device, init: {sequence: {start: 1}}}
  ones: {type: float32, shape: [1, 1, 3, 3], memory: device, init: {value: 1}}
  y: {type: float32, shape: [1, 1, 3, 3], memory: device}
  corner: {type: float32, shape: [1, 1, 2, 2], memory: device, init: {sequence: {start: 1}}}
  ys: {type: float32, shape: [1, 1, 1, 1], memory: device}
ops:
  - convolutionForward: {id: sum3x3, stream: s1, x: x, w: ones, y: y, pad: [1, 1], workspace: none}
  - convolutionForward: {id: strided, stream: s1, x: x, w: corner, y: ys, stride: [2, 2], dilation: [2, 2], workspace: none}
)");
  // x = [[1,2,3],[4,5,6],[7,8,9]]: each output sums its 3x3 neighbourhood inside the image
  CHECK(r.read<float>("y") == std::vector<float>{12, 21, 16, 27, 45, 33, 24, 39, 28});
  // the 2x2 filter [[1,2],[3,4]] dilated by 2 touches x's corners: 1*1 + 2*3 + 3*7 + 4*9
  CHECK(r.read<float>("ys") == std::vector<float>{64});
}

TEST_CASE("graph on the host: the captured ops run once per replay, in capture order") {
  auto r = run_host(R"(name: g
streams: {s1: {}, s2: {}}
events: {fork: {}, join: {}}
buffers:
  x: {type: float32, count: 256, memory: device, init: {value: 1}}
  y: {type: float32, count: 256, memory: device, init: {value: 1}}
ops:
  - graph:
      id: g
      stream: s1
      replays: 3
      ops:
        - eventRecord: {event: fork, stream: s1}
        - streamWaitEvent: {stream: s2, event: fork}
        - launch: {kernel: scale, grid: [1], block: [256], stream: s1, args: {x: x, factor: 2}}
        - launch: {kernel: scale, grid: [1], block: [256], stream: s2, args: {x: y, factor: 3}, times: 2}
        - eventRecord: {event: join, stream: s2}
        - streamWaitEvent: {stream: s1, event: join}
  - streamSynchronize: {stream: s1}
)");
  CHECK(r.read<float>("x")[255] == 8);  // 2^3
  CHECK(r.read<float>("y")[0] == 729);  // (3^2)^3
  const Op& g = r.exp.ops[0];
  CHECK(g.body.size() == 6);
  CHECK(g.body[2].id == "g.launch#3");
  CHECK(g.kind->describe(r.exp, g) ==
        "6 ops captured (2 kernels, 0 copies; 2 streams) from s1, launched 3x");
}

TEST_CASE(
    "user kernels: the host backend says it cannot run one, skips what depends on it, evaluates no "
    "check of it") {
  auto r = run_host(R"(name: u
streams: {s1: {}}
kernels:
  twice:
    source: |
      extern "C" __global__ void twice(float* x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= 2;
      }
    params: [x: inout float32, n: int32]
buffers:
  d: {type: float32, count: 256, memory: device, init: {value: 1}}
  h: {type: float32, count: 256, memory: pinned}
  other: {type: float32, count: 256, memory: pinned, init: {value: 5}}
  other_out: {type: float32, count: 256, memory: pinned}
ops:
  - launch: {id: k, kernel: twice, grid: [1], block: [256], stream: s1, args: {x: d, n: 256}}
  - memcpyAsync: {id: down, dst: h, src: d, stream: s1}
  - memcpyAsync: {id: unrelated, dst: other_out, src: other, stream: s1}
  - streamSynchronize: {stream: s1}
checks:
  - value: {buffer: h, value: 2}
  - equal: {a: other, b: other_out}
)");
  REQUIRE(r.record.notes.size() == 2);
  CHECK(r.record.notes[0] ==
        "host backend: skipped op 'k' (line 17): kernel 'twice' is CUDA source compiled by NVRTC "
        "for a GPU; the host backend cannot run it");
  CHECK(r.record.notes[1] ==
        "host backend: skipped op 'down' (line 18): it reads 'd', left unwritten by op 'k' "
        "(line 17), which the host backend skipped");
  REQUIRE(r.record.checks.size() == 2);
  CHECK_FALSE(r.record.checks[0].evaluated);
  CHECK(r.record.checks[0].detail ==
        "not evaluated: buffer 'h' is not what the experiment computes on a GPU: op "
        "'down' (line 18), which the host backend skipped");
  CHECK(r.record.checks[1].evaluated);
  CHECK(r.record.checks[1].passed);
  CHECK(r.record.checks_passed());  // not evaluated is not failed
}

TEST_CASE("user kernels: NVRTC's errors point at the kernel's line and column in the experiment") {
  Experiment e = load_string(R"(name: u
streams: {s1: {}}
kernels:
  k:
    source: |
      extern "C" __global__ void k(float* x, int n) {
        int i = threadIdx.x;
        if (i < n) x[i] = y;
      }
    params: [x: out float32, n: int32]
buffers:
  d: {type: float32, count: 32, memory: device}
ops:
  - launch: {kernel: k, grid: [1], block: [32], stream: s1, args: {x: d, n: 32}}
)",
                             "u.yaml");
  auto errors = compile_errors(e);
  if (!errors) return;
  CHECK(*errors ==
        "u.yaml:8:27: error: in kernel 'k': identifier \"y\" is undefined\n"
        "    8 |         if (i < n) x[i] = y;\n"
        "      |                           ^\n");
}

TEST_CASE(
    "user kernels: a correct one compiles to PTX for the oldest target, and its name must be "
    "defined") {
  Experiment e = load_file((source_dir() / "experiments/user_kernel_saxpy.yaml").string());
  try {
    auto images = compile_user_kernels(e, "compute_75");
    REQUIRE(images.size() == 1);
    CHECK(images[0].find(".entry my_saxpy") != std::string::npos);
    e.kernels[0].name = "not_there";
    CHECK_THROWS_WITH_AS(
        compile_user_kernels(e, "compute_75"),
        doctest::Contains("kernel 'not_there': the source defines no __global__ function named"),
        InvalidExperiment);
  } catch (const RunError& err) {
    MESSAGE("skipped: NVRTC is not installed here (", err.what(), ")");
  }
}

TEST_CASE(
    "libraries: a missing one is a run error naming it, where it looked and how to point at it") {
  setenv("STREAMLAB_TEST_LIB", "/nonexistent/libnothing.so.1", 1);
  CHECK_THROWS_WITH_AS(
      load_library({"Nothing", "libnothing.so.1", "STREAMLAB_TEST_LIB", {"lib64"}}),
      "Nothing (libnothing.so.1) could not be loaded: tried /nonexistent/libnothing.so.1 (last: "
      "/nonexistent/libnothing.so.1: cannot open shared object file: No such file or directory); "
      "install it or set STREAMLAB_TEST_LIB to its path",
      RunError);
  unsetenv("STREAMLAB_TEST_LIB");
}

TEST_CASE(
    "libraries: running every library experiment on the host loads neither cuBLAS, cuDNN nor "
    "NCCL") {
  for (const char* f :
       {"experiments/library/gemm_types.yaml", "experiments/library/conv_types.yaml",
        "experiments/library/nccl_collectives.yaml"}) {
    LoadOptions small;
    small.overrides = {{"N", "64"}};
    Experiment e =
        load_file((source_dir() / f).string(),
                  std::string(f).find("conv") == std::string::npos ? small : LoadOptions{});
    auto backend = make_host_backend(e);
    RunRecord run = run_experiment(e, *backend, {1, 0, {}});
    for (const auto& c : run.checks) CHECK(c.passed);
  }
  CHECK_FALSE(mapped("libcublas"));
  CHECK_FALSE(mapped("libcudnn"));
  CHECK_FALSE(mapped("libnccl"));
}

// With CUDA_LAUNCH_BLOCKING=1 a launch returns once its kernel is done: behind a closed gate it
// would never return, so the gate holds nothing, in the run and in the model alike.
TEST_CASE("experiment settings: blocking launches leave the start gate open") {
  const std::string ops =
      "ops:\n  - launch: {kernel: spin, grid: 1, block: 32, args: {us: 10}}\n"
      "  - deviceSynchronize: {}\n";
  Experiment gated = load_string("name: s\n" + ops, "s.yaml");
  CHECK(gate_opens_before(gated) == 1);
  Experiment blocking = load_string("name: s\nenv: {CUDA_LAUNCH_BLOCKING: 1}\n" + ops, "s.yaml");
  CHECK(launches_block(blocking));
  CHECK(gate_opens_before(blocking) == 0);
  Experiment not_blocking = load_string("name: s\nenv: {CUDA_LAUNCH_BLOCKING: 0}\n" + ops, "s.yaml");
  CHECK(gate_opens_before(not_blocking) == 1);
}

TEST_CASE("experiment settings: gate and timer") {
  Experiment e = load_string("name: s\ngate: false\ntimer: events\nops: []\n", "s.yaml");
  CHECK_FALSE(e.gate);
  CHECK(e.timer == "events");
  CHECK(diagnostics_of("name: s\ntimer: cuda\nops: []\n").find("unknown timer 'cuda'") !=
        std::string::npos);
}
