#pragma once
#include <cstdint>

namespace streamlab {

// The GPU's global timer in nanoseconds: one clock for every SM, unlike clock64().
__device__ inline uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace streamlab
