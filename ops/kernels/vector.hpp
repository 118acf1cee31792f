#pragma once
// The element-wise kernels and the reduction: float32 vectors given as element ranges, walked
// with grid-stride loops (any grid covers every element). Each launcher has a host reference
// that computes the same bits: one rounding per operation, fmaf where the device fuses.
#include <cuda_runtime_api.h>

#include "ops/kernels/kernel_abi.hpp"

namespace streamlab {

// empty(): does nothing; the launch cost alone.
cudaError_t launch_empty(const LaunchDims& dims, cudaStream_t stream, const KernelArgs& args,
                         int64_t times);
void host_empty(const LaunchDims& dims, const KernelArgs& args);
// fill(out, value): out[i] = value.
cudaError_t launch_fill(const LaunchDims& dims, cudaStream_t stream, const KernelArgs& args,
                        int64_t times);
void host_fill(const LaunchDims& dims, const KernelArgs& args);
// vector_add(a, b, out): out[i] = a[i] + b[i] for the elements of out.
cudaError_t launch_vector_add(const LaunchDims& dims, cudaStream_t stream, const KernelArgs& args,
                              int64_t times);
void host_vector_add(const LaunchDims& dims, const KernelArgs& args);
// saxpy(x, y, a): y[i] = a * x[i] + y[i] (one fused multiply-add) for the elements of y.
cudaError_t launch_saxpy(const LaunchDims& dims, cudaStream_t stream, const KernelArgs& args,
                         int64_t times);
void host_saxpy(const LaunchDims& dims, const KernelArgs& args);
// scale(x, factor): x[i] *= factor, in place.
cudaError_t launch_scale(const LaunchDims& dims, cudaStream_t stream, const KernelArgs& args,
                         int64_t times);
void host_scale(const LaunchDims& dims, const KernelArgs& args);
// lcg(x, y, rounds, a, c): y[i] = x[i] after `rounds` steps of v = a * v + c, in 32-bit unsigned
// arithmetic (mod 2^32), for the elements of y: work that grows with rounds, with an exact result.
cudaError_t launch_lcg(const LaunchDims& dims, cudaStream_t stream, const KernelArgs& args,
                       int64_t times);
void host_lcg(const LaunchDims& dims, const KernelArgs& args);
// reduce_sum(in, out): block b writes out[b], the sum of the elements its threads visit (thread t
// of block b: elements b*blockDim + t, then every gridDim*blockDim), added in a shared-memory tree
// with __syncthreads between levels. blockDim.x is a power of two; grid 1-D. Launch it again with
// one block over the partial sums for the total.
cudaError_t launch_reduce_sum(const LaunchDims& dims, cudaStream_t stream, const KernelArgs& args,
                              int64_t times);
void host_reduce_sum(const LaunchDims& dims, const KernelArgs& args);

}  // namespace streamlab
