// What the op kinds share in telling the timeline model their cost (OpKind::work).
#include <algorithm>

#include "ops/op_kind.hpp"

namespace streamlab {

// The occupancy rule: an SM holds as many blocks as its threads, registers and shared memory
// allow, and no more than its block limit.
int blocks_per_sm(const DeviceProfile& p, int64_t threads, int regs, int64_t shared) {
  int64_t n = p.max_blocks_per_sm;
  threads = std::max<int64_t>(threads, 1);
  n = std::min(n, p.max_threads_per_sm / threads);
  // Registers are handed out per warp of 32 threads.
  const int64_t warps = (threads + 31) / 32;
  if (regs > 0) n = std::min(n, p.regs_per_sm / (warps * 32 * regs));
  if (shared > 0 && p.shared_per_sm > 0) n = std::min(n, p.shared_per_sm / shared);
  return static_cast<int>(std::max<int64_t>(n, 1));
}

Work device_filling_work(const DeviceProfile& p, double flops, double tflops, int64_t bytes) {
  Work w;
  w.resource = Work::Resource::sm;
  w.per_sm = 1;
  w.blocks = p.sms;
  const double compute_ms = flops / (tflops * 1e9);
  const double memory_ms = static_cast<double>(bytes) / (p.memory_gbps * 1e6);
  w.ms = std::max({compute_ms, memory_ms, p.kernel_min_us / 1000});
  w.memory_share = std::min(1.0, memory_ms / w.ms);
  return w;
}

}  // namespace streamlab
