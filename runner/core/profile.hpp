#pragma once
// A device profile: what the timeline model (runner/predict/) needs to know about a GPU, as
// `streamlab calibrate` measured it (docs/prediction.md). Data only: reading and writing it is
// profile.cpp's; each op kind turns it into the cost of its own work (OpKind::work).
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace streamlab {

struct Op;  // experiment.hpp

// A copy path: a fixed cost per copy and a bandwidth (1e9 bytes per second).
struct CopyPath {
  double latency_us = NAN;
  double gbps = NAN;
  double ms(int64_t bytes) const { return latency_us / 1000 + static_cast<double>(bytes) / (gbps * 1e6); }
};

// A built-in kernel's throughput at full occupancy, from its bytes (OpKind::bytes) and, for
// kernels whose time grows with a work count (lcg's rounds), from that count. (What bounds its
// occupancy, its registers per thread, is the kernel table's: KernelKind::regs.)
struct KernelRate {
  double gbps = NAN;           // bytes per second / 1e9
  double work_per_ns = NAN;  // work units (kernel-defined) per nanosecond; NaN: none
};

inline constexpr int kProfileVersion = 1;

struct DeviceProfile {
  int version = kProfileVersion;
  std::string device;     // the name the CUDA runtime gives it
  std::string made_by;    // "streamlab calibrate <version> on <date>", or how it was written
  std::string file;       // where it was read from ("built-in" for the shipped one)
  // The SMs and what bounds how many blocks each holds at once.
  int sms = 0;
  int max_threads_per_sm = 2048, max_blocks_per_sm = 32;
  int64_t regs_per_sm = 65536, shared_per_sm = 0;
  // Hardware work queues the runtime maps streams onto (CUDA_DEVICE_MAX_CONNECTIONS's default).
  int connections = 8;
  double memory_gbps = NAN;  // device memory, reads and writes together
  CopyPath h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable, d2d, memset;
  // Each direction's share of its bandwidth while the other direction copies too.
  double duplex_factor = 1;
  // Device side: from a kernel's arrival at an idle queue to its start, and the least a kernel
  // takes (an empty one); a graph's launch and each of its nodes.
  double launch_latency_us = NAN, kernel_min_us = NAN;
  double graph_launch_us = NAN, graph_node_us = NAN;
  // Host side: microseconds the host spends in each call (by op kind name), and the time it
  // takes a blocked call to return once what it waits for is done.
  std::map<std::string, double> host_us;
  double wake_us = NAN;
  std::map<std::string, KernelRate> kernels;  // by built-in kernel name
  // Libraries: cuBLAS GEMM and cuDNN convolution at their best (TFLOP/s, by element type name),
  // and NCCL's bus bandwidth on one device.
  std::map<std::string, double> gemm_tflops, conv_tflops;
  double nccl_gbps = NAN;
  // A call the profile has no cost for takes what one that reaches no driver lock does.
  double host_us_of(const std::string& kind) const {
    auto it = host_us.find(kind);
    return it == host_us.end() ? 2.0 : it->second;
  }
};

// The device work of one op, as the model sees it (OpKind::work). Everything is for the op
// running alone; the simulator shares the device between the ops that run at once.
struct Work {
  enum class Resource {
    none,       // a marker (event record, wait): takes no time once its stream reaches it
    copy_h2d,   // a copy engine and the host link, host to device
    copy_d2h,   // device to host
    copy_d2d,   // a copy within device memory
    sm,         // blocks on the SMs (kernels, memsets, library calls)
    host,       // a host function: a host thread runs it while its stream waits
    opaque,     // device work the model does not share out (a graph's whole replay)
  };
  Resource resource = Resource::none;
  double ms = 0;  // alone: from its start to its end
  // sm: blocks, and how many of them one SM holds at once (by threads, registers, shared memory);
  // each block takes ms / waves, where waves = ceil(blocks / (sms * per_sm)).
  int64_t blocks = 1;
  int per_sm = 1;
  // Share of device memory bandwidth it uses running alone (0..1): ops running at once slow down
  // when their shares add up to more than 1.
  double memory_share = 0;
  // Pageable copies: the host takes part (it stages the data), so the call returns at the end.
  bool host_staged = false;
  // opaque, a graph: the captured ops the model times itself, and how often they replay.
  const std::vector<Op>* body = nullptr;
  int64_t replays = 1;
  // Why the model cannot time it (a user kernel's cost is unknown); empty: modelled.
  std::string unknown;
};

}  // namespace streamlab
