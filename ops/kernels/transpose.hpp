#pragma once
#include <cuda_runtime_api.h>

#include "ops/kernels/kernel_abi.hpp"

namespace streamlab {

// Parameters of both transposes, by position: in, out (n*n 4-byte elements, row-major), n.
// Each writes out[r][c] = in[c][r] for the elements its grid covers.
cudaError_t launch_transpose_naive(const LaunchDims& dims, cudaStream_t stream,
                                   const KernelArgs& args);
cudaError_t launch_transpose_tiled(const LaunchDims& dims, cudaStream_t stream,
                                   const KernelArgs& args);
// The race of claim C9: transpose_tiled without __syncthreads. Its host reference is the
// transpose it means to compute (the host runs no warps, so it cannot race).
cudaError_t launch_transpose_tiled_nobarrier(const LaunchDims& dims, cudaStream_t stream,
                                             const KernelArgs& args);
void host_transpose_naive(const LaunchDims& dims, const KernelArgs& args);
void host_transpose_tiled(const LaunchDims& dims, const KernelArgs& args);

inline constexpr int kTransposeTile = 32;  // transpose_tiled's tile edge, in elements

}  // namespace streamlab
