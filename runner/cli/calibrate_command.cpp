// `streamlab calibrate`: the device profile of the GPU in use, measured with experiments of
// streamlab's own (copies, launches, graphs, each built-in kernel, host calls, GEMM) run on the
// cuda backend like any other, so the profile describes what streamlab's ops cost. What it does
// not measure (convolutions, NCCL) it keeps from the built-in profile, and says so in made_by.
#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "runner/cli/cli.hpp"
#include "runner/cli/commands.hpp"
#include "runner/cli/run_support.hpp"
#include "runner/core/diagnostics.hpp"
#include "runner/core/errors.hpp"
#include "runner/execute/backend.hpp"
#include "runner/execute/execute.hpp"
#include "runner/load/load.hpp"
#include "runner/predict/profile_io.hpp"
#include "runner/report/output_file.hpp"

namespace streamlab {
namespace {

// Copies: each path large and small (bandwidth from the difference, latency from the small one),
// and both directions at once for the duplex factor.
constexpr std::string_view kCopies = R"(
name: calibrate-copies
params: {BIG: 128*1024*1024, SMALL: 4096}
gate: false
timer: events
repeat: 7
warmup: 2
streams: {s: {}, t: {}}
buffers:
  pinned: {type: uint8, count: BIG, memory: pinned}
  pinned2: {type: uint8, count: BIG, memory: pinned}
  pageable: {type: uint8, count: BIG, memory: pageable}
  d: {type: uint8, count: BIG, memory: device}
  d2: {type: uint8, count: BIG, memory: device}
ops:
  - memcpyAsync: {id: h2d_pinned, dst: d, src: pinned, stream: s}
  - memcpyAsync: {id: d2h_pinned, dst: pinned, src: d, stream: s}
  - memcpyAsync: {id: h2d_pinned_small, dst: {buffer: d, offset: 0, count: SMALL}, src: {buffer: pinned, offset: 0, count: SMALL}, stream: s}
  - memcpyAsync: {id: d2h_pinned_small, dst: {buffer: pinned, offset: 0, count: SMALL}, src: {buffer: d, offset: 0, count: SMALL}, stream: s}
  - memcpyAsync: {id: h2d_pageable, dst: d, src: pageable, stream: s, allow: [pageable-async]}
  - memcpyAsync: {id: d2h_pageable, dst: pageable, src: d, stream: s, allow: [pageable-async]}
  - memcpyAsync: {id: h2d_pageable_small, dst: {buffer: d, offset: 0, count: SMALL}, src: {buffer: pageable, offset: 0, count: SMALL}, stream: s, allow: [pageable-async]}
  - memcpyAsync: {id: d2h_pageable_small, dst: {buffer: pageable, offset: 0, count: SMALL}, src: {buffer: d, offset: 0, count: SMALL}, stream: s, allow: [pageable-async]}
  - memcpyAsync: {id: d2d, dst: d2, src: d, stream: s}
  - memcpyAsync: {id: d2d_small, dst: {buffer: d2, offset: 0, count: SMALL}, src: {buffer: d, offset: 0, count: SMALL}, stream: s}
  - memsetAsync: {id: memset, dst: d2, value: 1, stream: s}
  - memsetAsync: {id: memset_small, dst: {buffer: d2, offset: 0, count: SMALL}, value: 1, stream: s}
  - streamSynchronize: {id: sync_idle_before, stream: s}
  - memcpyAsync: {id: duplex_h2d, dst: d, src: pinned, stream: s}
  - memcpyAsync: {id: duplex_d2h, dst: pinned2, src: d2, stream: t}
  - deviceSynchronize: {id: end}
)";

// Launches and host calls: back-to-back empty launches (the host's cost per launch), one on an
// idle stream (the least a kernel takes), a graph of empty kernels (the cost per node), and the
// calls every experiment makes.
constexpr std::string_view kLaunches = R"(
name: calibrate-launches
gate: false
timer: events
repeat: 7
warmup: 2
streams: {s: {}, t: {}}
events: {e: {}}
ops:
  - launch: {id: many, kernel: empty, grid: [1], block: [1], stream: s, times: 1000}
  - streamSynchronize: {id: sync_after_many, stream: s}
  - launch: {id: one, kernel: empty, grid: [1], block: [1], stream: s}
  - streamSynchronize: {id: streamSynchronize, stream: s}
  - eventRecord: {id: eventRecord, event: e, stream: s}
  - streamWaitEvent: {id: streamWaitEvent, stream: t, event: e}
  - eventSynchronize: {id: eventSynchronize, event: e}
  - eventQuery: {id: eventQuery, event: e}
  - streamQuery: {id: streamQuery, stream: s}
  - launchHostFunc: {id: launchHostFunc, stream: s, fn: mark}
  - deviceSynchronize: {id: deviceSynchronize}
  - graph:
      id: g
      stream: s
      ops:
        - loop:
            var: i
            count: 1000
            ops:
              - launch: {id: "gk[i]", kernel: empty, grid: [1], block: [1], stream: s}
  - deviceSynchronize: {id: end}
)";

// Each built-in kernel at a size that fills the device, alone in its stream.
constexpr std::string_view kKernels = R"(
name: calibrate-kernels
params: {N: 64*1024*1024, T: 8192, L: 4*1024*1024, SM: 132}
timer: events
repeat: 7
warmup: 2
streams: {s: {}}
buffers:
  x: {type: float32, count: N, init: {value: 1}, memory: device}
  y: {type: float32, count: N, init: {value: 2}, memory: device}
  z: {type: float32, count: N, memory: device}
  a: {type: int32, shape: [T, T], init: {sequence: {start: 0}}, memory: device}
  b: {type: int32, shape: [T, T], memory: device}
  li: {type: int32, count: L, init: {sequence: {start: 0}}, memory: device}
  lo: {type: int32, count: L, memory: device}
  partial: {type: float32, count: SM*8, memory: device}
ops:
  - launch: {id: fill, kernel: fill, grid: [SM*8], block: [256], stream: s, args: {out: z, value: 3}}
  - launch: {id: vector_add, kernel: vector_add, grid: [SM*8], block: [256], stream: s, args: {a: x, b: y, out: z}}
  - launch: {id: saxpy, kernel: saxpy, grid: [SM*8], block: [256], stream: s, args: {x: x, y: z, a: 1}}
  - launch: {id: scale, kernel: scale, grid: [SM*8], block: [256], stream: s, args: {x: z, factor: 1}}
  - launch: {id: reduce_sum, kernel: reduce_sum, grid: [SM*8], block: [256], stream: s, args: {in: x, out: partial}}
  - launch: {id: transpose_naive, kernel: transpose_naive, grid: ["(T+31)/32", "(T+31)/32"], block: [32, 32], stream: s, args: {in: a, out: b, n: T}}
  - launch: {id: transpose_tiled, kernel: transpose_tiled, grid: ["(T+31)/32", "(T+31)/32"], block: [32, 8], stream: s, args: {in: a, out: b, n: T}}
  - launch: {id: transpose_tiled_nobarrier, kernel: transpose_tiled_nobarrier, grid: ["(T+31)/32", "(T+31)/32"], block: [32, 8], stream: s, args: {in: a, out: b, n: T}}
  - launch: {id: lcg, kernel: lcg, grid: [SM*8], block: [256], stream: s, args: {x: li, y: lo, rounds: 1000, a: 1664525, c: 1013904223}}
  - launch: {id: lcg_light, kernel: lcg, grid: [SM*8], block: [256], stream: s, args: {x: li, y: lo, rounds: 1, a: 1664525, c: 1013904223}}
  - deviceSynchronize: {}
)";

constexpr std::string_view kGemm = R"(
name: calibrate-gemm
params: {M: 4096}
timer: events
repeat: 5
warmup: 2
streams: {s: {}}
buffers:
  a32: {type: float32, shape: [M, M], init: {value: 1}, memory: device}
  b32: {type: float32, shape: [M, M], init: {value: 1}, memory: device}
  c32: {type: float32, shape: [M, M], memory: device}
  a16: {type: float16, shape: [M, M], init: {value: 1}, memory: device}
  b16: {type: float16, shape: [M, M], init: {value: 1}, memory: device}
  c16: {type: float16, shape: [M, M], memory: device}
  ws: {type: uint8, count: 32*1024*1024, memory: device}
ops:
  - gemm: {id: float32, a: a32, b: b32, c: c32, stream: s, workspace: ws}
  - gemm: {id: float16, a: a16, b: b16, c: c16, stream: s, workspace: ws}
  - deviceSynchronize: {}
)";

struct Measured {
  Experiment exp;
  RunRecord run;
  const OpFigures& op(std::string_view id) const {
    for (size_t i = 0; i < exp.ops.size(); ++i)
      if (exp.ops[i].id == id) return run.figures.ops[i];
    throw RunError(fmt::format("calibrate: no op '{}' in {}", id, exp.name));
  }
  double device_ms(std::string_view id) const { return op(id).device.median; }
  double host_us(std::string_view id) const { return op(id).host.median * 1000; }
};

Measured measure(std::string_view yaml, int device) {
  Measured m{load_string(yaml, "calibrate"), {}};
  auto backend = make_cuda_backend(m.exp, device, {TimerChoice::events, m.exp.gate, false});
  RunOptions o;
  o.repeat = m.exp.repeat;
  o.warmup = m.exp.warmup;
  std::cerr << fmt::format("streamlab calibrate: {}\n", m.exp.name);
  m.run = run_experiment(m.exp, *backend, o);
  if (!m.run.checks_passed()) throw RunError(fmt::format("calibrate: {} computed wrong results", m.exp.name));
  return m;
}

// A path from a large and a small copy: the small one's time is the fixed cost.
CopyPath path(const Measured& m, std::string_view big, std::string_view small, int64_t big_bytes,
              int64_t small_bytes) {
  const double tb = m.device_ms(big), ts = m.device_ms(small);
  CopyPath p;
  p.gbps = static_cast<double>(big_bytes - small_bytes) / ((tb - ts) * 1e6);
  p.latency_us = std::max(0.0, ts * 1000 - static_cast<double>(small_bytes) / (p.gbps * 1e3));
  return p;
}

double gbps(const Measured& m, std::string_view id) {
  return static_cast<double>(m.op(id).bytes) / (m.device_ms(id) * 1e6);
}

void device_facts(int device, DeviceProfile& p) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    throw RunError("calibrate: cudaGetDeviceProperties failed");
  p.device = prop.name;
  p.sms = prop.multiProcessorCount;
  p.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  p.max_blocks_per_sm = prop.maxBlocksPerMultiProcessor;
  p.regs_per_sm = prop.regsPerMultiprocessor;
  p.shared_per_sm = static_cast<int64_t>(prop.sharedMemPerMultiprocessor);
  DevicePeaks peaks = cuda_device_peaks(device);
  p.memory_gbps = peaks.memory_gbps;
}

void copies(const Measured& m, DeviceProfile& p) {
  const int64_t big = 128 * 1024 * 1024, small = 4096;
  p.h2d_pinned = path(m, "h2d_pinned", "h2d_pinned_small", big, small);
  p.d2h_pinned = path(m, "d2h_pinned", "d2h_pinned_small", big, small);
  p.h2d_pageable = path(m, "h2d_pageable", "h2d_pageable_small", big, small);
  p.d2h_pageable = path(m, "d2h_pageable", "d2h_pageable_small", big, small);
  p.d2d = path(m, "d2d", "d2d_small", big, small);
  p.memset = path(m, "memset", "memset_small", big, small);
  // Both directions at once: each took this much longer than alone.
  const double alone = (m.device_ms("h2d_pinned") + m.device_ms("d2h_pinned")) / 2;
  const double both = std::max(m.device_ms("duplex_h2d"), m.device_ms("duplex_d2h"));
  p.duplex_factor = std::min(1.0, alone / both);
  p.host_us["memcpyAsync"] = m.host_us("h2d_pinned");
  p.host_us["memsetAsync"] = m.host_us("memset");
}

void launches(const Measured& m, DeviceProfile& p) {
  p.host_us["launch"] = m.host_us("many") / 1000;
  p.kernel_min_us = m.device_ms("one") * 1000;
  p.graph_node_us = m.device_ms("g");  // ms for 1000 nodes = us per node
  p.graph_launch_us = m.host_us("g");
  p.host_us["graph"] = m.host_us("g");
  for (const char* kind : {"streamSynchronize", "eventRecord", "streamWaitEvent", "eventSynchronize",
                           "eventQuery", "streamQuery", "launchHostFunc", "deviceSynchronize"})
    p.host_us[kind] = m.host_us(kind);
  p.wake_us = m.host_us("streamSynchronize");
  // From issue to start on an idle stream: the host's clock and the device's are not one, so the
  // profile keeps the smallest plausible figure rather than a difference of two clocks.
  p.launch_latency_us = std::max(1.0, p.kernel_min_us);
}

void kernels(const Measured& m, DeviceProfile& p) {
  for (const char* k : {"fill", "vector_add", "saxpy", "scale", "reduce_sum", "transpose_naive",
                        "transpose_tiled", "transpose_tiled_nobarrier"})
    p.kernels[k].gbps = gbps(m, k);
  // lcg: its bytes rate from a one-round run, its rounds rate from a thousand-round one.
  KernelRate& lcg = p.kernels["lcg"];
  lcg.gbps = gbps(m, "lcg_light");
  lcg.work_per_ns = 4.0 * 1024 * 1024 * 1000 / (m.device_ms("lcg") * 1e6);
}

void gemm(const Measured& m, DeviceProfile& p) {
  const double flops = 2.0 * 4096 * 4096 * 4096;
  for (const char* t : {"float32", "float16"}) p.gemm_tflops[t] = flops / (m.device_ms(t) * 1e9);
}

std::string today() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

}  // namespace

int cmd_calibrate(const RunArgs& args) {
  std::string why;
  if (cuda_device_count(&why) == 0) throw RunError("calibrate needs a CUDA device (" + why + ")");
  OutputPlan plan({{"--output", args.output}}, {});  // refused before a minute of GPU time, not after
  auto start = std::chrono::steady_clock::now();
  DeviceProfile p;
  device_facts(args.device, p);
  DeviceProfile base = builtin_profile(p.device, nullptr);
  p.conv_tflops = base.conv_tflops;
  p.nccl_gbps = base.nccl_gbps;
  p.connections = 8;  // CUDA_DEVICE_MAX_CONNECTIONS's default: fixed when the context is made
  p.host_us = base.host_us;  // calls not measured below keep the built-in profile's costs
  p.gemm_tflops = base.gemm_tflops;
  copies(measure(kCopies, args.device), p);
  launches(measure(kLaunches, args.device), p);
  kernels(measure(kKernels, args.device), p);
  gemm(measure(kGemm, args.device), p);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  p.made_by = fmt::format("streamlab calibrate {} on {} in {:.0f} s (convolution and NCCL rates, "
                          "and the costs of allocation calls, from the built-in profile)",
                          STREAMLAB_VERSION, today(), seconds);
  p.file = args.output;
  plan.commit({profile_json(p)});
  std::cerr << fmt::format("streamlab calibrate: {} profiled in {:.1f} s\n", p.device, seconds);
  return kExitOk;
}

}  // namespace streamlab
