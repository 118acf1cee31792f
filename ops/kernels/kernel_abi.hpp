#pragma once
// What a built-in kernel's device launcher and host reference receive. Plain data only, so the
// .cu files include nothing but this and the CUDA runtime.
#include <cstdint>

namespace streamlab {

inline constexpr int kMaxKernelParams = 8;

struct LaunchDims {
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t shared_bytes = 0;  // dynamic shared memory per block, in bytes
};

// Arguments by parameter position: buffer parameters in ptr (device pointers for the cuda
// backend, host pointers for the host backend; the start of the bound element range) and count
// (the range's elements) and elem_bytes (the size of one of its elements, in bytes: 1, 2, 4 or 8),
// integer parameters in scalar, real ones in real.
struct KernelArgs {
  void* ptr[kMaxKernelParams] = {};
  int64_t count[kMaxKernelParams] = {};
  int64_t elem_bytes[kMaxKernelParams] = {};
  int64_t scalar[kMaxKernelParams] = {};
  double real[kMaxKernelParams] = {};
};

}  // namespace streamlab
