#include <cstdint>

#include "ops/kernels/vector.hpp"

namespace streamlab {
namespace {

__device__ int64_t first_index() { return blockIdx.x * int64_t(blockDim.x) + threadIdx.x; }
__device__ int64_t grid_stride() { return int64_t(gridDim.x) * blockDim.x; }

__global__ void empty_kernel() {}

__global__ void fill_kernel(float* out, int64_t n, float value) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) out[i] = value;
}

__global__ void vector_add_kernel(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) out[i] = a[i] + b[i];
}

__global__ void saxpy_kernel(const float* x, float* y, int64_t n, float a) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) y[i] = __fmaf_rn(a, x[i], y[i]);
}

__global__ void scale_kernel(float* x, int64_t n, float factor) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) x[i] = __fmul_rn(x[i], factor);
}

// `rounds` dependent multiply-adds per element, in 32-bit unsigned arithmetic (wrapping): the
// kernel's time grows with rounds while its result stays exact, so a host reference can check it.
__global__ void lcg_kernel(const uint32_t* x, uint32_t* y, int64_t n, int64_t rounds, uint32_t a,
                           uint32_t c) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    uint32_t v = x[i];
    for (int64_t r = 0; r < rounds; ++r) v = v * a + c;
    y[i] = v;
  }
}

// The classic tree: each level halves the active threads, and __syncthreads makes one level's
// sums visible before the next reads them.
__global__ void reduce_sum_kernel(const float* in, float* out, int64_t n) {
  extern __shared__ float partial[];
  float sum = 0;
  for (int64_t i = first_index(); i < n; i += grid_stride()) sum = __fadd_rn(sum, in[i]);
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      partial[threadIdx.x] = __fadd_rn(partial[threadIdx.x], partial[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
}

dim3 to_dim3(const int64_t v[3]) { return dim3(unsigned(v[0]), unsigned(v[1]), unsigned(v[2])); }

float* f32(void* p) { return static_cast<float*>(p); }

}  // namespace

#define STREAMLAB_LAUNCH(kernel, extra_shared, ...)                                      \
  for (int64_t t = 0; t < times; ++t)                                                    \
    kernel<<<to_dim3(d.grid), to_dim3(d.block), size_t(d.shared_bytes + (extra_shared)), \
             stream>>>(__VA_ARGS__);                                                     \
  return cudaGetLastError()

cudaError_t launch_empty(const LaunchDims& d, cudaStream_t stream, const KernelArgs&,
                         int64_t times) {
  STREAMLAB_LAUNCH(empty_kernel, 0);
}
cudaError_t launch_fill(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a,
                        int64_t times) {
  STREAMLAB_LAUNCH(fill_kernel, 0, f32(a.ptr[0]), a.count[0], float(a.real[1]));
}
cudaError_t launch_vector_add(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a,
                              int64_t times) {
  STREAMLAB_LAUNCH(vector_add_kernel, 0, f32(a.ptr[0]), f32(a.ptr[1]), f32(a.ptr[2]), a.count[2]);
}
cudaError_t launch_saxpy(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a,
                         int64_t times) {
  STREAMLAB_LAUNCH(saxpy_kernel, 0, f32(a.ptr[0]), f32(a.ptr[1]), a.count[1], float(a.real[2]));
}
cudaError_t launch_scale(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a,
                         int64_t times) {
  STREAMLAB_LAUNCH(scale_kernel, 0, f32(a.ptr[0]), a.count[0], float(a.real[1]));
}
cudaError_t launch_lcg(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a,
                       int64_t times) {
  STREAMLAB_LAUNCH(lcg_kernel, 0, static_cast<const uint32_t*>(a.ptr[0]),
                   static_cast<uint32_t*>(a.ptr[1]), a.count[1], a.scalar[2], uint32_t(a.scalar[3]),
                   uint32_t(a.scalar[4]));
}
cudaError_t launch_reduce_sum(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a,
                              int64_t times) {
  STREAMLAB_LAUNCH(reduce_sum_kernel, d.block[0] * int64_t(sizeof(float)), f32(a.ptr[0]),
                   f32(a.ptr[1]), a.count[0]);
}

}  // namespace streamlab
