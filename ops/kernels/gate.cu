#include "ops/kernels/device_clock.cuh"
#include "ops/kernels/gate.hpp"

namespace streamlab {
namespace {

__global__ void start_gate_kernel(const volatile int* flag, int* timed_out, uint64_t timeout_ns) {
  uint64_t start = global_ns();
  while (*flag == 0) {
    if (global_ns() - start > timeout_ns) {
      *timed_out = 1;
      return;
    }
    __nanosleep(256);  // a PCIe read per quarter microsecond is plenty, and leaves the bus alone
  }
}

}  // namespace

cudaError_t launch_start_gate(cudaStream_t stream, const volatile int* flag, int* timed_out,
                              uint64_t timeout_ns) {
  start_gate_kernel<<<1, 1, 0, stream>>>(flag, timed_out, timeout_ns);
  return cudaGetLastError();
}

}  // namespace streamlab
