#include <cstdint>

#include "ops/kernels/device_clock.cuh"
#include "ops/kernels/spin.hpp"

namespace streamlab {
namespace {

// Thread 0 of each block watches the clock; the others wait at the barrier, so a block holds its
// SM slot for the whole duration, as a block of real work would.
__global__ void spin_kernel(int64_t us) {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    uint64_t end = global_ns() + uint64_t(us) * 1000;
    while (global_ns() < end) __nanosleep(500);
  }
  __syncthreads();
}

}  // namespace

cudaError_t launch_spin(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a,
                        int64_t times) {
  dim3 grid(unsigned(d.grid[0]), unsigned(d.grid[1]), unsigned(d.grid[2]));
  dim3 block(unsigned(d.block[0]), unsigned(d.block[1]), unsigned(d.block[2]));
  for (int64_t t = 0; t < times; ++t)
    spin_kernel<<<grid, block, size_t(d.shared_bytes), stream>>>(a.scalar[0]);
  return cudaGetLastError();
}

// Nothing to compute: the host backend measures no time, so there is nothing to wait for either.
void host_spin(const LaunchDims&, const KernelArgs&) {}

}  // namespace streamlab
