// The two transposes of the reference material. Elements are moved as 32-bit words, so one
// kernel serves int32, uint32 and float32 buffers.
#include <cstdint>

#include "ops/kernels/transpose.hpp"

namespace streamlab {
namespace {

// One thread per element; consecutive threads write consecutive elements of `out` (coalesced
// writes) and read a column of `in` (strided reads): the reference material's kernel.
__global__ void transpose_naive_kernel(const uint32_t* in, uint32_t* out, int64_t n) {
  int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  int64_t y = blockIdx.y * int64_t(blockDim.y) + threadIdx.y;
  if (x < n && y < n) out[y * n + x] = in[x * n + y];
}

// A 32x32 tile goes through shared memory so that both the reads and the writes are coalesced;
// the +1 column avoids shared-memory bank conflicts on the transposed read. blockDim.x must be 32
// and blockDim.y must divide 32 (each thread moves 32 / blockDim.y elements). Without the barrier
// (transpose_tiled_nobarrier, claim C9) a thread may read a tile element before the thread that
// loads it has written it, so the output depends on warp timing.
template <bool kBarrier, int kRows>
__global__ void transpose_tiled_kernel(const uint32_t* in, uint32_t* out, int64_t n) {
  __shared__ uint32_t tile[kTransposeTile][kTransposeTile + 1];
  int64_t x = blockIdx.x * int64_t(kTransposeTile) + threadIdx.x;
  int64_t y = blockIdx.y * int64_t(kTransposeTile) + threadIdx.y;
#pragma unroll  // kRows is known: every load is in flight at once
  for (int j = 0; j < kTransposeTile; j += kRows)
    if (x < n && y + j < n) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
  if constexpr (kBarrier)
    __syncthreads();  // every element of the tile is loaded before any thread reads a column
  x = blockIdx.y * int64_t(kTransposeTile) + threadIdx.x;
  y = blockIdx.x * int64_t(kTransposeTile) + threadIdx.y;
#pragma unroll
  for (int j = 0; j < kTransposeTile; j += kRows)
    if (x < n && y + j < n) out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}

dim3 to_dim3(const int64_t v[3]) { return dim3(unsigned(v[0]), unsigned(v[1]), unsigned(v[2])); }

}  // namespace

cudaError_t launch_transpose_naive(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a) {
  transpose_naive_kernel<<<to_dim3(d.grid), to_dim3(d.block), size_t(d.shared_bytes), stream>>>(
      static_cast<const uint32_t*>(a.ptr[0]), static_cast<uint32_t*>(a.ptr[1]), a.scalar[2]);
  return cudaGetLastError();
}

template <bool kBarrier, int kRows>
void launch_rows(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a) {
  transpose_tiled_kernel<kBarrier, kRows>
      <<<to_dim3(d.grid), to_dim3(d.block), size_t(d.shared_bytes), stream>>>(
          static_cast<const uint32_t*>(a.ptr[0]), static_cast<uint32_t*>(a.ptr[1]), a.scalar[2]);
}

// One instance per block height (load checks it divides 32), so each loop is unrolled.
template <bool kBarrier>
cudaError_t launch_tiled(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a) {
  switch (d.block[1]) {
    case 1:
      launch_rows<kBarrier, 1>(d, stream, a);
      break;
    case 2:
      launch_rows<kBarrier, 2>(d, stream, a);
      break;
    case 4:
      launch_rows<kBarrier, 4>(d, stream, a);
      break;
    case 8:
      launch_rows<kBarrier, 8>(d, stream, a);
      break;
    case 16:
      launch_rows<kBarrier, 16>(d, stream, a);
      break;
    default:
      launch_rows<kBarrier, 32>(d, stream, a);
      break;
  }
  return cudaGetLastError();
}

cudaError_t launch_transpose_tiled(const LaunchDims& d, cudaStream_t stream, const KernelArgs& a) {
  return launch_tiled<true>(d, stream, a);
}

cudaError_t launch_transpose_tiled_nobarrier(const LaunchDims& d, cudaStream_t stream,
                                             const KernelArgs& a) {
  return launch_tiled<false>(d, stream, a);
}

}  // namespace streamlab
